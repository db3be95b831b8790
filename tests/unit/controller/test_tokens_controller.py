"""The token controller (`controllers.tokens`), alone on a test env: what it writes, what it leaves, when it runs."""

from __future__ import annotations

import base64
import logging

import pytest
import trio

from controllers import tokens
from runtime.controller.testing import TestEnv, open_test_env
from runtime.machinery import errors

CA = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


@pytest.fixture
async def env():
    async with open_test_env(domain="k8s.io", controllers=False) as env:
        await env.client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ci"}})
        await env.client.create({"apiVersion": "v1", "kind": "ServiceAccount",
                                 "metadata": {"name": "robot", "namespace": "ci"}})
        yield env


def secret(name: str, **data: bytes) -> dict:
    return {"apiVersion": "v1", "kind": "Secret", "type": tokens.SERVICE_ACCOUNT_TOKEN,
            "metadata": {"name": name, "namespace": "ci", "annotations": {tokens.NAME_KEY: "robot"}},
            "data": {k.replace("_", "."): base64.b64encode(v).decode() for k, v in data.items()}}


async def run(env: TestEnv, signing: tokens.TokenSigning | None) -> tokens.TokensController | None:
    manager = env.manager()
    controller = tokens.setup(manager, signing)
    await env.start(manager)
    return controller


async def settled(env: TestEnv, name: str) -> dict:
    with trio.fail_after(30):
        while True:
            found = await env.client.get(env.scheme.by_kind("Secret"), name, namespace="ci")
            if tokens.UID_KEY in (found["metadata"].get("annotations") or {}):
                return found
            await trio.sleep(0.05)


async def test_without_a_signer_the_controller_is_disabled_as_kube_controller_manager_without_a_private_key(
        env, caplog):
    with caplog.at_level(logging.INFO, logger="controllers.tokens"):
        assert await run(env, None) is None
    assert '"serviceaccount-token-controller" is disabled because there is no private key' in caplog.messages


async def test_a_token_secret_gets_only_what_it_lacks_and_the_ca_it_is_given(env, autojump_clock):
    await env.client.create(secret("given", token=b"a-token-of-the-user", namespace=b"elsewhere", ca_crt=b"old"))
    await run(env, tokens.TokenSigning(env.registry.tokens, CA))
    filled = await settled(env, "given")
    data = {k: base64.b64decode(v) for k, v in filled["data"].items()}
    assert data == {"token": b"a-token-of-the-user", "namespace": b"elsewhere", "ca.crt": CA}


async def test_without_a_ca_a_token_secret_gets_no_ca_crt(env, autojump_clock):
    await env.client.create(secret("bare"))
    await run(env, tokens.TokenSigning(env.registry.tokens))
    filled = await settled(env, "bare")
    assert sorted(filled["data"]) == ["namespace", "token"]
    claims = env.registry.tokens.verify(base64.b64decode(filled["data"]["token"]).decode())
    assert (claims.namespace, claims.name, claims.secret) == ("ci", "robot", "bare")


async def test_a_filled_token_secret_is_not_written_again(env, autojump_clock):
    await env.client.create(secret("once"))
    await run(env, tokens.TokenSigning(env.registry.tokens, CA))
    version = (await settled(env, "once"))["metadata"]["resourceVersion"]
    await env.client.create(secret("later"))  # the controller has run past "once" since
    await settled(env, "later")
    try:
        again = await env.client.get(env.scheme.by_kind("Secret"), "once", namespace="ci")
    except errors.NotFound:
        pytest.fail("the filled Secret was deleted")
    assert again["metadata"]["resourceVersion"] == version


async def test_the_test_env_runs_the_token_controller_with_the_servers_signer(autojump_clock):
    async with open_test_env(domain="k8s.io") as env:
        await env.client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ci"}})
        await env.client.create({"apiVersion": "v1", "kind": "ServiceAccount",
                                 "metadata": {"name": "robot", "namespace": "ci"}})
        await env.client.create(secret("robot-token"))
        filled = await settled(env, "robot-token")
        token = base64.b64decode(filled["data"]["token"]).decode()
        answer = env.registry.authenticator.authenticate_token(token)
        assert answer.user is not None and answer.user.name == "system:serviceaccount:ci:robot"
