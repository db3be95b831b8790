"""`loads_json`: orjson's speed with `json.loads`' results, for every input (hypothesis).

orjson decodes only where its result cannot differ: integers past 64 bits (a run of 19 digits), NaN and
Infinity, lone surrogates and deep nesting go to `json`, whose errors are the ones raised.
"""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings, strategies as st

from runtime.machinery.storedobject import loads_json

scalars = st.none() | st.booleans() | st.integers() | st.integers(min_value=-2**70, max_value=2**70) \
    | st.floats(allow_nan=True, allow_infinity=True) | st.text()
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=5)
                      | st.dictionaries(st.text(max_size=8), inner, max_size=5), max_leaves=30)


def same(a, b) -> bool:
    """Equal values of equal types all the way down (NaN equal to NaN)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, list):
        return len(a) == len(b) and all(map(same, a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    return a == b


@settings(max_examples=400, deadline=None)
@given(values, st.booleans())
def test_loads_json_gives_what_json_loads_gives_for_any_document(value, ascii_only):
    text = json.dumps(value, ensure_ascii=ascii_only)
    expected = json.loads(text)
    assert same(loads_json(text.encode()), expected)
    assert same(loads_json(text), expected)


@pytest.mark.parametrize("text", ["123456789012345678901234567890", "-9223372036854775809", "18446744073709551616",
                                  '{"n": 12345678901234567890123}', '["\\ud800"]', '{"x": NaN}', "[Infinity]",
                                  "1e400"])
def test_what_orjson_would_read_otherwise_is_read_by_json(text):
    assert same(loads_json(text.encode()), json.loads(text))


def test_nesting_past_orjson_s_limit_is_read_by_json():
    depth, value = 0, loads_json(b"[" * 1500 + b"]" * 1500)
    while value:
        depth, value = depth + 1, value[0]
    assert depth == 1499 and value == []


@pytest.mark.parametrize("data", [b"{bad", b"[1,]", b'{"a": 1} x', b"\xef\xbb\xbf{}", b'"\\x"', b""])
def test_a_document_json_refuses_raises_json_s_error(data):
    with pytest.raises(ValueError) as raised:
        loads_json(data)
    with pytest.raises(ValueError) as expected:
        json.JSONDecoder().decode(data.decode())  # what loads_json always was (no BOM sniffing)
    assert str(raised.value) == str(expected.value)


def test_invalid_utf8_and_other_types_are_refused_as_before():
    with pytest.raises(UnicodeDecodeError):
        loads_json(b'{"a": "\xff"}')
    with pytest.raises(TypeError):
        loads_json(12)  # type: ignore[arg-type]


def test_orjson_decodes_a_plain_document_and_json_only_what_it_could_read_otherwise(monkeypatch):
    calls: list[str] = []
    decode = json.JSONDecoder.decode

    def recording(self, s, *args, **kwargs):
        calls.append(s)
        return decode(self, s, *args, **kwargs)
    monkeypatch.setattr(json.JSONDecoder, "decode", recording)
    assert loads_json(b'{"metadata": {"name": "r", "uid": "5f0c"}, "n": 12345}') == {
        "metadata": {"name": "r", "uid": "5f0c"}, "n": 12345}
    assert calls == []  # orjson's: the fast path is taken
    assert loads_json(b'{"n": 12345678901234567890123}') == {"n": 12345678901234567890123}
    assert math.isnan(loads_json(b"[NaN]")[0]) and len(calls) == 2
