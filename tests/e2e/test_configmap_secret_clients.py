"""Public Python clients, unmodified, create, read, patch and delete a ConfigMap and a Secret (issue 37's
acceptance), against one `miniplane serve --api-domain k8s.io` for the module.

- the official `kubernetes` client (`CoreV1Api`; its patch of a dict is a strategic merge patch),
- `kubernetes_asyncio` (the same API on asyncio and aiohttp),
- `lightkube` (its typed `ConfigMap` and `Secret` resources; strategic merge, then a JSON patch),
- `kr8s` (its `ConfigMap` and `Secret` objects; merge patch, then a JSON patch).

Each client runs in a thread of its own (the asyncio ones under `asyncio.run`), as a user's program
would: none is told it talks to anything but a Kubernetes API server. They are the test extra's
(pyproject.toml): a missing one fails its test at import.
"""

from __future__ import annotations

import asyncio
import base64
from typing import Any, Iterator

import kr8s
import kubernetes_asyncio
import lightkube
import pytest
import trio
from kubernetes import client as kube_client, config as kube_config
from kubernetes.client.rest import ApiException
from lightkube.models.meta_v1 import ObjectMeta
from lightkube.resources.core_v1 import ConfigMap as LightConfigMap, Secret as LightSecret

from tests.support.server import Server
from tests.support.served import served

SECRET_VALUE = "from-a-client"


@pytest.fixture(scope="module")
def module_server(tmp_path_factory) -> Iterator[Server]:
    with served(tmp_path_factory.mktemp("clients") / "data", "--api-domain", "k8s.io",
                "--controllers", "false") as server:
        yield server


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def unb64(data: dict[str, str]) -> dict[str, str]:
    return {k: base64.b64decode(v).decode() for k, v in data.items()}


def expect_session(out: dict[str, Any]) -> None:
    """What every client's session must have seen (each records the same steps)."""
    assert out["cm_created"] == {"a": "1"} and out["cm_read"] == {"a": "1"}
    assert out["cm_patched"] == {"a": "1", "b": "2"}
    assert out["secret_created"] == {"password": SECRET_VALUE}  # stringData merged into data
    assert out["secret_read"] == {"password": SECRET_VALUE} and out["secret_type"] == "Opaque"
    assert out["secret_patched"] == {"password": SECRET_VALUE, "user": "me"}
    assert out["gone"] == [404, 404]


# ---- the official kubernetes client ------------------------------------------------------------------

def kubernetes_session(kubeconfig: str, ns: str = "default") -> dict[str, Any]:
    api_client = kube_config.new_client_from_config(config_file=kubeconfig)
    v1, out = kube_client.CoreV1Api(api_client), {}
    meta = kube_client.V1ObjectMeta(name="official")
    out["cm_created"] = v1.create_namespaced_config_map(ns, kube_client.V1ConfigMap(metadata=meta, data={"a": "1"})).data
    out["cm_read"] = v1.read_namespaced_config_map("official", ns).data
    out["cm_patched"] = v1.patch_namespaced_config_map("official", ns, {"data": {"b": "2"}}).data
    secret = kube_client.V1Secret(metadata=meta, string_data={"password": SECRET_VALUE})
    out["secret_created"] = unb64(v1.create_namespaced_secret(ns, secret).data)
    read = v1.read_namespaced_secret("official", ns)
    out["secret_read"], out["secret_type"] = unb64(read.data), read.type
    out["secret_patched"] = unb64(v1.patch_namespaced_secret("official", ns, {"data": {"user": b64("me")}}).data)
    v1.delete_namespaced_config_map("official", ns)
    v1.delete_namespaced_secret("official", ns)
    out["gone"] = []
    for read_gone in (v1.read_namespaced_config_map, v1.read_namespaced_secret):
        try:
            read_gone("official", ns)
        except ApiException as e:
            out["gone"].append(e.status)
    api_client.close()
    return out


async def test_the_kubernetes_client_creates_reads_patches_and_deletes_a_configmap_and_a_secret(module_server):
    expect_session(await trio.to_thread.run_sync(kubernetes_session, str(module_server.kubeconfig)))


# ---- kubernetes_asyncio --------------------------------------------------------------------------------

async def asyncio_session(kubeconfig: str, ns: str = "default") -> dict[str, Any]:
    from kubernetes_asyncio import client, config
    from kubernetes_asyncio.client.exceptions import ApiException as AsyncApiException

    api_client = await config.new_client_from_config(config_file=kubeconfig)
    async with api_client:
        v1, out = client.CoreV1Api(api_client), {}
        meta = client.V1ObjectMeta(name="asyncio")
        made = await v1.create_namespaced_config_map(ns, client.V1ConfigMap(metadata=meta, data={"a": "1"}))
        out["cm_created"] = made.data
        out["cm_read"] = (await v1.read_namespaced_config_map("asyncio", ns)).data
        out["cm_patched"] = (await v1.patch_namespaced_config_map("asyncio", ns, {"data": {"b": "2"}})).data
        secret = client.V1Secret(metadata=meta, string_data={"password": SECRET_VALUE})
        out["secret_created"] = unb64((await v1.create_namespaced_secret(ns, secret)).data)
        read = await v1.read_namespaced_secret("asyncio", ns)
        out["secret_read"], out["secret_type"] = unb64(read.data), read.type
        patched = await v1.patch_namespaced_secret("asyncio", ns, {"data": {"user": b64("me")}})
        out["secret_patched"] = unb64(patched.data)
        await v1.delete_namespaced_config_map("asyncio", ns)
        await v1.delete_namespaced_secret("asyncio", ns)
        out["gone"] = []
        for read_gone in (v1.read_namespaced_config_map, v1.read_namespaced_secret):
            try:
                await read_gone("asyncio", ns)
            except AsyncApiException as e:
                out["gone"].append(e.status)
    return out


async def test_kubernetes_asyncio_creates_reads_patches_and_deletes_a_configmap_and_a_secret(module_server):
    assert kubernetes_asyncio.__version__
    out = await trio.to_thread.run_sync(lambda: asyncio.run(asyncio_session(str(module_server.kubeconfig))))
    expect_session(out)


# ---- lightkube -----------------------------------------------------------------------------------------

def lightkube_session(kubeconfig: str, ns: str = "default") -> dict[str, Any]:
    client = lightkube.Client(config=lightkube.KubeConfig.from_file(kubeconfig), namespace=ns)
    out: dict[str, Any] = {}
    meta = ObjectMeta(name="light", namespace=ns)
    out["cm_created"] = client.create(LightConfigMap(metadata=meta, data={"a": "1"})).data
    out["cm_read"] = client.get(LightConfigMap, "light").data
    out["cm_patched"] = client.patch(LightConfigMap, "light", {"data": {"b": "2"}}).data  # strategic merge
    out["secret_created"] = unb64(client.create(LightSecret(metadata=meta, stringData={"password": SECRET_VALUE})).data)
    read = client.get(LightSecret, "light")
    out["secret_read"], out["secret_type"] = unb64(read.data), read.type
    patched = client.patch(LightSecret, "light", [{"op": "add", "path": "/data/user", "value": b64("me")}],
                           patch_type=lightkube.types.PatchType.JSON)
    out["secret_patched"] = unb64(patched.data)
    client.delete(LightConfigMap, "light")
    client.delete(LightSecret, "light")
    out["gone"] = []
    for kind in (LightConfigMap, LightSecret):
        try:
            client.get(kind, "light")
        except lightkube.ApiError as e:
            out["gone"].append(e.status.code)
    client.close()
    return out


async def test_lightkube_creates_reads_patches_and_deletes_a_configmap_and_a_secret(module_server):
    expect_session(await trio.to_thread.run_sync(lightkube_session, str(module_server.kubeconfig)))


# ---- kr8s ----------------------------------------------------------------------------------------------

def kr8s_session(kubeconfig: str, ns: str = "default") -> dict[str, Any]:
    from kr8s.objects import ConfigMap, Secret

    api = kr8s.api(kubeconfig=kubeconfig, namespace=ns)
    out: dict[str, Any] = {}
    meta = {"name": "kr8s", "namespace": ns}
    cm = ConfigMap({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"a": "1"}}, api=api)
    cm.create()
    out["cm_created"] = dict(cm.raw["data"])
    out["cm_read"] = dict(ConfigMap.get("kr8s", namespace=ns, api=api).raw["data"])
    cm.patch({"data": {"b": "2"}})  # a merge patch
    out["cm_patched"] = dict(cm.raw["data"])
    secret = Secret({"apiVersion": "v1", "kind": "Secret", "metadata": meta,
                     "stringData": {"password": SECRET_VALUE}}, api=api)
    secret.create()
    out["secret_created"] = unb64(secret.raw["data"])
    read = Secret.get("kr8s", namespace=ns, api=api)
    out["secret_read"], out["secret_type"] = unb64(read.raw["data"]), read.raw["type"]
    secret.patch([{"op": "add", "path": "/data/user", "value": b64("me")}], type="json")
    out["secret_patched"] = unb64(secret.raw["data"])
    cm.delete()
    secret.delete()
    out["gone"] = []
    for kind in (ConfigMap, Secret):
        try:
            kind.get("kr8s", namespace=ns, api=api, timeout=0)  # else it retries a 404 for 2 s
        except kr8s.NotFoundError:
            out["gone"].append(404)
    return out


async def test_kr8s_creates_reads_patches_and_deletes_a_configmap_and_a_secret(module_server):
    expect_session(await trio.to_thread.run_sync(kr8s_session, str(module_server.kubeconfig)))
