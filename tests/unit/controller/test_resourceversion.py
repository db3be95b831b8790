"""Resource versions: ordered as numbers when both are decimal, else only equal or not."""

from __future__ import annotations

import pytest

from runtime.machinery.resourceversion import Incomparable, compare, is_at_least, is_newer, parse


def test_decimal_versions_compare_as_numbers_not_text():
    assert compare("9", "10") == -1
    assert compare("10", "9") == 1
    assert compare("10", "10") == 0


def test_decimal_versions_have_no_fixed_bit_size():
    huge = str(2**64 + 1)
    assert compare(huge, str(2**64)) == 1
    assert parse("1" + "0" * 40) == 10**40


def test_non_decimal_versions_are_only_equal_or_incomparable():
    assert compare("abc", "abc") == 0
    with pytest.raises(Incomparable):
        compare("abc", "10")
    with pytest.raises(Incomparable):
        compare("1e3", "1000")


def test_only_ascii_digits_parse_as_numbers():
    assert parse("١٢") is None
    assert parse("-1") is None
    assert parse("") is None


def test_incomparable_versions_are_never_reached_or_newer():
    assert not is_at_least("abc", "10")
    assert not is_newer("abc", "10")
    assert is_at_least("abc", "abc")


def test_empty_wanted_version_is_always_reached():
    assert is_at_least("", "")
    assert is_at_least("5", "")
    assert not is_at_least("", "5")
