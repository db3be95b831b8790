"""A storage failure's 500 is kube's NewInternalError: the message names the error, which is also its one cause."""

from __future__ import annotations

import pytest

from runtime.machinery import errors
from runtime.server.registry.answers import store_errors
from runtime.server.storage import StoreError
from runtime.controller.testing import open_test_env


async def test_a_store_error_is_an_internal_error_with_the_error_as_its_one_cause():
    async with open_test_env(controllers=False) as env:
        roles = env.scheme.by_kind("ClusterRole")
        with pytest.raises(errors.InternalError) as caught:
            with store_errors(roles, "r"):
                raise StoreError("disk I/O error")
    status = caught.value.status()
    assert status["message"] == "Internal error occurred: disk I/O error"
    assert status["details"] == {"causes": [{"message": "disk I/O error"}]}


def test_a_cause_omits_its_empty_fields_as_status_cause_does():
    assert errors.Cause("", "boom").to_dict() == {"message": "boom"}
    assert errors.Cause("FieldValueInvalid", "bad", "spec.x").to_dict() == {
        "reason": "FieldValueInvalid", "message": "bad", "field": "spec.x"}
