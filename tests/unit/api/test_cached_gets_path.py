"""The cached GETs' fast path (`api.cachedgets`): what it answers is what Quart's full path answers, byte for
byte, and everything else it leaves to that path before doing anything.

Each GET goes over the server's own HTTP/1.1 layer in process (`tests.support.wire`) twice: to the server's
app (the fast path in front of Quart's) and to Quart's app alone; the answers are compared (status, headers
in order, body; Date is off, the Audit-Id is sent or left out). A counting stand-in in front of Quart's app
says which requests reached it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from api import cachedgets
from tests.support.cached_gets import CLUSTER_ROLE, PROTOBUF, ROLE, TABLE, start_cached_gets
from tests.support.server import Server
from tests.support.wire import open_wire, parse_answer

#: (name, path, headers beyond Host and the alice's Authorization, served by the fast path).
GETS: list[tuple[str, str, dict[str, str], bool]] = [
    ("JSON", CLUSTER_ROLE, {"Accept": "application/json"}, True),
    ("no Accept", CLUSTER_ROLE, {}, True),
    ("a namespaced kind", ROLE, {"Accept": "application/json"}, True),
    ("Protobuf", CLUSTER_ROLE, {"Accept": PROTOBUF}, True),
    ("YAML", ROLE, {"Accept": "application/yaml"}, True),
    ("a list of ranges, the first not served", ROLE, {"Accept": "text/html, application/json;q=0.9"}, True),
    ("pretty for curl", ROLE, {"User-Agent": "curl/8.5.0"}, True),
    ("gzip", ROLE, {"Accept-Encoding": "gzip"}, True),
    ("gzip, Protobuf", ROLE, {"Accept-Encoding": "deflate, gzip;q=0.5", "Accept": PROTOBUF}, True),
    ("gzip refused", ROLE, {"Accept-Encoding": "gzip;q=0"}, True),
    ("gzip, pretty", ROLE, {"Accept-Encoding": "gzip", "User-Agent": "curl/8.5.0"}, False),
    ("an Audit-ID sent", ROLE, {"Audit-ID": "my-audit-id"}, True),
    ("kubectl's", ROLE, {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
                         "User-Agent": "kubectl/v1.28.0 (linux/amd64) kubernetes/abc1234"}, False),
    ("a Table", ROLE, {"Accept": TABLE}, False),
    ("406", ROLE, {"Accept": "text/html"}, False),
    ("404", ROLE + "-missing", {}, False),
    ("a kind not served", "/apis/rbac.authorization.svc.io/v1/widgets/x", {}, False),
    ("a namespaced kind without its namespace", "/apis/rbac.authorization.svc.io/v1/roles/target", {}, False),
    ("a cluster kind in a namespace", "/apis/rbac.authorization.svc.io/v1/namespaces/team/clusterroles/target",
     {}, False),
    ("403", ROLE, {"Authorization": "Bearer bob-token"}, False),
    ("401", ROLE, {"Authorization": "Bearer nobody"}, False),
    ("impersonating", ROLE, {"Authorization": "Bearer root-token", "Impersonate-User": "alice"}, False),
    ("a query", ROLE + "?resourceVersion=0", {}, False),
    ("a trailing slash", ROLE + "/", {}, False),
    ("an escape", ROLE.replace("target", "tar%67et"), {}, False),
    ("a subresource", ROLE + "/status", {}, False),
    ("a body", ROLE, {"Content-Length": "2"}, False),
    ("a collection", ROLE.rsplit("/", 1)[0], {}, False),
]


def _request(path: str, headers: dict[str, str], method: str = "GET") -> bytes:
    sent = {"Host": "miniplane", "Authorization": "Bearer alice-token"} | headers
    body = b"{}" if "Content-Length" in headers else b""
    return (f"{method} {path} HTTP/1.1\r\n" + "".join(f"{n}: {v}\r\n" for n, v in sent.items())
            + "\r\n").encode() + body


class _Counting:
    """An ASGI app counting the requests that reach `app`."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.requests = 0

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            self.requests += 1
        await self.app(scope, receive, send)


def _comparable(raw: bytes, *, audit_id: bool) -> tuple[int, list[tuple[str, str]], bytes]:
    status, headers, body = parse_answer(raw)
    return status, [(n, v) for n, v in headers if n != "audit-id" or audit_id], body


async def _full_path(srv: Server) -> _Counting:
    """Quart's app behind a counter, in the fast path's place of handing on."""
    counting = _Counting(srv.plane.app.app)
    srv.plane.app.app = counting
    return counting


@pytest.mark.parametrize(("name", "path", "headers", "fast"), GETS, ids=[g[0] for g in GETS])
async def test_the_fast_path_answers_as_the_full_path_and_leaves_it_the_rest(
        tmp_path: Path, name: str, path: str, headers: dict[str, str], fast: bool) -> None:
    async with trio.open_nursery() as nursery:
        srv = await start_cached_gets(nursery, tmp_path)
        quart = srv.plane.app.app
        counting = await _full_path(srv)
        raw = _request(path, headers)
        async with open_wire(srv.plane.app) as wire, open_wire(quart) as full:
            for _ in range(2):  # cold and warm caches alike
                served = await wire.exchange(raw)
                expected = await full.exchange(raw)
                audit_id = "Audit-ID" in headers
                assert _comparable(served, audit_id=audit_id) == _comparable(expected, audit_id=audit_id)
        assert counting.requests == (0 if fast else 2)
        nursery.cancel_scope.cancel()


async def test_a_head_request_is_left_to_the_full_path(tmp_path: Path) -> None:
    async with trio.open_nursery() as nursery:
        srv = await start_cached_gets(nursery, tmp_path)
        counting = await _full_path(srv)
        async with srv.client() as admin:  # in process through the server's app (the wire awaits a body)
            response = await admin.head(ROLE)
        assert (response.status_code, response.content, counting.requests) == (200, b"", 1)
        nursery.cancel_scope.cancel()


def _requests_total(srv: Server, code: str = "200") -> float:
    labels = {"verb": "GET", "dry_run": "", "group": "rbac.authorization.svc.io", "version": "v1",
              "resource": "roles", "subresource": "", "scope": "resource", "component": "apiserver", "code": code}
    return srv.plane.state.metrics.registry.get_sample_value("apiserver_request_total", labels) or 0.0


def _durations_count(srv: Server) -> float:
    labels = {"verb": "GET", "dry_run": "", "group": "rbac.authorization.svc.io", "version": "v1",
              "resource": "roles", "subresource": "", "scope": "resource", "component": "apiserver"}
    return srv.plane.state.metrics.registry.get_sample_value("apiserver_request_duration_seconds_count",
                                                             labels) or 0.0


async def test_a_fast_get_is_counted_as_the_full_path_counts_it(tmp_path: Path) -> None:
    async with trio.open_nursery() as nursery:
        srv = await start_cached_gets(nursery, tmp_path)
        quart = srv.plane.app.app
        raw = _request(ROLE, {})
        for app in (srv.plane.app, quart):
            before, durations = _requests_total(srv), _durations_count(srv)
            async with open_wire(app) as wire:
                for _ in range(3):
                    assert parse_answer(await wire.exchange(raw))[0] == 200
            assert (_requests_total(srv) - before, _durations_count(srv) - durations) == (3, 3), app
        nursery.cancel_scope.cancel()


async def test_a_get_holds_its_in_flight_slot_and_past_the_limit_gets_the_full_paths_429(tmp_path: Path) -> None:
    async with trio.open_nursery() as nursery:
        srv = await start_cached_gets(nursery, tmp_path, max_requests_inflight=1)
        limits = srv.plane.state.limits
        counting = await _full_path(srv)
        raw = _request(ROLE, {})
        async with open_wire(srv.plane.app) as wire:
            assert parse_answer(await wire.exchange(raw))[0] == 200
            await trio.testing.wait_all_tasks_blocked()  # the answer is written before the slot is given back
            assert (limits.read_only, counting.requests) == (0, 0)
            limits.read_only = 1  # another request holds the one slot
            status, headers, _ = parse_answer(await wire.exchange(raw))
            assert (status, dict(headers).get("retry-after"), counting.requests) == (429, "1", 1)
            assert _requests_total(srv, "429") == 1
            limits.read_only = 0
            assert parse_answer(await wire.exchange(raw))[0] == 200
            assert counting.requests == 1
        nursery.cancel_scope.cancel()


async def test_a_lagging_cache_is_left_to_the_full_path_which_reads_the_store(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    async with trio.open_nursery() as nursery:
        srv = await start_cached_gets(nursery, tmp_path)
        counting = await _full_path(srv)
        registry = srv.plane.registry
        reads: list[str] = []
        read_current = registry.read_current

        async def lagging(resource_version: str | None, timeout: float = 0) -> bool:
            return False

        async def reading(rt: Any, key: str, name: str = "") -> Any:
            reads.append(key)
            return await read_current(rt, key, name)
        monkeypatch.setattr(registry, "wait_for_version", lagging)
        monkeypatch.setattr(registry, "read_current", reading)
        async with open_wire(srv.plane.app) as wire:
            status, _, body = parse_answer(await wire.exchange(_request(ROLE, {})))
        assert (status, counting.requests, len(reads)) == (200, 1, 1)
        assert b'"name":"target"' in body
        nursery.cancel_scope.cancel()


async def test_an_audited_server_leaves_every_get_to_the_full_path(tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n")
    log = tmp_path / "audit.log"
    async with trio.open_nursery() as nursery:
        srv = await start_cached_gets(nursery, tmp_path / "plane", audit_policy_file=str(policy),
                                      audit_log_path=str(log))
        counting = await _full_path(srv)
        async with open_wire(srv.plane.app) as wire:
            assert parse_answer(await wire.exchange(_request(ROLE, {"Audit-ID": "audited-get"})))[0] == 200
        assert counting.requests == 1
        srv.plane.state.auditor.close()
        assert '"auditID":"audited-get"' in log.read_text()
        nursery.cancel_scope.cancel()


async def test_a_failure_on_the_fast_path_leaves_the_request_to_the_full_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def failing(*args: Any, **kwargs: Any) -> bytes:
        raise RuntimeError("an encoder's bug")
    async with trio.open_nursery() as nursery:
        srv = await start_cached_gets(nursery, tmp_path)
        counting = await _full_path(srv)
        monkeypatch.setattr(cachedgets, "encode_stored", failing)  # the fast path's encoder only
        async with open_wire(srv.plane.app) as wire:
            status, _, body = parse_answer(await wire.exchange(_request(ROLE, {})))
        assert (status, counting.requests, srv.plane.state.limits.read_only) == (200, 1, 0)
        assert b'"name":"target"' in body
        nursery.cancel_scope.cancel()
