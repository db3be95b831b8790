"""Rules specific to the etcd backend: key layout, URLs, revisions it must learn, outages.

The shared contract is checked in test_store_conformance.py; these tests use
the session's etcd (`etcd_endpoint`) or, when they stop etcd, one of their own.
"""

from __future__ import annotations

import json
import math
import uuid
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import AsyncIterator

import httpx
import pytest
import trio
import trio.testing

from runtime.machinery.storedobject import ObjectEncoder, decode_stored
from runtime.server.storage import Compacted, StoreEvent, StoreUnavailable, open_store
from runtime.server.storage.etcd import store as etcd_store
from runtime.server.storage.etcd.store import DEFAULT_PREFIX, EtcdStore
from runtime.server.storage.etcd.client import EtcdClient, b64, unb64
from tests.support.etcd import EtcdServer, make_tls
from tests.support.scripted_http import Answer, scripted_server


def val(text: str):
    return lambda rev: f"{text}@{rev}".encode()


def brief(event: StoreEvent) -> tuple[str, str, int]:
    return event.type, event.key, event.revision


def unique() -> str:
    return f"/etcd-test-{uuid.uuid4().hex[:8]}"


async def raw_keys(endpoint: str, prefix: bytes) -> dict[bytes, bytes]:
    """Every key under `prefix` as etcd holds it, read with a plain HTTP client."""
    end = prefix[:-1] + bytes([prefix[-1] + 1])
    async with httpx.AsyncClient(trust_env=False) as http:
        resp = await http.post(f"http://{endpoint}/v3/kv/range", json={"key": b64(prefix), "range_end": b64(end)})
    return {unb64(kv["key"]): unb64(kv.get("value")) for kv in resp.json().get("kvs", [])}


# -- keys and URLs ---------------------------------------------------------------

async def test_keys_live_under_the_store_prefix(etcd_endpoint: str) -> None:
    name = f"admin-{uuid.uuid4().hex[:8]}"
    store = await open_store(f"etcd://{etcd_endpoint}")
    await store.create(f"/rbac.authorization/clusterroles/{name}", val("role"))
    held = await raw_keys(etcd_endpoint, b"/registry/rbac.authorization/clusterroles/")
    assert f"/registry/rbac.authorization/clusterroles/{name}".encode() in held
    await store.delete(f"/rbac.authorization/clusterroles/{name}", expected_revision=None)
    await store.aclose()


async def test_stores_with_other_prefixes_do_not_see_each_other(etcd_endpoint: str) -> None:
    a, b = unique(), unique()
    one = await open_store(f"etcd://{etcd_endpoint}?prefix={a}")
    other = await open_store(f"etcd://{etcd_endpoint}", prefix=b)
    start = await one.current_revision()
    await one.create("/k/x", val("one"))
    await other.create("/k/x", val("other"))
    assert [e.value for e in (await one.list("/")).entries] == [f"one@{start + 1}".encode()]
    it = other.watch("/", after_revision=start)
    assert brief(await it.__anext__()) == ("ADDED", "/k/x", start + 2)
    await it.aclose()
    assert set(await raw_keys(etcd_endpoint, a.encode() + b"/")) == {f"{a}/k/x".encode()}
    await one.aclose()
    await other.aclose()


@pytest.mark.parametrize("url", [
    "etcd://", "etcd://127.0.0.1", "etcd://127.0.0.1:2379/path", "etcd://127.0.0.1:2379?color=red",
    "etcd://127.0.0.1:2379?keyfile=/k.pem",
])
async def test_malformed_etcd_urls_are_refused(url: str) -> None:
    with pytest.raises(ValueError):
        await open_store(url)


async def test_keys_must_start_with_a_slash(etcd_endpoint: str) -> None:
    store = await EtcdStore.open(etcd_endpoint, prefix=unique())
    with pytest.raises(ValueError):
        await store.create("no-slash", val("x"))
    await store.aclose()


async def test_tls_with_kube_apiservers_three_files(tmp_path: Path) -> None:
    tls = make_tls(tmp_path / "pki")
    server = EtcdServer(tmp_path / "etcd", tls=tls)
    server.start()
    try:
        await server.wait_healthy()
        files = f"cafile={tls.cafile}&certfile={tls.client_cert}&keyfile={tls.client_key}"
        store = await open_store(f"etcds://{server.endpoint}?{files}")
        created = await store.create("/k/a", val("a"))
        assert await store.get("/k/a") == created
        await store.aclose()
        with pytest.raises(StoreUnavailable):  # etcd requires a client certificate
            await open_store(f"etcds://{server.endpoint}?cafile={tls.cafile}", timeout=2)
        with pytest.raises(StoreUnavailable):  # plain HTTP to a TLS port
            await open_store(f"etcd://{server.endpoint}", timeout=2)
    finally:
        server.stop()


# -- revisions etcd assigns -------------------------------------------------------

async def test_a_write_after_another_clients_write_still_answers_its_true_revision(etcd_endpoint: str) -> None:
    prefix = unique()
    ours = await EtcdStore.open(etcd_endpoint, prefix=prefix)
    theirs = await EtcdStore.open(etcd_endpoint, prefix=prefix)
    await ours.create("/k/a", val("a"))
    await theirs.create("/k/b", val("b"))  # moves etcd's revision past our prediction
    encoded: list[int] = []

    def encode(revision: int) -> bytes:
        encoded.append(revision)
        return json.dumps({"metadata": {"name": "c", "resourceVersion": str(revision)}}).encode()

    entry = await ours.create("/k/c", encode)
    assert encoded == [entry.mod_revision - 1, entry.mod_revision]  # predicted, then the real one
    assert json.loads(entry.value)["metadata"]["resourceVersion"] == str(entry.mod_revision)
    assert ours.statistics().mispredicted == 1
    # Stored with the predicted revision inside: readers take it from mod_revision (and re-stamp).
    stored = await ours.get("/k/c")
    assert stored is not None and stored.mod_revision == entry.mod_revision
    assert json.loads(stored.value)["metadata"]["resourceVersion"] == str(entry.mod_revision - 1)
    await ours.aclose()
    await theirs.aclose()


async def test_the_watch_event_of_an_own_write_answered_first_carries_its_encoder(etcd_endpoint: str) -> None:
    # The watch reads its stream only when asked for the next event, so each write below is
    # answered before the watch reaches its event (as etcd mostly orders them).
    prefix = unique()
    ours = await EtcdStore.open(etcd_endpoint, prefix=prefix)
    theirs = await EtcdStore.open(etcd_endpoint, prefix=prefix)
    base = await ours.current_revision()
    events = ours.watch("/k/", after_revision=base).__aiter__()
    await theirs.create("/k/a", val("a"))
    assert (await events.__anext__()).origin is None  # another client's write
    created = ObjectEncoder({"metadata": {"name": "b"}})
    entry = await ours.create("/k/b", created)
    event = await events.__anext__()
    assert (event.type, event.revision, event.origin) == ("ADDED", entry.mod_revision, created)
    # The cache takes the encoder's object, stamped with the revision etcd gave, without a decode.
    assert decode_stored("/k/b", event.value, event.revision, event.origin).obj is created.obj
    updated = ObjectEncoder({"metadata": {"name": "b", "labels": {"x": "y"}}})
    await ours.update("/k/b", updated, expected_revision=None)
    assert (await events.__anext__()).origin is updated
    await theirs.update("/k/b", val("theirs"), expected_revision=None)
    assert (await events.__anext__()).origin is None
    assert ours.statistics().awaited == 0  # every entry taken by its event
    await events.aclose()
    # With no watch open, nothing is kept for one.
    await ours.create("/k/c", ObjectEncoder({"metadata": {"name": "c"}}))
    assert ours.statistics().awaited == 0
    await ours.aclose()
    await theirs.aclose()


class _ScriptedEtcd:
    """An EtcdClient stand-in. A txn is answered when the test says (`answer`), or at once (`hold=False`,
    at the next revision); a read answers `revision`; a watch stream yields what the test sends (`send`),
    so a watch event can reach the store while its write waits."""

    endpoint = "http://scripted:2379"
    timeout = 5.0

    def __init__(self, *, revision: int = 10) -> None:
        self.hold = True
        self.revision = revision  # the newest revision this etcd has given
        self.body: dict = {}
        self.sent = trio.Event()  # set once a txn is sent; a new one for each txn answered
        self.watching = trio.Event()
        self._answer: dict | None = None
        self._answered = trio.Event()
        self._messages, self._lines = trio.open_memory_channel[dict](math.inf)

    async def call(self, path: str, body: dict, *, idempotent: bool) -> dict:
        if path != "/v3/kv/txn":
            return {"header": {"revision": str(self.revision)}}
        self.body = body
        self.sent.set()
        if not self.hold:
            self.answer(self.revision + 1)
        await self._answered.wait()
        answer, self._answer = self._answer, None
        self.sent, self._answered = trio.Event(), trio.Event()
        assert answer is not None
        return answer

    def answer(self, revision: int, *, succeeded: bool = True) -> None:
        self.revision = max(self.revision, revision)
        self._answer = {"header": {"revision": str(revision)}, "succeeded": succeeded,
                        "responses": [{"response_put": {}} if succeeded else {"response_range": {"kvs": []}}]}
        self._answered.set()

    def sent_value(self) -> bytes:
        return unb64(self.body["success"][0]["request_put"]["value"])

    @asynccontextmanager
    async def stream(self, path: str, body: dict) -> AsyncIterator[_ScriptedEtcd]:
        self.watching.set()
        yield self

    async def next(self) -> dict | None:
        return await self._lines.receive()

    def send(self, message: dict) -> None:
        """A watch message: `put(...)`'s event, or `{"header": {"revision": ...}}` (progress)."""
        self.revision = max(self.revision, int(message["header"]["revision"]))
        self._messages.send_nowait(message)

    async def aclose(self) -> None:
        pass


def put(key: str, value: bytes, revision: int) -> dict:
    """The watch message etcd sends for a create of `key` at `revision`."""
    kv = {"key": b64(DEFAULT_PREFIX.encode() + key.encode()), "value": b64(value),
          "create_revision": str(revision), "mod_revision": str(revision)}
    return {"header": {"revision": str(revision)}, "events": [{"type": "PUT", "kv": kv}]}


async def open_watch(nursery: trio.Nursery, store: EtcdStore, client: _ScriptedEtcd
                     ) -> trio.MemoryReceiveChannel[StoreEvent]:
    """A watch from revision 10 on `client`'s stream, read by a task of `nursery`: its events, as they come."""
    send, receive = trio.open_memory_channel[StoreEvent](math.inf)

    async def read() -> None:
        async for event in store.watch("/k/", after_revision=10):
            send.send_nowait(event)

    nursery.start_soon(read)
    await client.watching.wait()
    return receive


async def test_the_watch_event_of_an_own_write_that_comes_before_its_answer_carries_its_encoder() -> None:
    client = _ScriptedEtcd()
    store = EtcdStore(client)  # type: ignore[arg-type]
    await store.current_revision()  # the store has seen revision 10: it predicts 11
    encoder = ObjectEncoder({"metadata": {"name": "a"}})
    async with trio.open_nursery() as nursery:
        events = await open_watch(nursery, store, client)  # one watch, delivered up to revision 10
        async with trio.open_nursery() as writes:
            writes.start_soon(store.create, "/k/a", encoder)
            await client.sent.wait()
            client.send(put("/k/a", client.sent_value(), 11))  # etcd's event comes first
            event = await events.receive()
            assert event.origin is encoder
            assert decode_stored("/k/a", event.value, 11, event.origin).obj is encoder.obj  # no decode
            client.answer(11)
        assert store.statistics().awaited == 0
        # The same bytes under another key are not this write's.
        client.send(put("/k/b", client.sent_value(), 12))
        assert (await events.receive()).origin is None
        nursery.cancel_scope.cancel()


async def test_a_create_asks_etcd_for_no_previous_value_and_an_update_does() -> None:
    # As kube-apiserver's create (OpPut without WithPrevKV): a created key has no previous value,
    # and asking costs etcd a read per create. An update reads the key's create_revision from it.
    client = _ScriptedEtcd()
    store = EtcdStore(client)  # type: ignore[arg-type]
    sent = []
    for write in (partial(store.create, "/k/a", val("a")),
                  partial(store.update, "/k/a", val("b"), expected_revision=11)):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(write)
            await client.sent.wait()
            sent.append(client.body["success"][0]["request_put"])
            client.answer(11 + len(sent))
    assert [put["prev_kv"] for put in sent] == [False, True]


async def test_an_own_write_whose_txn_fails_or_is_refused_leaves_nothing_for_an_event() -> None:
    for outcome in ("refused", "cancelled"):
        client = _ScriptedEtcd()
        store = EtcdStore(client)  # type: ignore[arg-type]
        async with trio.open_nursery() as nursery:
            await open_watch(nursery, store, client)  # stays open: its close would drop what is kept

            async def create() -> None:
                with pytest.raises(etcd_store.KeyExists):
                    await store.create("/k/a", ObjectEncoder({"metadata": {"name": "a"}}))

            async with trio.open_nursery() as writes:
                if outcome == "refused":
                    writes.start_soon(create)
                else:
                    writes.start_soon(store.create, "/k/a", ObjectEncoder({"metadata": {"name": "a"}}))
                await client.sent.wait()
                assert store.statistics().awaited == 1  # kept from the moment the txn is sent
                if outcome == "refused":
                    client.answer(11, succeeded=False)
                else:
                    writes.cancel_scope.cancel()
            assert (store.statistics().watchers, store.statistics().awaited) == (1, 0), outcome
            nursery.cancel_scope.cancel()


async def test_an_own_write_keeps_its_encoder_only_while_a_watch_has_yet_to_deliver_it() -> None:
    client = _ScriptedEtcd()
    store = EtcdStore(client, awaited_max=3)  # type: ignore[arg-type]
    await store.current_revision()
    async with trio.open_nursery() as nursery:
        events = await open_watch(nursery, store, client)
        async with trio.open_nursery() as writes:
            writes.start_soon(store.create, "/k/a", val("a"))
            await client.sent.wait()
            client.send({"header": {"revision": "12"}})  # the watch went past revision 11 without the event
            await trio.testing.wait_all_tasks_blocked()
            assert store.statistics().delivered == 12
            client.answer(11)
        assert store.statistics().awaited == 0
        # Bounded: of four writes the watch has yet to deliver, the oldest went first.
        client.hold = False
        for _ in range(4):
            await store.create("/k/c", val("c"))
        assert store.statistics().awaited == 3
        client.send(put("/k/c", b"c@13", 13))
        client.send(put("/k/c", b"c@16", 16))
        assert [(await events.receive()).origin is not None for _ in range(2)] == [False, True]
        nursery.cancel_scope.cancel()
    # With no watch open, nothing is kept for one, not even while its txn waits.
    assert store.statistics().watchers == 0
    client.hold = True
    async with trio.open_nursery() as writes:
        writes.start_soon(store.create, "/k/b", val("b"))
        await client.sent.wait()
        assert store.statistics().awaited == 0
        client.answer(client.revision + 1)


async def test_the_last_watch_to_close_drops_the_encoders_kept_for_it(etcd_endpoint: str) -> None:
    prefix = unique()
    ours = await EtcdStore.open(etcd_endpoint, prefix=prefix)
    events = ours.watch("/k/", after_revision=await ours.current_revision()).__aiter__()
    await ours.create("/k/0", val("0"))
    assert (await events.__anext__()).origin is None  # written before the watch was open
    await ours.create("/k/a", val("a"))
    await ours.create("/k/b", val("b"))
    assert (await events.__anext__()).origin is not None
    assert ours.statistics().awaited == 1  # /k/b's, its event not read yet
    await events.aclose()
    assert ours.statistics().awaited == 0
    await ours.aclose()


async def test_servers_sharing_an_etcd_compact_once_per_interval_at_the_revision_seen_one_tick_before(
        etcd_endpoint: str) -> None:
    prefix = unique()
    a = await EtcdStore.open(etcd_endpoint, prefix=prefix)
    b = await EtcdStore.open(etcd_endpoint, prefix=prefix)
    # First tick: a takes the first turn (no compaction at start), b finds the turn taken.
    turn_a, seen_a = await a.compact_in_turn(0, 0)
    turn_b, seen_b = await b.compact_in_turn(0, 0)
    assert (turn_a, turn_b) == (1, 1)
    assert await a.compacted_revision() == 0
    await a.create("/k/x", val("x"))
    # Second tick: a's turn again, it compacts at what it saw one tick before; b compacts nothing.
    turn_a, _ = await a.compact_in_turn(turn_a, seen_a)
    turn_b, _ = await b.compact_in_turn(turn_b, seen_b)
    assert (turn_a, turn_b) == (2, 2)
    assert await a.compacted_revision() == seen_a
    assert await b.compacted_revision() == 0  # it did not compact (nor learn of it yet)
    with pytest.raises(Compacted):
        await b.list("/k/", revision=seen_a - 1)
    await a.aclose()
    await b.aclose()


async def test_a_compaction_by_another_client_is_learned_from_a_refused_read(etcd_endpoint: str) -> None:
    prefix = unique()
    compactor = await EtcdStore.open(etcd_endpoint, prefix=prefix)
    reader = await EtcdStore.open(etcd_endpoint, prefix=prefix)
    first = await compactor.create("/k/a", val("a"))
    second = await compactor.update("/k/a", val("b"), expected_revision=None)
    await compactor.compact(second.mod_revision)
    assert await reader.compacted_revision() < second.mod_revision  # etcd does not tell
    with pytest.raises(Compacted) as info:
        await reader.list("/k/", revision=first.mod_revision)
    assert (info.value.requested, info.value.compacted) == (first.mod_revision, second.mod_revision)
    assert await reader.compacted_revision() == second.mod_revision
    await compactor.aclose()
    await reader.aclose()


async def test_a_watch_from_before_another_clients_compaction_raises_compacted(etcd_endpoint: str) -> None:
    prefix = unique()
    compactor = await EtcdStore.open(etcd_endpoint, prefix=prefix)
    watcher = await EtcdStore.open(etcd_endpoint, prefix=prefix)
    first = await compactor.create("/k/a", val("a"))
    second = await compactor.update("/k/a", val("b"), expected_revision=None)
    await compactor.compact(second.mod_revision)
    it = watcher.watch("/k/", after_revision=first.mod_revision)
    with pytest.raises(Compacted) as info:
        await it.__anext__()
    assert info.value.compacted == second.mod_revision == await watcher.compacted_revision()
    await compactor.aclose()
    await watcher.aclose()


# -- outages ------------------------------------------------------------------------

async def test_calls_to_a_stopped_etcd_raise_store_unavailable(own_etcd: EtcdServer) -> None:
    store = await EtcdStore.open(own_etcd.endpoint, timeout=2)
    created = await store.create("/k/a", val("a"))
    own_etcd.stop()
    for call in (store.get("/k/a"), store.list("/k/"), store.current_revision(),
                 store.create("/k/b", val("b")), store.update("/k/a", val("x"), expected_revision=None),
                 store.delete("/k/a", expected_revision=created.mod_revision)):
        with pytest.raises(StoreUnavailable):
            await call
    await store.aclose()


async def test_opening_a_store_on_a_stopped_etcd_raises_store_unavailable(own_etcd: EtcdServer) -> None:
    own_etcd.stop()
    with pytest.raises(StoreUnavailable):
        await open_store(f"etcd://{own_etcd.endpoint}")


async def test_an_etcd_that_never_answers_raises_store_unavailable_after_the_timeout() -> None:
    # A listener that accepts connections and says nothing: only the client timeout ends the call.
    held: list[trio.SocketStream] = []

    async def hold(stream: trio.SocketStream) -> None:
        held.append(stream)
        await trio.sleep_forever()

    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(partial(trio.serve_tcp, hold, 0, host="127.0.0.1"))
        port = listeners[0].socket.getsockname()[1]
        with trio.fail_after(60):  # a guard against hanging, far above the 0.2 s timeout
            with pytest.raises(StoreUnavailable):
                await EtcdStore.open(f"127.0.0.1:{port}", timeout=0.2)
        nursery.cancel_scope.cancel()


async def test_the_next_endpoint_is_tried_when_one_is_down(own_etcd: EtcdServer, etcd_endpoint: str) -> None:
    dead = own_etcd.endpoint
    own_etcd.stop()
    store = await EtcdStore.open(f"{dead},{etcd_endpoint}", prefix=unique())
    await store.create("/k/a", val("a"))
    assert store.statistics().endpoint == f"http://{etcd_endpoint}"
    await store.aclose()


def _watch_line(key: str, revision: int) -> str:
    kv = {"key": b64(f"/registry{key}".encode()), "value": b64(b"v"), "create_revision": str(revision),
          "mod_revision": str(revision)}
    return json.dumps({"result": {"header": {"revision": str(revision)}, "events": [{"kv": kv}]}})


async def test_a_watch_stream_ended_by_the_gateway_losing_etcd_is_reopened_from_its_last_revision() -> None:
    # etcd stopping makes its JSON gateway end a 200 watch stream with a gRPC CANCELLED error.
    starts: list[int] = []

    def gateway(path: str, body: bytes) -> Answer:
        if path == "/v3/kv/range":
            return Answer(parts=[json.dumps({"header": {"revision": "10"}}).encode()])
        start = int(json.loads(body)["create_request"]["start_revision"])
        starts.append(start)
        if len(starts) == 1:
            closing = {"error": {"grpc_code": 1, "http_code": 408, "http_status": "Request Timeout",
                                 "message": "grpc: the client connection is closing"}}
            return Answer(parts=[(_watch_line("/w/a", 11) + "\n" + json.dumps(closing) + "\n").encode()])
        return Answer(parts=[(_watch_line("/w/a", 11) + "\n" + _watch_line("/w/b", 12) + "\n").encode()])

    async with scripted_server(gateway) as server:
        store = EtcdStore(EtcdClient([server.url]))
        it = store.watch("/w/", after_revision=10)
        seen = [await it.__anext__() for _ in range(2)]
        assert [(e.key, e.revision) for e in seen] == [("/w/a", 11), ("/w/b", 12)]
        assert starts == [10, 11]  # reopened at the last revision delivered; 11 is not repeated
        await it.aclose()
        await store.aclose()


async def test_a_watch_resumes_across_an_etcd_restart_without_loss_or_repeats(own_etcd: EtcdServer) -> None:
    store = await EtcdStore.open(own_etcd.endpoint, timeout=2)
    start = await store.current_revision()
    it = store.watch("/w/", after_revision=start)
    for i in range(2):
        await store.create(f"/w/{i}", val("v"))
    seen = [await it.__anext__() for _ in range(2)]
    await store.create("/w/2", val("v"))  # written, not yet read when etcd stops
    own_etcd.stop()
    own_etcd.start()
    await own_etcd.wait_healthy()
    for i in range(3, 5):
        await store.create(f"/w/{i}", val("v"))
    seen += [await it.__anext__() for _ in range(3)]  # the same watch: its stream reopened
    assert [(e.key, e.revision) for e in seen] == [(f"/w/{i}", start + 1 + i) for i in range(5)]
    await it.aclose()
    await store.aclose()


async def test_a_watch_during_an_outage_raises_and_resumes_from_its_last_revision(
        own_etcd: EtcdServer) -> None:
    store = await EtcdStore.open(own_etcd.endpoint, timeout=2)
    start = await store.current_revision()
    it = store.watch("/w/", after_revision=start)
    await store.create("/w/0", val("v"))
    seen: list[StoreEvent] = [await it.__anext__()]
    own_etcd.stop()
    with pytest.raises(StoreUnavailable):
        await it.__anext__()
    own_etcd.start()
    await own_etcd.wait_healthy()
    for i in range(1, 3):
        await store.create(f"/w/{i}", val("v"))
    resumed = store.watch("/w/", after_revision=seen[-1].revision)
    seen += [await resumed.__anext__() for _ in range(2)]
    assert [(e.key, e.revision) for e in seen] == [(f"/w/{i}", start + 1 + i) for i in range(3)]
    await resumed.aclose()
    await store.aclose()
