"""Admission webhooks, called as kube-apiserver calls them (`k8s.io/apiserver/pkg/admission/plugin/webhook`).

Contract: `MutatingWebhooks(context)` and `ValidatingWebhooks(context)` are
the chain's MutatingAdmissionWebhook and ValidatingAdmissionWebhook steps
(`runtime.server.admission.steps` lists them). They read the
MutatingWebhookConfigurations and ValidatingWebhookConfigurations from the
context's watch cache (configurations by name, webhooks in order: `hooks`),
match each request with `runtime.server.admission.matching` (rules,
matchPolicy Equivalent, selectors, matchConditions; the admissionregistration
kinds exempt), send an `admission.k8s.io/v1` (or v1beta1) AdmissionReview
through the context's `webhook_client` (`url` or `service`, the caBundle,
the webhook's timeoutSeconds) and check its answer as kube (`review`).
Mutating webhooks run in order, their JSON patches applied and reinvoked
when `IfNeeded` (`mutating`); validating webhooks run concurrently
(`validating`). Denials, failed calls (failurePolicy Fail: 500; Ignore: let
through), dry runs, warnings, audit annotations and metrics are kube's
(`calls`).

Modules: `hooks` (the configurations as webhooks), `review` (the review and
its answer), `calls` (matching, one call, its metrics), `mutating`,
`validating`.
"""

from runtime.server.admission.webhooks.mutating import MutatingWebhooks
from runtime.server.admission.webhooks.validating import ValidatingWebhooks

__all__ = ["MutatingWebhooks", "ValidatingWebhooks"]
