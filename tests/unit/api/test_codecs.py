"""Wire codecs: safe YAML, Kubernetes' CBOR, streamed list encoders, incremental gzip."""

from __future__ import annotations

import gzip
import json
import math
import tracemalloc

import cbor2
import pytest
import yaml

from api.codecs import MAX_YAML_NODES, coalesce, coalesce_queued, decode_body, encode, encode_list_chunks, gzip_chunks
from runtime.machinery import errors
from runtime.machinery.serializer import cbor
from runtime.machinery.serializer import protobuf
from runtime.machinery.storedobject import StoredObject, dumps_json

ROLE = {"apiVersion": "rbac.authorization.svc.io/v1", "kind": "ClusterRole",
        "metadata": {"name": "reader", "labels": {"a": "b"}},
        "rules": [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["namespaces"]}]}
LIST_HEADER = {"kind": "ClusterRoleList", "apiVersion": "rbac.authorization.svc.io/v1",
               "metadata": {"resourceVersion": "42", "continue": "abc", "remainingItemCount": 3}}


def stored(i: int) -> StoredObject:
    obj = json.loads(json.dumps(ROLE))
    obj["metadata"].update(name=f"role-{i:06d}", resourceVersion=str(i + 1), uid=f"uid-{i}",
                           creationTimestamp="2024-05-01T10:00:00Z")
    return StoredObject(f"role-{i:06d}", obj, i + 1)


# --- YAML --------------------------------------------------------------------------------------

def test_yaml_body_decodes_to_the_json_form() -> None:
    body = decode_body("yaml", yaml.safe_dump(ROLE).encode())
    assert body.data == ROLE and body.duplicates == ()


def test_yaml_python_tags_are_refused_not_constructed() -> None:
    raw = b"kind: !!python/object/apply:os.system ['echo pwned']\n"
    with pytest.raises(errors.BadRequest):
        decode_body("yaml", raw)


def test_yaml_billion_laughs_is_400_without_expansion() -> None:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 10):
        refs = ",".join([f"*a{i - 1}"] * 9)
        lines.append(f"a{i}: &a{i} [{refs}]")
    tracemalloc.start()
    try:
        with pytest.raises(errors.BadRequest, match="excessive aliasing"):
            decode_body("yaml", "\n".join(lines).encode())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 5_000_000  # 9**10 nodes were never built


def test_yaml_aliases_within_the_budget_are_expanded() -> None:
    raw = b"base: &b {verbs: [get]}\nrules: [*b, *b]\n"
    assert decode_body("yaml", raw).data == {"base": {"verbs": ["get"]}, "rules": [{"verbs": ["get"]}] * 2}
    assert MAX_YAML_NODES >= 10_000


def test_yaml_and_json_duplicate_keys_are_reported_with_their_paths() -> None:
    assert decode_body("yaml", b"metadata:\n  name: a\n  name: b\n").duplicates == ("metadata.name",)
    assert decode_body("json", b'{"rules":[{"verbs":[],"verbs":[]}]}').duplicates == ("rules[0].verbs",)


@pytest.mark.parametrize("codec,raw", [("json", b"{"), ("yaml", b"a: [b"), ("protobuf", b"k8s\x00\xff"),
                                       ("cbor", b"\xa1"), ("json", b"  ")])
def test_undecodable_or_empty_bodies_are_400(codec: str, raw: bytes) -> None:
    with pytest.raises(errors.BadRequest):
        decode_body(codec, raw)


# --- CBOR --------------------------------------------------------------------------------------

def test_cbor_bodies_start_with_the_self_described_tag() -> None:
    data = encode("cbor", ROLE)
    assert data[:3] == b"\xd9\xd9\xf7"  # the head of tag 55799
    assert cbor.decode(data) == cbor.decode(data[3:]) == ROLE


def test_cbor_strings_are_byte_strings_with_keys_in_encoded_order() -> None:
    data = cbor.encode({"kind": "X", "apiVersion": "v1", "b": "é"})
    value = cbor2.loads(data[3:])
    assert list(value) == [b"b", b"kind", b"apiVersion"]  # length-first = bytewise order of the encodings
    assert value[b"b"] == "é".encode()


def test_cbor_floats_take_the_shortest_exact_width() -> None:
    assert cbor.encode(1.5)[3:] == b"\xf9\x3e\x00"
    assert cbor.encode(0.1)[3] == 0xFB


@pytest.mark.parametrize("value", [math.nan, math.inf, 1 << 64, {1: "x"}])
def test_cbor_refuses_values_kubernetes_refuses_to_encode(value: object) -> None:
    with pytest.raises(cbor.CBORError):
        cbor.encode(value)


def test_cbor_round_trips_every_json_type() -> None:
    doc = {"s": "text", "i": -5, "big": 1 << 40, "f": 2.25, "t": True, "n": None, "l": [1, "a"], "m": {"k": {}}}
    assert cbor.decode(cbor.encode(doc)) == doc


def test_cbor_decoder_accepts_text_strings_untagged_items_and_indefinite_lengths() -> None:
    assert cbor.decode(cbor2.dumps({"kind": "X", "items": [1, 2]})) == {"kind": "X", "items": [1, 2]}
    assert cbor.decode(b"\xbf\x61a\x9f\x01\xff\xff") == {"a": [1]}  # indefinite map and array
    assert cbor.decode(b"\x7f\x61a\x61b\xff") == "ab"  # indefinite text string


@pytest.mark.parametrize("raw,message", [
    (b"\xa2\x61a\x01\x61a\x02", "duplicate key"),
    (b"\xa2\x41a\x01\x61a\x02", "duplicate key"),  # byte-string and text-string spellings of one key
    (b"\xa1\x01\x02", "not a string"),
    (b"\x81" * 70 + b"\x01", "nested level"),
    (b"\xf9\x7e\x00", "NaN"),
    (b"\x1b\xff\xff\xff\xff\xff\xff\xff\xff", "int64"),
    (b"\x62\xff\xfe", "UTF-8"),
    (b"\xf7", "simple value"),
    (b"\x01\x02", "extraneous"),
])
def test_cbor_decoder_refuses_what_kubernetes_refuses(raw: bytes, message: str) -> None:
    with pytest.raises(cbor.CBORError, match=message):
        cbor.decode(raw)
    with pytest.raises(errors.BadRequest):
        decode_body("cbor", raw)


def test_cbor_containers_are_limited_to_1024_entries() -> None:
    with pytest.raises(cbor.CBORError, match="1024"):
        cbor.decode(cbor2.dumps(list(range(1025))))
    assert len(cbor.decode(cbor2.dumps(list(range(1024))))) == 1024


def test_cbor_watch_event_embeds_the_self_described_object() -> None:
    entry = cbor.encode_watch_event("ADDED", ROLE)
    head = b"\xd9\xd9\xf7\xa2" + cbor2.dumps(b"type") + cbor2.dumps(b"ADDED") + cbor2.dumps(b"object")
    assert entry == head + cbor.encode(ROLE)  # the object keeps its own self-described tag
    assert cbor.decode_sequence(entry * 2) == [{"type": "ADDED", "object": ROLE}] * 2


# --- lists written item by item --------------------------------------------------------------

@pytest.mark.parametrize("codec", ["json", "protobuf", "yaml", "cbor"])
def test_streamed_list_is_byte_for_byte_the_whole_document(codec: str) -> None:
    items = [stored(i) for i in range(50)]
    whole = encode(codec, dict(LIST_HEADER, items=[o.obj for o in items]))
    assert b"".join(encode_list_chunks(codec, LIST_HEADER, items)) == whole


def test_json_and_protobuf_lists_are_written_one_chunk_per_item() -> None:
    items = [stored(i) for i in range(10)]
    assert len(list(encode_list_chunks("json", LIST_HEADER, items))) == 12  # head, items, tail
    assert len(list(encode_list_chunks("protobuf", LIST_HEADER, items))) == 11  # head, items


def test_empty_list_streams_to_valid_documents() -> None:
    assert json.loads(b"".join(encode_list_chunks("json", LIST_HEADER, [])))["items"] == []
    assert protobuf.decode(b"".join(encode_list_chunks("protobuf", LIST_HEADER, [])))["items"] == []


def test_large_protobuf_list_is_sized_then_encoded_again_instead_of_held() -> None:
    items = [stored(i).obj for i in range(40)]
    whole = protobuf.encode(dict(LIST_HEADER, items=items))
    assert b"".join(protobuf.encode_list_chunks(LIST_HEADER, items, buffer_limit=100)) == whole


@pytest.mark.parametrize("codec", ["json", "protobuf"])
def test_streaming_a_large_list_holds_a_small_fraction_of_its_size(codec: str, monkeypatch) -> None:
    monkeypatch.setattr(protobuf, "LIST_BUFFER_BYTES", 16 * 1024)  # as a list past the buffer would be
    items = [stored(i) for i in range(20_000)]
    for o in items:
        o.json_bytes()  # cached as the watch cache holds it
    tracemalloc.start()
    try:
        total = 0
        for chunk in encode_list_chunks(codec, LIST_HEADER, items):
            total += len(chunk)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert total > 1_500_000
    assert peak < total / 4, (peak, total)


def test_coalesced_chunks_are_at_least_the_write_size_except_the_last() -> None:
    pieces = list(coalesce((b"x" * 1000 for _ in range(200)), size=64 * 1024))
    assert b"".join(pieces) == b"x" * 200_000
    assert all(len(p) >= 64 * 1024 for p in pieces[:-1]) and len(pieces) == 4


def test_gzip_chunks_decompress_to_the_input() -> None:
    chunks = [dumps_json(stored(i).obj) for i in range(500)]
    assert gzip.decompress(b"".join(gzip_chunks(chunks))) == b"".join(chunks)
    assert gzip.decompress(b"".join(gzip_chunks([]))) == b""


# ---- coalesce_queued: a watch's frames written together while events are queued ------------------

class _Queue:
    """Frames as a watch yields them, with the count still queued behind each (the watch's backlog)."""

    def __init__(self, frames: list[tuple[bytes, int]]) -> None:
        self.frames, self.queued, self.closed = frames, 0, False

    async def stream(self):
        try:
            for frame, queued_behind in self.frames:
                self.queued = queued_behind
                yield frame
        finally:
            self.closed = True


async def _writes(queue: _Queue, **kw) -> list[bytes]:
    return [w async for w in coalesce_queued(queue.stream(), lambda: queue.queued, **kw)]


async def test_coalesce_queued_writes_each_frame_at_once_when_nothing_is_queued():
    queue = _Queue([(b"a\n", 0), (b"b\n", 0), (b"c\n", 0)])
    assert await _writes(queue) == [b"a\n", b"b\n", b"c\n"]


async def test_coalesce_queued_joins_the_frames_of_a_backlog_into_one_write():
    queue = _Queue([(b"a\n", 0), (b"b\n", 2), (b"c\n", 1), (b"d\n", 0), (b"e\n", 0)])
    assert await _writes(queue) == [b"a\n", b"b\nc\nd\n", b"e\n"]


async def test_coalesce_queued_writes_a_long_backlog_in_pieces_of_at_most_the_limit():
    queue = _Queue([(b"%d\n" % i, 9 - i) for i in range(10)])
    writes = await _writes(queue, limit=4)
    assert [w.count(b"\n") for w in writes] == [4, 4, 2]
    assert b"".join(writes) == b"".join(f for f, _ in queue.frames)


async def test_coalesce_queued_writes_what_it_holds_when_the_frames_end():
    # The watch ended (its timeout) right after taking a frame with more queued behind it.
    queue = _Queue([(b"a\n", 0), (b"b\n", 3)])
    assert await _writes(queue) == [b"a\n", b"b\n"]


async def test_coalesce_queued_closed_early_closes_the_watch_it_reads():
    queue = _Queue([(b"a\n", 0), (b"b\n", 0)])
    writes = coalesce_queued(queue.stream(), lambda: queue.queued)
    assert await writes.__anext__() == b"a\n"
    await writes.aclose()  # the client went away
    assert queue.closed


async def test_coalesce_queued_frames_each_item_and_tells_the_frames_of_each_write():
    queue = _Queue([(b"a", 0), (b"b", 1), (b"c", 0)])
    told: list[int] = []
    writes = [w async for w in coalesce_queued(queue.stream(), lambda: queue.queued,
                                               frame=lambda item: item.upper() + b"\n", written=told.append)]
    assert writes == [b"A\n", b"B\nC\n"] and told == [1, 2]
