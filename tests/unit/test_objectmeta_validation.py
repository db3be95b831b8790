"""ObjectMeta's owner references and finalizers, one test per rule (apimachinery's `ValidateObjectMetaAccessor`,
`ValidateOwnerReferences`, `ValidateFinalizers`; core validation's `validateKubeFinalizerName`)."""

from __future__ import annotations

from runtime.machinery.scheme import Scheme
from runtime.machinery.validation import validate_object_meta
from tests.support.crds import widget_crd

SCHEME = Scheme()


def meta_errors(meta: dict, *, kube_finalizers: bool = False) -> list[str]:
    return [str(e) for e in validate_object_meta({"name": "x", **meta}, namespaced=False, name_rule="path-segment",
                                                 kube_finalizers=kube_finalizers)]


def kind_errors(kind: str, meta: dict, **body) -> list[str]:
    rt = SCHEME.by_kind(kind)
    full = {"name": "x", **meta, **({"namespace": "ns"} if rt.namespaced else {})}
    return [str(e) for e in rt.strategy.validate({"metadata": full, **body})]


def owner(**fields) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "name": "cm", "uid": "u1", **fields}


def test_owner_reference_needs_api_version_kind_name_and_uid():
    assert meta_errors({"ownerReferences": [{}]}) == [
        'metadata.ownerReferences.apiVersion: Invalid value: "": version must not be empty',
        'metadata.ownerReferences.kind: Invalid value: "": kind must not be empty',
        'metadata.ownerReferences.name: Invalid value: "": name must not be empty',
        'metadata.ownerReferences.uid: Invalid value: "": uid must not be empty']
    assert meta_errors({"ownerReferences": [owner()]}) == []


def test_owner_reference_api_version_without_a_version_has_an_empty_version():
    # schema.ParseGroupVersion: "apps/" has an empty version, "a/b/c" does not parse (so none either).
    for api_version in ("apps/", "/", "a/b/c"):
        assert meta_errors({"ownerReferences": [owner(apiVersion=api_version)]}) == [
            f'metadata.ownerReferences.apiVersion: Invalid value: "{api_version}": version must not be empty']
    assert meta_errors({"ownerReferences": [owner(apiVersion="apps/v1")]}) == []


def test_a_core_event_may_not_be_an_owner():
    assert meta_errors({"ownerReferences": [owner(kind="Event", name="e", uid="u", controller=True)]}) == [
        "metadata.ownerReferences: Invalid value: &OwnerReference{Kind:Event,Name:e,UID:u,APIVersion:v1,"
        "Controller:*true,BlockOwnerDeletion:nil,}: /v1, Kind=Event is disallowed from being an owner"]
    assert meta_errors({"ownerReferences": [owner(kind="Event", apiVersion="events.k8s.io/v1")]}) == []


def test_only_one_owner_reference_may_be_the_controller():
    refs = [owner(controller=True), owner(kind="Secret", name="s", uid="u2", controller=False),
            owner(kind="Lease", name="l", uid="u3", controller=True, blockOwnerDeletion=True)]
    out = meta_errors({"ownerReferences": refs})
    assert len(out) == 1
    assert out[0].startswith("metadata.ownerReferences: Invalid value: []v1.OwnerReference{v1.OwnerReference{"
                             'APIVersion:"v1", Kind:"ConfigMap", Name:"cm", UID:"u1", Controller:(*bool)(0x')
    assert out[0].endswith(': Only one reference can have Controller set to true. Found "true" in references for '
                           "ConfigMap/cm and Lease/l")
    assert meta_errors({"ownerReferences": refs[:2]}) == []


def test_owner_references_come_after_annotations_and_before_finalizers():
    out = meta_errors({"annotations": {"bad key": ""}, "finalizers": ["bad name"], "ownerReferences": [
        owner(uid="")]})
    assert [e.split(":")[0] for e in out] == ["metadata.annotations", "metadata.ownerReferences.uid",
                                              "metadata.finalizers"]


def test_generation_is_checked_before_labels_as_kubernetes_orders_them():
    out = meta_errors({"generation": -1, "labels": {"bad key": "v"}})
    assert [e.split(":")[0] for e in out] == ["metadata.generation", "metadata.labels"]


def test_built_in_kinds_refuse_a_finalizer_without_a_domain_that_is_not_standard():
    assert kind_errors("ClusterRole", {"finalizers": ["mine", "kubernetes.io/pv-protection", "other"]}) == [
        'metadata.finalizers[0]: Invalid value: "mine": name is neither a standard finalizer name nor is it '
        "fully qualified",
        'metadata.finalizers[2]: Invalid value: "other": name is neither a standard finalizer name nor is it '
        "fully qualified"]
    for kind in ("Namespace", "ServiceAccount", "Role", "RoleBinding", "ClusterRoleBinding"):
        fields = [e.split(":")[0] for e in kind_errors(kind, {"finalizers": ["mine"]})]
        assert [f for f in fields if f.startswith("metadata")] == ["metadata.finalizers[0]"]


def test_a_bad_qualified_name_without_a_domain_gets_both_errors_on_built_in_kinds():
    out = kind_errors("ClusterRole", {"finalizers": ["Bad_"]})
    assert [e.split(": Invalid value")[0] for e in out] == ["metadata.finalizers", "metadata.finalizers[0]"]


def test_standard_and_qualified_finalizers_pass_on_built_in_kinds():
    for finalizers in (["kubernetes"], ["orphan"], ["foregroundDeletion"], ["kubernetes.io/pvc-protection"],
                       ["customresourcecleanup.apiextensions.k8s.io/x"], ["example.com/hold"]):
        assert kind_errors("ClusterRole", {"finalizers": finalizers}) == []
        assert kind_errors("Namespace", {"finalizers": finalizers}) == []


def test_a_namespaces_spec_finalizers_take_every_standard_name():
    # ValidateNamespace's spec.finalizers use the same standard names (helper.IsStandardFinalizerName).
    for standard in ("kubernetes", "orphan", "foregroundDeletion"):
        assert kind_errors("Namespace", {}, spec={"finalizers": [standard]}) == []
    assert kind_errors("Namespace", {}, spec={"finalizers": ["mine"]}) == [
        'spec.finalizers: Invalid value: "mine": name is neither a standard finalizer name nor is it fully qualified']


def test_leases_and_crds_do_not_check_standard_finalizer_names():
    # Both validate ObjectMeta with apimachinery's ValidateObjectMeta, not core validation's.
    assert kind_errors("Lease", {"finalizers": ["mine"]}) == []
    crd = widget_crd()
    crd["metadata"]["finalizers"] = ["customresourcecleanup.apiextensions.k8s.io", "mine"]
    assert [e for e in SCHEME.by_kind("CustomResourceDefinition").strategy.validate(crd)
            if e.field.startswith("metadata")] == []


def test_orphan_with_foreground_deletion_is_invalid_on_every_kind():
    expected = ('metadata.finalizers: Invalid value: []string{"orphan", "foregroundDeletion"}: '
                "finalizer orphan and foregroundDeletion cannot be both set")
    assert kind_errors("ClusterRole", {"finalizers": ["orphan", "foregroundDeletion"]}) == [expected]
    assert meta_errors({"finalizers": ["orphan", "foregroundDeletion"]}) == [expected]


def test_owner_references_and_finalizer_names_are_checked_on_update():
    old = {"metadata": {"name": "x"}}
    new = {"metadata": {"name": "x", "finalizers": ["mine"], "ownerReferences": [owner(name="")]}}
    out = [str(e) for e in SCHEME.by_kind("ClusterRole").strategy.validate_update(new, old)]
    assert out == ['metadata.ownerReferences.name: Invalid value: "": name must not be empty',
                   'metadata.finalizers[0]: Invalid value: "mine": name is neither a standard finalizer name nor '
                   "is it fully qualified"]
