"""controllerutil rules: create_or_update / create_or_patch and owner references, on dicts and typed models.

Pure tests use a recording fake client (no server); the in-process ones at the end use `open_test_env()`.
"""

from __future__ import annotations

import copy

import pytest
import trio

from controllers import gc
from runtime import models
from runtime.client.interface import MERGE_PATCH
from runtime.client.typed import CustomResource, KubeModel, bind_kind
from runtime.controller.controllerutil import (
    AlreadyOwnedError, OperationResult, create_or_patch, create_or_update, set_controller_reference,
    set_owner_reference,
)
from runtime.controller.testing import open_test_env
from runtime.machinery import errors
from runtime.machinery.scheme import Scheme

SCHEME = Scheme()
RBAC = "rbac.authorization.svc.io/v1"
RULES = [{"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get"]}]


class GadgetSpec(KubeModel):
    size: int = 0


class GadgetStatus(KubeModel):
    phase: str = ""


class Gadget(CustomResource):
    spec: GadgetSpec = GadgetSpec()
    status: GadgetStatus = GadgetStatus()


GADGETS = bind_kind(Gadget, "example.com/v1", "gadgets", namespaced=True)


class FakeClient:
    """Objects by (kind, namespace, name) in dict form; records each write as (verb, subresource, body)."""

    def __init__(self, *objects: dict) -> None:
        self.scheme = SCHEME
        self.objects = {self._key(o["kind"], o["metadata"]): copy.deepcopy(o) for o in objects}
        self.writes: list[tuple[str, str, dict]] = []

    @staticmethod
    def _key(kind: str, meta: dict) -> tuple[str, str, str]:
        return kind, meta.get("namespace") or "", meta["name"]

    def _rt(self, kind):
        return kind if not isinstance(kind, type) else (GADGETS if kind is Gadget else SCHEME.by_model(kind))

    @staticmethod
    def _dict(obj) -> dict:
        return copy.deepcopy(obj) if isinstance(obj, dict) else obj.model_dump(by_alias=True, exclude_none=True,
                                                                               mode="json")

    def _out(self, kind, data: dict):
        return copy.deepcopy(data) if not isinstance(kind, type) else kind.model_validate(data)

    async def get(self, kind, name, *, namespace=""):
        rt = self._rt(kind)
        found = self.objects.get((rt.kind, namespace, name))
        if found is None:
            raise errors.NotFound(f'{rt.plural} "{name}" not found')
        return self._out(kind, found)

    async def create(self, obj):
        data = self._dict(obj)
        data["metadata"]["resourceVersion"] = "1"
        kind = type(obj) if not isinstance(obj, dict) else data["kind"]
        rt_kind = data.get("kind") or self._rt(kind).kind
        self.objects[self._key(rt_kind, data["metadata"])] = data
        self.writes.append(("create", "", self._dict(obj)))
        return self._out(kind if isinstance(kind, type) else None, data)

    async def update(self, obj):
        data = self._dict(obj)
        kind = type(obj) if not isinstance(obj, dict) else None
        rt_kind = data.get("kind") or self._rt(kind).kind
        self.writes.append(("update", "", copy.deepcopy(data)))
        data["metadata"]["resourceVersion"] = str(int(data["metadata"]["resourceVersion"]) + 1)
        self.objects[self._key(rt_kind, data["metadata"])] = data
        return self._out(kind, data)

    async def patch(self, kind, name, patch, *, patch_type=MERGE_PATCH, namespace="", subresource=""):
        assert patch_type == MERGE_PATCH
        self.writes.append(("patch", subresource, copy.deepcopy(patch)))
        key = (self._rt(kind).kind, namespace, name)
        merged = _merge(self.objects[key], patch if not subresource else {"status": patch.get("status")})
        self.objects[key] = merged
        return self._out(kind, merged)


def _merge(doc, patch):
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(doc) if isinstance(doc, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = _merge(out.get(k), v)
    return out


def config_map(name: str = "cm", data: dict | None = None) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"},
            "data": dict(data or {})}


def gadget(name: str = "g", size: int = 1, phase: str = "") -> dict:
    return {"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": name, "namespace": "default"},
            "spec": {"size": size}, "status": {"phase": phase}}


# ---- create_or_update ----------------------------------------------------------------------------

async def test_create_or_update_creates_a_missing_object_after_mutate_ran_on_it():
    client = FakeClient()
    obj = config_map()
    result = await create_or_update(client, obj, lambda o: o["data"].update(a="1"))
    assert result is OperationResult.CREATED and result == "created"
    assert client.writes == [("create", "", config_map(data={"a": "1"}))]
    assert obj["metadata"]["resourceVersion"] == "1"  # obj is the object as stored, as Go's is


async def test_create_or_update_mutates_the_current_state_and_updates_when_changed():
    client = FakeClient(dict(config_map(data={"a": "1", "kept": "x"}), metadata={
        "name": "cm", "namespace": "default", "resourceVersion": "7"}))
    obj = config_map()  # what the caller has need not be the current state
    result = await create_or_update(client, obj, lambda o: o["data"].update(a="2"))
    assert result is OperationResult.UPDATED
    verb, _, body = client.writes[0]
    assert verb == "update" and body["data"] == {"a": "2", "kept": "x"}
    assert body["metadata"]["resourceVersion"] == "7"  # conditional on the version read
    assert obj["metadata"]["resourceVersion"] == "8"


async def test_create_or_update_writes_nothing_when_mutate_changed_nothing():
    client = FakeClient(config_map(data={"a": "1"}))
    result = await create_or_update(client, config_map(), lambda o: o["data"].update(a="1"))
    assert result is OperationResult.UNCHANGED and client.writes == []


async def test_create_or_update_works_on_typed_models():
    client = FakeClient()
    obj = Gadget(metadata=models.ObjectMeta(name="g", namespace="default"))

    def grow(g: Gadget) -> None:
        g.spec.size = 3

    assert await create_or_update(client, obj, grow) is OperationResult.CREATED
    assert isinstance(obj, Gadget) and obj.metadata.resource_version == "1"
    assert await create_or_update(client, obj, grow) is OperationResult.UNCHANGED
    assert await create_or_update(client, obj, lambda g: setattr(g.spec, "size", 4)) is OperationResult.UPDATED
    assert client.objects[("Gadget", "default", "g")]["spec"] == {"size": 4}


@pytest.mark.parametrize("change", ["name", "namespace"])
async def test_a_mutate_that_changes_the_name_or_namespace_is_an_error(change):
    client = FakeClient(config_map())
    with pytest.raises(ValueError, match="^MutateFn cannot mutate object name and/or object namespace$"):
        await create_or_update(client, config_map(), lambda o: o["metadata"].update({change: "other"}))
    with pytest.raises(ValueError, match="^MutateFn cannot mutate object name and/or object namespace$"):
        await create_or_update(FakeClient(), config_map(), lambda o: o["metadata"].update({change: "other"}))
    assert client.writes == []


async def test_create_or_update_raises_the_apis_error():
    class Failing(FakeClient):
        async def get(self, kind, name, *, namespace=""):
            raise errors.Forbidden("configmaps \"cm\" is forbidden")

    with pytest.raises(errors.Forbidden):
        await create_or_update(Failing(), config_map(), lambda o: None)


async def test_an_async_mutate_is_refused():
    async def mutate(o):
        pass

    with pytest.raises(TypeError):
        await create_or_update(FakeClient(), config_map(), mutate)


# ---- create_or_patch -----------------------------------------------------------------------------

async def test_create_or_patch_creates_a_missing_object():
    client = FakeClient()
    assert await create_or_patch(client, gadget(), lambda o: None) is OperationResult.CREATED
    assert [w[0] for w in client.writes] == ["create"]


async def test_create_or_patch_sends_a_merge_patch_of_what_mutate_changed_and_says_updated():
    client = FakeClient(gadget(size=1))
    obj = gadget()
    result = await create_or_patch(client, obj, lambda o: o["spec"].update(size=2))
    assert result is OperationResult.UPDATED
    assert client.writes == [("patch", "", {"spec": {"size": 2}})]


async def test_create_or_patch_patches_only_the_status_subresource_when_only_the_status_changed():
    client = FakeClient(gadget(phase="Pending"))
    result = await create_or_patch(client, gadget(), lambda o: o["status"].update(phase="Ready"))
    assert result is OperationResult.UPDATED_STATUS_ONLY and result == "updatedStatusOnly"
    assert client.writes == [("patch", "status", {"status": {"phase": "Ready"}})]


async def test_create_or_patch_patches_object_then_status_and_says_updated_status():
    client = FakeClient(gadget(size=1, phase="Pending"))
    obj = Gadget.model_validate(gadget())

    def mutate(g: Gadget) -> None:
        g.spec.size, g.status.phase = 5, "Ready"

    result = await create_or_patch(client, obj, mutate)
    assert result is OperationResult.UPDATED_STATUS and result == "updatedStatus"
    assert client.writes == [("patch", "", {"spec": {"size": 5}}),
                             ("patch", "status", {"status": {"phase": "Ready"}})]
    assert obj.spec.size == 5 and obj.status.phase == "Ready"


async def test_create_or_patch_writes_nothing_when_mutate_changed_nothing():
    client = FakeClient(gadget())
    assert await create_or_patch(client, gadget(), lambda o: None) is OperationResult.UNCHANGED
    assert client.writes == []


async def test_create_or_patch_refuses_a_mutate_that_renames():
    with pytest.raises(ValueError, match="MutateFn cannot mutate object name and/or object namespace"):
        await create_or_patch(FakeClient(gadget()), gadget(), lambda o: o["metadata"].update(name="x"))


# ---- owner references ----------------------------------------------------------------------------

def role(name: str, ns: str | None = "default", uid: str = "") -> dict:
    meta: dict = {"name": name, "uid": uid or f"uid-{name}"}
    if ns:
        meta["namespace"] = ns
    return {"apiVersion": RBAC, "kind": "Role" if ns else "ClusterRole", "metadata": meta, "rules": RULES}


def test_set_controller_reference_takes_apiversion_kind_from_the_owner_and_uid_name_from_its_metadata():
    dependent = config_map()
    set_controller_reference(role("owner"), dependent, SCHEME)
    assert dependent["metadata"]["ownerReferences"] == [
        {"apiVersion": RBAC, "kind": "Role", "name": "owner", "uid": "uid-owner", "controller": True,
         "blockOwnerDeletion": True}]


def test_set_owner_reference_is_not_a_controller_reference():
    dependent = config_map()
    set_owner_reference(role("owner"), dependent, SCHEME)
    assert dependent["metadata"]["ownerReferences"] == [
        {"apiVersion": RBAC, "kind": "Role", "name": "owner", "uid": "uid-owner"}]


def test_typed_owner_and_dependent_take_the_kind_bound_or_served_by_the_scheme():
    owner = Gadget(metadata=models.ObjectMeta(name="g", namespace="default", uid="uid-g"))
    dependent = models.ConfigMap(metadata=models.ObjectMeta(name="cm", namespace="default"))
    set_controller_reference(owner, dependent, SCHEME)
    assert [r.to_dict() for r in dependent.metadata.owner_references] == [
        {"apiVersion": "example.com/v1", "kind": "Gadget", "name": "g", "uid": "uid-g", "controller": True,
         "blockOwnerDeletion": True}]
    built_in = models.ClusterRole(metadata=models.ObjectMeta(name="cr", uid="uid-cr"))
    set_owner_reference(built_in, dependent, SCHEME)
    assert dependent.metadata.owner_references[1].api_version == RBAC
    assert dependent.metadata.owner_references[1].kind == "ClusterRole"


def test_an_existing_reference_to_the_same_owner_is_updated_in_place():
    dependent = config_map()
    dependent["metadata"]["ownerReferences"] = [
        {"apiVersion": "v1", "kind": "Secret", "name": "s", "uid": "uid-s"},
        {"apiVersion": RBAC, "kind": "Role", "name": "owner", "uid": "old-uid"}]
    set_controller_reference(role("owner", uid="new-uid"), dependent, SCHEME)
    refs = dependent["metadata"]["ownerReferences"]
    assert [r["kind"] for r in refs] == ["Secret", "Role"]
    assert refs[1]["uid"] == "new-uid" and refs[1]["controller"] is True


def test_a_second_controller_is_refused_with_already_owned_error():
    dependent = config_map()
    set_controller_reference(role("first"), dependent, SCHEME)
    with pytest.raises(AlreadyOwnedError) as caught:
        set_controller_reference(role("second"), dependent, SCHEME)
    assert str(caught.value) == "Object default/cm is already owned by another Role controller first"
    assert caught.value.owner["name"] == "first"
    set_controller_reference(role("first"), dependent, SCHEME)  # the same controller again is fine
    set_owner_reference(role("second"), dependent, SCHEME)       # and another plain owner too
    assert len(dependent["metadata"]["ownerReferences"]) == 2


def test_a_cluster_scoped_dependent_of_a_namespaced_owner_is_refused():
    dependent = role("cluster-wide", ns=None)
    with pytest.raises(ValueError) as caught:
        set_owner_reference(role("owner", ns="team-a"), dependent, SCHEME)
    assert str(caught.value) == "cluster-scoped resource must not have a namespace-scoped owner, owner's namespace team-a"
    assert "ownerReferences" not in dependent["metadata"]


def test_an_owner_in_another_namespace_is_refused():
    with pytest.raises(ValueError) as caught:
        set_controller_reference(role("owner", ns="team-a"), config_map(), SCHEME)
    assert str(caught.value) == ("cross-namespace owner references are disallowed, owner's namespace team-a, "
                                 "obj's namespace default")


def test_a_cluster_scoped_owner_may_own_a_namespaced_dependent():
    dependent = config_map()
    set_controller_reference(role("cluster-owner", ns=None), dependent, SCHEME)
    assert dependent["metadata"]["ownerReferences"][0]["kind"] == "ClusterRole"


# ---- in process ----------------------------------------------------------------------------------

async def test_create_or_update_creates_then_updates_then_is_unchanged_in_process():
    async with open_test_env(controllers=False) as env:
        want = {"a": "1"}

        def mutate_dict(o: dict) -> None:
            o["data"] = dict(want)

        def mutate_model(o: models.ConfigMap) -> None:
            o.data = dict(want)

        for obj, mutate in ((config_map("as-dict"), mutate_dict),
                            (models.ConfigMap(metadata=models.ObjectMeta(name="typed", namespace="default")),
                             mutate_model)):
            want = {"a": "1"}
            assert await create_or_update(env.client, obj, mutate) is OperationResult.CREATED
            want = {"a": "2"}
            assert await create_or_update(env.client, obj, mutate) is OperationResult.UPDATED
            assert await create_or_update(env.client, obj, mutate) is OperationResult.UNCHANGED
        stored = await env.client.get(models.ConfigMap, "typed", namespace="default")
        assert stored.data == {"a": "2"}
        assert (await env.client.get(env.scheme.by_kind("ConfigMap"), "as-dict", namespace="default"))["data"] == \
            {"a": "2"}


async def test_set_controller_reference_makes_the_collector_delete_the_dependent_with_its_owner(autojump_clock):
    async with open_test_env(controllers=False) as env:
        manager = env.manager()
        gc.setup(manager)
        await env.start(manager)
        owner = await env.client.create(role("owner", ns="default") | {"metadata": {
            "name": "owner", "namespace": "default"}})
        dependent = models.ConfigMap(metadata=models.ObjectMeta(name="owned", namespace="default"))
        set_controller_reference(owner, dependent, env.scheme)
        await env.client.create(dependent)
        await env.client.delete(env.scheme.by_kind("Role"), "owner", namespace="default")
        with trio.fail_after(60):
            await env.wait_for(env.scheme.by_kind("ConfigMap"), "owned", lambda o: o is None, namespace="default")
