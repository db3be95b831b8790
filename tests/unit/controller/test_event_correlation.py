"""client-go's event correlation (`tools/record/events_cache.go`): repeats counted, similar events combined, spam dropped."""

from __future__ import annotations

from typing import Any

from runtime.controller.eventcorrelation import COMBINED_PREFIX, EventCorrelator, TokenBucket, format_time

START = 1_700_000_000.0


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> float:
        return self.now


def event(message: str = "synced", *, name: str = "reader", reason: str = "Synced", kind: str = "Role",
          at: float = START, component: str = "ctl") -> dict[str, Any]:
    stamp = format_time(at)
    return {"apiVersion": "v1", "kind": "Event",
            "metadata": {"name": f"{name}.{int(at * 1e9):x}", "namespace": "ci"},
            "involvedObject": {"kind": kind, "namespace": "ci", "name": name, "uid": f"uid-{name}",
                               "apiVersion": "rbac.authorization.k8s.io/v1"},
            "reason": reason, "message": message, "source": {"component": component},
            "firstTimestamp": stamp, "lastTimestamp": stamp, "count": 1, "type": "Normal",
            "reportingComponent": component, "reportingInstance": ""}


def written(e: dict[str, Any], version: str = "5") -> dict[str, Any]:
    """The event as the server answers it (a resourceVersion added)."""
    return {**e, "metadata": {**e["metadata"], "resourceVersion": version}}


def test_the_first_event_is_created_as_made():
    correlator = EventCorrelator(clock=Clock())
    first = event()
    result = correlator.correlate(first)
    assert result.event == first and result.patch is None and not result.skip


def test_identical_events_within_ten_minutes_patch_count_and_last_timestamp():
    clock = Clock()
    correlator = EventCorrelator(clock=clock)
    first = correlator.correlate(event()).event
    correlator.update_state(written(first))
    clock.now += 599
    again = correlator.correlate(event(at=clock.now))
    assert again.patch == {"count": 2, "lastTimestamp": format_time(clock.now), "message": "synced"}
    assert again.event["metadata"] == {"name": first["metadata"]["name"], "namespace": "ci", "resourceVersion": "5"}
    assert again.event["firstTimestamp"] == first["firstTimestamp"] and again.event["count"] == 2
    clock.now += 60
    assert correlator.correlate(event(at=clock.now)).patch["count"] == 3


def test_an_identical_event_after_ten_minutes_starts_a_new_event():
    clock = Clock()
    correlator = EventCorrelator(clock=clock)
    correlator.update_state(written(correlator.correlate(event()).event))
    clock.now += 601
    later = event(at=clock.now)
    result = correlator.correlate(later)
    assert result.patch is None and result.event == later


def test_events_differing_in_reason_type_or_object_are_not_repeats():
    correlator = EventCorrelator(clock=Clock())
    correlator.update_state(written(correlator.correlate(event()).event))
    assert correlator.correlate(event(reason="Other")).patch is None
    assert correlator.correlate(event(name="writer")).patch is None
    assert correlator.correlate(event(component="other-ctl")).patch is None


def test_similar_events_from_the_tenth_distinct_message_are_combined():
    clock = Clock()
    correlator = EventCorrelator(clock=clock)
    for i in range(9):
        clock.now += 1
        result = correlator.correlate(event(f"message {i}", at=clock.now))
        assert result.event["message"] == f"message {i}" and result.patch is None
    clock.now += 1
    tenth = correlator.correlate(event("message 9", at=clock.now))
    assert tenth.event["message"] == COMBINED_PREFIX + "message 9" and tenth.patch is None
    assert tenth.event["count"] == 1 and tenth.event["involvedObject"]["name"] == "reader"
    assert tenth.event["metadata"]["name"].startswith("reader.")
    correlator.update_state(written(tenth.event, "8"))
    clock.now += 1
    eleventh = correlator.correlate(event("message 10", at=clock.now))
    assert eleventh.event["metadata"]["name"] == tenth.event["metadata"]["name"]
    assert eleventh.patch == {"count": 2, "lastTimestamp": format_time(clock.now),
                              "message": COMBINED_PREFIX + "message 10"}


def test_similar_events_are_combined_only_while_each_comes_within_ten_minutes_of_the_last():
    clock = Clock()
    correlator = EventCorrelator(clock=clock)
    for i in range(9):
        correlator.correlate(event(f"message {i}"))
    clock.now += 601
    assert correlator.correlate(event("message 9", at=clock.now)).event["message"] == "message 9"


def test_the_spam_filter_lets_25_events_per_object_through_then_one_every_five_minutes():
    clock = Clock()
    correlator = EventCorrelator(clock=clock)
    results = [correlator.correlate(event(reason=f"R{i}")) for i in range(30)]
    assert [r.skip for r in results] == [False] * 25 + [True] * 5
    clock.now += 299
    assert correlator.correlate(event(reason="late")).skip
    clock.now += 1
    assert not correlator.correlate(event(reason="later")).skip
    assert correlator.correlate(event(reason="latest")).skip


def test_spam_buckets_are_per_source_and_object():
    correlator = EventCorrelator(clock=Clock())
    for i in range(25):
        correlator.correlate(event(reason=f"R{i}"))
    assert correlator.correlate(event(reason="x")).skip
    assert not correlator.correlate(event(reason="x", name="writer")).skip
    assert not correlator.correlate(event(reason="x", component="other-ctl")).skip


def test_a_skipped_repeat_still_counts_as_client_go_does():
    clock = Clock()
    correlator = EventCorrelator(clock=clock, spam_burst=2)
    correlator.update_state(written(correlator.correlate(event()).event))
    assert correlator.correlate(event()).patch["count"] == 2
    assert correlator.correlate(event()).skip
    clock.now += 300
    assert correlator.correlate(event(at=clock.now)).patch["count"] == 4


def test_the_token_bucket_starts_full_and_refills_at_its_rate():
    bucket = TokenBucket(qps=0.5, burst=2, now=0.0)
    assert [bucket.try_accept(0.0) for _ in range(3)] == [True, True, False]
    assert not bucket.try_accept(1.0)
    assert bucket.try_accept(2.0)
    assert bucket.try_accept(100.0) and bucket.try_accept(100.0) and not bucket.try_accept(100.0)


def test_caches_keep_the_most_recently_used_keys():
    correlator = EventCorrelator(clock=Clock(), cache_size=2)
    correlator.update_state(written(correlator.correlate(event(name="a")).event))
    correlator.correlate(event(name="b"))
    correlator.correlate(event(name="c"))
    assert correlator.correlate(event(name="a")).patch is None  # "a" was evicted
