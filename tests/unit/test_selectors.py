"""Label and field selectors behave as apimachinery's `labels` and `fields` packages."""

from __future__ import annotations

import pytest

from runtime import selectors
from runtime.selectors import (
    FieldRequirement,
    FieldSelector,
    LabelSelector,
    Operator,
    Requirement,
    SelectorError,
    field_requirements_from_review,
    label_selector_from_dict,
    label_selector_from_set,
    parse_field_selector,
    parse_label_selector,
    requirements_from_review,
)

KEY_REGEX_HINT = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
                  "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', "
                  "regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
VALUE_REGEX_HINT = ("a valid label must be an empty string or consist of alphanumeric characters, "
                    "'-', '_' or '.', and must start and end with an alphanumeric character "
                    "(e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
                    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")


def sel(text: str) -> LabelSelector:
    return parse_label_selector(text)


def parse_error(text: str) -> str:
    with pytest.raises(SelectorError) as info:
        parse_label_selector(text)
    return str(info.value)


# --- label grammar ---------------------------------------------------------------

def test_all_exports_exist():
    assert all(hasattr(selectors, name) for name in selectors.__all__)


def test_selector_error_is_a_value_error():
    assert issubclass(SelectorError, ValueError)


def test_empty_label_selector_matches_everything():
    s = sel("")
    assert s.empty and s.requirements == () and str(s) == ""
    assert s.matches({}) and s.matches({"a": "b"})


def test_whitespace_only_label_selector_matches_everything():
    assert sel(" \t\n ").empty


def test_equals_matches_only_that_value():
    s = sel("app=web")
    assert s.requirements == (Requirement("app", Operator.EQUALS, ("web",)),)
    assert s.matches({"app": "web"})
    assert not s.matches({"app": "db"}) and not s.matches({})


def test_double_equals_matches_like_equals_and_prints_as_written():
    s = sel("app==web")
    assert s.requirements[0].operator is Operator.DOUBLE_EQUALS
    assert s.matches({"app": "web"}) and not s.matches({"app": "db"})
    assert str(s) == "app==web"


def test_not_equals_matches_objects_missing_the_key():
    s = sel("app!=web")
    assert s.matches({}) and s.matches({"app": "db"})
    assert not s.matches({"app": "web"})


def test_in_matches_any_listed_value():
    s = sel("env in (prod, staging)")
    assert s.matches({"env": "prod"}) and s.matches({"env": "staging"})
    assert not s.matches({"env": "dev"}) and not s.matches({})


def test_notin_matches_objects_missing_the_key():
    s = sel("env notin (prod)")
    assert s.matches({}) and s.matches({"env": "dev"})
    assert not s.matches({"env": "prod"})


def test_bare_key_means_exists():
    s = sel("tier")
    assert s.requirements == (Requirement("tier", Operator.EXISTS),)
    assert s.matches({"tier": ""}) and not s.matches({})


def test_bang_key_means_does_not_exist():
    s = sel("!tier")
    assert s.requirements == (Requirement("tier", Operator.DOES_NOT_EXIST),)
    assert s.matches({}) and not s.matches({"tier": "x"})


def test_comma_means_and():
    s = sel("a=1,b")
    assert s.matches({"a": "1", "b": ""})
    assert not s.matches({"a": "1"}) and not s.matches({"b": "", "a": "2"})


def test_whitespace_around_tokens_is_ignored():
    assert sel(" a = 1 ,\tb\nin ( x , y ) , ! c ") == sel("a=1,b in (x,y),!c")


def test_empty_value_set_means_the_empty_string():
    s = sel("x in ()")
    assert s.requirements[0].values == ("",)
    assert s.matches({"x": ""}) and not s.matches({"x": "a"})


def test_empty_entries_in_value_set_mean_the_empty_string():
    assert sel("x in (a,,b)").requirements[0].values == ("", "a", "b")
    assert sel("x in (,a)").requirements[0].values == ("", "a")
    assert sel("x in (a,)").requirements[0].values == ("", "a")


def test_equals_with_no_value_pins_the_empty_value():
    s = sel("a=,b")
    assert s.requirements[0] == Requirement("a", Operator.EQUALS, ("",))
    assert s.matches({"a": "", "b": "x"}) and not s.matches({"a": "x", "b": "x"})


def test_in_and_notin_are_identifiers_in_key_and_value_position():
    s = sel("in in (in, notin)")
    assert s.requirements == (Requirement("in", Operator.IN, ("in", "notin")),)


def test_prefixed_keys_are_accepted():
    s = sel("app.kubernetes.io/name=web")
    assert s.matches({"app.kubernetes.io/name": "web"})


def test_greater_than_and_less_than_compare_integers():
    s = sel("replicas>2,replicas<10")
    assert s.matches({"replicas": "5"})
    assert not s.matches({"replicas": "2"}) and not s.matches({"replicas": "10"})
    assert not s.matches({"replicas": "five"}) and not s.matches({})
    assert str(s) == "replicas>2,replicas<10"


def test_values_are_sorted_and_deduplicated():
    assert sel("x in (b,a,b)").requirements[0].values == ("a", "b")


def test_canonical_string_sorts_requirements_by_key_and_values():
    s = sel("z notin (c,a), !y, x==1, w!=2, v in (b,a), u, t=3")
    assert str(s) == "t=3,u,v in (a,b),w!=2,x==1,!y,z notin (a,c)"
    assert sel(str(s)) == s


def test_requirements_with_the_same_key_keep_their_order():
    assert str(sel("b,a=2,a=1")) == "a=2,a=1,b"


def test_none_labels_are_no_labels():
    assert sel("!a").matches(None)
    assert not sel("a").matches(None)


def test_label_exact_match_reads_equals_and_single_value_in():
    assert sel("a=1,b in (2),c in (3,4),d!=5").exact_match("a") == "1"
    assert sel("b in (2)").exact_match("b") == "2"
    assert sel("c in (3,4)").exact_match("c") is None
    assert sel("d!=5").exact_match("d") is None
    assert sel("a=1").exact_match("zzz") is None


# --- label errors ----------------------------------------------------------------

@pytest.mark.parametrize(("text", "message"), [
    ("a=b,", "found '', expected: identifier after ','"),
    (",a", "found ',', expected: !, identifier, or 'end of string'"),
    ("=a", "found '=', expected: !, identifier, or 'end of string'"),
    ("a=b c", "found 'c', expected: ',' or 'end of string'"),
    ("a b", "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"),
    ("a in (b", "unable to parse requirement: found '', expected: ',' or ')'"),
    ("a in b", "unable to parse requirement: found 'b' expected: '('"),
    ("a in (=)", "unable to parse requirement: found '=', expected: ',', ')' or identifier"),
    ("a in (,,)", "unable to parse requirement: found ')', expected: ',', or identifier"),
    ("a=(b)", "unable to parse requirement: found '(', expected: identifier"),
    ("!", "unable to parse requirement: found '', expected: identifier"),
])
def test_malformed_label_selector_is_rejected_with_kubernetes_message(text, message):
    assert parse_error(text) == message


@pytest.mark.parametrize(("text", "message"), [
    ("a===b", "unable to parse requirement: found '=', expected: identifier"),
    ("a!=!=b", "unable to parse requirement: found '!=', expected: identifier"),
    ("a in in (b)", "unable to parse requirement: found 'in' expected: '('"),
    ("a = = b", "unable to parse requirement: found '=', expected: identifier"),
    ("!!a", "unable to parse requirement: found '!', expected: identifier"),
])
def test_duplicated_operators_are_rejected(text, message):
    assert parse_error(text) == message


def test_does_not_exist_takes_no_operator():
    assert parse_error("!a=b") == "found '=', expected: ',' or 'end of string'"


def test_bad_key_is_rejected_with_kubernetes_message():
    assert parse_error("app:=x") == (
        'unable to parse requirement: <nil>: Invalid value: "app:": name part ' + KEY_REGEX_HINT)


def test_bad_key_prefix_is_rejected():
    message = parse_error("Example.com/a=b")
    assert message.startswith('unable to parse requirement: <nil>: Invalid value: "Example.com/a": '
                              "prefix part a lowercase RFC 1123 subdomain must consist of")


def test_empty_key_prefix_is_rejected():
    assert "prefix part must be non-empty" in parse_error("/a=b")


def test_key_with_two_slashes_is_rejected():
    assert "a valid label key must consist of" in parse_error("a/b/c=d")
    assert "with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')" in parse_error("a/b/c")


def test_key_name_longer_than_63_bytes_is_rejected():
    assert sel("k" * 63).requirements[0].key == "k" * 63
    assert parse_error("k" * 64) == (
        f'unable to parse requirement: <nil>: Invalid value: "{"k" * 64}": '
        "name part must be no more than 63 bytes")


def test_key_must_start_and_end_alphanumeric():
    assert "name part" in parse_error("-a")
    assert "name part" in parse_error("a_")
    assert sel("a_b.c-d").requirements[0].key == "a_b.c-d"


def test_bad_value_is_rejected_with_kubernetes_message():
    assert parse_error("app=we$b") == (
        'unable to parse requirement: values[0][app]: Invalid value: "we$b": ' + VALUE_REGEX_HINT)


def test_value_longer_than_63_bytes_is_rejected():
    assert parse_error("a=" + "v" * 64) == (
        f'unable to parse requirement: values[0][a]: Invalid value: "{"v" * 64}": '
        "must be no more than 63 bytes")


def test_several_value_errors_are_aggregated_in_brackets():
    assert parse_error("a in ($, %)") == (
        f'unable to parse requirement: [values[0][a]: Invalid value: "$": {VALUE_REGEX_HINT}, '
        f'values[1][a]: Invalid value: "%": {VALUE_REGEX_HINT}]')


def test_greater_than_requires_an_integer():
    assert parse_error("a>b") == ("unable to parse requirement: values[0]: Invalid value: \"b\": "
                                  "for 'Gt', 'Lt' operators, the value must be an integer")


# --- Requirement construction (labels.NewRequirement) --------------------------

def test_requirement_in_with_empty_values_is_rejected():
    with pytest.raises(SelectorError, match="for 'in', 'notin' operators, values set can't be empty"):
        Requirement("a", Operator.IN, ())


def test_requirement_exists_with_values_is_rejected():
    with pytest.raises(SelectorError, match="values set must be empty for exists and does not exist"):
        Requirement("a", Operator.EXISTS, ("x",))


def test_requirement_equals_needs_exactly_one_value():
    with pytest.raises(SelectorError, match="exact-match compatibility requires one single value"):
        Requirement("a", Operator.EQUALS, ("x", "y"))


def test_requirement_unknown_operator_is_rejected():
    with pytest.raises(SelectorError, match='operator: Unsupported value: "In"'):
        Requirement("a", "In", ("x",))  # type: ignore[arg-type]


def test_requirement_accepts_operator_strings():
    assert Requirement("a", "notin", ["x"]) == Requirement("a", Operator.NOT_IN, ("x",))  # type: ignore[arg-type]


# --- metav1.LabelSelector --------------------------------------------------------

def test_none_label_selector_matches_nothing():
    s = label_selector_from_dict(None)
    assert s == LabelSelector.nothing()
    assert not s.matches({}) and not s.matches({"a": "b"})
    assert not s.empty and str(s) == ""


def test_nothing_stays_nothing_when_requirements_are_added():
    assert not LabelSelector.nothing().add(Requirement("a", Operator.EXISTS)).matches({"a": ""})


def test_empty_label_selector_dict_matches_everything():
    for empty in ({}, {"matchLabels": {}, "matchExpressions": []}, {"matchLabels": None}):
        s = label_selector_from_dict(empty)
        assert s.empty and s.matches({}) and s == LabelSelector.everything()


def test_match_labels_and_expressions_are_anded():
    s = label_selector_from_dict({
        "matchLabels": {"app": "web"},
        "matchExpressions": [
            {"key": "env", "operator": "In", "values": ["prod", "staging"]},
            {"key": "canary", "operator": "DoesNotExist"},
            {"key": "tier", "operator": "Exists", "values": []},
            {"key": "zone", "operator": "NotIn", "values": ["b"]},
        ],
    })
    assert str(s) == "app=web,!canary,env in (prod,staging),tier,zone notin (b)"
    assert s.matches({"app": "web", "env": "prod", "tier": "1"})
    assert not s.matches({"app": "web", "env": "prod", "tier": "1", "canary": "y"})
    assert not s.matches({"app": "web", "env": "prod", "tier": "1", "zone": "b"})


def test_dict_in_without_values_is_rejected():
    with pytest.raises(SelectorError) as info:
        label_selector_from_dict({"matchExpressions": [{"key": "a", "operator": "In", "values": []}]})
    assert str(info.value) == ("values: Invalid value: null: "
                               "for 'in', 'notin' operators, values set can't be empty")


def test_dict_exists_with_values_is_rejected():
    with pytest.raises(SelectorError) as info:
        label_selector_from_dict({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]})
    assert str(info.value) == ('values: Invalid value: ["x"]: '
                               "values set must be empty for exists and does not exist")


def test_dict_unknown_operator_is_rejected():
    with pytest.raises(SelectorError) as info:
        label_selector_from_dict({"matchExpressions": [{"key": "a", "operator": "in", "values": ["x"]}]})
    assert str(info.value) == '"in" is not a valid pod selector operator'


def test_dict_bad_key_is_reported_at_the_key_path():
    with pytest.raises(SelectorError) as info:
        label_selector_from_dict({"matchLabels": {"a b": "c"}})
    assert str(info.value) == 'key: Invalid value: "a b": name part ' + KEY_REGEX_HINT


def test_dict_bad_match_label_value_is_rejected():
    with pytest.raises(SelectorError, match=r"values\[0\]\[a\]: Invalid value"):
        label_selector_from_dict({"matchLabels": {"a": "-x"}})


def test_dict_non_string_values_are_rejected():
    with pytest.raises(SelectorError):
        label_selector_from_dict({"matchLabels": {"a": 1}})
    with pytest.raises(SelectorError):
        label_selector_from_dict({"matchExpressions": [{"key": "a", "operator": "In", "values": "x"}]})


def test_label_selector_from_set_matches_exactly_the_set():
    s = label_selector_from_set({"b": "2", "a": "1"})
    assert str(s) == "a=1,b=2"
    assert s.matches({"a": "1", "b": "2", "c": "3"}) and not s.matches({"a": "1"})
    assert label_selector_from_set(None).empty


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


# --- access review requirements --------------------------------------------------

def test_review_label_requirements_become_a_selector():
    s = requirements_from_review([
        {"key": "env", "operator": "In", "values": ["prod"]},
        {"key": "app", "operator": "Exists"},
    ])
    assert str(s) == "app,env in (prod)"


def test_review_without_label_requirements_is_unrestricted():
    assert requirements_from_review([]).empty and requirements_from_review(None).empty


def test_review_in_without_values_is_rejected():
    with pytest.raises(SelectorError, match="values set can't be empty"):
        requirements_from_review([{"key": "a", "operator": "NotIn"}])


def test_review_exists_with_values_is_rejected():
    with pytest.raises(SelectorError, match="values set must be empty"):
        requirements_from_review([{"key": "a", "operator": "DoesNotExist", "values": ["x"]}])


def test_review_label_operator_must_be_known():
    with pytest.raises(SelectorError, match="is not a valid pod selector operator"):
        requirements_from_review([{"key": "a", "operator": "Gt", "values": ["1"]}])


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
