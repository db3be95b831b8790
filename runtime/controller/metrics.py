"""Controller metrics: client-go's work-queue metrics and controller-runtime's reconcile metrics.

`ControllerMetrics(registry)` registers, on a `prometheus_client.CollectorRegistry`
of the caller's (one per manager or server, never the library's global one, so
that two managers in one process stay apart), the families controller-runtime
exposes, with its names, labels and buckets:

| family | labels | what |
|---|---|---|
| `workqueue_depth` | name, controller | items waiting for a worker |
| `workqueue_adds_total` | name, controller | adds accepted (an add of a waiting item is not one) |
| `workqueue_queue_duration_seconds` | name, controller | first add to the `get()` that handed it out |
| `workqueue_work_duration_seconds` | name, controller | `get()` to `done()` |
| `workqueue_unfinished_work_seconds` | name, controller | seconds of work in progress, summed |
| `workqueue_longest_running_processor_seconds` | name, controller | the oldest item in progress |
| `workqueue_retries_total` | name, controller | delayed and rate-limited re-adds |
| `controller_runtime_reconcile_total` | controller, result | `success`, `error`, `requeue_after` |
| `controller_runtime_reconcile_errors_total` | controller | reconciles that raised |
| `controller_runtime_terminal_reconcile_errors_total` | controller | reconciles that raised `TerminalError` |
| `controller_runtime_reconcile_time_seconds` | controller | a reconcile's duration |
| `controller_runtime_max_concurrent_reconciles` | controller | the controller's worker count |
| `controller_runtime_active_workers` | controller | workers reconciling now |

Counters and histograms are updated as the queue and the controller work
(`QueueMetrics`, `record_reconcile`: a bound child each, no label lookup per
item); the gauges are read from the live controllers when the registry is
scraped (`watch(controller)`), so they cost nothing between scrapes.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Protocol

from prometheus_client import CollectorRegistry, Counter, Histogram, disable_created_metrics
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

__all__ = ["ControllerMetrics", "QueueMetrics", "QUEUE_BUCKETS", "RECONCILE_BUCKETS", "LiveController"]

# Kubernetes' exposition has no `_created` series; neither does ours (a process-wide switch of the library).
disable_created_metrics()

#: controller-runtime's work-queue buckets: `prometheus.ExponentialBuckets(10e-9, 10, 12)`, 10 ns to 1000 s.
QUEUE_BUCKETS = tuple(1e-8 * 10 ** i for i in range(12))
#: controller-runtime's `controller_runtime_reconcile_time_seconds` buckets.
RECONCILE_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8,
                     0.9, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40,
                     50, 60)


class QueueMetrics(Protocol):
    """What a `WorkQueue` reports as it works (client-go's `queueMetrics`)."""

    def added(self) -> None: ...
    def retried(self) -> None: ...
    def waited(self, seconds: float) -> None: ...
    def worked(self, seconds: float) -> None: ...


class LiveController(Protocol):
    """What the scrape reads of a controller: its name, workers and `statistics()`."""

    name: str
    max_concurrent_reconciles: int

    def statistics(self) -> Any: ...


class _BoundQueueMetrics:
    """`QueueMetrics` over children bound to one queue's labels."""

    def __init__(self, adds: Any, retries: Any, latency: Any, work: Any) -> None:
        self.added: Callable[[], None] = adds.inc
        self.retried: Callable[[], None] = retries.inc
        self.waited: Callable[[float], None] = latency.observe
        self.worked: Callable[[float], None] = work.observe


class ControllerMetrics:
    """The controller families on `registry` (see the module docs). `registry` None: a registry of its own."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        r = self.registry
        queue = ["name", "controller"]
        self._adds = Counter("workqueue_adds_total", "Total number of adds handled by workqueue", queue, registry=r)
        self._retries = Counter("workqueue_retries_total", "Total number of retries handled by workqueue", queue,
                                registry=r)
        self._latency = Histogram("workqueue_queue_duration_seconds",
                                  "How long in seconds an item stays in workqueue before being requested", queue,
                                  buckets=QUEUE_BUCKETS, registry=r)
        self._work = Histogram("workqueue_work_duration_seconds",
                               "How long in seconds processing an item from workqueue takes.", queue,
                               buckets=QUEUE_BUCKETS, registry=r)
        self._reconciles = Counter("controller_runtime_reconcile_total",
                                   "Total number of reconciliations per controller", ["controller", "result"],
                                   registry=r)
        self._errors = Counter("controller_runtime_reconcile_errors_total",
                               "Total number of reconciliation errors per controller", ["controller"], registry=r)
        self._terminal = Counter("controller_runtime_terminal_reconcile_errors_total",
                                 "Total number of terminal reconciliation errors per controller", ["controller"],
                                 registry=r)
        self._time = Histogram("controller_runtime_reconcile_time_seconds",
                               "Length of time per reconciliation per controller", ["controller"],
                               buckets=RECONCILE_BUCKETS, registry=r)
        self._controllers: dict[str, LiveController] = {}
        r.register(_LiveGauges(self._controllers))

    def queue_metrics(self, name: str) -> QueueMetrics:
        """The `QueueMetrics` of the work queue of controller `name`."""
        labels = (name, name)
        return _BoundQueueMetrics(self._adds.labels(*labels), self._retries.labels(*labels),
                                  self._latency.labels(*labels), self._work.labels(*labels))

    def watch(self, controller: LiveController) -> None:
        """Report `controller`'s gauges (depth, unfinished work, workers) at every scrape from now on."""
        self._controllers[controller.name] = controller
        # Every family shows the controller from the start, at zero, as controller-runtime's do.
        for result in ("success", "error", "requeue_after"):
            self._reconciles.labels(controller.name, result)
        self._errors.labels(controller.name)
        self._terminal.labels(controller.name)
        self._time.labels(controller.name)

    def record_reconcile(self, controller: str, result: str, seconds: float) -> None:
        """One reconcile of `controller` ended with `result` (`success`, `error`, `terminal_error`,
        `requeue_after`) after `seconds`."""
        if result in ("error", "terminal_error"):
            self._errors.labels(controller).inc()
            if result == "terminal_error":
                self._terminal.labels(controller).inc()
            result = "error"
        self._reconciles.labels(controller, result).inc()
        self._time.labels(controller).observe(seconds)


class _LiveGauges(Collector):
    """The gauges read from the live controllers at scrape time."""

    def __init__(self, controllers: dict[str, LiveController]) -> None:
        self._controllers = controllers

    def collect(self) -> Iterable[GaugeMetricFamily]:
        queue = ["name", "controller"]
        depth = GaugeMetricFamily("workqueue_depth", "Current depth of workqueue", labels=queue)
        unfinished = GaugeMetricFamily(
            "workqueue_unfinished_work_seconds",
            "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. "
            "Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate "
            "at which this increases.", labels=queue)
        longest = GaugeMetricFamily("workqueue_longest_running_processor_seconds",
                                    "How many seconds has the longest running processor for workqueue been running.",
                                    labels=queue)
        workers = GaugeMetricFamily("controller_runtime_max_concurrent_reconciles",
                                    "Maximum number of concurrent reconciles per controller", labels=["controller"])
        active = GaugeMetricFamily("controller_runtime_active_workers",
                                   "Number of currently used workers per controller", labels=["controller"])
        for name, controller in sorted(self._controllers.items()):
            stats = controller.statistics().queue
            labels = [name, name]
            depth.add_metric(labels, stats.depth if stats is not None else 0)
            unfinished.add_metric(labels, stats.unfinished_work if stats is not None else 0.0)
            longest.add_metric(labels, stats.longest_running_processor if stats is not None else 0.0)
            workers.add_metric([name], controller.max_concurrent_reconciles)
            active.add_metric([name], stats.processing if stats is not None else 0)
        return [depth, unfinished, longest, workers, active]
