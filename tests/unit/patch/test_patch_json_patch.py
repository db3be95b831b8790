"""JSON patch (RFC 6902): the public conformance suites, plus Kubernetes' codes and words."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from runtime.machinery.patch import MalformedPatch, PatchError, PatchNotApplicable, TooManyOperations, apply_json_patch

SUITES = Path("/work/shared/testdata/json-patch-tests")


def _run_suite(name: str) -> tuple[int, int, list[str]]:
    cases = json.loads((SUITES / name).read_text())
    passed, total, failures = 0, 0, []
    for case in cases:
        if case.get("disabled"):
            continue
        total += 1
        label = case.get("comment") or case.get("error") or json.dumps(case["patch"])[:60]
        doc = copy.deepcopy(case["doc"])
        try:
            result = apply_json_patch(doc, case["patch"])
        except PatchError:
            if "error" in case:
                passed += 1
            else:
                failures.append(f"unexpected error: {label}")
            continue
        if "error" in case:
            failures.append(f"should have failed: {label}")
        elif "expected" in case and result != case["expected"]:
            failures.append(f"wrong result: {label}")
        elif doc != case["doc"]:
            failures.append(f"input modified: {label}")
        else:
            passed += 1
    return passed, total, failures


@pytest.mark.parametrize("suite", ["tests.json", "spec_tests.json"])
def test_every_enabled_rfc6902_conformance_case_passes(suite: str) -> None:
    passed, total, failures = _run_suite(suite)
    print(f"json-patch-tests {suite}: {passed}/{total} passed")
    assert failures == []
    assert passed == total > 0


def test_patch_returns_new_document_and_leaves_input_untouched() -> None:
    doc = {"metadata": {"labels": {"a": "1"}}}
    result = apply_json_patch(doc, [{"op": "add", "path": "/metadata/labels/b", "value": "2"}])
    assert result == {"metadata": {"labels": {"a": "1", "b": "2"}}}
    assert doc == {"metadata": {"labels": {"a": "1"}}}


def test_failing_operation_applies_nothing() -> None:
    doc = {"a": 1}
    with pytest.raises(PatchError):
        apply_json_patch(doc, [{"op": "add", "path": "/b", "value": 2}, {"op": "remove", "path": "/zzz"}])
    assert doc == {"a": 1}


def test_failed_test_operation_is_422_in_kubernetes_words() -> None:
    with pytest.raises(PatchError) as err:
        apply_json_patch({"metadata": {"resourceVersion": "5"}},
                         [{"op": "test", "path": "/metadata/resourceVersion", "value": "4"}])
    assert type(err.value) is PatchNotApplicable
    assert err.value.message == "testing value /metadata/resourceVersion failed: test failed"


def test_replace_of_missing_path_is_422() -> None:
    with pytest.raises(PatchError) as err:
        apply_json_patch({"a": {}}, [{"op": "replace", "path": "/a/b", "value": 1}])
    assert type(err.value) is PatchNotApplicable
    assert err.value.message == "replace operation does not apply: doc is missing key: /a/b: missing value"


def test_add_under_missing_parent_is_422() -> None:
    with pytest.raises(PatchError) as err:
        apply_json_patch({}, [{"op": "add", "path": "/metadata/labels/a", "value": "x"}])
    assert type(err.value) is PatchNotApplicable
    assert err.value.message == 'add operation does not apply: doc is missing path: "/metadata/labels/a": missing value'


def test_unknown_op_is_422_unexpected_kind() -> None:
    with pytest.raises(PatchError) as err:
        apply_json_patch({}, [{"op": "frobnicate", "path": "/a"}])
    assert (type(err.value), err.value.message) == (PatchNotApplicable, "Unexpected kind: frobnicate")


def test_patch_that_is_not_a_json_array_is_400() -> None:
    with pytest.raises(PatchError) as err:
        apply_json_patch({}, b'{"op": "add"}')
    assert type(err.value) is MalformedPatch
    assert err.value.message == "json: cannot unmarshal object into Go value of type jsonpatch.Patch"


def test_patch_that_is_not_json_is_400() -> None:
    with pytest.raises(PatchError) as err:
        apply_json_patch({}, "[{")
    assert type(err.value) is MalformedPatch


def test_more_than_10000_operations_is_413() -> None:
    ops = [{"op": "test", "path": "/a", "value": 1}] * 10001
    with pytest.raises(PatchError) as err:
        apply_json_patch({"a": 1}, ops)
    assert type(err.value) is TooManyOperations
    assert err.value.message == "The allowed maximum operations in a JSON patch is 10000, got 10001"


def test_patch_text_is_accepted_as_bytes() -> None:
    assert apply_json_patch({"a": 1}, b'[{"op":"replace","path":"/a","value":2}]') == {"a": 2}


def test_escaped_pointer_tokens_address_keys_with_slash_and_tilde() -> None:
    doc = {"metadata": {"annotations": {"example.com/a~b": "1"}}}
    result = apply_json_patch(doc, [{"op": "remove", "path": "/metadata/annotations/example.com~1a~0b"}])
    assert result == {"metadata": {"annotations": {}}}


def test_test_operation_never_equates_booleans_with_numbers() -> None:
    with pytest.raises(PatchError):
        apply_json_patch({"a": True}, [{"op": "test", "path": "/a", "value": 1}])
