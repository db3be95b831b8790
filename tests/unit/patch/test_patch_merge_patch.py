"""JSON merge patch (RFC 7386): the RFC's Appendix A examples and the object API."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, strategies as st

from runtime.machinery.patch import MalformedPatch, PatchError, apply_merge_patch, create_merge_patch
from runtime.machinery.patch.merge import merge_patch

# RFC 7386 Appendix A: (original, patch, result)
RFC7386_EXAMPLES: list[tuple[Any, Any, Any]] = [
    ({"a": "b"}, {"a": "c"}, {"a": "c"}),
    ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
    ({"a": "b"}, {"a": None}, {}),
    ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
    ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
    ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
    ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
    ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
    (["a", "b"], ["c", "d"], ["c", "d"]),
    ({"a": "b"}, ["c"], ["c"]),
    ({"a": "foo"}, None, None),
    ({"a": "foo"}, "bar", "bar"),
    ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
    ([1, 2], {"a": "b", "c": None}, {"a": "b"}),
    ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
]


@pytest.mark.parametrize(("original", "patch", "expected"), RFC7386_EXAMPLES)
def test_rfc7386_appendix_a_examples(original: Any, patch: Any, expected: Any) -> None:
    assert merge_patch(original, patch) == expected


def test_null_deletes_a_label_and_leaves_input_untouched() -> None:
    doc = {"metadata": {"name": "r", "labels": {"a": "1", "b": "2"}}}
    result = apply_merge_patch(doc, {"metadata": {"labels": {"a": None}}})
    assert result == {"metadata": {"name": "r", "labels": {"b": "2"}}}
    assert doc["metadata"]["labels"] == {"a": "1", "b": "2"}


def test_merge_patch_replaces_lists_whole() -> None:
    doc = {"metadata": {"finalizers": ["a", "b"]}}
    assert apply_merge_patch(doc, {"metadata": {"finalizers": ["c"]}}) == {"metadata": {"finalizers": ["c"]}}


def test_result_shares_nothing_with_the_input() -> None:
    doc = {"spec": {"finalizers": ["a"]}, "metadata": {}}
    result = apply_merge_patch(doc, {"metadata": {"labels": {"x": "y"}}})
    result["spec"]["finalizers"].append("b")
    assert doc["spec"]["finalizers"] == ["a"]


def test_non_object_merge_patch_for_an_object_is_400() -> None:
    with pytest.raises(PatchError) as err:
        apply_merge_patch({"a": 1}, [1, 2])
    assert type(err.value) is MalformedPatch


def test_merge_patch_text_is_decoded() -> None:
    assert apply_merge_patch({"a": 1}, b'{"b": 2}') == {"a": 1, "b": 2}


# ---- create_merge_patch: the patch between two objects --------------------------------------------

_scalars = st.one_of(st.booleans(), st.integers(), st.text(max_size=5))
_json = st.recursive(_scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(st.text(max_size=3), inner, max_size=3)),
                     max_leaves=10)
_objects = st.dictionaries(st.text(max_size=3), _json, max_size=4)


@given(_objects, _objects)
def test_create_merge_patch_applied_to_before_gives_after(before: dict, after: dict) -> None:
    assert merge_patch(before, create_merge_patch(before, after)) == after


def test_create_merge_patch_sends_only_what_changed() -> None:
    before = {"metadata": {"name": "a", "labels": {"x": "1", "y": "2"}}, "data": {"k": "v"}, "spec": [1, 2]}
    after = {"metadata": {"name": "a", "labels": {"x": "1", "z": "3"}}, "data": {"k": "v"}, "spec": [1]}
    assert create_merge_patch(before, after) == {"metadata": {"labels": {"y": None, "z": "3"}}, "spec": [1]}
    assert create_merge_patch(after, after) == {}
