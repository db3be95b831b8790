"""Field selectors and the access reviews' field requirements behave as apimachinery's `fields` package."""

from __future__ import annotations

import pytest

from runtime.machinery.selectors import (
    FieldRequirement,
    FieldSelector,
    Operator,
    SelectorError,
    field_requirements_from_review,
    parse_field_selector,
)

# --- field selectors -------------------------------------------------------------

def test_empty_field_selector_matches_everything():
    s = parse_field_selector("")
    assert s.empty and s.matches({}) and str(s) == ""


def test_field_equals_and_double_equals_are_the_same_term():
    assert parse_field_selector("metadata.name==x") == parse_field_selector("metadata.name=x")
    s = parse_field_selector("metadata.name==x")
    assert str(s) == "metadata.name=x"
    assert s.matches({"metadata.name": "x"}) and not s.matches({"metadata.name": "y"})


def test_field_not_equals_matches_a_missing_field():
    s = parse_field_selector("metadata.namespace!=kube-system")
    assert s.matches({}) and s.matches({"metadata.namespace": "default"})
    assert not s.matches({"metadata.namespace": "kube-system"})


def test_missing_field_reads_as_the_empty_string():
    assert parse_field_selector("spec.nodeName=").matches({})


def test_field_terms_are_anded_and_empty_terms_skipped():
    s = parse_field_selector(",a=1,,b!=2,")
    assert s.requirements == (FieldRequirement("a", Operator.EQUALS, "1"),
                              FieldRequirement("b", Operator.NOT_EQUALS, "2"))
    assert s.matches({"a": "1"}) and not s.matches({"a": "1", "b": "2"})


def test_field_terms_are_sorted_by_their_raw_text():
    assert str(parse_field_selector("b=1,a!=2")) == "a!=2,b=1"


def test_field_value_escapes_are_unescaped():
    s = parse_field_selector(r"a=x\,y\=z\\w")
    assert s.requirements == (FieldRequirement("a", Operator.EQUALS, "x,y=z\\w"),)


def test_field_string_escapes_values_again():
    text = r"a=x\,y\=z\\w"
    assert str(parse_field_selector(text)) == text


def test_field_value_with_unescaped_equals_is_rejected():
    with pytest.raises(SelectorError) as info:
        parse_field_selector("a=b=c")
    # Kubernetes formats the rune with %v: its code point.
    assert str(info.value) == "invalid field selector: unescaped character in value: 61"


def test_field_unescaped_comma_splits_terms():
    with pytest.raises(SelectorError) as info:
        parse_field_selector("a=x,y")
    assert str(info.value) == "invalid selector: 'a=x,y'; can't understand 'y'"


def test_field_unknown_escape_sequence_is_rejected():
    with pytest.raises(SelectorError) as info:
        parse_field_selector(r"a=\q")
    assert str(info.value) == r"invalid field selector: invalid escape sequence: \q"


def test_field_trailing_backslash_is_rejected():
    with pytest.raises(SelectorError) as info:
        parse_field_selector("a=b\\")
    assert str(info.value) == "invalid field selector: invalid escape sequence: \\"


def test_field_term_without_operator_is_rejected():
    with pytest.raises(SelectorError) as info:
        parse_field_selector("metadata.name")
    assert str(info.value) == "invalid selector: 'metadata.name'; can't understand 'metadata.name'"


def test_field_names_and_values_are_not_trimmed():
    s = parse_field_selector("a = b")
    assert s.requirements == (FieldRequirement("a ", Operator.EQUALS, " b"),)


def test_unknown_field_is_rejected_with_kubernetes_message():
    with pytest.raises(SelectorError) as info:
        parse_field_selector("spec.x=1", {"metadata.name", "metadata.namespace"})
    assert str(info.value) == "field label not supported: spec.x"


def test_allowed_fields_are_accepted():
    s = parse_field_selector("metadata.name=a,metadata.namespace!=b",
                             allowed={"metadata.name", "metadata.namespace"})
    assert len(s.requirements) == 2


def test_field_exact_match_returns_the_pinned_value():
    s = parse_field_selector("metadata.namespace!=x,metadata.name=web")
    assert s.exact_match("metadata.name") == "web"
    assert s.exact_match("metadata.namespace") is None
    assert FieldSelector().exact_match("metadata.name") is None


# --- access review field requirements ---------------------------------------------

def test_review_field_in_and_notin_become_equals_and_not_equals():
    s = field_requirements_from_review([
        {"key": "metadata.name", "operator": "In", "values": ["web"]},
        {"key": "metadata.namespace", "operator": "NotIn", "values": ["x"]},
    ])
    assert str(s) == "metadata.name=web,metadata.namespace!=x"
    assert s.exact_match("metadata.name") == "web"


def test_review_without_field_requirements_is_unrestricted():
    assert field_requirements_from_review([]).empty


@pytest.mark.parametrize(("req", "message"), [
    ({"key": "a", "operator": "In", "values": ["x", "y"]}, "fieldSelectors do not yet support multiple values"),
    ({"key": "a", "operator": "In"}, "fieldSelectors in must have one value"),
    ({"key": "a", "operator": "NotIn", "values": []}, "fieldSelectors not in must have one value"),
    ({"key": "a", "operator": "Exists"}, "fieldSelectors do not yet support Exists"),
    ({"key": "a", "operator": "DoesNotExist"}, "fieldSelectors do not yet support DoesNotExist"),
    ({"key": "a", "operator": "Equals", "values": ["x"]}, '"Equals" is not a valid field selector operator'),
])
def test_review_field_requirement_errors(req, message):
    with pytest.raises(SelectorError) as info:
        field_requirements_from_review([req])
    assert str(info.value) == message
