"""An answer's header block (`api.serving.http2_frames.encode_answer`) decodes, by any HPACK decoder, to the
status and fields it was given, in order, as HTTP/2 has them: for any fields, names known to the static table
or new, in any case, values short (one length byte) or long (a multi-byte length); names lower-cased,
connection-specific fields dropped (`Connection: close` noted), a value with a line break refused; whether the
fields give a content-length is told; and it leaves the decoder's table empty (stateless).
"""

from __future__ import annotations

import hpack
import pytest
from hypothesis import given
from hypothesis import strategies as st

from api.serving.http2_frames import encode_answer

_KNOWN_NAMES = [b"content-type", b"content-length", b"cache-control", b"date", b"server", b"etag", b"vary",
                b"Content-Type", b"Content-Length", b"ETag"]
_CONNECTION_SPECIFIC = [b"connection", b"Connection", b"keep-alive", b"proxy-connection", b"transfer-encoding",
                        b"Transfer-Encoding", b"upgrade"]
_names = st.one_of(st.sampled_from(_KNOWN_NAMES), st.sampled_from(_CONNECTION_SPECIFIC),
                   st.binary(min_size=1, max_size=140).map(lambda raw: raw.replace(b":", b"x")))
_values = st.one_of(st.sampled_from([b"close", b"keep-alive, Close", b"10"]), st.binary(max_size=400).map(
    lambda raw: raw.replace(b"\r", b"").replace(b"\n", b"").replace(b"\0", b"")))
_statuses = st.one_of(st.none(), st.sampled_from([200, 201, 204, 304, 404, 409, 422, 500]),
                      st.integers(min_value=100, max_value=999))


def _decoded(block: bytes) -> tuple[hpack.Decoder, list[tuple[bytes, bytes]]]:
    decoder = hpack.Decoder()
    decoder.max_header_list_size = 1 << 30
    return decoder, [(bytes(name), bytes(value)) for name, value in decoder.decode(block, raw=True)]


@given(status=_statuses, fields=st.lists(st.tuples(_names, _values), max_size=12))
def test_an_answers_block_decodes_to_its_status_and_fields_as_http2_has_them(status: int | None,
                                                                              fields: list[tuple[bytes, bytes]]) -> None:
    block, has_length, close = encode_answer(status, fields)
    decoder, decoded = _decoded(block)
    kept = [(name.lower(), value) for name, value in fields if name.lower() not in
            {b"connection", b"keep-alive", b"proxy-connection", b"transfer-encoding", b"upgrade"}]
    assert decoded == ([(b":status", b"%d" % status)] if status is not None else []) + kept
    assert has_length == any(name == b"content-length" for name, _ in kept)
    assert close == any(name.lower() == b"connection" and b"close" in value.lower() for name, value in fields)
    assert len(decoder.header_table.dynamic_entries) == 0  # nothing indexed: no answer depends on another


def test_a_value_of_127_bytes_or_more_takes_a_multi_byte_length() -> None:
    for size in (126, 127, 128, 300, 20_000):
        value = b"v" * size
        block, _, _ = encode_answer(200, [(b"x-long", value)])
        assert _decoded(block)[1] == [(b":status", b"200"), (b"x-long", value)]


@pytest.mark.parametrize("value", [b"a\nb", b"a\rb", b"a\0b"])
@pytest.mark.parametrize("name", [b"x-made-up", b"content-type", b"connection"])
def test_a_value_holding_a_line_break_is_refused(name: bytes, value: bytes) -> None:
    with pytest.raises(ValueError):
        encode_answer(200, [(name, value)])
