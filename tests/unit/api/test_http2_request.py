"""RequestBlocks: one connection's header blocks, a block sent again with the HPACK table unchanged decoded once;
SharedBlocks: a block another connection decoded over an equal table not decoded again.

Each rule is a test; two Hypothesis tests check that whatever clients' encoders send (indexed or not, Huffman or
not, never-indexed fields, table size updates), on one connection or several sharing what they decoded, the
requests given are those a fresh decode of every block gives.
"""

from __future__ import annotations

from typing import Any, Iterator

import hpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from api.serving.http2_request import ParsedRequest, RequestBlocks, SharedBlocks, parse_request

GET = b"\x82\x87\x84"  # :method GET, :scheme https, :path / (static table)
NEWEST = b"\xbe"  # the dynamic table's index 62: its newest entry


def _adding(name: bytes, value: bytes) -> bytes:
    """A literal field with incremental indexing, its name and value not Huffman-coded (RFC 7541 6.2.1)."""
    return b"\x40" + bytes([len(name)]) + name + bytes([len(value)]) + value


@pytest.fixture
def decodes(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[bytes]]:
    """The blocks hpack decoded, in order."""
    seen: list[bytes] = []
    decode = hpack.Decoder.decode

    def counted(self: hpack.Decoder, data: bytes, raw: bool = False) -> Any:
        seen.append(bytes(data))
        return decode(self, data, raw=raw)

    monkeypatch.setattr(hpack.Decoder, "decode", counted)
    yield seen


def test_a_block_sent_again_with_the_table_unchanged_is_decoded_once(decodes: list[bytes]) -> None:
    encoder = hpack.Encoder()
    fields = [(":method", "GET"), (":scheme", "https"), (":path", "/api/v1/namespaces"), ("accept", "*/*")]
    first, again = encoder.encode(fields), encoder.encode(fields)  # the first adds to the table, the second indexes
    blocks = RequestBlocks(65536)
    requests = [blocks.decode(block) for block in (first, again, again, again)]
    assert decodes == [first, again]
    assert len(set(map(repr, requests))) == 1
    assert requests[0] == ParsedRequest("GET", b"/api/v1/namespaces", [(b"host", b""), (b"accept", b"*/*")], None)


def test_a_block_that_adds_to_the_table_is_decoded_each_time(decodes: list[bytes]) -> None:
    adding = GET + _adding(b"x-a", b"1")
    blocks = RequestBlocks(65536)
    blocks.decode(adding)
    blocks.decode(adding)
    assert decodes == [adding, adding]
    # both entries are in the table, as in the client's: 63 is the older
    assert blocks.decode(GET + b"\xbf").headers == [(b"host", b""), (b"x-a", b"1")]


def test_the_same_bytes_after_a_table_change_mean_what_the_new_table_says() -> None:
    blocks = RequestBlocks(65536)
    blocks.decode(GET + _adding(b"x-a", b"1"))
    assert blocks.decode(GET + NEWEST).headers == [(b"host", b""), (b"x-a", b"1")]
    blocks.decode(GET + _adding(b"x-b", b"2"))
    assert blocks.decode(GET + NEWEST).headers == [(b"host", b""), (b"x-b", b"2")]


def test_a_table_size_update_empties_what_is_kept() -> None:
    blocks = RequestBlocks(65536)
    blocks.decode(GET + _adding(b"x-a", b"1"))
    blocks.decode(GET + NEWEST)
    blocks.decode(b"\x20" + GET)  # the table's size set to 0: its entries evicted
    with pytest.raises(hpack.HPACKError):
        blocks.decode(GET + NEWEST)


def test_an_entry_evicted_and_another_added_in_its_place_changes_the_table() -> None:
    blocks = RequestBlocks(65536)
    blocks.decode(b"\x3f\x11" + GET)  # size 48: room for one entry of a 3-byte name and a 1-byte value (36)
    blocks.decode(GET + _adding(b"x-a", b"1"))
    assert blocks.decode(GET + NEWEST).headers[1] == (b"x-a", b"1")
    blocks.decode(GET + _adding(b"x-b", b"2"))  # evicts x-a: as many entries as before, another newest
    assert blocks.decode(GET + NEWEST).headers[1] == (b"x-b", b"2")


def test_what_is_kept_is_at_most_one_header_list_and_emptied_when_full(decodes: list[bytes]) -> None:
    # each block is 3 pseudo-fields (42 + 39 + 37 by RFC 7541 4.1) and its x-n field (36): 154 of the 200
    one, two = (GET + b"\x00\x03x-n\x01" + n for n in (b"1", b"2"))  # literals not indexed: the table unchanged
    blocks = RequestBlocks(200)
    for block in (one, one, two, two, one):
        blocks.decode(block)
    assert decodes == [one, two, one]  # two's coming emptied what was kept, so one is decoded again


def test_a_malformed_request_sent_again_is_malformed_again(decodes: list[bytes]) -> None:
    no_path = b"\x82\x87"
    blocks = RequestBlocks(65536)
    assert blocks.decode(no_path) is None
    assert blocks.decode(no_path) is None
    assert decodes == [no_path]


def test_the_headers_given_are_the_callers_own() -> None:
    blocks = RequestBlocks(65536)
    blocks.decode(GET).headers.append((b"x-added", b"by the caller"))
    assert blocks.decode(GET).headers == [(b"host", b"")]


def test_a_block_another_connection_decoded_over_an_equal_table_is_not_decoded_again(
        decodes: list[bytes]) -> None:
    shared = SharedBlocks(1 << 20)
    first, second = RequestBlocks(65536, shared), RequestBlocks(65536, shared)
    fill, path = GET + _adding(b"authorization", b"Bearer t"), b"\x82\x87\x04\x05/api1" + NEWEST
    for blocks in (first, second):  # a new connection: its first block fills its table, then the paths
        blocks.decode(fill)
        assert blocks.decode(path) == ParsedRequest("GET", b"/api1", [(b"host", b""), (b"authorization", b"Bearer t")],
                                                    None)
    assert decodes == [fill, path, fill]  # the block that adds to a table is decoded on each connection


def test_the_same_bytes_over_another_table_are_decoded_over_it(decodes: list[bytes]) -> None:
    shared = SharedBlocks(1 << 20)
    alice, bob = RequestBlocks(65536, shared), RequestBlocks(65536, shared)
    alice.decode(GET + _adding(b"authorization", b"Bearer alice"))
    bob.decode(GET + _adding(b"authorization", b"Bearer bob"))
    assert alice.decode(GET + NEWEST).headers[1] == (b"authorization", b"Bearer alice")
    assert bob.decode(GET + NEWEST).headers[1] == (b"authorization", b"Bearer bob")
    assert len(decodes) == 4


def test_what_is_shared_is_at_most_its_bound_with_the_tables_and_emptied_when_full(decodes: list[bytes]) -> None:
    # each block's fields are 154 by RFC 7541 4.1 (as above) over an empty table: two fit in 400, not three
    one, two, three = (GET + b"\x00\x03x-n\x01" + n for n in (b"1", b"2", b"3"))
    shared = SharedBlocks(400)
    for block in (one, two, three):
        RequestBlocks(65536, shared).decode(block)
    for block in (three, one):  # three's coming emptied what was shared: one is decoded again
        RequestBlocks(65536, shared).decode(block)
    assert decodes == [one, two, three, one]
    # a table's entries count too: over a table of 3 + 1 + 32 = 36, one block fits, not two
    shared = SharedBlocks(154 + 36 + 154)
    for block in (one, two, one):
        blocks = RequestBlocks(65536, shared)
        blocks.decode(GET + _adding(b"x-a", b"1"))
        blocks.decode(block)
    assert decodes[4:][1::2] == [one, two, one]


def test_a_shared_request_over_a_connections_header_list_bound_is_refused_there() -> None:
    shared = SharedBlocks(1 << 20)
    block = GET + b"\x00\x03x-n\x01\x31"  # 154 by RFC 7541 4.1
    RequestBlocks(65536, shared).decode(block)
    with pytest.raises(hpack.OversizedHeaderListError):
        RequestBlocks(100, shared).decode(block)


_NAMES = st.sampled_from(["accept", "user-agent", "authorization", "x-a", "x-b", "cookie", "content-type"])
_VALUES = st.sampled_from(["", "1", "2", "*/*", "application/json", "Bearer t0ken", "kubectl/v1.28.0"])
_FIELD = st.tuples(_NAMES, _VALUES, st.booleans())  # the bool: sent never-indexed
_REQUEST = st.tuples(
    st.sampled_from(["GET", "POST", "DELETE"]), st.sampled_from(["/", "/api", "/api/v1/pods?watch=1", "nope"]),
    st.lists(_FIELD, max_size=5), st.booleans(), st.none() | st.sampled_from([0, 64, 256, 4096]))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(_REQUEST, st.integers(1, 3)), min_size=1, max_size=12))
def test_the_requests_given_are_those_every_block_decoded_afresh_gives(rounds: list[Any]) -> None:
    encoder, reference, blocks = hpack.Encoder(), hpack.Decoder(), RequestBlocks(65536)
    for (method, path, fields, huffman, table_size), times in rounds:
        if table_size is not None:
            encoder.header_table_size = table_size
        headers = [(":method", method), (":scheme", "https"), (":path", path)]
        headers += [hpack.NeverIndexedHeaderTuple(n, v) if never else (n, v) for n, v, never in fields]
        block = encoder.encode(headers, huffman=huffman)
        for _ in range(times):  # the same bytes sent again (a block adding to the table adds again on both)
            given_, expected = _outcome(blocks.decode, block), _outcome(reference.decode, block, raw=True)
            assert given_ == (expected if isinstance(expected, type) else parse_request(expected))
            if isinstance(expected, type):
                return  # a broken block ends the connection


@settings(max_examples=200, deadline=None)
@given(st.lists(_REQUEST, min_size=1, max_size=4),
       st.lists(st.tuples(st.integers(0, 2), st.integers(0, 3), st.integers(1, 2)), min_size=1, max_size=16))
def test_connections_sharing_what_they_decoded_give_what_each_block_decoded_afresh_gives(
        requests: list[Any], rounds: list[Any]) -> None:
    # a few requests sent by three clients in any order: the same bytes come over tables alike and not
    shared = SharedBlocks(4096)  # small: emptied now and then
    clients = [(hpack.Encoder(), hpack.Decoder(), RequestBlocks(65536, shared)) for _ in range(3)]
    broken: set[int] = set()
    for client, which, times in rounds:
        if client in broken:
            continue
        method, path, fields, huffman, table_size = requests[which % len(requests)]
        encoder, reference, blocks = clients[client]
        if table_size is not None:
            encoder.header_table_size = table_size
        headers = [(":method", method), (":scheme", "https"), (":path", path)]
        headers += [hpack.NeverIndexedHeaderTuple(n, v) if never else (n, v) for n, v, never in fields]
        block = encoder.encode(headers, huffman=huffman)
        for _ in range(times):
            given_, expected = _outcome(blocks.decode, block), _outcome(reference.decode, block, raw=True)
            assert given_ == (expected if isinstance(expected, type) else parse_request(expected))
            if isinstance(expected, type):
                broken.add(client)  # that connection ends; the others go on
                break


def _outcome(decode: Any, block: bytes, **options: Any) -> Any:
    """What decoding gives, or the class of what it raises."""
    try:
        return decode(block, **options)
    except hpack.HPACKError as error:
        return type(error)
