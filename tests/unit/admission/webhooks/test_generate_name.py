"""A create by generateName, as kube's webhooks see it: the name is generated in the store's BeforeCreate, after
mutating admission and before validating admission (`AdmissionToValidateObjectFunc` takes the generated name). So
a mutating webhook is sent no name (the object with its generateName only), a validating one the generated name;
the object keeps its generated name after a mutating webhook's patch."""

from __future__ import annotations

from typing import Any

from runtime.server.admission.python import python_steps
from runtime.server.admission.webhooks import MutatingWebhooks, ValidatingWebhooks
from runtime.server.kinds import AdmissionRequest
from runtime.webhook import Allowed, Webhook
from tests.support.policy_fakes import FakeContext, request
from tests.support.python_admission import DENY_LABELLED
from tests.support.webhook_fakes import allowing, configuration, hook_spec, patching, webhook_context


def _generated() -> AdmissionRequest:
    req = request({"apiVersion": "v1", "kind": "ConfigMap",
                   "metadata": {"generateName": "c-", "name": "c-x7k2p", "namespace": "ns"}})
    req.generated_name = True  # what the registry says of a name it generated from generateName
    return req


def _sent(context: Any) -> dict[str, Any]:
    [(_, review, _)] = context.webhook_client.sent
    return review["request"]


async def test_a_mutating_webhook_is_sent_no_name_for_a_generate_name_create():
    context = webhook_context(configuration("MutatingWebhookConfiguration", "cfg", hook_spec("m")), answer=allowing())
    await MutatingWebhooks(context).mutate(_generated())
    sent = _sent(context)
    assert "name" not in sent
    assert "name" not in sent["object"]["metadata"] and sent["object"]["metadata"]["generateName"] == "c-"


async def test_the_generated_name_stays_after_a_mutating_webhooks_patch():
    context = webhook_context(configuration("MutatingWebhookConfiguration", "cfg", hook_spec("m")),
                              answer=patching([{"op": "add", "path": "/data", "value": {"a": "1"}}]))
    req = _generated()
    await MutatingWebhooks(context).mutate(req)
    assert req.obj["metadata"]["name"] == "c-x7k2p" and req.obj["data"] == {"a": "1"}


async def test_a_validating_webhook_is_sent_the_generated_name():
    context = webhook_context(configuration("ValidatingWebhookConfiguration", "cfg", hook_spec("v")),
                              answer=allowing())
    await ValidatingWebhooks(context).validate(_generated())
    sent = _sent(context)
    assert sent["name"] == "c-x7k2p" and sent["object"]["metadata"]["name"] == "c-x7k2p"


async def test_a_mutating_python_webhook_is_sent_no_name_either():
    seen: list[Any] = []

    async def record(req: Any) -> Any:
        seen.append((req.name, req.object.metadata.name, req.object.metadata.generate_name))
        return Allowed()
    context = FakeContext()
    mutating, _ = python_steps(context, [Webhook("m.example.com", record, mutating=True, rules=DENY_LABELLED.rules)])
    assert mutating is not None
    await mutating.mutate(_generated())
    assert seen == [("", None, "c-")]
