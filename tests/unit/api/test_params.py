"""Query parameters parsed into request options: bad values quoted as Go's `%q` (`strconv.Quote`) quotes them.

JSON would escape é as `\\u00e9` and U+0001 as `\\u0001`; Go keeps printable
characters as they are and writes a control character as `\\x01`.
"""

from __future__ import annotations

import pytest
from werkzeug.datastructures import MultiDict

from api.params import delete_options, write_options
from runtime.machinery import errors


def test_an_unprintable_field_manager_is_quoted_as_go_quotes_it() -> None:
    with pytest.raises(errors.Invalid) as caught:
        write_options(MultiDict({"fieldManager": "a\x01é"}), "")
    assert caught.value.message == ('CreateOptions.meta.k8s.io "" is invalid: fieldManager: Invalid value: '
                                    '"a\\x01é": invalid character U+0001 (at position 1)')


def test_an_unknown_field_validation_level_is_quoted_as_go_quotes_it() -> None:
    with pytest.raises(errors.Invalid) as caught:
        write_options(MultiDict({"fieldValidation": "Stricté"}), "")
    assert caught.value.message == ('CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: '
                                    '"Stricté": supported values: "", "Ignore", "Strict", "Warn"')


def test_an_unknown_dry_run_value_is_quoted_as_go_quotes_it() -> None:
    with pytest.raises(errors.Invalid) as caught:
        write_options(MultiDict({"dryRun": "Allé"}), "", method="PUT")
    assert caught.value.message == ('UpdateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: '
                                    '[]string{"Allé"}: supported values: "All"')


def test_a_grace_period_that_does_not_parse_is_quoted_as_go_quotes_it() -> None:
    with pytest.raises(errors.BadRequest) as caught:
        delete_options(MultiDict({"gracePeriodSeconds": "soon\x01é"}), None)
    assert caught.value.message == 'strconv.ParseInt: parsing "soon\\x01é": invalid syntax'
