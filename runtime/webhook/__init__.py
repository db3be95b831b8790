"""Admission in Python: one function, run in the API server, in a test env, or served as a webhook.

Write `async def admit(request: Request) -> Allowed | Denied | Patch` and
describe it with a `Webhook` (name, rules, mutating or validating, failure
policy, side effects, timeout; `runtime.webhook.types`)::

    async def no_latest(request: Request) -> Allowed | Denied:
        images = [c.image for c in request.object.spec.containers]
        if any(i.endswith(":latest") for i in images):
            return Denied("the :latest tag is not allowed")
        return Allowed()

    WEBHOOKS = [Webhook("no-latest.example.com", no_latest,
                        rules=[Rule(["pods"], operations=["CREATE", "UPDATE"], api_groups=[""],
                                    api_versions=["v1"])])]

Then, the same descriptors:
- in process: `miniplane serve --admission-module my.module` loads the
  module's `WEBHOOKS` (`load_webhooks`) and runs them as steps of the
  admission chain (mutating ones before validation, validating ones
  after, as a webhook configuration's would be);
- in a test: `open_test_env(admission=[...])`;
- as a webhook server: `WebhookServer(webhooks, client=client)` serves them
  over HTTPS and writes their webhook configurations.
Each is answered by `review.review` (AdmissionReview in, AdmissionReview
out), so a denial reads `admission webhook "<name>" denied the request:
<message>` with its code, a patch is applied and warnings reach the client
in all three.

Surface: `Webhook`, `Rule`, `Request`, `UserInfo`, `Allowed`, `Denied`,
`Patch`, `WebhookServer`, `load_webhooks`, `WebhookModuleError`; the
AdmissionReview codec is `runtime.webhook.review`. Imports no server code
but `runtime.webhook.inprocess` (the API server's step, imported by the
server only).
"""

from runtime.webhook.loader import WebhookModuleError, load_webhooks
from runtime.webhook.server import WebhookServer
from runtime.webhook.types import (
    Allowed, Answer, Denied, GroupVersionKind, GroupVersionResource, Patch, Request, Rule, UserInfo, Webhook,
)

__all__ = ["Webhook", "Rule", "Request", "UserInfo", "GroupVersionKind", "GroupVersionResource", "Allowed",
           "Denied", "Patch", "Answer", "WebhookServer", "load_webhooks", "WebhookModuleError"]
