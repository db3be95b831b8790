"""core/v1 ConfigMap and Secret through the HTTP app in process, as kube-apiserver serves them.

The round trip runs on every store; the rules that do not depend on the store run on memory only.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import httpx
import pytest
import trio

from runtime.client.http import open_http_client
from runtime.client.kubeconfig import load_kubeconfig
from runtime.controller.testing import wait_for_object
from runtime.machinery.serializer import protobuf
from runtime.models import ConfigMap, ObjectMeta, Secret
from tests.support.rbac import ok
from tests.support.server import Server, start_in_process

CMS = "/api/v1/namespaces/default/configmaps"
SECRETS = "/api/v1/namespaces/default/secrets"
TABLE = {"Accept": "application/json;as=Table;g=meta.k8s.io;v=v1"}
PB = "application/vnd.kubernetes.protobuf"
IMMUTABLE = "field is immutable when `immutable` is set"
memory_only = pytest.mark.stores("memory")


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def cm(name: str = "settings", **fields: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, **fields}


def secret(name: str = "creds", **fields: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name}, **fields}


@pytest.fixture
async def srv(nursery, tmp_path) -> Server:
    return await start_in_process(nursery, tmp_path, api_domain="k8s.io")


# ---- every store -------------------------------------------------------------------------------------

async def test_configmap_and_secret_round_trip_create_get_list_update_delete(srv, autojump_clock):
    async with srv.client() as c:
        made = await ok(await c.post(CMS, json=cm(data={"a": "1"}, binaryData={"b": b64("x")})), 201)
        assert (made["data"], made["binaryData"]) == ({"a": "1"}, {"b": b64("x")})
        made = await ok(await c.post(SECRETS, json=secret(stringData={"password": "s3cr3t"})), 201)
        assert made["data"] == {"password": b64("s3cr3t")} and made["type"] == "Opaque"
        assert "stringData" not in made
        got = await ok(await c.get(f"{SECRETS}/creds"))
        assert got["data"] == {"password": b64("s3cr3t")} and "stringData" not in got
        got["stringData"] = {"user": "me"}
        updated = await ok(await c.put(f"{SECRETS}/creds", json=got))
        assert updated["data"] == {"password": b64("s3cr3t"), "user": b64("me")}
        listed = await ok(await c.get(CMS))
        assert [item["data"] for item in listed["items"]] == [{"a": "1"}]
        await ok(await c.delete(f"{CMS}/settings"))
        await ok(await c.delete(f"{SECRETS}/creds"))
        assert (await c.get(f"{SECRETS}/creds")).status_code == 404


async def test_a_secret_of_exactly_1_mib_is_stored_and_one_byte_more_is_422(srv, autojump_clock):
    value = base64.b64encode(b"\x01" * (1024 * 1024)).decode()
    async with srv.client() as c:
        await ok(await c.post(SECRETS, json=secret("big", data={"blob": value})), 201)
        assert (await ok(await c.get(f"{SECRETS}/big")))["data"]["blob"] == value
        r = await c.post(SECRETS, json=secret("bigger", data={"blob": value, "one": b64("x")}))
        assert (r.status_code, r.json()["message"]) == (
            422, 'Secret "bigger" is invalid: data: Too long: must have at most 1048576 bytes')


# ---- the API rules (memory) ---------------------------------------------------------------------------

@memory_only
async def test_a_put_of_a_missing_configmap_or_secret_is_404(srv, autojump_clock):
    async with srv.client() as c:
        r = await c.put(f"{CMS}/settings", json=cm())
        assert (r.status_code, r.json()["message"]) == (404, 'configmaps "settings" not found')
        r = await c.put(f"{SECRETS}/creds", json=secret())
        assert (r.status_code, r.json()["message"]) == (404, 'secrets "creds" not found')


@memory_only
async def test_secret_list_selects_by_the_type_field(srv, autojump_clock):
    async with srv.client() as c:
        await ok(await c.post(SECRETS, json=secret("plain")), 201)
        await ok(await c.post(SECRETS, json=secret("auth", type="kubernetes.io/basic-auth",
                                                   stringData={"username": "u"})), 201)
        found = await ok(await c.get(SECRETS, params={"fieldSelector": "type=kubernetes.io/basic-auth"}))
        assert [s["metadata"]["name"] for s in found["items"]] == ["auth"]
        found = await ok(await c.get(SECRETS, params={"fieldSelector": "type!=kubernetes.io/basic-auth"}))
        assert [s["metadata"]["name"] for s in found["items"]] == ["plain"]
        r = await c.get(CMS, params={"fieldSelector": "type=x"})
        assert r.status_code == 400
        assert r.json()["message"] == '"type" is not a known field selector: only "metadata.name", "metadata.namespace"'


@memory_only
async def test_binary_data_not_base64_is_400_on_create_and_422_in_a_patch(srv, autojump_clock):
    async with srv.client() as c:
        r = await c.post(CMS, json=cm(binaryData={"b": "*"}))
        assert (r.status_code, r.json()["message"]) == (400, 'ConfigMap in version "v1" cannot be handled as a '
                                                             'ConfigMap: illegal base64 data at input byte 0')
        await ok(await c.post(SECRETS, json=secret()), 201)
        r = await c.patch(f"{SECRETS}/creds", json={"data": {"k": "YWJ"}},
                          headers={"Content-Type": "application/merge-patch+json"})
        assert r.status_code == 422
        assert r.json()["message"].endswith("illegal base64 data at input byte 0")


@memory_only
async def test_an_immutable_configmap_refuses_a_data_change_with_kubes_words(srv, autojump_clock):
    async with srv.client() as c:
        await ok(await c.post(CMS, json=cm(immutable=True, data={"a": "1"})), 201)
        r = await c.patch(f"{CMS}/settings", json={"data": {"a": "2"}},
                          headers={"Content-Type": "application/merge-patch+json"})
        assert r.status_code == 422
        assert r.json()["message"] == f'ConfigMap "settings" is invalid: data: Forbidden: {IMMUTABLE}'
        r = await c.patch(f"{CMS}/settings", json={"immutable": None},
                          headers={"Content-Type": "application/merge-patch+json"})
        assert r.json()["message"] == f'ConfigMap "settings" is invalid: immutable: Forbidden: {IMMUTABLE}'
        labelled = await ok(await c.patch(f"{CMS}/settings", json={"metadata": {"labels": {"a": "b"}}},
                                          headers={"Content-Type": "application/merge-patch+json"}))
        assert labelled["metadata"]["labels"] == {"a": "b"}


@memory_only
async def test_a_secret_type_cannot_change(srv, autojump_clock):
    async with srv.client() as c:
        await ok(await c.post(SECRETS, json=secret(type="example.com/a")), 201)
        r = await c.patch(f"{SECRETS}/creds", json={"type": "example.com/b"},
                          headers={"Content-Type": "application/merge-patch+json"})
        assert (r.status_code, r.json()["message"]) == (
            422, 'Secret "creds" is invalid: type: Invalid value: "example.com/b": field is immutable')


@memory_only
async def test_the_four_patch_types_and_apply_merge_data_per_key(srv, autojump_clock):
    async with srv.client() as c:
        await ok(await c.post(CMS, json=cm(data={"a": "1", "b": "2"})), 201)
        await ok(await c.post(SECRETS, json=secret(data={"a": b64("1")})), 201)
        merged = await ok(await c.patch(f"{CMS}/settings", json={"data": {"c": "3"}},
                                        headers={"Content-Type": "application/strategic-merge-patch+json"}))
        assert merged["data"] == {"a": "1", "b": "2", "c": "3"}
        merged = await ok(await c.patch(f"{CMS}/settings", json={"data": {"a": None}},
                                        headers={"Content-Type": "application/merge-patch+json"}))
        assert merged["data"] == {"b": "2", "c": "3"}
        merged = await ok(await c.patch(f"{CMS}/settings", json=[{"op": "add", "path": "/data/d", "value": "4"}],
                                        headers={"Content-Type": "application/json-patch+json"}))
        assert merged["data"] == {"b": "2", "c": "3", "d": "4"}
        merged = await ok(await c.patch(f"{SECRETS}/creds", json={"stringData": {"b": "2"}},
                                        headers={"Content-Type": "application/strategic-merge-patch+json"}))
        assert merged["data"] == {"a": b64("1"), "b": b64("2")} and "stringData" not in merged
        applied = await ok(await c.patch(f"{CMS}/settings", params={"fieldManager": "tool"},
                                         content=json.dumps(cm(data={"e": "5"})),
                                         headers={"Content-Type": "application/apply-patch+yaml"}))
        assert applied["data"] == {"b": "2", "c": "3", "d": "4", "e": "5"}
        applied = await ok(await c.patch(f"{SECRETS}/applied", params={"fieldManager": "tool"},
                                         content=json.dumps(secret("applied", stringData={"k": "v"})),
                                         headers={"Content-Type": "application/apply-patch+yaml"}), 201)
        assert applied["data"] == {"k": b64("v")} and applied["type"] == "Opaque"


@memory_only
async def test_dry_run_create_of_a_secret_answers_it_and_stores_nothing(srv, autojump_clock):
    async with srv.client() as c:
        answer = await ok(await c.post(SECRETS, params={"dryRun": "All"}, json=secret(stringData={"k": "v"})), 201)
        assert answer["data"] == {"k": b64("v")}
        assert (await c.get(f"{SECRETS}/creds")).status_code == 404


@memory_only
async def test_string_data_is_owned_and_answered_as_data_in_apply_and_a_dry_run_update(srv, autojump_clock):
    # stringData is merged into data before fields are tracked (docs/kubernetes-differences.md): the applier
    # owns f:data's keys, so re-applying without a key removes it; no answer, dry run or not, holds stringData.
    apply = {"Content-Type": "application/apply-patch+yaml"}
    async with srv.client() as c:
        await ok(await c.patch(f"{SECRETS}/creds", params={"fieldManager": "tool"}, headers=apply,
                               content=json.dumps(secret(stringData={"a": "1", "b": "2"}))), 201)
        applied = await ok(await c.patch(f"{SECRETS}/creds", params={"fieldManager": "tool"}, headers=apply,
                                         content=json.dumps(secret(stringData={"a": "3"}))))
        assert applied["data"] == {"a": b64("3")} and "stringData" not in applied
        [entry] = applied["metadata"]["managedFields"]
        assert entry["fieldsV1"]["f:data"] == {"f:a": {}} and "f:stringData" not in entry["fieldsV1"]
        applied["stringData"] = {"c": "4"}
        answer = await ok(await c.put(f"{SECRETS}/creds", params={"dryRun": "All"}, json=applied))
        assert answer["data"] == {"a": b64("3"), "c": b64("4")} and "stringData" not in answer
        assert (await ok(await c.get(f"{SECRETS}/creds")))["data"] == {"a": b64("3")}


@memory_only
async def test_strict_field_validation_refuses_an_unknown_configmap_field(srv, autojump_clock):
    async with srv.client() as c:
        r = await c.post(CMS, params={"fieldValidation": "Strict"}, json=cm(extra=1))
        assert (r.status_code, r.json()["message"]) == (
            400, 'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field '
                 '"extra"')


@memory_only
async def test_tables_print_kubes_columns(srv, autojump_clock):
    async with srv.client() as c:
        await ok(await c.post(CMS, json=cm(data={"a": "1"}, binaryData={"b": b64("2")})), 201)
        await ok(await c.post(SECRETS, json=secret(type="kubernetes.io/tls",
                                                   stringData={"tls.crt": "c", "tls.key": "k"})), 201)
        warned = await c.post(SECRETS, json=secret("pair", type="kubernetes.io/tls",
                                                    stringData={"tls.crt": "c", "tls.key": "k"}))
        assert warned.headers.get_list("warning") == [
            '299 - "tls: failed to find any PEM data in certificate input"']
        table = await ok(await c.get(CMS, headers=TABLE))
        assert [col["name"] for col in table["columnDefinitions"]] == ["Name", "Data", "Age"]
        assert table["rows"][0]["cells"][:2] == ["settings", 2]
        table = await ok(await c.get(SECRETS, headers=TABLE))
        assert [col["name"] for col in table["columnDefinitions"]] == ["Name", "Type", "Data", "Age"]
        assert [row["cells"][:3] for row in table["rows"]] == [["creds", "kubernetes.io/tls", 2],
                                                               ["pair", "kubernetes.io/tls", 2]]


@memory_only
async def test_protobuf_writes_and_reads_bytes_as_kube_does(srv, autojump_clock):
    async with srv.client() as c:
        body = protobuf.encode(secret(data={"k": b64("\x00binary")}))
        r = await c.post(SECRETS, content=body, headers={"Content-Type": PB, "Accept": PB})
        assert r.status_code == 201
        assert protobuf.decode(r.content)["data"] == {"k": b64("\x00binary")}
        await ok(await c.post(CMS, json=cm(binaryData={"b": b64("x")}, immutable=True)), 201)
        r = await c.get(CMS, headers={"Accept": PB})
        listed = protobuf.decode(r.content)
        assert listed["kind"] == "ConfigMapList"
        assert (listed["items"][0]["binaryData"], listed["items"][0]["immutable"]) == ({"b": b64("x")}, True)


@memory_only
async def test_watch_sees_a_secret_without_string_data(srv, autojump_clock):
    async with srv.client() as c:
        rv = (await ok(await c.get(SECRETS)))["metadata"]["resourceVersion"]
        await ok(await c.post(SECRETS, json=secret(stringData={"k": "v"})), 201)
        async with c.stream("GET", SECRETS, params={"watch": "1", "resourceVersion": rv},
                            timeout=httpx.Timeout(30, read=None)) as r:
            line = await r.aiter_lines().__anext__()
        event = json.loads(line)
        assert event["type"] == "ADDED" and event["object"]["data"] == {"k": b64("v")}
        assert "stringData" not in event["object"]


@memory_only
async def test_openapi_describes_configmap_and_secret_as_kube_does(srv, autojump_clock):
    async with srv.client() as c:
        schemas = (await ok(await c.get("/openapi/v3/api/v1")))["components"]["schemas"]
        v2 = (await ok(await c.get("/openapi/v2")))["definitions"]
    secret_schema = schemas["io.k8s.api.core.v1.Secret"]
    assert secret_schema["properties"]["data"]["additionalProperties"] == {"type": "string", "format": "byte"}
    assert secret_schema["properties"]["stringData"]["additionalProperties"] == {"type": "string"}
    assert secret_schema["x-kubernetes-group-version-kind"] == [{"group": "", "kind": "Secret", "version": "v1"}]
    cm_schema = v2["io.k8s.api.core.v1.ConfigMap"]
    assert cm_schema["properties"]["binaryData"]["additionalProperties"] == {"type": "string", "format": "byte"}
    assert cm_schema["properties"]["data"]["description"].startswith("Data contains the configuration data.")
    assert schemas["io.k8s.api.core.v1.SecretList"]["required"] == v2["io.k8s.api.core.v1.ConfigMapList"][
        "required"] == ["items"]


@memory_only
async def test_the_typed_client_writes_and_reads_configmap_and_secret_models(srv, autojump_clock):
    async with open_http_client(load_kubeconfig(srv.kubeconfig), transport=srv.transport) as client:
        made = await client.create(Secret(metadata=ObjectMeta(name="typed", namespace="default"),
                                          string_data={"k": "v"}))
        assert isinstance(made, Secret) and (made.data, made.type, made.string_data) == ({"k": b64("v")}, "Opaque",
                                                                                         None)
        await client.create(ConfigMap(metadata=ObjectMeta(name="typed", namespace="default"), data={"a": "1"}))
        got = await client.get(ConfigMap, "typed", namespace="default")
        assert isinstance(got, ConfigMap) and got.data == {"a": "1"}


# ---- what follows without code of the kinds' own (controllers) ------------------------------------------

@memory_only
async def test_namespace_deletion_takes_its_configmaps_and_secrets(nursery, tmp_path, autojump_clock):
    server = await start_in_process(nursery, tmp_path, controllers=True)
    async with server.client() as c, open_http_client(load_kubeconfig(server.kubeconfig),
                                                      transport=server.transport) as client:
        await ok(await c.post("/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace",
                                                          "metadata": {"name": "gone"}}), 201)
        await ok(await c.post("/api/v1/namespaces/gone/configmaps", json=cm()), 201)
        await ok(await c.post("/api/v1/namespaces/gone/secrets", json=secret()), 201)
        await ok(await c.delete("/api/v1/namespaces/gone"))
        with trio.fail_after(30):
            await wait_for_object(client, client.scheme.by_kind("Namespace"), "gone", lambda o: o is None)
        assert (await c.get("/api/v1/namespaces/gone/secrets")).json()["items"] == []


@memory_only
async def test_garbage_collector_deletes_a_secret_owned_by_a_deleted_configmap(nursery, tmp_path, autojump_clock):
    server = await start_in_process(nursery, tmp_path, controllers=True)
    async with server.client() as c, open_http_client(load_kubeconfig(server.kubeconfig),
                                                      transport=server.transport) as client:
        owner = await ok(await c.post(CMS, json=cm()), 201)
        ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "settings", "uid": owner["metadata"]["uid"]}
        dependent = secret()
        dependent["metadata"]["ownerReferences"] = [ref]
        await ok(await c.post(SECRETS, json=dependent), 201)
        await ok(await c.delete(f"{CMS}/settings"))
        with trio.fail_after(30):
            await wait_for_object(client, client.scheme.by_kind("Secret"), "creds", lambda o: o is None,
                                  namespace="default")
