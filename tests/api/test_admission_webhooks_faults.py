"""Faulty admission webhooks (issue 39's acceptance): a webhook that sleeps past its timeout, resets the
connection, presents a certificate of another CA, answers garbage or refuses connections is answered within
its timeout + 1 s, with kube's 500 InternalError and message under failurePolicy Fail and the write let
through (with kube's failed-open audit annotation) under Ignore; never any other 5xx.

Memory store only; on trio's real clock (the webhooks answer over real sockets).
"""

from __future__ import annotations

import pytest
import trio

from runtime.server.kinds import AdmissionRequest
from runtime.server.rbac.user import UserInfo
from tests.support.admission_webhooks import CONFIGURATIONS, mutating_configuration, validating_configuration, webhook
from tests.support.server import Server, start_in_process
from tests.support.webhookserver import ResetConnection, WebhookReply, other_ca_bundle, start_webhook_server

pytestmark = pytest.mark.stores("memory")

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
TIMEOUT = 1


async def _hang(request):
    await trio.sleep_forever()


async def _reset(request):
    raise ResetConnection


async def _garbage(request):
    return WebhookReply(b"garbage")


async def _refused_url() -> str:
    listener = trio.socket.socket()
    await listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    listener.close()  # nothing listens there now
    return f"https://127.0.0.1:{port}/v"


async def _client_config(nursery, fault: str) -> dict:
    if fault == "refused":
        return {"url": await _refused_url()}
    handler = {"timeout": _hang, "reset": _reset, "garbage": _garbage, "wrong-ca": _hang}[fault]
    server = await start_webhook_server(nursery, handler)
    config = server.client_config("/v")
    if fault == "wrong-ca":
        config["caBundle"] = other_ca_bundle()
    return config


FAULTS = {
    "timeout": "context deadline exceeded",
    "reset": ("connection reset by peer", "EOF"),
    "wrong-ca": "tls: failed to verify certificate: x509: certificate signed by unknown authority",
    "garbage": "couldn't get version/kind; json parse error: ",
    "refused": "connect: connection refused",
}


@pytest.fixture
async def server(nursery, tmp_path) -> Server:
    return await start_in_process(nursery, tmp_path, api_domain="k8s.io")


async def _configure(server: Server, configuration: dict) -> None:
    async with server.client() as c:
        r = await c.post(CONFIGURATIONS[configuration["kind"]], json=configuration)
        assert r.status_code == 201, r.text


async def _create(server: Server, name: str = "c"):
    async with server.client() as c:
        with trio.fail_after(TIMEOUT + 1):  # within the webhook's timeout + 1 s
            return await c.post(CONFIGMAPS, json={"apiVersion": "v1", "kind": "ConfigMap",
                                                  "metadata": {"name": name, "namespace": "default"}})


@pytest.mark.parametrize("fault", sorted(FAULTS))
@pytest.mark.parametrize("kind", ["validating", "mutating"])
async def test_a_faulty_webhook_under_fail_is_kubes_internal_error_in_time(server, nursery, fault, kind):
    make = validating_configuration if kind == "validating" else mutating_configuration
    await _configure(server, make("f", webhook("faulty.example.com", await _client_config(nursery, fault),
                                               timeoutSeconds=TIMEOUT, failurePolicy="Fail")))
    r = await _create(server)
    assert r.status_code == 500, r.text
    status = r.json()
    assert status["reason"] == "InternalError"
    message = status["message"]
    assert message.startswith('Internal error occurred: failed calling webhook "faulty.example.com": failed to call '
                              "webhook: ")
    expected = FAULTS[fault]
    if fault == "garbage":
        assert expected in message
    else:
        assert message.endswith(expected), message
        assert '?timeout=1s": ' in message


@pytest.mark.parametrize("fault", sorted(FAULTS))
async def test_a_faulty_webhook_under_ignore_lets_the_write_through_in_time(server, nursery, fault):
    await _configure(server, validating_configuration("f", webhook(
        "faulty.example.com", await _client_config(nursery, fault), timeoutSeconds=TIMEOUT, failurePolicy="Ignore")))
    r = await _create(server)
    assert r.status_code == 201, r.text


async def test_a_failed_open_call_is_annotated_and_counted(server, nursery):
    await _configure(server, validating_configuration("f", webhook(
        "faulty.example.com", {"url": await _refused_url()}, failurePolicy="Ignore")))
    await _configure(server, mutating_configuration("f", webhook(
        "faulty-m.example.com", {"url": await _refused_url()}, failurePolicy="Ignore")))
    rt = server.registry.scheme.by_resource("", "v1", "configmaps")
    request = AdmissionRequest(UserInfo("alice"), rt, "create",
                               {"apiVersion": "v1", "kind": "ConfigMap",
                                "metadata": {"name": "c", "namespace": "default"}}, None, False)
    await server.registry.admission_chain.mutate(request)
    await server.registry.admission_chain.validate(request)
    assert request.audit_annotations["failed-open.validating.webhook.admission.k8s.io/round_0_index_0"] == \
        "faulty.example.com"
    assert request.audit_annotations["failed-open.mutation.webhook.admission.k8s.io/round_0_index_0"] == \
        "faulty-m.example.com"
    metrics = server.registry.admission_metrics
    assert metrics.sample("apiserver_admission_webhook_fail_open_count",
                          {"name": "faulty.example.com", "type": "validating"}) == 1
    assert metrics.sample("apiserver_admission_webhook_request_total",
                          {"name": "faulty.example.com", "type": "validating", "operation": "CREATE",
                           "code": "400", "rejected": "false"}) == 1
