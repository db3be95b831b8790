"""Property tests: prune is idempotent and keeps declared fields; validate never raises; valid defaults validate;
`needs_defaults` says exactly when defaulting changes an object."""

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from runtime.server.schema import (
    Structural,
    apply_defaults,
    needs_defaults,
    prune,
    structural_errors,
    validate,
)

OBJ = {"type": "object"}
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-2**40, 2**40), st.floats(allow_nan=False, allow_infinity=False),
                    st.text(max_size=8), st.sampled_from(["a", "b", "2020-01-02T03:04:05Z", 1.5, 4]))
JSON = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                     st.dictionaries(st.text(max_size=5), inner, max_size=4)),
                    max_leaves=20)
NAMES = st.sampled_from(["a", "b", "spec", "x-y", "metadata", "kind"])


def _leaf_schema():
    return st.one_of(
        st.just({"type": "string", "maxLength": 5}),
        st.just({"type": "string", "pattern": "^[a-z]*$"}),
        st.just({"type": "string", "format": "date-time"}),
        st.just({"type": "integer", "minimum": 0, "maximum": 100}),
        st.just({"type": "number", "multipleOf": 0.5}),
        st.just({"type": "boolean"}),
        st.just({"x-kubernetes-int-or-string": True}),
        st.just({"type": "string", "enum": ["a", "b"]}),
        st.just({"type": "string", "nullable": True}),
    )


SCHEMAS = st.recursive(
    _leaf_schema(),
    lambda inner: st.one_of(
        st.builds(lambda props, preserve: {**OBJ, "properties": props,
                                           **({"x-kubernetes-preserve-unknown-fields": True} if preserve else {})},
                  st.dictionaries(NAMES, inner, max_size=3), st.booleans()),
        st.builds(lambda item: {"type": "array", "items": item}, inner),
        st.builds(lambda value: {**OBJ, "additionalProperties": value}, inner),
        st.builds(lambda item: {"type": "array", "x-kubernetes-list-type": "set", "items": item}, _leaf_schema()),
        st.builds(lambda props: {**OBJ, "properties": props,
                                 "x-kubernetes-validations": [{"rule": "size(self) >= 0"}]},
                  st.dictionaries(NAMES, inner, max_size=2)),
    ),
    max_leaves=8,
)
ROOTS = st.builds(lambda props: {**OBJ, "properties": props}, st.dictionaries(NAMES, SCHEMAS, max_size=3))
FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _declared(obj, s: Structural | None) -> list[tuple]:
    """Paths of values the schema declares (properties and items of declared parents)."""
    out = []
    if s is None:
        return out
    if isinstance(obj, dict):
        for key, value in obj.items():
            child = s.properties.get(key)
            if child is not None:
                out.append((key,))
                out.extend((key, *p) for p in _declared(value, child))
    elif isinstance(obj, list) and s.items is not None:
        for i, value in enumerate(obj):
            out.extend((i, *p) for p in _declared(value, s.items))
    return out


def _has(obj, path) -> bool:
    for step in path:
        if isinstance(step, int):
            if not isinstance(obj, list) or step >= len(obj):
                return False
        elif not isinstance(obj, dict) or step not in obj:
            return False
        obj = obj[step]
    return True


@FAST
@given(ROOTS, st.dictionaries(NAMES, JSON, max_size=4))
def test_prune_is_idempotent(schema_dict, obj):
    schema = Structural.from_openapi(schema_dict)
    once, _ = prune(obj, schema)
    assert prune(once, schema) == (once, [])


@FAST
@given(ROOTS, st.dictionaries(NAMES, JSON, max_size=4))
def test_prune_never_drops_a_declared_field(schema_dict, obj):
    schema = Structural.from_openapi(schema_dict)
    pruned, _ = prune(obj, schema)
    declared = _declared(obj, schema)
    assume(declared)  # an object with nothing declared proves nothing (Unsatisfiable if none ever has)
    for path in declared:
        assert _has(pruned, path), path


@FAST
@given(ROOTS, JSON, st.one_of(st.none(), JSON))
def test_validate_never_raises(schema_dict, obj, old):
    schema = Structural.from_openapi(schema_dict)
    validate(obj, schema, old=old)
    validate(apply_defaults(prune(obj, schema)[0], schema), schema)


@FAST
@given(st.dictionaries(NAMES, st.tuples(_leaf_schema(), SCALARS), min_size=1, max_size=4),
       st.dictionaries(NAMES, JSON, max_size=3))
def test_defaults_that_are_valid_produce_objects_that_validate(leaves, extra):
    props = {k: {**leaf, "default": default} for k, (leaf, default) in leaves.items()
             if k not in ("metadata", "kind") and default is not None}
    schema_dict = {**OBJ, "properties": {"spec": {**OBJ, "default": {}, "properties": props}}}
    assume(structural_errors(schema_dict) == [])
    schema = Structural.from_openapi(schema_dict)
    obj, _ = prune({k: v for k, v in extra.items() if k != "spec"}, schema)
    defaulted = apply_defaults(obj, schema)
    assert set(defaulted["spec"]) == set(props)
    assert validate(defaulted, schema) == []


def _with_defaults(schema: dict, rnd) -> dict:
    """`schema` with a `default` put on some of its nodes (any JSON value: the walk must not care)."""
    out = dict(schema)
    for key in ("properties",):
        if key in out:
            out[key] = {k: _with_defaults(v, rnd) for k, v in out[key].items()}
    for key in ("items", "additionalProperties"):
        if isinstance(out.get(key), dict):
            out[key] = _with_defaults(out[key], rnd)
    if rnd.random() < 0.4:
        out["default"] = rnd.choice([0, "a", {}, [], True, {"a": 1}])
    return out


@FAST
@given(ROOTS, st.randoms(use_true_random=False), st.dictionaries(NAMES, JSON, max_size=4))
def test_needs_defaults_is_true_exactly_when_defaulting_changes_the_object(schema_dict, rnd, obj):
    schema = Structural.from_openapi(_with_defaults(schema_dict, rnd))
    assert needs_defaults(obj, schema) == (apply_defaults(obj, schema) != obj)
