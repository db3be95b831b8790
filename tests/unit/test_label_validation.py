"""The one label validator (`runtime.machinery.validation.labels`): apimachinery's `IsLabelKey` and `IsLabelValue`, word for word.

Kubernetes measures with Go's `len()` on a string, which counts UTF-8 bytes,
and its patterns are ASCII-only.
"""

from __future__ import annotations

import pytest

from runtime.machinery import selectors
from runtime.machinery.validation import names
from runtime.machinery.validation.labels import label_key_errors, label_value_errors
from runtime.machinery.validation.names import validate_object_meta

KEY_PATTERN = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
               "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', "
               "regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
VALUE_PATTERN = ("a valid label must be an empty string or consist of alphanumeric characters, "
                 "'-', '_' or '.', and must start and end with an alphanumeric character "
                 "(e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
                 "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")
PREFIX_PATTERN = ("prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                  "characters, '-' or '.', and must start and end with an alphanumeric character "
                  "(e.g. 'example.com', regex used for validation is "
                  "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")


# --- one implementation ---------------------------------------------------------

def test_selectors_and_metadata_share_one_label_validator():
    assert selectors.label_key_errors is label_key_errors is names.qualified_name_errors
    assert selectors.label_value_errors is label_value_errors is names.label_value_errors


def test_metadata_and_selectors_give_the_same_words_for_a_bad_label():
    key, value = "k" * 64, "-x"
    meta = [str(e) for e in validate_object_meta({"name": "x", "labels": {key: value}},
                                                 namespaced=False, name_rule="path-segment")]
    assert meta == [f'metadata.labels: Invalid value: "{key}": name part must be no more than 63 bytes',
                    f'metadata.labels: Invalid value: "-x": {VALUE_PATTERN}']
    with pytest.raises(selectors.SelectorError) as info:
        selectors.parse_label_selector(key)
    assert str(info.value) == (f'unable to parse requirement: <nil>: Invalid value: "{key}": '
                               "name part must be no more than 63 bytes")


# --- label values ------------------------------------------------------------------

def test_label_value_may_be_empty():
    assert label_value_errors("") == []


def test_label_value_of_63_bytes_is_valid_and_64_is_not():
    assert label_value_errors("v" * 63) == []
    assert label_value_errors("v" * 64) == ["must be no more than 63 bytes"]


def test_label_value_length_counts_utf8_bytes():
    assert label_value_errors("é" * 21) == [VALUE_PATTERN]  # 21 characters, 42 bytes: only the pattern
    assert label_value_errors("€" * 21) == [VALUE_PATTERN]  # 21 characters, 63 bytes: not too long
    assert label_value_errors("€" * 22) == ["must be no more than 63 bytes", VALUE_PATTERN]  # 66 bytes
    assert label_value_errors("é" * 32) == ["must be no more than 63 bytes", VALUE_PATTERN]  # 64 bytes


def test_label_value_must_start_and_end_alphanumeric():
    assert label_value_errors("a-b_c.d") == []
    for bad in ("-a", "a-", "_a", "a.", "a b", "a/b"):
        assert label_value_errors(bad) == [VALUE_PATTERN], bad


def test_label_value_non_ascii_letters_and_digits_are_not_alphanumeric():
    for bad in ("café", "ünits", "１２３", "ǅ"):
        assert label_value_errors(bad) == [VALUE_PATTERN], bad


def test_label_value_with_a_trailing_newline_is_invalid():
    assert label_value_errors("abc\n") == [VALUE_PATTERN]


def test_lone_surrogate_counts_as_three_bytes():
    assert label_value_errors("\ud800" * 21) == [VALUE_PATTERN]
    assert label_value_errors("\ud800" * 22) == ["must be no more than 63 bytes", VALUE_PATTERN]


# --- label keys (qualified names) ---------------------------------------------------

def test_label_key_without_prefix_is_a_name():
    assert label_key_errors("MyName") == label_key_errors("my.name") == label_key_errors("123-abc") == []


def test_label_key_with_a_dns_subdomain_prefix_is_valid():
    assert label_key_errors("example.com/MyName") == []
    assert label_key_errors("app.kubernetes.io/name") == []
    assert label_key_errors("0.1.2.domain/99") == []


def test_label_key_name_of_63_bytes_is_valid_and_64_is_not():
    assert label_key_errors("k" * 63) == []
    assert label_key_errors("example.com/" + "k" * 63) == []
    assert label_key_errors("k" * 64) == ["name part must be no more than 63 bytes"]
    assert label_key_errors("example.com/" + "k" * 64) == ["name part must be no more than 63 bytes"]


def test_label_key_name_length_counts_utf8_bytes():
    assert label_key_errors("é" * 31) == ["name part " + KEY_PATTERN]  # 62 bytes
    assert label_key_errors("é" * 32) == ["name part must be no more than 63 bytes",  # 64 bytes
                                          "name part " + KEY_PATTERN]


def test_label_key_prefix_of_253_bytes_is_valid_and_254_is_not():
    assert label_key_errors("a" * 253 + "/x") == []
    assert label_key_errors("a" * 254 + "/x") == ["prefix part must be no more than 253 bytes"]


def test_label_key_prefix_must_be_a_lowercase_dns_subdomain():
    assert label_key_errors("Example.com/a") == [PREFIX_PATTERN]
    assert label_key_errors("exämple.com/a") == [PREFIX_PATTERN]
    assert label_key_errors("example_com/a") == [PREFIX_PATTERN]


def test_label_key_prefix_must_not_be_empty():
    assert label_key_errors("/a") == ["prefix part must be non-empty"]


def test_empty_label_key_name_breaks_both_emptiness_and_the_pattern():
    both = ["name part must be non-empty", "name part " + KEY_PATTERN]
    assert label_key_errors("") == both
    assert label_key_errors("example.com/") == both


def test_label_key_with_two_slashes_is_one_error():
    assert label_key_errors("a/b/c") == [
        "a valid label key " + KEY_PATTERN + " with an optional DNS subdomain prefix and '/' "
        "(e.g. 'example.com/MyName')"]


def test_label_key_name_must_start_and_end_alphanumeric():
    for bad in ("-a", "a-", "a_", ".a", "a b", "app:"):
        assert label_key_errors(bad) == ["name part " + KEY_PATTERN], bad


def test_label_key_non_ascii_is_invalid():
    assert label_key_errors("café") == ["name part " + KEY_PATTERN]
    assert label_key_errors("example.com/naïve") == ["name part " + KEY_PATTERN]


def test_label_key_with_a_trailing_newline_is_invalid():
    assert label_key_errors("abc\n") == ["name part " + KEY_PATTERN]


def test_bad_prefix_and_bad_name_are_both_reported():
    assert label_key_errors("Bad/-x") == [PREFIX_PATTERN, "name part " + KEY_PATTERN]
