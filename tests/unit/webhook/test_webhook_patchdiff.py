"""`create_patch` (controller-runtime's PatchResponseFromRaw) and `carry_unknown`: every patch applies, by
`runtime.machinery.patch.apply_json_patch`, to give the object the author answered."""

from __future__ import annotations

import pytest

from runtime.machinery.patch import apply_json_patch
from runtime.webhook.patchdiff import carry_unknown, create_patch


def test_equal_documents_need_no_operations():
    assert create_patch({"a": [1, {"b": True}]}, {"a": [1, {"b": True}]}) == []


def test_a_new_member_is_added_and_a_gone_one_removed():
    assert create_patch({"a": 1, "gone": 2}, {"a": 1, "new": 3}) == [
        {"op": "remove", "path": "/gone"}, {"op": "add", "path": "/new", "value": 3}]


def test_a_changed_member_is_replaced_where_it_changed():
    assert create_patch({"m": {"l": {"x": "1", "y": "2"}}}, {"m": {"l": {"x": "1", "y": "3"}}}) == [
        {"op": "replace", "path": "/m/l/y", "value": "3"}]


def test_an_array_of_another_length_is_replaced_whole():
    assert create_patch({"a": [1, 2]}, {"a": [1, 2, 3]}) == [{"op": "replace", "path": "/a", "value": [1, 2, 3]}]


def test_an_array_of_the_same_length_is_compared_by_element():
    assert create_patch({"a": [1, {"b": 1}]}, {"a": [1, {"b": 2}]}) == [
        {"op": "replace", "path": "/a/1/b", "value": 2}]


def test_true_is_not_one():
    assert create_patch({"a": 1}, {"a": True}) == [{"op": "replace", "path": "/a", "value": True}]


def test_pointer_tokens_are_escaped():
    assert create_patch({}, {"a/b~c": 1}) == [{"op": "add", "path": "/a~1b~0c", "value": 1}]


@pytest.mark.parametrize("before,after", [
    ({"metadata": {"labels": {"a": "1"}}, "data": {"k": "v"}}, {"metadata": {"labels": {"b": "2"}}}),
    ({"spec": {"containers": [{"name": "c", "env": []}]}}, {"spec": {"containers": [{"name": "c", "env": [1]}]}}),
    ({"a": None}, {"a": {"b": [None, False, 0, ""]}}),
])
def test_every_patch_applies_to_give_the_answered_object(before, after):
    assert apply_json_patch(before, create_patch(before, after)) == after


def test_carry_unknown_keeps_what_the_model_did_not_read():
    raw = {"metadata": {"name": "a", "x-unknown": 1}}
    base = {"metadata": {"name": "a"}}
    after = {"metadata": {"name": "a", "labels": {"l": "v"}}}
    assert carry_unknown(raw, base, after) == {"metadata": {"name": "a", "labels": {"l": "v"}, "x-unknown": 1}}


def test_carry_unknown_drops_the_models_defaults():
    raw = {"metadata": {"name": "a"}}
    base = {"metadata": {"name": "a"}, "spec": {}}
    assert carry_unknown(raw, base, {"metadata": {"name": "b"}, "spec": {}}) == {"metadata": {"name": "b"}}
    assert carry_unknown(raw, base, {"metadata": {"name": "a"}, "spec": {"x": 1}}) == {
        "metadata": {"name": "a"}, "spec": {"x": 1}}
