"""A mixed load against a real server over loopback HTTPS, and the checks that it lost nothing.

Contract: `await run_load(target, LoadConfig(...))` drives the server of
`target` (a `LoadTarget`: URL, CA, admin token, the server's pid) with
`config.clients` well-formed clients for `config.duration` seconds, plus
`config.hostile` clients sending hostile input, and returns a `LoadReport`;
`report.problems()` lists every broken promise (empty: all kept). The
server must serve `--api-domain k8s.io` and run as its own process (its
memory is read from /proc).

Clients authenticate with ServiceAccount tokens (never `system:masters`,
which kube-apiserver's in-flight limits let through), bound to a role
holding what the load needs. Each well-formed client is one of:

- a writer, alone in its channel namespace: creates, updates (always to a
  new value), patches and deletes Leases, recording every acknowledged
  write as (type, name, holder);
- a watcher of one channel: watches it from the resourceVersion the channel
  started at, resuming from its last version whenever the server ends the
  stream, until it has seen the channel's last acknowledged write;
- a reader: gets, lists (paged across namespaces), discovery, version,
  SelfSubjectAccessReviews.

A 429 is an answer: the client sleeps its `Retry-After` and retries, as
client-go does. The promises: no 5xx to a well-formed request, no other
unexpected 4xx, no request without an answer (a connection closed or reset
before the answer), no lost acknowledged write (each channel listed at the
end equals its writer's acknowledged state), every watch complete (each
watcher's events, across reconnections, are exactly its writer's
acknowledged writes, in order), no 5xx to a hostile request but the 504 a
stalled body earns, and the server's memory (RSS) after the load and its
clean-up within `memory_tolerance` of its level before, measured after a
short warm-up of the same load (every code path touched, the allocator grown
to what that concurrency needs: Python keeps its arenas' high-water mark, so
a leak is growth beyond it).
"""

from __future__ import annotations

import json
import random
import ssl
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import trio

__all__ = ["LoadConfig", "LoadTarget", "LoadReport", "run_load", "rss_bytes"]

LEASES = "/apis/coordination.k8s.io/v1"
NS = "load"  # the namespace of the clients' service accounts
CLIENT_ROLE = {
    "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "load-client"},
    "rules": [{"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["*"]},
              {"apiGroups": [""], "resources": ["namespaces", "serviceaccounts"], "verbs": ["get", "list", "watch"]}]}
CLIENT_BINDING = {
    "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "load-client"},
    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "load-client"},
    "subjects": [{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": f"system:serviceaccounts:{NS}"}]}


@dataclass(frozen=True)
class LoadConfig:
    clients: int = 50
    hostile: int = 5
    duration: float = 20.0
    #: Shares of the well-formed clients (the rest read).
    writers: float = 0.2
    watchers: float = 0.2
    #: Allowed growth of the server's memory after the load, relative to before.
    memory_tolerance: float = 0.20
    #: Seconds to wait after the load for memory to settle (the watch history must expire first).
    settle: float = 30.0
    #: Seconds of the same load before the memory is measured (see `run_load`).
    warm_up: float = 5.0
    seed: int = 17


@dataclass(frozen=True)
class LoadTarget:
    url: str
    ca_pem: bytes
    admin_token: str
    pid: int


@dataclass
class LoadReport:
    config: LoadConfig
    answers: Counter = field(default_factory=Counter)  # (kind, status) of well-formed requests
    hostile_answers: Counter = field(default_factory=Counter)
    latencies: dict[str, list[float]] = field(default_factory=dict)
    retries_429: int = 0
    server_errors: list[str] = field(default_factory=list)
    unexpected: list[str] = field(default_factory=list)
    unanswered: list[str] = field(default_factory=list)
    lost_writes: list[str] = field(default_factory=list)
    watch_gaps: list[str] = field(default_factory=list)
    hostile_5xx: list[str] = field(default_factory=list)
    acknowledged_writes: int = 0
    watch_events: int = 0
    watch_resumes: int = 0
    rss_before: int = 0
    rss_peak: int = 0
    rss_after: int = 0
    elapsed: float = 0.0

    @property
    def requests(self) -> int:
        return sum(self.answers.values())

    def memory_ratio(self) -> float:
        return self.rss_after / self.rss_before if self.rss_before else 0.0

    def problems(self) -> list[str]:
        found = [f"5xx to a well-formed request: {e}" for e in self.server_errors[:5]]
        found += [f"unexpected answer: {e}" for e in self.unexpected[:5]]
        found += [f"no answer: {e}" for e in self.unanswered[:5]]
        found += [f"lost acknowledged write: {e}" for e in self.lost_writes[:5]]
        found += [f"incomplete watch: {e}" for e in self.watch_gaps[:5]]
        found += [f"5xx to a hostile request: {e}" for e in self.hostile_5xx[:5]]
        if self.memory_ratio() > 1 + self.config.memory_tolerance:
            found.append(f"memory {self.rss_after / 2**20:.1f} MiB after the load, {self.rss_before / 2**20:.1f} "
                         f"MiB before ({self.memory_ratio():.2f}x)")
        return found

    def percentile(self, kind: str, q: float) -> float:
        values = sorted(self.latencies.get(kind) or [0.0])
        return values[min(len(values) - 1, int(len(values) * q))]

    def summary(self) -> str:
        statuses = Counter()
        for (_, status), n in self.answers.items():
            statuses[status] += n
        lines = [
            f"{self.config.clients} clients + {self.config.hostile} hostile for {self.config.duration:g} s: "
            f"{self.requests} requests in {self.elapsed:.1f} s ({self.requests / max(self.elapsed, 1e-9):.0f}/s), "
            f"answers {dict(sorted(statuses.items()))}, 429 retries {self.retries_429}",
            f"acknowledged writes {self.acknowledged_writes}, watch events {self.watch_events} "
            f"(resumed {self.watch_resumes} times), hostile answers {dict(sorted(self.hostile_answers.items(), key=lambda kv: str(kv[0])))}",
            "latency p50/p99 ms: " + ", ".join(
                f"{k} {self.percentile(k, 0.5) * 1e3:.1f}/{self.percentile(k, 0.99) * 1e3:.1f}"
                for k in sorted(self.latencies)),
            f"server memory: {self.rss_before / 2**20:.1f} MiB before, peak {self.rss_peak / 2**20:.1f}, "
            f"after {self.rss_after / 2**20:.1f} ({self.memory_ratio():.2f}x)",
        ]
        return "\n".join(lines)


def rss_bytes(pid: int) -> int:
    """The resident memory of process `pid` (Linux /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for {pid}")


# ---- one well-formed client's requests --------------------------------------------------------------

class _Client:
    """An httpx client of its own (one connection), retrying 429s, recording every answer."""

    def __init__(self, target: LoadTarget, token: str, report: LoadReport, name: str) -> None:
        self.report = report
        self.name = name
        context = ssl.create_default_context(cadata=target.ca_pem.decode())
        self.http = httpx.AsyncClient(base_url=target.url, verify=context, timeout=httpx.Timeout(60.0),
                                      headers={"Authorization": f"Bearer {token}"},
                                      limits=httpx.Limits(max_connections=1, max_keepalive_connections=1))

    async def aclose(self) -> None:
        await self.http.aclose()

    async def call(self, kind: str, method: str, path: str, *, ok: tuple[int, ...] = (200, 201), **kw: Any
                   ) -> httpx.Response | None:
        """One request, retried after each 429; None when it got no answer (recorded)."""
        for _ in range(50):
            start = time.perf_counter()
            try:
                response = await self.http.request(method, path, **kw)
            except httpx.TransportError as exc:
                self.report.unanswered.append(f"{self.name} {method} {path}: {type(exc).__name__}: {exc}")
                return None
            self.report.latencies.setdefault(kind, []).append(time.perf_counter() - start)
            self.report.answers[(kind, response.status_code)] += 1
            if response.status_code == 429:
                self.report.retries_429 += 1
                await trio.sleep(min(float(response.headers.get("Retry-After") or 1), 2.0))
                continue
            if response.status_code >= 500:
                self.report.server_errors.append(f"{self.name} {method} {path}: {response.status_code} "
                                                 f"{response.text[:200]}")
            elif response.status_code not in ok:
                self.report.unexpected.append(f"{self.name} {method} {path}: {response.status_code} "
                                              f"{response.text[:200]}")
            return response
        self.report.unexpected.append(f"{self.name} {method} {path}: still 429 after 50 tries")
        return None


def _lease(name: str, holder: str) -> dict[str, Any]:
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": name},
            "spec": {"holderIdentity": holder, "leaseDurationSeconds": 15}}


@dataclass
class _Channel:
    """One writer's namespace: its acknowledged writes, in order, for the watchers to match."""

    namespace: str
    start_rv: str = ""
    writes: list[tuple[str, str, str]] = field(default_factory=list)  # (type, name, holder)
    state: dict[str, str] = field(default_factory=dict)  # name -> holder of the live objects
    last_rv: int = 0
    done: trio.Event = field(default_factory=trio.Event)


async def _writer(client: _Client, channel: _Channel, deadline: float, rng: random.Random) -> None:
    path = f"{LEASES}/namespaces/{channel.namespace}/leases"
    sequence = 0
    try:
        while trio.current_time() < deadline:
            sequence += 1
            holder = f"{client.name}-{sequence}"
            live = sorted(channel.state)
            roll = rng.random()
            if not live or (roll < 0.3 and len(live) < 12):
                name = f"l{sequence}"
                r = await client.call("create", "POST", path, json=_lease(name, holder), ok=(201,))
                kind = "ADDED"
            elif roll < 0.6:
                name = rng.choice(live)
                r = await client.call("update", "PUT", f"{path}/{name}", json=_lease(name, holder))
                kind = "MODIFIED"
            elif roll < 0.85:
                name = rng.choice(live)
                r = await client.call("patch", "PATCH", f"{path}/{name}", content=json.dumps(
                    {"spec": {"holderIdentity": holder}}), headers={"Content-Type": "application/merge-patch+json"})
                kind = "MODIFIED"
            else:
                name = rng.choice(live)
                r = await client.call("delete", "DELETE", f"{path}/{name}")
                kind, holder = "DELETED", channel.state.get(name, "")
            if r is None or r.status_code >= 300:
                continue
            client.report.acknowledged_writes += 1
            channel.writes.append((kind, name, holder))
            if kind == "DELETED":
                channel.state.pop(name, None)
            else:
                channel.state[name] = holder
                channel.last_rv = max(channel.last_rv, int(r.json()["metadata"]["resourceVersion"]))
    finally:
        if channel.writes and channel.writes[-1][0] == "DELETED":
            # The deletion's revision is not in its answer: a last write marks the channel's end.
            r = await client.call("create", "POST", path, json=_lease("end", "end"), ok=(201,))
            if r is not None and r.status_code == 201:
                channel.writes.append(("ADDED", "end", "end"))
                channel.state["end"] = "end"
                channel.last_rv = int(r.json()["metadata"]["resourceVersion"])
        channel.done.set()


async def _watcher(client: _Client, channel: _Channel, rng: random.Random, limit: float) -> None:
    path = f"{LEASES}/namespaces/{channel.namespace}/leases"
    seen: list[tuple[str, str, str]] = []
    rv = channel.start_rv
    last = int(rv)
    with trio.move_on_after(limit) as scope:
        while not (channel.done.is_set() and last >= channel.last_rv):
            params = {"watch": "true", "resourceVersion": str(rv), "allowWatchBookmarks": "true",
                      "timeoutSeconds": str(rng.randint(3, 10))}
            try:
                async with client.http.stream("GET", path, params=params) as response:
                    client.report.answers[("watch", response.status_code)] += 1
                    if response.status_code == 429:
                        client.report.retries_429 += 1
                        await trio.sleep(1)
                        continue
                    if response.status_code != 200:
                        client.report.watch_gaps.append(f"{channel.namespace}: watch answered "
                                                        f"{response.status_code} {(await response.aread())[:200]!r}")
                        return
                    async for line in response.aiter_lines():
                        if not line:
                            continue
                        event = json.loads(line)
                        obj = event["object"]
                        if event["type"] == "ERROR":
                            client.report.watch_gaps.append(f"{channel.namespace}: ERROR event {obj}")
                            return
                        rv = obj["metadata"]["resourceVersion"]
                        last = max(last, int(rv))
                        if event["type"] != "BOOKMARK":
                            client.report.watch_events += 1
                            seen.append((event["type"], obj["metadata"]["name"],
                                         (obj.get("spec") or {}).get("holderIdentity") or ""))
                        if channel.done.is_set() and last >= channel.last_rv:
                            break
            except httpx.TransportError as exc:
                client.report.unanswered.append(f"{client.name} watch {channel.namespace}: {type(exc).__name__}")
                return
            client.report.watch_resumes += 1
    if scope.cancelled_caught:
        client.report.watch_gaps.append(f"{channel.namespace}: the watch never reached the last write "
                                        f"({last} < {channel.last_rv})")
    elif seen != channel.writes:
        first = next((i for i, (a, b) in enumerate(zip(seen, channel.writes)) if a != b),
                     min(len(seen), len(channel.writes)))
        client.report.watch_gaps.append(
            f"{channel.namespace}: {len(seen)} events for {len(channel.writes)} writes; first difference at {first}: "
            f"{seen[first:first + 2]} vs {channel.writes[first:first + 2]}")


async def _reader(client: _Client, channels: list[_Channel], deadline: float, rng: random.Random) -> None:
    while trio.current_time() < deadline:
        channel = rng.choice(channels)
        roll = rng.random()
        if roll < 0.35:
            await client.call("get", "GET", f"{LEASES}/namespaces/{channel.namespace}/leases/"
                                            f"l{rng.randint(1, 50)}", ok=(200, 404))
        elif roll < 0.6:
            await client.call("list", "GET", f"{LEASES}/namespaces/{channel.namespace}/leases")
        elif roll < 0.75:
            token = ""
            for _ in range(20):  # every page of every namespace's leases
                r = await client.call("list-paged", "GET", f"{LEASES}/leases",
                                      params={"limit": "25", **({"continue": token} if token else {})})
                token = (r.json()["metadata"].get("continue") or "") if r is not None and r.status_code == 200 else ""
                if not token:
                    break
        elif roll < 0.85:
            await client.call("discovery", "GET", rng.choice(["/apis", "/api/v1", "/version"]))
        else:
            await client.call("review", "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", json={
                "apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
                "spec": {"resourceAttributes": {"verb": "list", "resource": "leases", "group": "coordination.k8s.io",
                                                "namespace": channel.namespace}}}, ok=(201,))


# ---- hostile clients ------------------------------------------------------------------------------

async def _hostile(target: LoadTarget, token: str, report: LoadReport, deadline: float, rng: random.Random) -> None:
    host, port = target.url.split("://", 1)[1].rsplit(":", 1)
    context = ssl.create_default_context(cadata=target.ca_pem.decode())

    async def raw(data: bytes, *, read: bool) -> None:
        try:
            stream = await trio.open_ssl_over_tcp_stream(host, int(port), ssl_context=context,
                                                         https_compatible=True)
            try:
                await stream.send_all(data)
                if read:
                    with trio.move_on_after(2):
                        answer = await stream.receive_some()
                        if answer.startswith(b"HTTP/1.1 5"):
                            report.hostile_5xx.append(f"raw {data[:60]!r}: {answer[:80]!r}")
            finally:
                await stream.aclose()
        except (OSError, trio.BrokenResourceError):
            pass

    async with httpx.AsyncClient(base_url=target.url, verify=context, timeout=30) as http:
        while trio.current_time() < deadline:
            roll = rng.randrange(8)
            try:
                if roll == 0:
                    r = await http.get(f"{LEASES}/leases", headers={"Authorization": "Bearer not-a-token"})
                elif roll == 1:
                    r = await http.post(f"{LEASES}/namespaces/{NS}/leases", content=rng.randbytes(rng.randint(1, 2000)),
                                        headers={"Authorization": f"Bearer {token}",
                                                 "Content-Type": rng.choice(["application/json", "application/yaml",
                                                                             "application/vnd.kubernetes.protobuf"])})
                elif roll == 2:
                    r = await http.get(f"{LEASES}/leases", params={"labelSelector": "a in (b", "watch": "1"},
                                       headers={"Authorization": f"Bearer {token}"})
                elif roll == 3:
                    r = await http.post(f"{LEASES}/namespaces/{NS}/leases", content=b"x" * (4 * 2**20),
                                        headers={"Authorization": f"Bearer {token}",
                                                 "Content-Type": "application/json"})
                elif roll == 4:
                    r = await http.get("/version", headers={"X-Junk": "a" * 20_000})
                elif roll == 5:
                    await raw(b"GET /version HTTP/1.1\r\nHost: x\r\n", read=False)  # a head never finished
                    continue
                elif roll == 6:
                    await raw(rng.randbytes(200) + b"\r\n\r\n", read=True)
                    continue
                else:
                    body = json.dumps({"metadata": {"name": "../" + "x" * 300}, "spec": {"leaseDurationSeconds": 2**70}})
                    r = await http.post(f"{LEASES}/namespaces/{NS}/leases/%2F", content=body,
                                        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
            except httpx.TransportError:
                report.hostile_answers["closed"] += 1
                continue
            report.hostile_answers[r.status_code] += 1
            if r.status_code >= 500:
                report.hostile_5xx.append(f"{r.request.method} {r.request.url.path}: {r.status_code} {r.text[:120]}")


# ---- the run --------------------------------------------------------------------------------------

async def _setup(target: LoadTarget, writers: int, accounts: int) -> tuple[list[str], list[_Channel]]:
    """The clients' role, service accounts and tokens, and the channel namespaces (as the admin)."""
    context = ssl.create_default_context(cadata=target.ca_pem.decode())
    async with httpx.AsyncClient(base_url=target.url, verify=context, timeout=60,
                                 headers={"Authorization": f"Bearer {target.admin_token}"}) as admin:
        async def ensure(path: str, body: dict[str, Any]) -> None:
            r = await admin.post(path, json=body)
            assert r.status_code in (201, 409), r.text

        await ensure("/api/v1/namespaces", {"metadata": {"name": NS}})
        await ensure("/apis/rbac.authorization.k8s.io/v1/clusterroles", CLIENT_ROLE)
        await ensure("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", CLIENT_BINDING)
        tokens = []
        for i in range(accounts):
            await ensure(f"/api/v1/namespaces/{NS}/serviceaccounts", {"metadata": {"name": f"client-{i}"}})
            r = await admin.post(f"/api/v1/namespaces/{NS}/serviceaccounts/client-{i}/token",
                                 json={"spec": {"expirationSeconds": 7200}})
            assert r.status_code == 201, r.text
            tokens.append(r.json()["status"]["token"])
        channels = []
        for i in range(writers):
            await ensure("/api/v1/namespaces", {"metadata": {"name": f"load-{i}"}})
            channels.append(_Channel(f"load-{i}"))
    return tokens, channels


async def _clean_up(target: LoadTarget, channels: list[_Channel], report: LoadReport) -> None:
    """Check each channel against its writer's acknowledged state (lost writes), then delete its leases."""
    context = ssl.create_default_context(cadata=target.ca_pem.decode())
    async with httpx.AsyncClient(base_url=target.url, verify=context, timeout=60,
                                 headers={"Authorization": f"Bearer {target.admin_token}"}) as admin:
        for channel in channels:
            path = f"{LEASES}/namespaces/{channel.namespace}/leases"
            listed = (await admin.get(path)).json()["items"]
            stored = {o["metadata"]["name"]: (o.get("spec") or {}).get("holderIdentity") for o in listed}
            if stored != channel.state:
                missing = {k: v for k, v in channel.state.items() if stored.get(k) != v}
                report.lost_writes.append(f"{channel.namespace}: acknowledged {missing}, stored "
                                          f"{ {k: stored.get(k) for k in missing} }")
            r = await admin.delete(path)
            assert r.status_code == 200, r.text


async def _phase(target: LoadTarget, config: LoadConfig, tokens: list[str], channels: list[_Channel],
                 report: LoadReport, duration: float, rng: random.Random) -> None:
    writers = len(channels)
    watchers = max(1, round(config.clients * config.watchers))
    readers = max(1, config.clients - writers - watchers)
    clients: list[_Client] = []

    def client(name: str) -> _Client:
        made = _Client(target, tokens[len(clients) % len(tokens)], report, name)
        clients.append(made)
        return made

    admin_context = ssl.create_default_context(cadata=target.ca_pem.decode())
    async with httpx.AsyncClient(base_url=target.url, verify=admin_context, timeout=60,
                                 headers={"Authorization": f"Bearer {target.admin_token}"}) as admin:
        for channel in channels:  # where each channel's watchers start: its state before any write
            r = await admin.get(f"{LEASES}/namespaces/{channel.namespace}/leases")
            channel.start_rv = r.json()["metadata"]["resourceVersion"]
            channel.writes, channel.state, channel.last_rv, channel.done = [], {}, 0, trio.Event()
    deadline = trio.current_time() + duration
    try:
        async with trio.open_nursery() as nursery:
            for i, channel in enumerate(channels):
                nursery.start_soon(_writer, client(f"writer-{i}"), channel, deadline, random.Random(rng.random()))
            for i in range(watchers):
                nursery.start_soon(_watcher, client(f"watcher-{i}"), channels[i % writers],
                                   random.Random(rng.random()), duration + 60)
            for i in range(readers):
                nursery.start_soon(_reader, client(f"reader-{i}"), channels, deadline, random.Random(rng.random()))
            for i in range(config.hostile):
                nursery.start_soon(_hostile, target, tokens[0], report, deadline, random.Random(rng.random()))
    finally:
        for made in clients:
            await made.aclose()


async def run_load(target: LoadTarget, config: LoadConfig = LoadConfig()) -> LoadReport:
    """Set up, warm up, measure memory, load, check, clean up, measure again (see the module doc)."""
    rng = random.Random(config.seed)
    writers = max(1, round(config.clients * config.writers))
    tokens, channels = await _setup(target, writers, accounts=4)
    # The warm-up is the same load, briefly: every code path touched, and the allocator at the size the
    # load's concurrency needs (Python keeps its arenas' high-water mark; a leak grows beyond it).
    warm = LoadReport(LoadConfig(clients=config.clients, hostile=config.hostile, duration=config.warm_up))
    await _phase(target, warm.config, tokens, channels, warm, config.warm_up, rng)
    await _clean_up(target, channels, warm)
    await trio.sleep(config.settle)  # the warm-up's watch history expires
    report = LoadReport(config)
    report.rss_before = rss_bytes(target.pid)

    async def sample_peak() -> None:
        while True:
            report.rss_peak = max(report.rss_peak, rss_bytes(target.pid))
            await trio.sleep(0.5)

    start = time.perf_counter()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(sample_peak)
        await _phase(target, config, tokens, channels, report, config.duration, rng)
        nursery.cancel_scope.cancel()
    report.elapsed = time.perf_counter() - start
    await _clean_up(target, channels, report)
    # Memory after: once the load's watch history has expired, the lowest level seen while settling.
    settled = trio.current_time() + config.settle
    report.rss_after = rss_bytes(target.pid)
    while trio.current_time() < settled:
        await trio.sleep(1)
        report.rss_after = min(report.rss_after, rss_bytes(target.pid))
    return report
