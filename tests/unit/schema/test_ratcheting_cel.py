"""Validation ratcheting of CEL rules (Kubernetes 1.33): on update, a rule without oldSelf failing on a value
unchanged from the old object is a Warning, not an error; transition rules are never ratcheted."""

from runtime.server.schema import Structural, validate
from runtime.server.schema.ratcheting import Correlation, ratchets_at

OBJ = {"type": "object"}
SCHEMA = Structural.from_openapi({**OBJ, "properties": {"spec": {**OBJ, "properties": {
    "limits": {**OBJ, "x-kubernetes-validations": [{"rule": "self.min <= self.max", "message": "min above max"}],
               "properties": {"min": {"type": "integer"}, "max": {"type": "integer"}}},
    "name": {"type": "string", "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "immutable"},
                                                             {"rule": "self.size() < 4", "message": "too long"}]},
    "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
              "items": {**OBJ, "x-kubernetes-validations": [{"rule": "self.port > 0", "message": "positive"}],
                        "properties": {"name": {"type": "string"}, "port": {"type": "integer"}}}},
    "other": {"type": "string"},
}}}})


def _check(spec, old_spec=None):
    warnings: list[str] = []
    old = None if old_spec is None else {"spec": old_spec}
    errors = [str(e) for e in validate({"spec": spec}, SCHEMA, old=old, warnings=warnings)]
    return errors, warnings


def test_ratcheting_a_rule_failing_on_an_unchanged_value_is_a_warning():
    old = {"limits": {"min": 5, "max": 1}}
    assert _check(old)[0] == ['spec.limits: Invalid value: "object": min above max']
    assert _check({**old, "other": "x"}, old) == ([], ['spec.limits: Invalid value: "object": min above max'])


def test_ratcheting_a_rule_failing_on_a_changed_value_is_an_error():
    errors, warnings = _check({"limits": {"min": 6, "max": 1}}, {"limits": {"min": 5, "max": 1}})
    assert errors == ['spec.limits: Invalid value: "object": min above max'] and warnings == []


def test_ratcheting_never_applies_to_transition_rules():
    # "self == oldSelf" fails only when the value changes; an unchanged too-long name is ratcheted.
    assert _check({"name": "long"}, {"name": "long"}) == ([], ['spec.name: Invalid value: "string": too long'])
    errors, _ = _check({"name": "abc"}, {"name": "long"})
    assert errors == ['spec.name: Invalid value: "string": immutable']


def test_ratcheting_correlates_map_list_items_for_rules():
    old = {"ports": [{"name": "a", "port": 0}]}
    errors, warnings = _check({"ports": [{"name": "b", "port": 0}, {"name": "a", "port": 0}]}, old)
    assert errors == ['spec.ports[0]: Invalid value: "object": positive']
    assert warnings == ['spec.ports[1]: Invalid value: "object": positive']


def test_ratcheting_a_create_reports_every_failure():
    assert _check({"limits": {"min": 5, "max": 1}})[1] == []


def test_ratcheting_never_applies_to_the_roots_api_version_and_kind():
    schema = Structural.from_openapi({**OBJ, "properties": {"kind": {"type": "string"}}})
    root = Correlation({"kind": "A"}, {"kind": "A"}, schema)
    assert not ratchets_at(root, "kind")


def test_rules_do_not_run_after_a_blocking_schema_error_unless_it_is_ratcheted():
    schema = Structural.from_openapi({**OBJ, "properties": {"spec": {
        **OBJ, "required": ["size"], "x-kubernetes-validations": [{"rule": "self.size < 3", "message": "small"}],
        "properties": {"size": {"type": "integer"}, "name": {"type": "string", "maxLength": 2}}}}})
    errors = [e.field for e in validate({"spec": {"name": "long"}}, schema)]
    assert sorted(errors) == ["<nil>", "spec.name", "spec.size"]
    old = {"spec": {"size": 5, "name": "long"}}
    warnings: list[str] = []
    assert [str(e) for e in validate({"spec": {"size": 6, "name": "long"}}, schema, old=old, warnings=warnings)] == [
        'spec: Invalid value: "object": small']


OPTIONAL_SCHEMA = Structural.from_openapi({**OBJ, "properties": {"spec": {**OBJ, "properties": {"replicas": {
    "type": "integer", "x-kubernetes-validations": [{
        "rule": "!oldSelf.hasValue() ? self < 10 : self >= oldSelf.value()", "optionalOldSelf": True,
        "message": "starts below 10, never shrinks"}]}}}}})


def test_an_optional_old_self_rule_runs_on_create_with_an_empty_old_self():
    assert [str(e) for e in validate({"spec": {"replicas": 12}}, OPTIONAL_SCHEMA)] == [
        'spec.replicas: Invalid value: "integer": starts below 10, never shrinks']
    assert validate({"spec": {"replicas": 3}}, OPTIONAL_SCHEMA) == []


def test_an_optional_old_self_rule_sees_the_old_value_on_update_and_is_never_ratcheted():
    old = {"spec": {"replicas": 12}}
    assert validate({"spec": {"replicas": 12}}, OPTIONAL_SCHEMA, old=old) == []
    assert [e.field for e in validate({"spec": {"replicas": 11}}, OPTIONAL_SCHEMA, old=old)] == ["spec.replicas"]


def test_an_empty_optional_old_self_cannot_be_dereferenced():
    schema = Structural.from_openapi({**OBJ, "properties": {"spec": {**OBJ, "x-kubernetes-validations": [
        {"rule": "self == oldSelf.value()", "optionalOldSelf": True}]}}})
    assert [str(e) for e in validate({"spec": {}}, schema)] == [
        'spec: Invalid value: "object": optional.none() dereference evaluating rule: self == oldSelf.value()']
