"""Service account token Secrets: kube-controller-manager's token controller and the legacy tokens it writes.

In process, with the server's built-in controllers: a Secret of type
`kubernetes.io/service-account-token` naming a ServiceAccount is filled with
a token, the server's CA and the namespace; the token authenticates as the
ServiceAccount (a bearer token, and TokenReview) only while its Secret holds
it and the ServiceAccount stands; the Secret goes with its ServiceAccount,
and one naming a missing ServiceAccount is deleted.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest
import trio

from tests.support.rbac import ok
from tests.support.server import Server, start_in_process

AUTHN = "authentication.k8s.io/v1"
NS = "/api/v1/namespaces/default"
WHOAMI = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
REVIEWS = "/apis/authentication.k8s.io/v1/tokenreviews"
ISSUER = "https://kubernetes.default.svc.cluster.local"
TOKEN_TYPE = "kubernetes.io/service-account-token"


@pytest.fixture
async def srv(nursery, tmp_path, autojump_clock) -> Server:
    return await start_in_process(nursery, tmp_path, api_domain="k8s.io", controllers=True)


def token_secret(name: str, account: str, **meta: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Secret", "type": TOKEN_TYPE,
            "metadata": {"name": name, "annotations": {"kubernetes.io/service-account.name": account}, **meta}}


async def create_account(srv: Server, name: str = "robot") -> dict[str, Any]:
    async with srv.client() as c:
        return await ok(await c.post(f"{NS}/serviceaccounts", json={"metadata": {"name": name}}), 201)


async def filled(srv: Server, name: str) -> dict[str, Any]:
    """The Secret once the controller has given it a token."""
    async with srv.client() as c:
        with trio.fail_after(30):
            while True:
                secret = await ok(await c.get(f"{NS}/secrets/{name}"))
                if "token" in (secret.get("data") or {}):
                    return secret
                await trio.sleep(0.05)


async def gone(srv: Server, path: str) -> None:
    async with srv.client() as c:
        with trio.fail_after(30):
            while (await c.get(path)).status_code != 404:
                await trio.sleep(0.05)


async def whoami(srv: Server, token: str) -> tuple[int, dict[str, Any]]:
    async with srv.client(token=token) as c:
        r = await c.post(WHOAMI, json={"apiVersion": AUTHN, "kind": "SelfSubjectReview"})
    return r.status_code, r.json()


async def review(srv: Server, token: str) -> dict[str, Any]:
    async with srv.client() as c:
        return (await ok(await c.post(REVIEWS, json={"apiVersion": AUTHN, "kind": "TokenReview",
                                                     "spec": {"token": token}}), 201))["status"]


def decoded(secret: dict[str, Any], key: str) -> bytes:
    return base64.b64decode(secret["data"][key])


async def test_a_token_secret_gets_a_token_the_ca_and_the_namespace_and_the_token_authenticates(srv):
    account = await create_account(srv)
    async with srv.client() as c:
        await ok(await c.post(f"{NS}/secrets", json=token_secret("robot-token", "robot")), 201)
    secret = await filled(srv, "robot-token")
    assert decoded(secret, "namespace") == b"default"
    assert decoded(secret, "ca.crt") == (srv.data_dir / "pki" / "ca.crt").read_bytes()
    assert secret["metadata"]["annotations"]["kubernetes.io/service-account.uid"] == account["metadata"]["uid"]
    token = decoded(secret, "token").decode()
    code, answer = await whoami(srv, token)
    assert code == 201
    assert answer["status"]["userInfo"] == {
        "username": "system:serviceaccount:default:robot", "uid": account["metadata"]["uid"],
        "groups": ["system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"]}
    status = await review(srv, token)
    assert status["authenticated"] is True and status["audiences"] == [ISSUER]
    assert status["user"]["username"] == "system:serviceaccount:default:robot"


async def test_a_legacy_token_is_refused_once_its_secret_is_deleted(srv):
    await create_account(srv)
    async with srv.client() as c:
        await ok(await c.post(f"{NS}/secrets", json=token_secret("robot-token", "robot")), 201)
    token = decoded(await filled(srv, "robot-token"), "token").decode()
    assert (await whoami(srv, token))[0] == 201
    async with srv.client() as c:
        await ok(await c.delete(f"{NS}/secrets/robot-token"))
    assert await srv.registry.cache.wait_fresh()
    assert (await whoami(srv, token))[0] == 401
    assert (await review(srv, token))["error"] == "[invalid bearer token, Token has been invalidated]"


async def test_a_legacy_token_no_longer_in_its_secret_is_refused(srv):
    await create_account(srv)
    async with srv.client() as c:
        await ok(await c.post(f"{NS}/secrets", json=token_secret("robot-token", "robot")), 201)
        token = decoded(await filled(srv, "robot-token"), "token").decode()
        await ok(await c.patch(f"{NS}/secrets/robot-token", json={"stringData": {"token": "another"}},
                               headers={"Content-Type": "application/merge-patch+json"}))
    assert await srv.registry.cache.wait_fresh()
    assert (await review(srv, token))["error"] == "[invalid bearer token, Token does not match server's copy]"


async def test_deleting_the_service_account_deletes_its_token_secrets_and_refuses_the_token(srv):
    await create_account(srv)
    async with srv.client() as c:
        await ok(await c.post(f"{NS}/secrets", json=token_secret("robot-token", "robot")), 201)
        token = decoded(await filled(srv, "robot-token"), "token").decode()
        await ok(await c.delete(f"{NS}/serviceaccounts/robot"))
    await gone(srv, f"{NS}/secrets/robot-token")
    assert (await whoami(srv, token))[0] == 401


async def test_a_token_secret_naming_a_missing_service_account_is_deleted(srv):
    async with srv.client() as c:
        await ok(await c.post(f"{NS}/secrets", json=token_secret("stray-token", "nobody")), 201)
    await gone(srv, f"{NS}/secrets/stray-token")


async def test_a_token_secret_naming_another_uid_is_deleted(srv):
    await create_account(srv)
    async with srv.client() as c:
        await ok(await c.post(f"{NS}/secrets", json=token_secret(
            "old-token", "robot", annotations={"kubernetes.io/service-account.name": "robot",
                                               "kubernetes.io/service-account.uid": "a-recreated-account"})), 201)
    await gone(srv, f"{NS}/secrets/old-token")
