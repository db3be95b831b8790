"""The webhook client (`runtime.server.admission.webhookclient`) against real HTTPS servers: what it sends, and
each way a call fails, in Go's words, within its timeout."""

from __future__ import annotations

import pytest
import trio

from runtime.controller.testing import open_test_env

from runtime.server.admission.webhookclient import CacheServiceResolver, WebhookCallError, WebhookClient
from tests.support.webhookserver import ResetConnection, WebhookReply, other_ca_bundle, start_webhook_server


class _NoServices:
    def resolve(self, namespace: str, name: str, port: int) -> tuple[str, int]:
        raise WebhookCallError(f'service "{name}" not found')


async def _failure(client: WebhookClient, config: dict, timeout: float = 5) -> str:
    try:
        with trio.fail_after(timeout + 1):  # answered within its timeout + 1 s (issue 39's bound)
            await client.post_json(config, {"a": 1}, timeout=timeout)
    except WebhookCallError as exc:
        return exc.message
    raise AssertionError("the call succeeded")


async def test_a_call_posts_json_with_kubes_timeout_parameter_and_answers_the_decoded_reply(nursery):
    async def echo(request):
        return {"got": request.json()}
    server = await start_webhook_server(nursery, echo)
    client = WebhookClient(_NoServices())
    answer = await client.post_json(server.client_config("/admit"), {"a": 1}, timeout=10)
    assert answer == {"got": {"a": 1}}
    (request,) = server.requests
    assert (request.method, request.path) == ("POST", "/admit?timeout=10s")
    assert request.headers["content-type"] == "application/json"
    await client.aclose()


async def test_a_server_signed_by_another_ca_fails_verification(nursery):
    server = await start_webhook_server(nursery, lambda r: trio.sleep(0))
    config = dict(server.client_config("/x"), caBundle=other_ca_bundle())
    message = await _failure(WebhookClient(_NoServices()), config)
    assert message == (f'Post "{server.url}/x?timeout=5s": tls: failed to verify certificate: x509: certificate '
                       "signed by unknown authority")


async def test_a_refused_connection_is_gos_connection_refused():
    listener = trio.socket.socket()
    await listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    listener.close()  # nothing listens there now
    message = await _failure(WebhookClient(_NoServices()), {"url": f"https://127.0.0.1:{port}/x"})
    assert message == f'Post "https://127.0.0.1:{port}/x?timeout=5s": dial tcp 127.0.0.1:{port}: connect: ' \
                      "connection refused"


async def test_a_webhook_that_hangs_past_its_timeout_is_a_deadline_exceeded(nursery):
    async def hang(request):
        await trio.sleep_forever()
    server = await start_webhook_server(nursery, hang)
    message = await _failure(WebhookClient(_NoServices()), server.client_config("/slow"), timeout=1)
    assert message == f'Post "{server.url}/slow?timeout=1s": context deadline exceeded'


async def test_a_reset_connection_is_reported_not_hung(nursery):
    async def reset(request):
        raise ResetConnection
    server = await start_webhook_server(nursery, reset)
    message = await _failure(WebhookClient(_NoServices()), server.client_config("/reset"))
    assert message.startswith(f'Post "{server.url}/reset?timeout=5s": ')
    assert message.endswith(("connection reset by peer", "EOF"))


async def test_garbage_is_a_json_parse_error(nursery):
    server = await start_webhook_server(nursery, lambda r: _reply(WebhookReply(b"garbage")))
    message = await _failure(WebhookClient(_NoServices()), server.client_config("/g"))
    assert message.startswith("couldn't get version/kind; json parse error: ")


async def test_a_non_2xx_answer_is_an_error_on_the_server(nursery):
    server = await start_webhook_server(nursery, lambda r: _reply(WebhookReply(b"broken", status=500)))
    message = await _failure(WebhookClient(_NoServices()), server.client_config("/e"))
    assert message == 'an error on the server ("broken") has prevented the request from succeeding'


async def test_a_service_reference_connects_to_its_endpoint_and_verifies_the_service_name(nursery):
    async def ok(request):
        return {"host": request.headers["host"]}
    server = await start_webhook_server(nursery, ok, hosts=("hooks.team.svc",))
    port = int(server.url.rsplit(":", 1)[1])

    class _Resolved:
        def resolve(self, namespace: str, name: str, service_port: int) -> tuple[str, int]:
            assert (namespace, name, service_port) == ("team", "hooks", 443)
            return "127.0.0.1", port
    client = WebhookClient(_Resolved())
    config = {"service": {"namespace": "team", "name": "hooks", "path": "/v"}, "caBundle": server.ca_bundle}
    assert client.url_of(config) == "https://hooks.team.svc:443/v"
    assert await client.post_json(config, {}, timeout=5) == {"host": "hooks.team.svc:443"}
    assert server.requests[0].path == "/v?timeout=5s"


async def test_an_unresolvable_service_fails_without_a_connection():
    message = await _failure(WebhookClient(_NoServices()), {"service": {"namespace": "a", "name": "gone"}})
    assert message == 'service "gone" not found'


async def _reply(reply: WebhookReply) -> WebhookReply:
    return reply


def _service(port_name: str = "https") -> dict:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "hooks", "namespace": "default"},
            "spec": {"ports": [{"name": port_name, "port": 443, "targetPort": 8443}]}}


async def test_the_registrys_resolver_maps_the_service_port_to_a_ready_endpoint_address():
    async with open_test_env(controllers=False) as env:
        await env.client.create(_service())
        await env.client.create({"apiVersion": "v1", "kind": "Endpoints",
                                 "metadata": {"name": "hooks", "namespace": "default"},
                                 "subsets": [{"addresses": [{"ip": "10.0.0.1"}],
                                              "notReadyAddresses": [{"ip": "10.0.0.9"}],
                                              "ports": [{"name": "https", "port": 9443}]}]})
        resolver = env.registry.webhook_client.services
        assert isinstance(resolver, CacheServiceResolver)
        assert resolver.resolve("default", "hooks", 443) == ("10.0.0.1", 9443)
        with pytest.raises(WebhookCallError, match='^no service port 8443 found for service "hooks"$'):
            resolver.resolve("default", "hooks", 8443)
        with pytest.raises(WebhookCallError, match='^service "gone" not found$'):
            resolver.resolve("default", "gone", 443)


async def test_the_resolver_falls_back_to_endpoint_slices_and_skips_unready_endpoints():
    async with open_test_env(controllers=False) as env:
        await env.client.create(_service())
        resolver = env.registry.webhook_client.services
        with pytest.raises(WebhookCallError, match='^no endpoints available for service "hooks"$'):
            resolver.resolve("default", "hooks", 443)
        slice_api = f"discovery.{env.scheme.domain}/v1"
        await env.client.create({"apiVersion": slice_api, "kind": "EndpointSlice", "addressType": "IPv4",
                                 "metadata": {"name": "hooks-1", "namespace": "default",
                                              "labels": {"kubernetes.io/service-name": "hooks"}},
                                 "ports": [{"name": "https", "port": 7443}],
                                 "endpoints": [{"addresses": ["10.0.0.2"], "conditions": {"ready": False}},
                                               {"addresses": ["10.0.0.3"]}]})
        assert resolver.resolve("default", "hooks", 443) == ("10.0.0.3", 7443)


async def test_an_external_name_service_reaches_a_loopback_webhook_by_the_services_tls_name(nursery):
    async def ok(request):
        return {"host": request.headers["host"]}
    server = await start_webhook_server(nursery, ok, hosts=("hooks.default.svc",))
    port = int(server.url.rsplit(":", 1)[1])
    async with open_test_env(controllers=False) as env:
        await env.client.create({"apiVersion": "v1", "kind": "Service",
                                 "metadata": {"name": "hooks", "namespace": "default"},
                                 "spec": {"type": "ExternalName", "externalName": "localhost"}})
        config = {"service": {"namespace": "default", "name": "hooks", "port": port, "path": "/x"},
                  "caBundle": server.ca_bundle}
        answer = await env.registry.webhook_client.post_json(config, {}, timeout=5)
    assert answer == {"host": f"hooks.default.svc:{port}"}
