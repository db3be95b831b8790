"""The API server's metrics, with kube-apiserver's names, labels and buckets, served at `/metrics`.

`APIServerMetrics(registry)` registers on a `prometheus_client.CollectorRegistry`
of its own (one per server: two servers in one process, as in tests, count
apart) the families below; `exposition()` renders them in Prometheus' text
format (`prometheus_client.generate_latest`).

Counted as requests are served (a bound child per label set, kept in a dict:
no work that grows with the store):

- `apiserver_request_total{verb,dry_run,group,version,resource,subresource,scope,component,code}`
- `apiserver_request_duration_seconds{verb,dry_run,group,version,resource,subresource,scope,component}`
- `apiserver_request_terminations_total{verb,group,version,resource,subresource,scope,component,code}`
  (429 and 504 answered in self-defense), `apiserver_dropped_requests_total{request_kind}` (the 429s)
- `apiserver_longrunning_requests{verb,group,version,resource,subresource,scope,component}` (open watches)
- `apiserver_watch_events_total{group,version,kind}`
- `etcd_request_duration_seconds{operation,type}`: the store's latency per call (`InstrumentedStore`)
- `apiserver_authorization_decisions_total{type,name,decision}` (`allowed`, `denied`)
- `apiserver_audit_event_total`, `apiserver_audit_level_total{level}`, `apiserver_audit_error_total{plugin}`

Read when scraped (`ScrapeGauges` over `ScrapeSources`: callables the assembly gives, registered
once the parts they read exist):

- `apiserver_current_inflight_requests{request_kind}` (`readOnly`, `mutating`)
- `apiserver_registered_watchers{group,version,kind}`, `apiserver_storage_objects{resource}`
  (from the watch cache: a dict size per kind)
- `apiserver_storage_db_total_size_in_bytes{endpoint}` (the SQLite files' size)
- `apiserver_open_connections` (miniplane's own: what `--max-connections` bounds)
- `miniplane_storage_commits_total` and `miniplane_storage_committed_writes_total` (miniplane's own, the
  SQLite store only: its group commits and the writes they carried; their ratio is the mean batch, which
  is what each write's share of a commit's fsync turns on)
- `python_gc_objects_collected_total`, `python_gc_objects_uncollectable_total`,
  `python_gc_collections_total` per generation (prometheus-client's `GCCollector`, as Go's `go_gc_*`),
  and `python_gc_frozen_objects` (miniplane's own: the objects `api.serving.gc_tuning` froze at start-up)

Labels as kube-apiserver's `MonitorRequest`: verbs upper-case (`GET`, `LIST`,
`WATCH`, `POST`, `PUT`, `PATCH`, `APPLY`, `DELETE`); scope `resource` for an
item or a create, `namespace`, `cluster`, or empty for a non-resource path,
whose path is then the `subresource`. Paths and resources the server does not
serve are reported as `other` (kube-apiserver does not count them at all), so a
client cannot grow the label sets.
"""

from __future__ import annotations

import gc
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from prometheus_client import GCCollector, CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4
from prometheus_client.registry import Collector

from runtime.controller.metrics import ControllerMetrics

__all__ = ["APIServerMetrics", "ScrapeSources", "ScrapeGauges", "InstrumentedStore", "CountingAuthorizer", "REQUEST_BUCKETS",
           "STORE_BUCKETS", "CONTENT_TYPE", "request_labels"]

#: The media type of the exposition (Prometheus' text format 0.0.4, as kube-apiserver answers).
CONTENT_TYPE = CONTENT_TYPE_PLAIN_0_0_4
#: kube-apiserver's `apiserver_request_duration_seconds` buckets.
REQUEST_BUCKETS = (0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30,
                   45, 60)
#: kube-apiserver's `etcd_request_duration_seconds` buckets (the same as the requests').
STORE_BUCKETS = REQUEST_BUCKETS

_REQUEST = ["verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component"]
_LONG = ["verb", "group", "version", "resource", "subresource", "scope", "component"]
_COMPONENT = "apiserver"


@dataclass
class ScrapeSources:
    """What the scrape reads: each a callable the assembly wires to the server's parts."""

    inflight: Callable[[], tuple[int, int]] = lambda: (0, 0)
    #: (resource label, group, version, kind, objects, watchers) per stored kind.
    kinds: Callable[[], Iterable[tuple[str, str, str, str, int, int]]] = lambda: ()
    #: (endpoint, bytes) of the store's files, when it has any.
    db_size: Callable[[], tuple[str, int] | None] = lambda: None
    connections: Callable[[], int] = lambda: 0
    #: (commits, writes they carried) of the store's group commit, when it has one (SQLite).
    commits: Callable[[], tuple[int, int] | None] = lambda: None


def request_labels(verb: str, method: str, *, is_resource: bool, group: str, version: str, resource: str,
                   subresource: str, namespace: str, name: str, path: str, apply: bool) -> tuple[str, ...]:
    """The (verb, group, version, resource, subresource, scope) labels of a request, as kube-apiserver's.

    `verb` is the request info's verb (lower case), `method` the HTTP method.
    """
    if not is_resource:
        reported = {"GET": "GET", "HEAD": "GET"}.get(method, method)
        return reported, "", "", "", path, ""
    scope = "resource" if name or verb == "create" else "namespace" if namespace else "cluster"
    if verb == "watch":
        reported = "WATCH"
    elif verb == "patch" and apply:
        reported = "APPLY"
    elif method in ("GET", "HEAD"):
        reported = "GET" if scope == "resource" else "LIST"
    else:
        reported = method
    return reported, group, version, resource, subresource, scope


class APIServerMetrics:
    """The server's families on `registry` (see the module docs); `controllers` records in-process controllers."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        r = self.registry
        self._requests = Counter("apiserver_request_total",
                                 "Counter of apiserver requests broken out for each verb, dry run value, group, "
                                 "version, resource, scope, component, and HTTP response code.",
                                 [*_REQUEST, "code"], registry=r)
        self._durations = Histogram("apiserver_request_duration_seconds",
                                    "Response latency distribution in seconds for each verb, dry run value, group, "
                                    "version, resource, subresource, scope and component.", _REQUEST,
                                    buckets=REQUEST_BUCKETS, registry=r)
        self._terminations = Counter("apiserver_request_terminations_total",
                                     "Number of requests which apiserver terminated in self-defense.",
                                     [*_LONG, "code"], registry=r)
        self._dropped = Counter("apiserver_dropped_requests_total",
                                "Number of requests dropped with 'Try again later' response", ["request_kind"],
                                registry=r)
        self._longrunning = Gauge("apiserver_longrunning_requests",
                                  "Gauge of all active long-running apiserver requests broken out by verb, group, "
                                  "version, resource, scope and component. Not all requests are tracked this way.",
                                  _LONG, registry=r)
        self._watch_events = Counter("apiserver_watch_events_total", "Number of events sent in watch clients",
                                     ["group", "version", "kind"], registry=r)
        self.store_latency = Histogram("etcd_request_duration_seconds",
                                       "Etcd request latency in seconds for each operation and object type.",
                                       ["operation", "type"], buckets=STORE_BUCKETS, registry=r)
        self._decisions = Counter("apiserver_authorization_decisions_total",
                                  "Total number of terminal decisions made by an authorizer split by authorizer "
                                  "type, name, and decision.", ["type", "name", "decision"], registry=r)
        self._audit_events = Counter("apiserver_audit_event_total", "Counter of audit events generated and sent to "
                                     "the audit backend.", registry=r)
        self._audit_errors = Counter("apiserver_audit_error_total", "Counter of audit events that failed to be "
                                     "audited properly. Plugin identifies the plugin affected by the error.",
                                     ["plugin"], registry=r)
        self._audit_levels = Counter("apiserver_audit_level_total", "Counter of policy levels for audit events "
                                     "(1 per request).", ["level"], registry=r)
        self._allowed = self._decisions.labels("RBAC", "rbac", "allowed")
        self._denied = self._decisions.labels("RBAC", "rbac", "denied")
        GCCollector(registry=r)
        #: In-process controllers report here too (one /metrics for the whole process, as one binary).
        self.controllers = ControllerMetrics(r)
        self._children: dict[tuple[str, ...], tuple[Any, Any]] = {}

    def exposition(self) -> bytes:
        """The Prometheus text exposition of every family."""
        return generate_latest(self.registry)

    def observe(self, labels: tuple[str, ...], dry_run: str, code: int, seconds: float) -> None:
        """One request answered: `labels` from `request_labels`, its code and duration."""
        key = (*labels, dry_run, str(code))
        children = self._children.get(key)
        if children is None:
            verb, group, version, resource, subresource, scope = labels
            names = (verb, dry_run, group, version, resource, subresource, scope, _COMPONENT)
            children = (self._requests.labels(*names, str(code)), self._durations.labels(*names))
            self._children[key] = children
        children[0].inc()
        children[1].observe(seconds)

    def terminated(self, labels: tuple[str, ...], code: int, kind: str = "") -> None:
        """A request answered in self-defense (429 past the in-flight limits, 504 past the timeout)."""
        self._terminations.labels(*labels, _COMPONENT, str(code)).inc()
        if kind:
            self._dropped.labels(kind).inc()

    def longrunning(self, labels: tuple[str, ...]) -> Any:
        """The gauge child of an open long-running request (inc() when it opens, dec() when it ends)."""
        return self._longrunning.labels(*labels, _COMPONENT)

    def watch_events(self, group: str, version: str, kind: str) -> Any:
        """The counter child of events sent to watchers of a kind."""
        return self._watch_events.labels(group, version, kind)

    def decided(self, allowed: bool) -> None:
        (self._allowed if allowed else self._denied).inc()

    def audit_level(self, level: str) -> None:
        """One request's audit policy level."""
        self._audit_levels.labels(level).inc()

    def audit_event(self) -> None:
        """One audit event written."""
        self._audit_events.inc()

    def audit_error(self) -> None:
        """One audit event that could not be written."""
        self._audit_errors.labels("log").inc()


class ScrapeGauges(Collector):
    """The gauges read when scraped, from `sources` (registered by the assembly on the server's registry)."""

    def __init__(self, sources: ScrapeSources) -> None:
        self._sources = sources

    def collect(self) -> Iterable[GaugeMetricFamily | CounterMetricFamily]:
        live = self._sources
        inflight = GaugeMetricFamily("apiserver_current_inflight_requests",
                                     "Maximal number of currently used inflight request limit of this apiserver "
                                     "per request kind in last second.", labels=["request_kind"])
        read_only, mutating = live.inflight()
        inflight.add_metric(["readOnly"], read_only)
        inflight.add_metric(["mutating"], mutating)
        watchers = GaugeMetricFamily("apiserver_registered_watchers",
                                     "Number of currently registered watchers for a given resources",
                                     labels=["group", "version", "kind"])
        objects = GaugeMetricFamily("apiserver_storage_objects",
                                    "Number of stored objects at the time of last check split by kind.",
                                    labels=["resource"])
        for resource, group, version, kind, count, watching in live.kinds():
            objects.add_metric([resource], count)
            watchers.add_metric([group, version, kind], watching)
        families = [inflight, watchers, objects]
        size = live.db_size()
        if size is not None:
            db = GaugeMetricFamily("apiserver_storage_db_total_size_in_bytes",
                                   "Total size of the storage database file physically allocated in bytes.",
                                   labels=["endpoint"])
            db.add_metric([size[0]], size[1])
            families.append(db)
        committed = live.commits()
        if committed is not None:
            families.append(CounterMetricFamily("miniplane_storage_commits", "Transactions the SQLite store's "
                                                "group commit made (miniplane).", value=committed[0]))
            families.append(CounterMetricFamily("miniplane_storage_committed_writes", "Writes those transactions "
                                                "carried; per commit, the mean batch (miniplane).",
                                                value=committed[1]))
        connections = GaugeMetricFamily("apiserver_open_connections",
                                        "Connections open to this server (miniplane; bounded by --max-connections).")
        connections.add_metric([], live.connections())
        families.append(connections)
        frozen = GaugeMetricFamily("python_gc_frozen_objects",
                                   "Objects in the cycle collector's permanent generation (frozen once serving; "
                                   "miniplane).")
        frozen.add_metric([], gc.get_freeze_count())
        families.append(frozen)
        return families


class InstrumentedStore:
    """A `Store` whose calls are timed into `etcd_request_duration_seconds{operation,type}`.

    `type` is the resource the key belongs to (`resource_of(key)`), as
    kube-apiserver labels its etcd calls. Its members are the `Store`
    protocol's, each written out (nothing forwarded by `__getattr__`), and
    `follow` when the wrapped store has one (a store of this process hands
    each write to the watch cache as it commits: `runtime.server.storage.fanout`).
    """

    def __init__(self, store: Any, histogram: Histogram, resource_of: Callable[[str], str]) -> None:
        self._store = store
        self._histogram = histogram
        self._resource_of = resource_of
        self._children: dict[tuple[str, str], Any] = {}
        follow = getattr(store, "follow", None)
        if follow is not None:  # optional: the watch cache asks for it, and watches otherwise
            self.follow = follow

    def _observe(self, operation: str, key: str, began: float) -> None:
        labels = (operation, self._resource_of(key))
        child = self._children.get(labels)
        if child is None:
            child = self._children[labels] = self._histogram.labels(*labels)
        child.observe(time.perf_counter() - began)

    async def create(self, key: str, encode: Any) -> Any:
        began = time.perf_counter()
        try:
            return await self._store.create(key, encode)
        finally:
            self._observe("create", key, began)

    async def update(self, key: str, encode: Any, *, expected_revision: int | None) -> Any:
        began = time.perf_counter()
        try:
            return await self._store.update(key, encode, expected_revision=expected_revision)
        finally:
            self._observe("update", key, began)

    async def delete(self, key: str, *, expected_revision: int | None) -> Any:
        began = time.perf_counter()
        try:
            return await self._store.delete(key, expected_revision=expected_revision)
        finally:
            self._observe("delete", key, began)

    async def get(self, key: str) -> Any:
        began = time.perf_counter()
        try:
            return await self._store.get(key)
        finally:
            self._observe("get", key, began)

    async def list(self, prefix: str, **options: Any) -> Any:
        began = time.perf_counter()
        try:
            return await self._store.list(prefix, **options)
        finally:
            self._observe("list", prefix, began)

    def watch(self, prefix: str, *, after_revision: int) -> Any:
        return self._store.watch(prefix, after_revision=after_revision)

    async def current_revision(self) -> int:
        return await self._store.current_revision()

    async def compacted_revision(self) -> int:
        return await self._store.compacted_revision()

    async def compact(self, revision: int) -> None:
        await self._store.compact(revision)

    async def aclose(self) -> None:
        await self._store.aclose()


class CountingAuthorizer:
    """An authorizer that counts the decisions of `delegate` and tells `on_decision` of each."""

    def __init__(self, delegate: Any, metrics: APIServerMetrics, on_decision: Callable[[Any], None]) -> None:
        self.delegate = delegate
        self._metrics = metrics
        self._on_decision = on_decision

    def authorize(self, attrs: Any) -> Any:
        decision = self.delegate.authorize(attrs)
        self._metrics.decided(decision.allowed)
        self._on_decision(decision)
        return decision
