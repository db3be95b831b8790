"""Admission's metrics, named and labelled as kube-apiserver's (`k8s.io/apiserver/pkg/admission/metrics` and the
validating policy plugin's `metrics.go`, v1.30+ labels), on a prometheus-client registry.

`AdmissionMetrics(registry)` registers on `registry` (the server's `/metrics`
one; a private one when None, which tests read):
- `apiserver_admission_webhook_admission_duration_seconds` (histogram:
  name, type `admit`|`validating`, operation, rejected);
- `apiserver_admission_webhook_rejection_count` (name, type, operation,
  error_type `calling_webhook_error`|`apiserver_internal_error`|`no_error`,
  rejection_code: the webhook's HTTP code, at most 600, 0 when none);
- `apiserver_admission_webhook_request_total` (name, type, operation, code,
  rejected);
- `apiserver_admission_webhook_fail_open_count` (name, type): calls that
  failed under failurePolicy Ignore;
- `apiserver_validating_admission_policy_check_total` and
  `..._check_duration_seconds` (policy, policy_binding, error_type
  `no_error`|`compile_error`|`invalid_error`, enforcement_action
  `allow`|`deny`|`warn`|`audit`).
- `apiserver_mutating_admission_policy_check_total` and
  `..._check_duration_seconds` (policy, policy_binding, error_type
  `no_error`|`compile_error`|`invalid_error`|`out_of_budget`: Kubernetes
  1.36's mutating policy plugin, per mutation evaluated).
Operations are kube's upper-case words (CREATE, UPDATE, DELETE, CONNECT).
"""

from __future__ import annotations

from typing import Iterable

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.metrics_core import Metric

__all__ = ["AdmissionMetrics"]

_WEBHOOK_BUCKETS = (0.005, 0.025, 0.1, 0.5, 1.0, 2.5, 10, 25)
_POLICY_BUCKETS = (0.0000005, 0.001, 0.01, 0.1, 1.0)


class _CountCounter:
    """A counter exposed under its own name: kube's `..._count` counters carry no `_total` suffix, which
    prometheus_client's Counter always adds."""

    def __init__(self, name: str, documentation: str, labelnames: tuple[str, ...], registry: CollectorRegistry) -> None:
        self.name, self.documentation, self.labelnames = name, documentation, labelnames
        self.values: dict[tuple[str, ...], float] = {}
        registry.register(self)

    def inc(self, *labels: str) -> None:
        self.values[labels] = self.values.get(labels, 0.0) + 1

    def collect(self) -> Iterable[Metric]:
        family = Metric(self.name, self.documentation, "counter")
        for labels, value in self.values.items():
            family.add_sample(self.name, dict(zip(self.labelnames, labels)), value)
        yield family


class AdmissionMetrics:
    """The webhook and policy metrics (see the module doc)."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        on = {"registry": self.registry}
        self._webhook_duration = Histogram(
            "apiserver_admission_webhook_admission_duration_seconds",
            "Admission webhook latency histogram in seconds, identified by name and broken out for each operation "
            "and API resource and type (validate or admit).",
            ("name", "type", "operation", "rejected"), buckets=_WEBHOOK_BUCKETS, **on)
        self._webhook_rejections = _CountCounter(
            "apiserver_admission_webhook_rejection_count",
            "Admission webhook rejection count, identified by name and broken out for each admission type "
            "(validating or admit) and operation. Additional labels specify an error type (calling_webhook_error "
            "or apiserver_internal_error if an error occurred; no_error otherwise) and optionally a non-zero "
            "rejection code if the webhook rejects the request with an HTTP status code (honored by the apiserver "
            "when the code is greater or equal to 400). Codes greater than 600 are truncated to 600, to keep the "
            "metrics cardinality bounded.",
            ("name", "type", "operation", "error_type", "rejection_code"), self.registry)
        self._webhook_requests = Counter(
            "apiserver_admission_webhook_request_total",
            "Admission webhook request total, identified by name and broken out for each admission type "
            "(validating or mutating) and operation. Additional labels specify whether the request was rejected "
            "or not and an HTTP status code. Codes greater than 600 are truncated to 600, to keep the metrics "
            "cardinality bounded.",
            ("name", "type", "operation", "code", "rejected"), **on)
        self._webhook_fail_open = _CountCounter(
            "apiserver_admission_webhook_fail_open_count",
            "Admission webhook fail open count, identified by name and broken out for each admission type "
            "(validating or admit).",
            ("name", "type"), self.registry)
        self._policy_checks = Counter(
            "apiserver_validating_admission_policy_check_total",
            "Validation admission policy check total, labeled by policy and further identified by binding and "
            "enforcement action taken.",
            ("policy", "policy_binding", "error_type", "enforcement_action"), **on)
        self._policy_latency = Histogram(
            "apiserver_validating_admission_policy_check_duration_seconds",
            "Validation admission latency for individual validation expressions in seconds, labeled by policy and "
            "further including binding and enforcement action taken.",
            ("policy", "policy_binding", "error_type", "enforcement_action"), buckets=_POLICY_BUCKETS, **on)

        self._mutation_checks = Counter(
            "apiserver_mutating_admission_policy_check_total",
            "Mutation admission policy check total, labeled by policy and further identified by binding.",
            ("policy", "policy_binding", "error_type"), **on)
        self._mutation_latency = Histogram(
            "apiserver_mutating_admission_policy_check_duration_seconds",
            "Mutation admission latency for individual mutation expressions in seconds, labeled by policy and "
            "binding.", ("policy", "policy_binding", "error_type"), buckets=_POLICY_BUCKETS, **on)

    def webhook_called(self, name: str, kind: str, operation: str, *, rejected: bool, seconds: float,
                       code: int) -> None:
        """One webhook call answered (`code`: its HTTP status, 0 when none came); `kind` admit|validating."""
        flag = "true" if rejected else "false"
        self._webhook_duration.labels(name, kind, operation, flag).observe(seconds)
        self._webhook_requests.labels(name, kind, operation, str(min(code, 600)), flag).inc()

    def webhook_rejected(self, name: str, kind: str, operation: str, *, error_type: str = "no_error",
                         code: int = 0) -> None:
        """A webhook's rejection: a denial (`code` its status, at least 400) or a failed call (`error_type`)."""
        self._webhook_rejections.inc(name, kind, operation, error_type, str(min(code, 600)))

    def webhook_failed_open(self, name: str, kind: str) -> None:
        """A failed call of a webhook whose failurePolicy is Ignore (the request went on)."""
        self._webhook_fail_open.inc(name, kind)

    def policy_checked(self, policy: str, binding: str, *, action: str, seconds: float,
                       error_type: str = "no_error") -> None:
        """One policy evaluation under `binding`: `action` allow|deny|warn|audit."""
        self._policy_checks.labels(policy, binding, error_type, action).inc()
        self._policy_latency.labels(policy, binding, error_type, action).observe(seconds)

    def policy_mutated(self, policy: str, binding: str, *, seconds: float, error_type: str = "no_error") -> None:
        """One mutation of a mutating policy evaluated under `binding` (`error_type` no_error when applied)."""
        self._mutation_checks.labels(policy, binding, error_type).inc()
        self._mutation_latency.labels(policy, binding, error_type).observe(seconds)

    def sample(self, name: str, labels: dict[str, str]) -> float:
        """The value of sample `name` with `labels` (0 when never observed): for tests and benchmarks."""
        value = self.registry.get_sample_value(name, labels)
        return value or 0.0
