"""What metrics wrap (`api.metrics`): the store the registry is given with its calls timed
(`InstrumentedStore`) and the authorizer whose decisions are counted (`CountingAuthorizer`), each with
members of its own, forwarding nothing by magic; a store of this process's `follow` stays visible (the
watch cache asks for it)."""

from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry, Histogram

from api.metrics import APIServerMetrics, CountingAuthorizer, InstrumentedStore
from runtime.server.storage import MemoryStore


def _timed(store: object) -> InstrumentedStore:
    histogram = Histogram("t", "t", ["operation", "type"], registry=CollectorRegistry())
    return InstrumentedStore(store, histogram, lambda key: "roles")


class _WithExtra(MemoryStore):
    def extra(self) -> str:
        return "not a Store member"


def test_a_name_outside_the_store_protocol_is_not_forwarded():
    with pytest.raises(AttributeError):
        _timed(_WithExtra()).extra  # noqa: B018


async def test_every_store_member_reaches_the_store():
    store = MemoryStore()
    timed = _timed(store)
    entry = await timed.create("/roles/a", lambda revision: b"{}")
    assert (await timed.get("/roles/a")).mod_revision == entry.mod_revision
    assert await timed.current_revision() == await store.current_revision() == entry.mod_revision
    await timed.compact(entry.mod_revision)
    assert await timed.compacted_revision() == await store.compacted_revision()
    assert getattr(timed, "follow", None) is not None  # the memory store hands writes over as they commit
    await timed.aclose()


class _Authorizer:
    def authorize(self, attrs: object) -> object:
        return type("Decision", (), {"allowed": True})()

    def extra(self) -> str:
        return "not an authorizer member"


def test_the_counting_authorizer_counts_and_forwards_nothing_else():
    told = []
    counting = CountingAuthorizer(_Authorizer(), APIServerMetrics(), told.append)
    assert counting.authorize(object()).allowed and len(told) == 1
    with pytest.raises(AttributeError):
        counting.extra  # noqa: B018
