"""The one decoder of stored bytes (`runtime.machinery.storedobject.loads_json`) decodes what `dumps_json` wrote as
`json.loads` does, and anything else is a corrupt object, never an exception of another kind."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, strategies as st

from runtime.machinery.storedobject import CorruptObject, decode_stored, dumps_json, loads_json

documents = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20)


@given(documents)
def test_what_dumps_json_wrote_decodes_as_json_loads_decodes_it(doc):
    data = dumps_json(doc)
    assert loads_json(data) == json.loads(data) == loads_json(bytearray(data)) == loads_json(data.decode())


@pytest.mark.parametrize("value", [b"{not json", b"\xff\xfe{}", b"[1, 2]", b'{"metadata": 3}', None, 42,
                                   memoryview(b"{}")])
def test_a_value_that_is_no_json_object_is_a_corrupt_object(value):
    with pytest.raises(CorruptObject):
        decode_stored("/k/x", value, 7)
