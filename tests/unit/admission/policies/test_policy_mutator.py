"""A MutatingAdmissionPolicy's mutations (`runtime.server.admission.policies.mutator`), as kube's patchers
(smd.go, json_patch.go): ApplyConfiguration merged by server-side apply's rules, JSONPatch as RFC 6902, kube's
words for what fails; one test per rule."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.policy_fakes import SCHEME, deployment
from runtime.server.admission.policies.expressions import Scope
from runtime.server.admission.policies.mutator import MUTATION_INPUTS, MutationError, compile_mutating
from runtime.server.admission.policies.values import to_cel

AR = "admissionregistration.k8s.io/v1"
DEPLOYMENTS = SCHEME.by_api_version_kind("apps/v1", "Deployment")


def mutate(obj: dict[str, Any], patch_type: str, expression: str) -> dict[str, Any]:
    member = "jsonPatch" if patch_type == "JSONPatch" else "applyConfiguration"
    policy = {"apiVersion": AR, "kind": "MutatingAdmissionPolicy", "metadata": {"name": "m"},
              "spec": {"mutations": [{"patchType": patch_type, member: {"expression": expression}}]}}
    compiled = compile_mutating(policy)
    scope = Scope({"object": to_cel(obj), **MUTATION_INPUTS}, compiled.variables)
    return compiled.mutation(0, scope, obj, DEPLOYMENTS.strategy.merge_schema)


def containers(obj: dict[str, Any]) -> list[tuple[str, str]]:
    return [(c["name"], c["image"]) for c in obj["spec"]["template"]["spec"]["containers"]]


def test_an_apply_configuration_merges_a_map_list_by_its_keys():
    merged = mutate(deployment(), "ApplyConfiguration", """Object{spec: Object.spec{template: Object.spec.template{
        spec: Object.spec.template.spec{containers: [Object.spec.template.spec.containers{name: "sidecar",
        image: "s:1"}, Object.spec.template.spec.containers{name: "c", image: "nginx:2"}]}}}}""")
    assert sorted(containers(merged)) == [("c", "nginx:2"), ("sidecar", "s:1")]  # order: structured merge's


def test_an_apply_configuration_merges_maps_per_key():
    merged = mutate(deployment(), "ApplyConfiguration",
                    'Object{metadata: Object.metadata{labels: {"mutated": "true"}}}')
    assert merged["metadata"]["labels"] == {"app": "web", "mutated": "true"}


def test_an_apply_configuration_keeps_the_objects_managed_fields():
    obj = deployment()
    obj["metadata"]["managedFields"] = [{"manager": "kubectl", "operation": "Update", "apiVersion": "apps/v1",
                                         "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {}}}]
    merged = mutate(obj, "ApplyConfiguration", "Object{spec: Object.spec{replicas: 4}}")
    assert merged["spec"]["replicas"] == 4 and merged["metadata"]["managedFields"] == obj["metadata"]["managedFields"]


def test_an_apply_configuration_may_not_set_an_atomic_struct():
    with pytest.raises(MutationError) as failed:
        mutate(deployment(), "ApplyConfiguration",
               'Object{spec: Object.spec{selector: Object.spec.selector{matchLabels: {"l": "v"}}}}')
    assert str(failed.value) == ("error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, "
                                 "maps or structs: .spec.selector")


def test_an_apply_configuration_may_not_set_an_atomic_list():
    with pytest.raises(MutationError, match=r"may not mutate atomic arrays, maps or structs: "
                                            r"\.spec\.template\.spec\.containers\[0\]\.args$"):
        mutate(deployment(), "ApplyConfiguration", """Object{spec: Object.spec{template: Object.spec.template{
            spec: Object.spec.template.spec{containers: [Object.spec.template.spec.containers{name: "c",
            args: ["x"]}]}}}}""")


def test_an_apply_configuration_with_a_wrong_type_name_is_a_type_mismatch():
    with pytest.raises(MutationError) as failed:
        mutate(deployment(), "ApplyConfiguration", "Object{spec: Object.specx{replicas: 1}}")
    assert str(failed.value) == ('type mismatch: unexpected type name "Object.specx", expected "Object.spec", which '
                                 "matches field name path from root Object type")


def test_an_apply_configuration_must_be_an_object():
    with pytest.raises(MutationError) as failed:
        mutate(deployment(), "ApplyConfiguration", "{'metadata': {'labels': {'x': 'y'}}}")
    assert str(failed.value) == "unsupported return type from ApplyConfiguration expression: map"


def test_a_json_patch_is_applied_in_order():
    patched = mutate(deployment(), "JSONPatch", '[JSONPatch{op: "replace", path: "/spec/replicas", value: 7}, '
                     'JSONPatch{op: "add", path: "/metadata/labels/" + jsonpatch.escapeKey("a/b"), value: "c"}]')
    assert patched["spec"]["replicas"] == 7 and patched["metadata"]["labels"]["a/b"] == "c"


def test_a_json_patch_value_may_be_an_object_literal():
    patched = mutate(deployment(), "JSONPatch", '[JSONPatch{op: "add", path: "/spec/selector", '
                     'value: Object.spec.selector{matchLabels: {"environment": "test"}}}]')
    assert patched["spec"]["selector"] == {"matchLabels": {"environment": "test"}}


def test_a_failed_test_operation_leaves_the_object_unchanged():
    obj = deployment()
    assert mutate(obj, "JSONPatch", '[JSONPatch{op: "test", path: "/spec/replicas", value: 9}, '
                  'JSONPatch{op: "replace", path: "/spec/replicas", value: 2}]') is obj


def test_a_json_patch_that_does_not_apply_is_a_json_path_error():
    with pytest.raises(MutationError, match=r"^JSONPath: "):
        mutate(deployment(), "JSONPatch", '[JSONPatch{op: "remove", path: "/spec/nothing"}]')


def test_a_json_patch_must_be_a_list_of_json_patches():
    with pytest.raises(MutationError, match="^type mismatch: JSONPatchType.expression should evaluate to array$"):
        mutate(deployment(), "JSONPatch", 'JSONPatch{op: "add", path: "/a", value: 1}')
    with pytest.raises(MutationError, match="should evaluate to array of JSONPatch, got element of map"):
        mutate(deployment(), "JSONPatch", '[{"op": "add"}]')


def test_a_mutation_that_does_not_compile_reports_the_compilers_words():
    with pytest.raises(MutationError) as failed:
        mutate(deployment(), "JSONPatch", "[")
    assert str(failed.value).startswith("Syntax error") and failed.value.error_type == "compile_error"
