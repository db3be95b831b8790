"""Type checking a ValidatingAdmissionPolicy's expressions (runtime.machinery.celtypecheck; kube's
validating.TypeChecker): one rule per test, the warning in cel-go's words."""

from __future__ import annotations

from typing import Any

from runtime.machinery.scheme import Scheme
from runtime.machinery.celtypecheck import (
    MAX_TYPES, Shape, expression_warnings, model_shape, schema_shape)

SCHEME = Scheme("k8s.io")


def builtin(group: str, version: str, resource: str) -> tuple[str, Shape] | None:
    rt = SCHEME.by_resource(group, version, resource)
    return (rt.kind, model_shape(rt.info.model)) if rt is not None else None


def policy(*validations: dict[str, str], rules: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    rules = rules or [{"apiGroups": ["apps"], "apiVersions": ["v1"], "resources": ["deployments"]}]
    return {"spec": {"matchConstraints": {"resourceRules": rules}, "validations": list(validations)}}


def warnings(expression: str, **kwargs: Any) -> list[dict[str, str]]:
    return expression_warnings(policy({"expression": expression}, **kwargs), builtin)


def test_an_undefined_field_reads_as_kubes_documented_warning():
    assert warnings("object.replicas > 1") == [{
        "fieldRef": "spec.validations[0].expression",
        "warning": "apps/v1, Kind=Deployment: ERROR: <input>:1:7: undefined field 'replicas'\n"
                   " | object.replicas > 1\n"
                   " | ......^"}]


def undefined(found: list[dict[str, str]]) -> list[str]:
    """The undefined fields the warnings name, in order."""
    return [w.split("undefined field '")[1].split("'")[0] for f in found for w in f["warning"].split("\n")
            if "undefined field" in w]


def test_known_fields_give_no_warning():
    known = "object.spec.replicas > 1 && object.metadata.name != '' && oldObject.spec.paused"
    assert undefined(warnings(f"{known} && oldObject.spec.nope")) == ["nope"]  # only the one it lacks


def test_a_nested_undefined_field_is_found_under_known_ones():
    [found] = warnings("object.spec.template.spec.nodeNamex == ''")
    assert "undefined field 'nodeNamex'" in found["warning"] and ":1:26:" in found["warning"]


def test_has_checks_its_field():
    [found] = warnings("has(object.spec.nope)")
    assert "undefined field 'nope'" in found["warning"]


def test_a_macros_variable_has_the_lists_item_type():
    [found] = warnings("object.spec.template.spec.containers.all(c, c.imagex != '')")
    assert "undefined field 'imagex'" in found["warning"]
    assert warnings("object.spec.template.spec.containers.exists(c, c.image == 'x')") == []


def test_a_list_index_has_the_item_type():
    [found] = warnings("object.spec.template.spec.containers[0].nam == 'x'")
    assert "undefined field 'nam'" in found["warning"]


def test_a_maps_keys_are_not_fields():
    maps = "object.metadata.labels.anything == 'x' && object.metadata.labels['a'] == 'b'"
    assert undefined(warnings(f"{maps} && object.metadata.labelz.x == 'y'")) == ["labelz"]


def test_other_variables_are_dyn():
    assert undefined(warnings("request.whatever == params.nothing && variables.x.y && object.z")) == ["z"]


def test_params_are_checked_against_the_paramkinds_shape():
    configmap = model_shape(SCHEME.by_kind("ConfigMap").info.model)
    [found] = expression_warnings(policy({"expression": "params.data.x == '' && params.dat.x == ''"}), builtin,
                                  configmap)
    assert "ERROR: <input>:1:30: undefined field 'dat'" in found["warning"]


def test_rules_with_a_wildcard_group_or_version_and_wildcard_or_subresources_are_skipped():
    wild = [{"apiGroups": ["*"], "apiVersions": ["v1"], "resources": ["deployments"]},
            {"apiGroups": ["apps"], "apiVersions": ["v1"], "resources": ["*", "deployments/status"]}]
    assert warnings("object.nope", rules=wild) == []
    [found] = warnings("object.nope", rules=[*wild, {"apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}])
    assert found["warning"].startswith("/v1, Kind=Pod: ") and "Deployment" not in found["warning"]


def test_an_unknown_resource_is_skipped():
    [found] = warnings("object.nope", rules=[{"apiGroups": ["x.io", "apps"], "apiVersions": ["v1"],
                                              "resources": ["ys", "deployments"]}])
    assert found["warning"].startswith("apps/v1, Kind=Deployment: ") and found["warning"].count("Kind=") == 1


def test_each_type_is_checked_and_their_results_joined_by_group_version_and_kind():
    rules = [{"apiGroups": ["apps", ""], "apiVersions": ["v1"], "resources": ["deployments", "pods"]}]
    [found] = warnings("object.spec.replicas > 0", rules=rules)
    assert found["warning"].startswith("/v1, Kind=Pod: ERROR: <input>:1:12: undefined field 'replicas'")
    assert "apps/v1, Kind=Deployment" not in found["warning"]  # a Deployment has spec.replicas


def test_several_errors_of_one_expression_are_joined_in_source_order():
    [found] = warnings("object.b == object.a")
    assert [line for line in found["warning"].split("\n") if "ERROR" in line] == [
        "apps/v1, Kind=Deployment: ERROR: <input>:1:7: undefined field 'b'",
        "ERROR: <input>:1:19: undefined field 'a'"]


def test_a_message_expression_is_checked_under_its_own_field_ref():
    found = expression_warnings(policy({"expression": "true", "messageExpression": "object.msg"}), builtin)
    assert [w["fieldRef"] for w in found] == ["spec.validations[0].messageExpression"]


def test_a_rule_with_ten_types_ends_the_search_as_kubes_types_to_check():
    resources = [f"r{i:02}" for i in range(MAX_TYPES + 3)]

    def resolve(group: str, version: str, resource: str) -> tuple[str, Shape]:
        return resource.upper(), Shape("object")

    [found] = expression_warnings(policy({"expression": "object.x"}, rules=[
        {"apiGroups": ["g"], "apiVersions": ["v1"], "resources": list(reversed(resources))},
        {"apiGroups": ["a"], "apiVersions": ["v1"], "resources": ["first"]}]), resolve)
    seen = [line.split(":")[0] for line in found["warning"].split("\n") if "Kind=" in line]
    assert seen == [f"g/v1, Kind=R{i:02}" for i in range(MAX_TYPES)]  # sorted; the later rule is not reached


def test_a_crd_schema_gives_its_properties_and_objectmeta():
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "size": {"type": "integer"}, "tags": {"type": "object", "additionalProperties": {"type": "string"}},
        "items": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}}}}}}}

    def resolve(group: str, version: str, resource: str) -> tuple[str, Shape | None]:
        return "Widget", schema_shape(schema)

    rules = [{"apiGroups": ["example.com"], "apiVersions": ["v1"], "resources": ["widgets"]}]
    ok = "object.spec.size > 1 && object.spec.tags.x == '' && object.spec.items[0].name == '' && object.metadata.name != ''"
    assert expression_warnings(policy({"expression": ok}, rules=rules), resolve) == []
    [found] = expression_warnings(policy({"expression": "object.spec.items.all(i, i.nme == '')"}, rules=rules), resolve)
    assert found["warning"].startswith("example.com/v1, Kind=Widget: ERROR: <input>:1:27: undefined field 'nme'")


def test_a_preserve_unknown_fields_schema_is_dyn_below_its_root():
    shape = schema_shape({"type": "object", "x-kubernetes-preserve-unknown-fields": True})
    rules = [{"apiGroups": ["example.com"], "apiVersions": ["v1"], "resources": ["widgets"]}]
    found = expression_warnings(policy({"expression": "object.spec.anything && object.metadata.nope"}, rules=rules),
                                lambda g, v, r: ("Widget", shape))
    assert [w["warning"].count("undefined field") for w in found] == [2]  # spec is not a root field, nope not meta's


def test_the_caret_line_uses_wide_dots_for_wide_runes():
    [found] = warnings("'é' == object.nope")
    assert found["warning"].endswith(" | 'é' == object.nope\n | .\uff0e...........^")


def test_a_field_on_a_later_line_is_located_on_it():
    [found] = warnings("true &&\n  object.nope")
    assert "ERROR: <input>:2:9: undefined field 'nope'\n |   object.nope\n | ........^" in found["warning"]
