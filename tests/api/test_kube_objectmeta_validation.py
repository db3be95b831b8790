"""Owner references and finalizers are validated as Kubernetes does, on every kind and every write (issue 35)."""

from __future__ import annotations

import pytest

from tests.support.crds import crd_path, established, widget, widget_crd, widgets_path
from tests.support.rbac import ok
from tests.support.server import Server, start_in_process

MERGE = {"Content-Type": "application/merge-patch+json"}
APPLY = {"Content-Type": "application/apply-patch+yaml"}
NOT_STANDARD = "name is neither a standard finalizer name nor is it fully qualified"


def causes(r) -> list[tuple[str, str, str]]:
    assert r.status_code == 422, r.text
    return [(c["reason"], c["field"], c["message"]) for c in r.json()["details"]["causes"]]


@pytest.fixture
async def crd_server(nursery, tmp_path) -> Server:
    return await start_in_process(nursery, tmp_path, controllers=True)


async def test_an_owner_reference_without_its_fields_is_422_on_a_built_in_kind(server):
    async with server.client() as c:
        r = await c.post(f"{server.rbac}/clusterroles", json={"metadata": {"name": "o", "ownerReferences": [{}]}})
        assert causes(r) == [
            ("FieldValueInvalid", "metadata.ownerReferences.apiVersion", 'Invalid value: "": version must not be empty'),
            ("FieldValueInvalid", "metadata.ownerReferences.kind", 'Invalid value: "": kind must not be empty'),
            ("FieldValueInvalid", "metadata.ownerReferences.name", 'Invalid value: "": name must not be empty'),
            ("FieldValueInvalid", "metadata.ownerReferences.uid", 'Invalid value: "": uid must not be empty')]
        assert r.json()["message"] == (
            f'ClusterRole.rbac.authorization.{server.domain} "o" is invalid: ['
            'metadata.ownerReferences.apiVersion: Invalid value: "": version must not be empty, '
            'metadata.ownerReferences.kind: Invalid value: "": kind must not be empty, '
            'metadata.ownerReferences.name: Invalid value: "": name must not be empty, '
            'metadata.ownerReferences.uid: Invalid value: "": uid must not be empty]')
        assert r.json()["details"]["name"] == "o" and r.json()["details"]["kind"] == "ClusterRole"


async def test_a_non_standard_finalizer_without_a_domain_is_422_on_built_in_kinds_on_create_update_patch_apply(
        server):
    async with server.client() as c:
        r = await c.post("/api/v1/namespaces", json={"metadata": {"name": "f", "finalizers": ["mine"]}})
        assert causes(r) == [("FieldValueInvalid", "metadata.finalizers[0]", f'Invalid value: "mine": {NOT_STANDARD}')]
        assert r.json()["message"] == f'Namespace "f" is invalid: metadata.finalizers[0]: Invalid value: "mine": ' \
                                      f"{NOT_STANDARD}"
        created = await ok(await c.post(f"{server.rbac}/clusterroles", json={"metadata": {"name": "g"}}), 201)
        put = dict(created, metadata={**created["metadata"], "finalizers": ["mine"]})
        r = await c.put(f"{server.rbac}/clusterroles/g", json=put)
        assert causes(r) == [("FieldValueInvalid", "metadata.finalizers[0]", f'Invalid value: "mine": {NOT_STANDARD}')]
        r = await c.patch(f"{server.rbac}/clusterroles/g", json={"metadata": {"finalizers": ["example.com/x", "mine"]}},
                          headers=MERGE)
        assert causes(r) == [("FieldValueInvalid", "metadata.finalizers[1]", f'Invalid value: "mine": {NOT_STANDARD}')]
        applied = (f"apiVersion: rbac.authorization.{server.domain}/v1\nkind: ClusterRole\n"
                   "metadata: {name: g, finalizers: [mine]}\n")
        r = await c.patch(f"{server.rbac}/clusterroles/g?fieldManager=m", content=applied, headers=APPLY)
        assert causes(r) == [("FieldValueInvalid", "metadata.finalizers[0]", f'Invalid value: "mine": {NOT_STANDARD}')]
        # The finalizers the collector and the namespace controller write stay accepted.
        r = await c.patch(f"{server.rbac}/clusterroles/g", headers=MERGE, json={"metadata": {
            "finalizers": ["orphan", "kubernetes", "kubernetes.io/pv-protection"]}})
        assert r.status_code == 200, r.text


async def test_two_controller_owner_references_are_422_on_patch(server):
    async with server.client() as c:
        await ok(await c.post(f"{server.rbac}/clusterroles", json={"metadata": {"name": "c"}}), 201)
        refs = [{"apiVersion": "v1", "kind": "ConfigMap", "name": "a", "uid": "1", "controller": True},
                {"apiVersion": "v1", "kind": "Secret", "name": "b", "uid": "2", "controller": True}]
        r = await c.patch(f"{server.rbac}/clusterroles/c", json={"metadata": {"ownerReferences": refs}}, headers=MERGE)
        [(reason, field, message)] = causes(r)
        assert (reason, field) == ("FieldValueInvalid", "metadata.ownerReferences")
        assert message.startswith('Invalid value: []v1.OwnerReference{v1.OwnerReference{APIVersion:"v1", '
                                  'Kind:"ConfigMap", Name:"a", UID:"1", Controller:(*bool)(0x')
        assert message.endswith('Only one reference can have Controller set to true. Found "true" in references for '
                                "ConfigMap/a and Secret/b")


async def test_a_custom_resource_checks_owner_references_but_only_warns_of_a_finalizer_without_a_path(crd_server):
    async with crd_server.client() as c:
        await c.post(crd_path(), json=widget_crd())
        await established(c)
        bad = widget("w")
        bad["metadata"]["ownerReferences"] = [{"apiVersion": "apps/", "kind": "Deployment", "name": "d", "uid": ""}]
        r = await c.post(widgets_path(), json=bad)
        assert causes(r) == [
            ("FieldValueInvalid", "metadata.ownerReferences.apiVersion",
             'Invalid value: "apps/": version must not be empty'),
            ("FieldValueInvalid", "metadata.ownerReferences.uid", 'Invalid value: "": uid must not be empty')]
        assert r.json()["details"] == {"name": "w", "group": "stable.example.com", "kind": "Widget",
                                       "causes": r.json()["details"]["causes"]}
        held = widget("held")
        held["metadata"]["finalizers"] = ["mine", "orphan", "example.com/hold"]
        r = await c.post(widgets_path(), json=held)
        assert r.status_code == 201, r.text
        assert r.headers.get("Warning") == ('299 - "metadata.finalizers: \\"mine\\": prefer a domain-qualified '
                                            'finalizer name including a path (/) to avoid accidental conflicts with '
                                            'other finalizer writers"')
        r = await c.patch(f"{widgets_path()}/held", json={"metadata": {"finalizers": ["mine", "also"]}},
                          headers=MERGE)
        assert r.status_code == 200, r.text
        assert r.headers.get("Warning") == ('299 - "metadata.finalizers: \\"also\\": prefer a domain-qualified '
                                            'finalizer name including a path (/) to avoid accidental conflicts with '
                                            'other finalizer writers"')
