"""The example Python webhooks served by the runtime's `WebhookServer` over HTTPS, registered with a running
miniplane (their Validating/MutatingWebhookConfiguration written for them, caBundle and all), and called by
the API server's webhook dispatch as any webhook: the same answers as in process.

- a test env served over HTTPS (`open_test_env(https=True)`), the webhook server registering through
  the env's client, requests over HTTP;
- a real HTTPS server and the real kubectl (`kubectl apply`), the webhook server registering through the
  runtime's HTTP client, as an operator out of process would.
Real sockets both ways: trio's real clock.
"""

from __future__ import annotations

import json
import ssl

import httpx
import trio

from runtime.client.http import open_http_client
from runtime.client.kubeconfig import load_kubeconfig
from runtime.controller.testing import open_test_env
from runtime.webhook import WebhookServer
from tests.support.python_admission import (
    DENY_LABELLED, DENY_MESSAGE, STAMP, STAMP_WEBHOOK, WARNING, WEBHOOKS, configmap,
)

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
DEADLINE = 30


async def test_the_api_server_calls_the_webhook_server_as_any_webhook(nursery):
    async with open_test_env(domain="k8s.io", controllers=False, https=True) as env:
        served = WebhookServer(WEBHOOKS, client=env.client, configuration_name="examples.example.com")
        await nursery.start(served.run)
        assert env.url and env.ca_pem
        with trio.fail_after(DEADLINE):
            async with httpx.AsyncClient(base_url=env.url, headers={"Authorization": f"Bearer {env.token}"},
                                         verify=ssl.create_default_context(cadata=env.ca_pem.decode())) as client:
                denied = await client.post(CONFIGMAPS, json=configmap(labels={"deny": "now"}))
                assert denied.status_code == 403 and denied.json()["reason"] == "Forbidden"
                assert denied.json()["message"] == (f'admission webhook "{DENY_LABELLED.name}" denied the '
                                                    f'request: {DENY_MESSAGE.format("now")}')
                warned = await client.post(CONFIGMAPS, json=configmap(labels={"a": "b"}, data={"warn": "1"}))
                assert warned.status_code == 201 and warned.headers["warning"] == f'299 - "{WARNING}"'
                stored = (await client.get(f"{CONFIGMAPS}/c")).json()
                assert stored["metadata"]["labels"] == {"a": "b", STAMP[0]: STAMP[1]}
                failed = await client.post(CONFIGMAPS, json=configmap("d", data={"explode": "1"}))
                assert failed.status_code == 500
                assert failed.json()["message"] == (f'admission webhook "{STAMP_WEBHOOK.name}" denied the '
                                                    f'request: the stamp broke')


async def test_kubectl_apply_is_refused_and_mutated_by_the_webhook_server(nursery, k8s_server, kubectl):
    async with open_http_client(load_kubeconfig(k8s_server.kubeconfig)) as client:
        served = WebhookServer(WEBHOOKS, client=client, configuration_name="examples.example.com")
        await nursery.start(served.run)
        with trio.fail_after(DEADLINE):
            refused = await kubectl("apply", "-f", "-", check=False,
                                    stdin=json.dumps(configmap(labels={"deny": "now"})).encode())
            assert refused.code == 1
            assert (f'admission webhook "{DENY_LABELLED.name}" denied the request: '
                    f'{DENY_MESSAGE.format("now")}') in refused.err
            applied = await kubectl("apply", "-f", "-", stdin=json.dumps(configmap(data={"warn": "1"})).encode())
            assert f"Warning: {WARNING}" in applied.err
            shown = json.loads((await kubectl("get", "configmap", "c", "-n", "default", "-o", "json")).out)
            assert shown["metadata"]["labels"] == {STAMP[0]: STAMP[1]}
