"""`open_test_env(https=True)`: the in-process env served over HTTPS to every Python client, in the test's own
process and trio run.

Each client does real work against the env and the test checks the result on
the env's side (its in-process client) or in what the client returned: the
official `kubernetes` client (sync, in a thread), kubernetes_asyncio and kr8s
(asyncio, in a thread), lightkube's AsyncClient (under trio itself, through
httpx and anyio), kopf's `KopfRunner` (its own thread and loop) running a
handler on a CRD the env loaded with `crds=`, and kubectl. Then the server's
own rules over the port: an anonymous caller is refused as `miniplane serve`
refuses it, a service account's token Secret carries the env's CA and its
token authenticates a caller RBAC limits; and `threaded_test_env` serves
from a background thread.

No autojump_clock here: the env waits on real network I/O from threads.
"""

from __future__ import annotations

import asyncio
import base64
import json
import ssl
from pathlib import Path
from typing import Any

import httpx
import kr8s
import kr8s.asyncio
import lightkube
import pytest
import trio
import yaml
from kopf import OperatorRegistry
from kopf.testing import KopfRunner
from kubernetes import client as kube_client, config as kube_config, watch as kube_watch
from lightkube.models.meta_v1 import ObjectMeta
from lightkube.resources.core_v1 import ConfigMap as LightConfigMap

from runtime.controller.testing import open_test_env, threaded_test_env
from runtime.machinery import errors
from runtime.machinery.scheme import ResourceType
from runtime.server.registry import AdmissionPlugin

#: Wall-clock bound of each client's session (a loaded 2-core machine).
DEADLINE = 60


def config_map(name: str, namespace: str, **data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace,
                                                                  "labels": {"made-by": "test"}}, "data": data}


async def test_the_env_serves_https_on_loopback_with_a_kubeconfig_of_its_ca_and_admin_token():
    async with open_test_env(https=True) as env:
        assert env.url.startswith("https://127.0.0.1:") and env.kubeconfig.exists()
        written = yaml.safe_load(env.kubeconfig.read_text())
        assert written["clusters"][0]["cluster"]["server"] == env.url
        assert written["users"][0]["user"]["token"] == env.token
        assert b"BEGIN CERTIFICATE" in env.ca_pem
        async with env.http_client() as http:
            made = await http.create(config_map("over-https", "default", a="1"))
        stored = await env.client.get(env.scheme.by_kind("ConfigMap"), "over-https", namespace="default")
        assert stored["data"] == {"a": "1"}
        assert made["metadata"]["uid"]
        folder = env.kubeconfig.parent
    assert not folder.exists()  # its CA key and token went with the env


async def test_an_anonymous_caller_over_https_is_refused_as_by_miniplane_serve():
    async with open_test_env(https=True) as env:
        verify = ssl.create_default_context(cadata=env.ca_pem.decode())
        async with httpx.AsyncClient(base_url=env.url, verify=verify) as anonymous:
            answer = await anonymous.get("/api/v1/namespaces")
            version = await anonymous.get("/version")  # the discovery every caller may read
        assert answer.status_code == 403 and answer.json()["reason"] == "Forbidden"
        assert 'User "system:anonymous" cannot list resource "namespaces"' in answer.json()["message"]
        assert version.status_code == 200


async def test_a_service_account_token_secret_carries_the_env_ca_and_authenticates_rbac_limited_over_https():
    async with open_test_env(https=True) as env:
        await env.client.create({"apiVersion": "v1", "kind": "ServiceAccount",
                                 "metadata": {"name": "robot", "namespace": "default"}})
        await env.client.create({"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/service-account-token",
                                 "metadata": {"name": "robot-token", "namespace": "default",
                                              "annotations": {"kubernetes.io/service-account.name": "robot"}}})
        with trio.fail_after(DEADLINE):
            secret = await env.wait_for(env.scheme.by_kind("Secret"), "robot-token",
                                        lambda o: (o or {}).get("data", {}).get("token"), namespace="default")
        assert base64.b64decode(secret["data"]["ca.crt"]) == env.ca_pem  # what clients trust the env by
        token = base64.b64decode(secret["data"]["token"]).decode()
        verify = ssl.create_default_context(cadata=env.ca_pem.decode())
        async with httpx.AsyncClient(base_url=env.url, verify=verify,
                                     headers={"Authorization": f"Bearer {token}"}) as robot:
            refused = await robot.get("/api/v1/namespaces/default/secrets")
        assert refused.status_code == 403
        assert 'User "system:serviceaccount:default:robot" cannot list' in refused.json()["message"]


def deny_named_denied(request) -> None:
    if request.operation == "create" and request.obj["metadata"]["name"] == "denied":
        raise errors.BadRequest("the test's admission plug-in denies objects named denied")


async def test_the_envs_admission_plugins_answer_a_client_over_https():
    async with open_test_env(https=True, admission=[AdmissionPlugin("deny", deny_named_denied)]) as env:
        async with env.http_client() as http:
            with pytest.raises(errors.BadRequest, match="denies objects named denied"):
                await http.create(config_map("denied", "default"))
            await http.create(config_map("allowed", "default"))
        listed = await env.client.list(env.scheme.by_kind("ConfigMap"), namespace="default")
        assert [o["metadata"]["name"] for o in listed.items if o["metadata"]["name"] != "kube-root-ca.crt"] \
            == ["allowed"]


# ---- the official kubernetes client (sync: in a thread) -------------------------------------------------

def kubernetes_session(kubeconfig: str) -> dict[str, Any]:
    api = kube_config.new_client_from_config(config_file=kubeconfig)
    try:
        v1 = kube_client.CoreV1Api(api)
        made = v1.create_namespaced_config_map("default", kube_client.V1ConfigMap(
            metadata=kube_client.V1ObjectMeta(name="official", labels={"made-by": "official"}), data={"a": "1"}))
        v1.patch_namespaced_config_map("official", "default", {"data": {"b": "2"}})
        listed = v1.list_namespaced_config_map("default", label_selector="made-by=official")
        seen = []
        for event in kube_watch.Watch().stream(v1.list_namespaced_config_map, "default", timeout_seconds=10,
                                               resource_version=made.metadata.resource_version):
            seen.append((event["type"], dict(event["object"].data)))
            break  # the patch's MODIFIED
        return {"listed": [(i.metadata.name, dict(i.data)) for i in listed.items], "watched": seen}
    finally:
        api.close()


async def test_the_official_kubernetes_client_creates_patches_lists_and_watches():
    async with open_test_env(https=True) as env:
        with trio.fail_after(DEADLINE):
            out = await trio.to_thread.run_sync(kubernetes_session, str(env.kubeconfig))
        assert out == {"listed": [("official", {"a": "1", "b": "2"})],
                       "watched": [("MODIFIED", {"a": "1", "b": "2"})]}
        stored = await env.client.get(env.scheme.by_kind("ConfigMap"), "official", namespace="default")
        assert stored["metadata"]["managedFields"][-1]["operation"] == "Update"


# ---- kubernetes_asyncio and kr8s (asyncio: in a thread) --------------------------------------------------

async def kubernetes_asyncio_session(kubeconfig: str) -> list[tuple[str, dict[str, str]]]:
    from kubernetes_asyncio import client, config

    async with await config.new_client_from_config(config_file=kubeconfig) as api:
        v1 = client.CoreV1Api(api)
        for name in ("one", "two"):
            await v1.create_namespaced_config_map("default", client.V1ConfigMap(
                metadata=client.V1ObjectMeta(name=f"asyncio-{name}", labels={"made-by": "asyncio"}),
                data={"n": name}))
        listed = await v1.list_namespaced_config_map("default", label_selector="made-by=asyncio")
        return [(i.metadata.name, dict(i.data)) for i in listed.items]


async def test_kubernetes_asyncio_creates_and_lists_by_label():
    async with open_test_env(https=True) as env:
        with trio.fail_after(DEADLINE):
            out = await trio.to_thread.run_sync(
                lambda: asyncio.run(kubernetes_asyncio_session(str(env.kubeconfig))))
        assert out == [("asyncio-one", {"n": "one"}), ("asyncio-two", {"n": "two"})]


async def kr8s_session(kubeconfig: str) -> dict[str, Any]:
    api = await kr8s.asyncio.api(kubeconfig=kubeconfig, namespace="default")
    made = await kr8s.asyncio.objects.ConfigMap(config_map("kr8s", "default", a="1"), api=api)
    await made.create()
    await made.patch({"data": {"b": "2"}})
    namespaces = [ns.name async for ns in api.get("namespaces")]
    return {"data": dict(made.raw["data"]), "namespaces": namespaces}


async def test_kr8s_creates_patches_and_lists():
    async with open_test_env(https=True) as env:
        with trio.fail_after(DEADLINE):
            out = await trio.to_thread.run_sync(lambda: asyncio.run(kr8s_session(str(env.kubeconfig))))
        assert out["data"] == {"a": "1", "b": "2"} and "kube-system" in out["namespaces"]
        stored = await env.client.get(env.scheme.by_kind("ConfigMap"), "kr8s", namespace="default")
        assert stored["data"] == {"a": "1", "b": "2"}


# ---- lightkube (its AsyncClient under trio, through httpx and anyio) --------------------------------------

async def test_lightkube_async_client_runs_under_trio_and_watches_its_own_patch():
    async with open_test_env(https=True) as env:
        light = lightkube.AsyncClient(config=lightkube.KubeConfig.from_file(str(env.kubeconfig)),
                                      namespace="default")
        try:
            with trio.fail_after(DEADLINE):
                made = await light.create(LightConfigMap(metadata=ObjectMeta(name="light"), data={"a": "1"}))
                await light.patch(LightConfigMap, "light", {"data": {"b": "2"}})
                seen = None
                async for op, obj in light.watch(LightConfigMap, resource_version=made.metadata.resourceVersion):
                    seen = (op, obj.data)
                    break
        finally:
            await light.close()
        assert seen == ("MODIFIED", {"a": "1", "b": "2"})


# ---- kubectl --------------------------------------------------------------------------------------------

async def test_kubectl_reads_the_env_through_its_kubeconfig(tmp_path):
    async with open_test_env(https=True) as env:
        await env.client.create(config_map("for-kubectl", "default", a="1"))
        with trio.fail_after(DEADLINE):
            done = await trio.run_process(["kubectl", "--kubeconfig", str(env.kubeconfig), "--cache-dir",
                                           str(tmp_path / "cache"), "get", "configmap", "for-kubectl", "-o", "json"],
                                          capture_stdout=True, capture_stderr=True, check=False)
        assert done.returncode == 0, done.stderr.decode()
        assert json.loads(done.stdout)["data"] == {"a": "1"}


# ---- kopf's KopfRunner on a CRD loaded by crds= ------------------------------------------------------------

GREETINGS = ResourceType.of("example.com/v1", "Greeting", "greetings")

GREETING_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "greetings.example.com"},
    "spec": {"group": "example.com", "scope": "Namespaced",
             "names": {"plural": "greetings", "singular": "greeting", "kind": "Greeting"},
             "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                 "type": "object", "properties": {
                     "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                     "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}}}]},
}

HANDLER = '''
import kopf

@kopf.on.login()
def login(**kwargs):  # KUBECONFIG as it is now: the official client's default path was read at its import
    return kopf.login_with_kubeconfig(**kwargs)

@kopf.on.create("example.com", "v1", "greetings")
def greet(spec, **_):
    return {"message": f"hello {spec['name']}"}
'''


async def test_kopf_runner_handles_an_object_of_a_crd_loaded_by_crds(tmp_path, monkeypatch):
    (tmp_path / "crd.yaml").write_text(yaml.safe_dump(GREETING_CRD))
    (tmp_path / "handler.py").write_text(HANDLER)
    async with open_test_env(https=True, domain="k8s.io", crds=[tmp_path / "crd.yaml"]) as env:
        monkeypatch.setenv("KUBECONFIG", str(env.kubeconfig))
        await env.client.create({"apiVersion": "example.com/v1", "kind": "Greeting",
                                 "metadata": {"name": "world", "namespace": "default"}, "spec": {"name": "world"}})
        runner = KopfRunner(["run", "--standalone", "--all-namespaces", "--verbose", str(tmp_path / "handler.py")],
                            registry=OperatorRegistry())  # its own: kopf.on registers into the default one
        with trio.fail_after(DEADLINE):
            await trio.to_thread.run_sync(runner.__enter__)
            try:
                handled = await env.wait_for(GREETINGS, "world", lambda o: (o or {}).get("status", {}).get("greet"),
                                             namespace="default")
            finally:
                await trio.to_thread.run_sync(runner.__exit__, None, None, None)
        assert handled["status"]["greet"] == {"message": "hello world"}
        assert runner.exit_code == 0, runner.output
        assert runner.exception is None


# ---- a session's env, from a background thread -----------------------------------------------------------

def test_a_threaded_env_serves_https_to_each_trio_run_until_its_block_ends():
    async def create_and_read(served) -> dict[str, Any]:
        async with served.http_client() as http:
            await http.create(config_map("threaded", "default", a="1"))
            return await http.get(http.scheme.by_kind("ConfigMap"), "threaded", namespace="default")

    with threaded_test_env() as served:
        assert trio.run(create_and_read, served)["data"] == {"a": "1"}
        again = trio.run(lambda: _read(served))  # a second trio run: the same env
        assert again["data"] == {"a": "1"}
        kubeconfig = Path(served.kubeconfig)
    assert not kubeconfig.exists()


async def _read(served) -> dict[str, Any]:
    async with served.http_client() as http:
        return await http.get(http.scheme.by_kind("ConfigMap"), "threaded", namespace="default")


def test_a_threaded_env_that_cannot_start_raises_its_error_in_the_caller(tmp_path):
    (tmp_path / "bad.yaml").write_text("kind: [unclosed\n")
    with pytest.raises(ValueError, match="bad.yaml does not parse"):
        with threaded_test_env(crds=[tmp_path / "bad.yaml"]):
            pass
