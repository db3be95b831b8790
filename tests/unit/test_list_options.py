"""apimachinery's ValidateListOptions: a bad value is quoted as Go's `%q` (`strconv.Quote`) quotes it."""

from __future__ import annotations

import pytest

from runtime.machinery import errors
from runtime.server.registry.listing import validate_list_options
from runtime.machinery.options import ListOptions


def test_an_unknown_resource_version_match_is_quoted_as_go_quotes_it() -> None:
    with pytest.raises(errors.Invalid) as caught:
        validate_list_options(ListOptions(resource_version="5", resource_version_match="Exacté"), watch=False)
    assert caught.value.message == ('ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Unsupported value: '
                                    '"Exacté": supported values: "Exact", "NotOlderThan", ""')


def test_an_unknown_watch_resource_version_match_is_quoted_as_go_quotes_it() -> None:
    with pytest.raises(errors.Invalid) as caught:
        validate_list_options(ListOptions(resource_version_match="\x01", send_initial_events=True), watch=True)
    assert caught.value.message == (
        'ListOptions.meta.k8s.io "" is invalid: [resourceVersionMatch: Forbidden: sendInitialEvents requires '
        'setting resourceVersionMatch to NotOlderThan, resourceVersionMatch: Unsupported value: "\\x01": '
        'supported values: "NotOlderThan"]')
