"""An answer's header block (`api.serving.http2_frames.encode_headers`) decodes, by any HPACK decoder, to the
status and fields it was given, in order: for any fields, names known to the static table or new, values
short (one length byte) or long (a multi-byte length), and it leaves the decoder's table empty (stateless).
"""

from __future__ import annotations

import hpack
from hypothesis import given
from hypothesis import strategies as st

from api.serving.http2_frames import encode_headers

_KNOWN_NAMES = [b"content-type", b"content-length", b"cache-control", b"date", b"server", b"etag", b"vary"]
_names = st.one_of(st.sampled_from(_KNOWN_NAMES),
                   st.binary(min_size=1, max_size=140).map(lambda raw: raw.lower().replace(b":", b"x")))
_values = st.binary(max_size=400).map(lambda raw: raw.replace(b"\r", b"").replace(b"\n", b"").replace(b"\0", b""))
_statuses = st.one_of(st.none(), st.sampled_from([200, 201, 204, 304, 404, 409, 422, 500]),
                      st.integers(min_value=100, max_value=999))


def _decoded(block: bytes) -> tuple[hpack.Decoder, list[tuple[bytes, bytes]]]:
    decoder = hpack.Decoder()
    decoder.max_header_list_size = 1 << 30
    return decoder, [(bytes(name), bytes(value)) for name, value in decoder.decode(block, raw=True)]


@given(status=_statuses, fields=st.lists(st.tuples(_names, _values), max_size=12))
def test_a_header_block_decodes_to_its_status_and_fields_in_order(status: int | None,
                                                                   fields: list[tuple[bytes, bytes]]) -> None:
    decoder, decoded = _decoded(encode_headers(status, fields))
    expected = ([(b":status", b"%d" % status)] if status is not None else []) + fields
    assert decoded == expected
    assert len(decoder.header_table.dynamic_entries) == 0  # nothing indexed: no answer depends on another


def test_a_value_of_127_bytes_or_more_takes_a_multi_byte_length() -> None:
    for size in (126, 127, 128, 300, 20_000):
        value = b"v" * size
        assert _decoded(encode_headers(200, [(b"x-long", value)]))[1] == [(b":status", b"200"), (b"x-long", value)]
