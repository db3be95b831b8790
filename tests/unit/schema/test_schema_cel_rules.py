"""x-kubernetes-validations: CEL rules with self/oldSelf, messages, reasons, field paths and a cost limit."""

from runtime.server.schema import CELLimits, Structural, validate

OBJ = {"type": "object"}


def _schema(rules: list[dict], props: dict | None = None) -> Structural:
    props = props or {"a": {"type": "integer"}, "b": {"type": "integer"}}
    return Structural.from_openapi({**OBJ, "properties": {"spec": {**OBJ, "properties": props,
                                                                   "x-kubernetes-validations": rules}}})


def _errors(schema: Structural, spec, old_spec=None, **kw) -> list[str]:
    old = None if old_spec is None else {"spec": old_spec}
    return [str(e) for e in validate({"spec": spec}, schema, old=old, **kw)]


def test_failing_rule_without_message_says_failed_rule():
    assert _errors(_schema([{"rule": "self.a < self.b"}]), {"a": 2, "b": 1}) == [
        'spec: Invalid value: "object": failed rule: self.a < self.b']


def test_passing_rule_reports_nothing():
    assert _errors(_schema([{"rule": "self.a < self.b"}]), {"a": 1, "b": 2}) == []


def test_message_replaces_the_rule():
    assert _errors(_schema([{"rule": "self.a < self.b", "message": "a must be below b"}]), {"a": 2, "b": 1}) == [
        'spec: Invalid value: "object": a must be below b']


def test_message_expression_is_evaluated():
    rule = {"rule": "self.a < self.b", "messageExpression": "'a is ' + string(self.a)"}
    assert _errors(_schema([rule]), {"a": 2, "b": 1}) == ['spec: Invalid value: "object": a is 2']


def test_message_expression_error_falls_back_to_message():
    rule = {"rule": "self.a < self.b", "message": "static", "messageExpression": "self.nope"}
    assert _errors(_schema([rule]), {"a": 2, "b": 1}) == ['spec: Invalid value: "object": static']


def test_reason_chooses_the_error_type():
    assert _errors(_schema([{"rule": "self.a < self.b", "reason": "FieldValueForbidden", "message": "no"}]),
                   {"a": 2, "b": 1}) == ["spec: Forbidden: no"]
    assert _errors(_schema([{"rule": "self.a < self.b", "reason": "FieldValueRequired", "message": "need"}]),
                   {"a": 2, "b": 1}) == ["spec: Required value: need"]


def test_field_path_extends_the_error_path():
    rule = {"rule": "self.a < self.b", "fieldPath": ".a", "message": "too big"}
    assert _errors(_schema([rule]), {"a": 2, "b": 1}) == ['spec.a: Invalid value: "object": too big']


def test_transition_rule_runs_only_on_update():
    schema = _schema([{"rule": "self.a == oldSelf.a", "message": "a is immutable"}])
    assert _errors(schema, {"a": 1}) == []
    assert _errors(schema, {"a": 2}, {"a": 1}) == ['spec: Invalid value: "object": a is immutable']
    assert _errors(schema, {"a": 1}, {"a": 1}) == []


def test_rules_on_scalars_name_the_scalar_type():
    props = {"name": {"type": "string", "x-kubernetes-validations": [{"rule": "self.startsWith('x')"}]}}
    schema = Structural.from_openapi({**OBJ, "properties": {"spec": {**OBJ, "properties": props}}})
    assert [str(e) for e in validate({"spec": {"name": "y"}}, schema)] == [
        "spec.name: Invalid value: \"string\": failed rule: self.startsWith('x')"]


def test_rules_on_list_items_are_indexed():
    props = {"l": {"type": "array", "items": {"type": "integer", "x-kubernetes-validations": [{"rule": "self > 0"}]}}}
    schema = Structural.from_openapi({**OBJ, "properties": {"spec": {**OBJ, "properties": props}}})
    assert [str(e) for e in validate({"spec": {"l": [1, 0]}}, schema)] == [
        'spec.l[1]: Invalid value: "integer": failed rule: self > 0']


def test_map_list_items_correlate_with_old_items_by_key():
    item = {**OBJ, "properties": {"name": {"type": "string"}, "v": {"type": "integer"}}, "required": ["name"],
            "x-kubernetes-validations": [{"rule": "self.v >= oldSelf.v", "message": "v may not decrease"}]}
    props = {"l": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                   "items": item}}
    schema = Structural.from_openapi({**OBJ, "properties": {"spec": {**OBJ, "properties": props}}})
    old = {"spec": {"l": [{"name": "a", "v": 5}, {"name": "b", "v": 1}]}}
    new = {"spec": {"l": [{"name": "b", "v": 0}, {"name": "a", "v": 6}, {"name": "c", "v": 0}]}}
    assert [str(e) for e in validate(new, schema, old=old)] == ['spec.l[0]: Invalid value: "object": v may not decrease']


def test_kubernetes_string_and_list_functions():
    props = {"s": {"type": "string"}, "l": {"type": "array", "items": {"type": "integer"}}}
    rules = [{"rule": "self.s.lowerAscii() == 'abc' && self.s.split('B').size() == 2"},
             {"rule": "self.l.isSorted() && self.l.sum() == 6 && self.l.max() == 3 && self.l.indexOf(2) == 1"},
             {"rule": "self.s.find('[A-Z]+') == 'ABC' && self.s.substring(1) == 'BC' && 'a,b'.indexOf(',') == 1"}]
    assert _errors(_schema(rules, props), {"s": "ABC", "l": [1, 2, 3]}) == []


def test_has_and_escaped_property_names():
    props = {"foo-bar": {"type": "string"}, "if": {"type": "string"}}
    rules = [{"rule": "has(self.foo__dash__bar) && self.__if__ == 'x'"}]
    assert _errors(_schema(rules, props), {"foo-bar": "a", "if": "x"}) == []


def test_root_metadata_shows_only_name_and_generate_name():
    schema = Structural.from_openapi({**OBJ, "x-kubernetes-validations": [
        {"rule": "self.metadata.name == 'n' && !has(self.metadata.labels)"}]})
    assert validate({"metadata": {"name": "n", "labels": {"a": "b"}}}, schema) == []


def test_evaluation_error_is_reported_with_the_rule():
    assert _errors(_schema([{"rule": "self.c == 1"}]), {"a": 1}) == [
        'spec: Invalid value: "object": no such key: c evaluating rule: self.c == 1']


def test_rule_over_the_call_limit_stops_with_kubernetes_words():
    props = {"l": {"type": "array", "items": {"type": "integer"}}}
    rule = {"rule": "self.l.all(x, self.l.all(y, self.l.all(z, x + y + z > 0)))"}
    errors = _errors(_schema([rule, {"rule": "false"}], props), {"l": list(range(1, 60))},
                     cel_limits=CELLimits(per_call=20_000, per_request=1_000_000))
    assert errors == [('spec: Invalid value: "object": \'operation cancelled: actual cost limit exceeded\': no further '
                      'validation rules will be run due to call cost exceeds limit for rule: '
                      'self.l.all(x, self.l.all(y, self.l.all(z, x + y + z > 0)))')]


def test_running_out_of_the_request_budget_stops_validation():
    props = {"l": {"type": "array", "items": {"type": "integer", "x-kubernetes-validations": [
        {"rule": "self >= 0"}]}}}
    errors = _errors(_schema([], props), {"l": list(range(100))}, cel_limits=CELLimits(per_call=1000, per_request=300))
    assert errors[-1] == ('spec.l[' + errors[-1].split("[")[1].split("]")[0] + ']: Invalid value: "integer": '
                          'validation failed due to running out of cost budget, no further validation rules will be run')
    assert len(errors) == 1


def test_rules_are_not_run_when_types_are_wrong():
    errors = _errors(_schema([{"rule": "self.a < self.b"}]), {"a": "x", "b": 1})
    assert errors[-1] == ('<nil>: Invalid value: null: some validation rules were not checked because the object was '
                          'invalid; correct the existing errors to complete validation')


def test_rules_compile_once_per_schema():
    schema = _schema([{"rule": "self.a < self.b"}])
    program = schema.properties["spec"].validations[0].program
    validate({"spec": {"a": 1, "b": 2}}, schema)
    assert schema.properties["spec"].validations[0].program is program
