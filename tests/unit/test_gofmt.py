"""Go's formatting, written once (`runtime.machinery.validation.gofmt`): every message that quotes or prints a value as
kube-apiserver does goes through it, so all of them agree with Go."""

from runtime.machinery.patch.errors import MalformedPatch
from runtime.models.core import Namespace
from runtime.machinery.patch.strategic import apply_strategic_merge_patch
from runtime.server.schema.schema_errors import invalid as schema_invalid
from runtime.machinery.validation.fielderrors import invalid
from runtime.machinery.validation.gofmt import go_plus_v, go_quote, go_quote_list, go_value

import pytest


def test_percent_q_keeps_printable_text_and_escapes_the_rest():
    assert go_quote('é "x"\n\x01\x7f\u200b') == '"é \\"x\\"\\n\\x01\\x7f\\u200b"'


def test_percent_q_of_a_string_slice():
    assert go_quote_list(["a", "é"]) == '["a" "é"]'
    assert go_quote_list([]) == "[]"


def test_percent_v_of_a_decoded_float_has_a_two_digit_exponent():
    assert go_plus_v({"b": [1e-05, 2.0], "a": None}) == "map[a:<nil> b:[1e-05 2]]"


def test_field_error_nil_is_the_quoted_string_null_and_schema_error_nil_is_bare():
    assert invalid("f", None, "d").message == 'Invalid value: "null": d'
    assert schema_invalid("f", None, "d").message == "Invalid value: null: d"


def test_schema_error_value_is_quoted_as_go_not_as_json():
    assert schema_invalid("f", "\x01é", "d").message == 'Invalid value: "\\x01é": d'


def test_go_value_of_a_string_slice_depends_on_its_origin():
    assert go_value(["a"]) == '[]string{"a"}'
    assert go_value(["a"], decoded=True) == '["a"]'


def test_strategic_patch_directive_error_prints_the_map_as_go():
    with pytest.raises(MalformedPatch) as info:
        apply_strategic_merge_patch({}, {"$patch": "bogus", "n": 1e-05}, Namespace)
    assert str(info.value) == "unknown patch type: bogus in map: map[$patch:bogus n:1e-05]"


def test_a_managed_fields_error_quotes_its_fields_type_as_go():
    from runtime.machinery.patch.errors import CorruptManagedFields
    from runtime.machinery.patch.managed_fields import decode_managed_fields
    with pytest.raises(CorruptManagedFields) as info:
        decode_managed_fields([{"manager": "m", "operation": "Update", "apiVersion": "v1", "fieldsType": "é"}])
    assert str(info.value) == 'invalid fieldsType "é" in managed fields entry 0'
