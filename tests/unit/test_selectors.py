"""Label selectors behave as apimachinery's `labels` package (field selectors: test_field_selectors.py)."""

from __future__ import annotations

import re

import pytest

from runtime.machinery import selectors
from runtime.machinery.selectors import (
    ParsedLabelSelector,
    Operator,
    Requirement,
    SelectorError,
    label_selector_from_dict,
    label_selector_from_set,
    parse_label_selector,
    requirements_from_review,
)
from runtime.machinery.selectors.parser import Token, lex

KEY_REGEX_HINT = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
                  "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', "
                  "regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
VALUE_REGEX_HINT = ("a valid label must be an empty string or consist of alphanumeric characters, "
                    "'-', '_' or '.', and must start and end with an alphanumeric character "
                    "(e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
                    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")


def sel(text: str) -> ParsedLabelSelector:
    return parse_label_selector(text)


def parse_error(text: str) -> str:
    with pytest.raises(SelectorError) as info:
        parse_label_selector(text)
    return str(info.value)


# --- label grammar ---------------------------------------------------------------

def test_all_exports_exist():
    assert {"parse_label_selector", "parse_field_selector", "label_selector_from_dict"} <= set(selectors.__all__)
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


def test_requirement_unknown_operator_is_quoted_as_go_quotes_it():
    with pytest.raises(SelectorError, match='operator: Unsupported value: "Iné": supported values: "in", '):
        Requirement("a", "Iné", ("x",))  # type: ignore[arg-type]


def test_requirement_values_are_shown_as_go_marshals_them():
    # field.Invalid of a []string: json.Marshal, which keeps é and escapes <, > and &.
    with pytest.raises(SelectorError, match=re.escape('values: Invalid value: ["é","\\u003cy\\u003e"]: exact-match')):
        Requirement("a", Operator.EQUALS, ("é", "<y>"))


def test_requirement_accepts_operator_strings():
    assert Requirement("a", "notin", ["x"]) == Requirement("a", Operator.NOT_IN, ("x",))  # type: ignore[arg-type]


# --- metav1.LabelSelector --------------------------------------------------------

def test_none_label_selector_matches_nothing():
    s = label_selector_from_dict(None)
    assert s == ParsedLabelSelector.nothing()
    assert not s.matches({}) and not s.matches({"a": "b"})
    assert not s.empty and str(s) == ""


def test_nothing_stays_nothing_when_requirements_are_added():
    assert not ParsedLabelSelector.nothing().add(Requirement("a", Operator.EXISTS)).matches({"a": ""})


def test_empty_label_selector_dict_matches_everything():
    for empty in ({}, {"matchLabels": {}, "matchExpressions": []}, {"matchLabels": None}):
        s = label_selector_from_dict(empty)
        assert s.empty and s.matches({}) and s == ParsedLabelSelector.everything()


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


def test_doubled_comma_inside_a_value_set_adds_the_empty_value():
    s = sel("x in (a,,b)")
    assert s.requirements[0].values == ("", "a", "b")
    assert s.matches({"x": ""}) and s.matches({"x": "b"}) and not s.matches({"x": "c"})


def test_doubled_comma_before_the_closing_parenthesis_is_rejected_as_in_apimachinery():
    # parseIdentifiersList consumes the second comma, then meets ")" where it wants a value.
    assert parse_error("x in (a,,)") == "unable to parse requirement: found ')', expected: ',', or identifier"


def test_selector_value_length_counts_utf8_bytes():
    assert sel("a=" + "a" * 63).matches({"a": "a" * 63})
    message = parse_error("a=" + "é" * 32)  # 32 characters, 64 bytes
    assert message.startswith('unable to parse requirement: values[0][a]: Invalid value: "' + "é" * 32 + '": '
                              "must be no more than 63 bytes; a valid label must be an empty string")


# --- apimachinery's own tables (pkg/labels/selector_test.go) ------------------------

_T = {"ID": Token.ID, "EOS": Token.EOS, ",": Token.COMMA, "(": Token.OPEN, ")": Token.CLOSE, "!": Token.NOT,
      "in": Operator.IN, "notin": Operator.NOT_IN, "=": Operator.EQUALS, "==": Operator.DOUBLE_EQUALS,
      "!=": Operator.NOT_EQUALS, ">": Operator.GREATER_THAN, "<": Operator.LESS_THAN}


@pytest.mark.parametrize(("text", "token"), [  # TestLexer: the longest token wins; others are identifiers
    ("", "EOS"), (",", ","), ("notin", "notin"), ("in", "in"), ("=", "="), ("==", "=="), (">", ">"),
    ("<", "<"), ("!", "!"), ("!=", "!="), ("(", "("), (")", ")"), ("~", "ID"), ("||", "ID"),
])
def test_apimachinery_lexer_table(text, token):
    assert lex(text)[0] == (_T[token], text)


@pytest.mark.parametrize(("text", "tokens"), [  # TestLexerSequence and TestParserLookahead
    ("key in ( value )", "ID in ( ID ) EOS"), ("key notin ( value )", "ID notin ( ID ) EOS"),
    ("key in ( value1, value2 )", "ID in ( ID , ID ) EOS"), ("key", "ID EOS"), ("!key", "! ID EOS"),
    ("()", "( ) EOS"), ("", "EOS"), ("x in (),y", "ID in ( ) , ID EOS"),
    ("== != (), = notin", "== != ( ) , = notin EOS"), ("key>2", "ID > ID EOS"), ("key<1", "ID < ID EOS"),
])
def test_apimachinery_lexer_sequence_table(text, tokens):
    assert [t for t, _ in lex(text)] == [_T[t] for t in tokens.split()]


def _reqs(*specs: tuple[str, Operator, tuple[str, ...]]) -> ParsedLabelSelector:
    return ParsedLabelSelector(tuple(Requirement(k, op, v) for k, op, v in specs))


_IN, _NOTIN, _EXISTS = Operator.IN, Operator.NOT_IN, Operator.EXISTS


@pytest.mark.parametrize(("text", "expected"), [  # TestSetSelectorParser, valid rows (None: not compared)
    ("", _reqs()), ("\rx", _reqs(("x", _EXISTS, ()))),
    ("this-is-a-dns.domain.com/key-with-dash", _reqs(("this-is-a-dns.domain.com/key-with-dash", _EXISTS, ()))),
    ("this-is-another-dns.domain.com/key-with-dash in (so,what)",
     _reqs(("this-is-another-dns.domain.com/key-with-dash", _IN, ("so", "what")))),
    ("0.1.2.domain/99 notin (10.10.100.1, tick.tack.clock)",
     _reqs(("0.1.2.domain/99", _NOTIN, ("10.10.100.1", "tick.tack.clock")))),
    ("foo  in\t (abc)", _reqs(("foo", _IN, ("abc",)))), ("x notin\n (abc)", _reqs(("x", _NOTIN, ("abc",)))),
    ("x  notin\t\t\t(abc,def)", _reqs(("x", _NOTIN, ("abc", "def")))),
    ("x in (abc,def)", _reqs(("x", _IN, ("abc", "def")))), ("x in (abc,)", _reqs(("x", _IN, ("", "abc")))),
    ("x in ()", _reqs(("x", _IN, ("",)))),
    ("x notin (abc,,def),bar,z in (),w", _reqs(("bar", _EXISTS, ()), ("w", _EXISTS, ()),
                                               ("x", _NOTIN, ("", "abc", "def")), ("z", _IN, ("",)))),
    ("x,y in (a)", None), ("x=a", _reqs(("x", Operator.EQUALS, ("a",)))),
    ("x>1", _reqs(("x", Operator.GREATER_THAN, ("1",)))), ("x<7", _reqs(("x", Operator.LESS_THAN, ("7",)))),
    ("x=a,y!=b", _reqs(("x", Operator.EQUALS, ("a",)), ("y", Operator.NOT_EQUALS, ("b",)))),
    ("x=a,y!=b,z in (h,i,j)", _reqs(("x", Operator.EQUALS, ("a",)), ("y", Operator.NOT_EQUALS, ("b",)),
                                    ("z", _IN, ("h", "i", "j")))),
    ("x notin ( )", _reqs(("x", _NOTIN, ("",)))), ("x notin (, a)", _reqs(("x", _NOTIN, ("", "a")))),
    ("a ", _reqs(("a", _EXISTS, ()))),
    ("a in (x,y,notin, z,in)", _reqs(("a", _IN, ("in", "notin", "x", "y", "z")))),
])
def test_apimachinery_valid_selector_table(text, expected):
    parsed = sel(text)
    assert expected is None or parsed == expected


@pytest.mark.parametrize("text", [  # TestSelectorParse: good strings print back without their spaces
    "x=a,y=b,z=c", "", "x!=a,y=b", "x=", "x= ", "x=,z= ", "x= ,z= ", "!x", "x>1", "x>1,z<5",
])
def test_apimachinery_selector_prints_back_table(text):
    assert str(sel(text)) == text.replace(" ", "")


@pytest.mark.parametrize("text", [  # TestSelectorParse and TestSetSelectorParser, invalid rows
    "x=a||y=b", "x==a==b", "!x=a", "x<a", "x,,y", ",x,y", "x nott in (y)", "a in (xyz),",
    "a in (xyz)b notin ()", "a in (xyz abc)", "a notin(", "a (", "(",
])
def test_apimachinery_invalid_selector_table(text):
    with pytest.raises(SelectorError):
        sel(text)


@pytest.mark.parametrize(("text", "labels", "matches"), [  # TestSelectorMatches
    ("", {"x": "y"}, True), ("x=y", {"x": "y"}, True), ("x=y,z=w", {"x": "y", "z": "w"}, True),
    ("x!=y,z!=w", {"x": "z", "z": "a"}, True), ("notin=in", {"notin": "in"}, True), ("x", {"x": "z"}, True),
    ("!x", {"y": "z"}, True), ("x>1", {"x": "2"}, True), ("x<1", {"x": "0"}, True), ("x=z", {}, False),
    ("x=y", {"x": "z"}, False), ("x=y,z=w", {"x": "w", "z": "w"}, False),
    ("x!=y,z!=w", {"x": "z", "z": "w"}, False), ("x", {"y": "z"}, False), ("!x", {"x": "z"}, False),
    ("x>1", {"x": "0"}, False), ("x<1", {"x": "2"}, False),
    ("foo=bar,baz=blah", {"foo": "bar", "baz": "blah"}, True),
    ("foo=bar,foobar=bar,baz=blah", {"foo": "bar", "baz": "blah"}, False),
])
def test_apimachinery_selector_matches_table(text, labels, matches):
    assert sel(text).matches(labels) is matches


@pytest.mark.parametrize(("key", "op", "values", "valid"), [  # TestRequirementConstructor
    ("x", Operator.IN, (), False), ("x", Operator.NOT_IN, (), False), ("x", Operator.IN, ("foo",), True),
    ("x", Operator.NOT_IN, ("foo",), True), ("x", Operator.EXISTS, (), True),
    ("x", Operator.DOES_NOT_EXIST, (), True), ("1foo", Operator.IN, ("bar",), True),
    ("1234", Operator.IN, ("bar",), True), ("y", Operator.GREATER_THAN, ("1",), True),
    ("z", Operator.LESS_THAN, ("6",), True), ("foo", Operator.GREATER_THAN, ("bar",), False),
    ("barz", Operator.LESS_THAN, ("blah",), False), ("a" * 254, Operator.EXISTS, (), False),
    ("x", Operator.EQUALS, ("a" * 254,), False), ("x", Operator.EQUALS, ("a b",), False),
])
def test_apimachinery_requirement_constructor_table(key, op, values, valid):
    if valid:
        Requirement(key, op, values)
    else:
        with pytest.raises(SelectorError):
            Requirement(key, op, values)


def test_selector_errors_quote_bad_values_as_go_does():
    # field.Invalid prints a string with Go's %q: printable non-ASCII as is, control characters escaped.
    assert parse_error("a=b\x01").startswith(r'unable to parse requirement: values[0][a]: Invalid value: "b\x01": ')
    assert parse_error("a=né").startswith('unable to parse requirement: values[0][a]: Invalid value: "né": ')
