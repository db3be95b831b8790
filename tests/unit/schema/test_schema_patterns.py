"""`pattern` has Go's RE2 semantics: anchors as Go reads them, lookarounds and backreferences rejected."""

import pytest

from runtime.server.schema.regex import PatternError, compile_pattern


def test_dollar_does_not_match_before_a_final_newline():
    assert compile_pattern("^a$").search("a")
    assert not compile_pattern("^a$").search("a\n")


def test_pattern_is_unanchored_search():
    assert compile_pattern("b").search("abc")


@pytest.mark.parametrize("pattern,words", [
    ("(?=a)", "error parsing regexp: invalid or unsupported Perl syntax: `(?=`"),
    ("(?<!a)b", "error parsing regexp: invalid or unsupported Perl syntax: `(?<!`"),
    ("a(", "error parsing regexp: missing closing ): `a(`"),
    ("[a", "error parsing regexp: missing closing ]: `[a`"),
    ("a{1001}", "error parsing regexp: invalid repeat count: `{1001}`"),
])
def test_patterns_go_rejects_are_rejected_with_go_words(pattern, words):
    with pytest.raises(PatternError) as err:
        compile_pattern(pattern)
    assert str(err.value) == words


def test_backreferences_are_rejected():
    with pytest.raises(PatternError):
        compile_pattern(r"(a)\1")


def test_unicode_classes_as_go():
    assert compile_pattern(r"^\p{L}+$").search("héllo")
