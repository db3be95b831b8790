"""Strategic merge patch: list semantics from the models, and each directive."""

from __future__ import annotations

from typing import Any

import pytest

from runtime.models import ClusterRole, ClusterRoleBinding, Namespace
from runtime.machinery.patch import MalformedPatch, PatchError, PatchNotApplicable, apply_strategic_merge_patch


def _role(**meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": "r", **meta},
        "rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}],
    }


def _owners(*uids: str) -> list[dict[str, Any]]:
    return [{"apiVersion": "v1", "kind": "Namespace", "name": f"o{u}", "uid": u} for u in uids]


def test_finalizers_merge_as_a_set_without_duplicates() -> None:
    doc = _role(finalizers=["a", "b"])
    out = apply_strategic_merge_patch(doc, {"metadata": {"finalizers": ["b", "c"]}}, ClusterRole)
    assert out["metadata"]["finalizers"] == ["a", "b", "c"]


def test_new_finalizer_without_element_order_goes_first_as_in_kubernetes() -> None:
    doc = _role(finalizers=["a", "b"])
    out = apply_strategic_merge_patch(doc, {"metadata": {"finalizers": ["c"]}}, ClusterRole)
    assert out["metadata"]["finalizers"] == ["c", "a", "b"]


def test_set_element_order_fixes_the_order_of_finalizers() -> None:
    doc = _role(finalizers=["a", "b"])
    patch = {"metadata": {"$setElementOrder/finalizers": ["a", "b", "c"], "finalizers": ["c"]}}
    out = apply_strategic_merge_patch(doc, patch, ClusterRole)
    assert out["metadata"]["finalizers"] == ["a", "b", "c"]


def test_set_element_order_alone_reorders_the_live_list() -> None:
    doc = _role(finalizers=["a", "b", "c"])
    patch = {"metadata": {"$setElementOrder/finalizers": ["c", "a", "b"]}}
    assert apply_strategic_merge_patch(doc, patch, ClusterRole)["metadata"]["finalizers"] == ["c", "a", "b"]


def test_set_element_order_that_contradicts_the_patch_list_is_400() -> None:
    doc = _role(finalizers=["a", "b"])
    patch = {"metadata": {"$setElementOrder/finalizers": ["a", "b"], "finalizers": ["b", "a"]}}
    with pytest.raises(PatchError) as err:
        apply_strategic_merge_patch(doc, patch, ClusterRole)
    assert type(err.value) is MalformedPatch
    assert "doesn't match $setElementOrder list" in err.value.message


def test_delete_from_primitive_list_removes_finalizers() -> None:
    doc = _role(finalizers=["a", "b", "c"])
    patch = {"metadata": {"$deleteFromPrimitiveList/finalizers": ["b", "zzz"]}}
    assert apply_strategic_merge_patch(doc, patch, ClusterRole)["metadata"]["finalizers"] == ["a", "c"]


def test_delete_from_primitive_list_never_creates_the_list() -> None:
    doc = _role()
    patch = {"metadata": {"$deleteFromPrimitiveList/finalizers": ["b"]}}
    assert "finalizers" not in apply_strategic_merge_patch(doc, patch, ClusterRole)["metadata"]


def test_owner_references_merge_by_uid() -> None:
    doc = _role(ownerReferences=_owners("1", "2"))
    patch = {"metadata": {"ownerReferences": [{"uid": "2", "name": "renamed"}, _owners("3")[0]]}}
    refs = apply_strategic_merge_patch(doc, patch, ClusterRole)["metadata"]["ownerReferences"]
    assert [(r["uid"], r["name"]) for r in refs] == [("1", "o1"), ("2", "renamed"), ("3", "o3")]
    assert refs[1]["kind"] == "Namespace"  # merged, not replaced


def test_patch_delete_in_a_map_list_removes_that_item() -> None:
    doc = _role(ownerReferences=_owners("1", "2"))
    patch = {"metadata": {"ownerReferences": [{"uid": "1", "$patch": "delete"}]}}
    refs = apply_strategic_merge_patch(doc, patch, ClusterRole)["metadata"]["ownerReferences"]
    assert [r["uid"] for r in refs] == ["2"]


def test_patch_replace_in_a_map_list_replaces_the_whole_list() -> None:
    doc = _role(ownerReferences=_owners("1", "2"))
    patch = {"metadata": {"ownerReferences": [{"$patch": "replace"}, _owners("9")[0]]}}
    refs = apply_strategic_merge_patch(doc, patch, ClusterRole)["metadata"]["ownerReferences"]
    assert [r["uid"] for r in refs] == ["9"]


def test_map_list_item_without_its_merge_key_is_422() -> None:
    doc = _role(ownerReferences=_owners("1"))
    with pytest.raises(PatchError) as err:
        apply_strategic_merge_patch(doc, {"metadata": {"ownerReferences": [{"name": "x"}]}}, ClusterRole)
    assert type(err.value) is PatchNotApplicable
    assert err.value.message == "map: map[name:x] does not contain declared merge key: uid"


def test_namespace_conditions_merge_by_type() -> None:
    doc = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n"},
           "status": {"phase": "Terminating", "conditions": [
               {"type": "A", "status": "True"}, {"type": "B", "status": "False"}]}}
    patch = {"status": {"conditions": [{"type": "B", "status": "True", "reason": "Done"}]}}
    conditions = apply_strategic_merge_patch(doc, patch, Namespace)["status"]["conditions"]
    assert conditions == [{"type": "A", "status": "True"}, {"type": "B", "status": "True", "reason": "Done"}]


def test_rules_are_replaced_whole() -> None:
    doc = _role()
    patch = {"rules": [{"verbs": ["list"], "apiGroups": ["apps"], "resources": ["deployments"]}]}
    assert apply_strategic_merge_patch(doc, patch, ClusterRole)["rules"] == patch["rules"]


def test_subjects_are_replaced_whole() -> None:
    doc = {"kind": "ClusterRoleBinding", "metadata": {"name": "b"},
           "subjects": [{"kind": "User", "name": "alice"}, {"kind": "User", "name": "bob"}],
           "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "r"}}
    patch = {"subjects": [{"kind": "Group", "name": "devs"}]}
    out = apply_strategic_merge_patch(doc, patch, ClusterRoleBinding)
    assert out["subjects"] == [{"kind": "Group", "name": "devs"}]
    assert out["roleRef"] == doc["roleRef"]


def test_maps_merge_recursively_and_null_deletes() -> None:
    doc = _role(labels={"a": "1", "b": "2"}, annotations={"x": "y"})
    out = apply_strategic_merge_patch(doc, {"metadata": {"labels": {"a": None, "c": "3"}}}, ClusterRole)
    assert out["metadata"]["labels"] == {"b": "2", "c": "3"}
    assert out["metadata"]["annotations"] == {"x": "y"}


def test_patch_replace_on_a_map_replaces_it() -> None:
    doc = _role(labels={"a": "1", "b": "2"})
    out = apply_strategic_merge_patch(doc, {"metadata": {"labels": {"$patch": "replace", "c": "3"}}}, ClusterRole)
    assert out["metadata"]["labels"] == {"c": "3"}


def test_patch_delete_on_a_map_removes_it() -> None:
    doc = _role(labels={"a": "1"})
    out = apply_strategic_merge_patch(doc, {"metadata": {"labels": {"$patch": "delete"}}}, ClusterRole)
    assert "labels" not in out["metadata"]


def test_patch_merge_on_a_map_is_the_default_merge() -> None:
    doc = _role(labels={"a": "1"})
    out = apply_strategic_merge_patch(doc, {"metadata": {"labels": {"$patch": "merge", "b": "2"}}}, ClusterRole)
    assert out["metadata"]["labels"] == {"a": "1", "b": "2"}


def test_unknown_patch_directive_is_400() -> None:
    with pytest.raises(PatchError) as err:
        apply_strategic_merge_patch(_role(), {"metadata": {"labels": {"$patch": "explode"}}}, ClusterRole)
    assert type(err.value) is MalformedPatch
    assert err.value.message.startswith("unknown patch type: explode in map:")


def test_retain_keys_clears_keys_not_listed() -> None:
    doc = _role(labels={"a": "1"}, annotations={"x": "y"})
    patch = {"metadata": {"$retainKeys": ["name", "labels"], "labels": {"b": "2"}}}
    assert apply_strategic_merge_patch(doc, patch, ClusterRole)["metadata"] == {
        "name": "r", "labels": {"a": "1", "b": "2"}}


def test_retain_keys_must_list_every_key_the_patch_sets() -> None:
    patch = {"metadata": {"$retainKeys": ["name"], "labels": {"b": "2"}}}
    with pytest.raises(PatchError) as err:
        apply_strategic_merge_patch(_role(), patch, ClusterRole)
    assert (type(err.value), err.value.message) == (MalformedPatch, "invalid patch format of retainKeys")


def test_unknown_fields_merge_as_untyped_objects() -> None:
    doc = {**_role(), "extra": {"a": 1, "list": [1, 2]}}
    out = apply_strategic_merge_patch(doc, {"extra": {"b": 2, "list": [3]}}, ClusterRole)
    assert out["extra"] == {"a": 1, "b": 2, "list": [3]}


def test_added_values_are_cleaned_of_directives() -> None:
    patch = {"metadata": {"ownerReferences": [_owners("1")[0], {"uid": "2", "$patch": "delete"}]}}
    out = apply_strategic_merge_patch(_role(), patch, ClusterRole)
    assert [r["uid"] for r in out["metadata"]["ownerReferences"]] == ["1"]


def test_input_document_and_patch_are_untouched() -> None:
    doc = _role(finalizers=["a"])
    patch = {"metadata": {"finalizers": ["b"], "$setElementOrder/finalizers": ["a", "b"]}}
    apply_strategic_merge_patch(doc, patch, ClusterRole)
    assert doc == _role(finalizers=["a"])
    assert patch == {"metadata": {"finalizers": ["b"], "$setElementOrder/finalizers": ["a", "b"]}}


def test_non_object_strategic_patch_is_400() -> None:
    with pytest.raises(PatchError) as err:
        apply_strategic_merge_patch(_role(), b"[1]", ClusterRole)
    assert type(err.value) is MalformedPatch


def test_lists_of_lists_are_422() -> None:
    doc = _role(finalizers=["a"])
    with pytest.raises(PatchError) as err:
        apply_strategic_merge_patch(doc, {"metadata": {"finalizers": [["x"]]}}, ClusterRole)
    assert (type(err.value), err.value.message) == (PatchNotApplicable, "lists of lists are not supported")
