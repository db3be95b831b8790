"""Identities for controllers and services: core/v1 ServiceAccount, its tokens (TokenRequest) and TokenReview.

In process through the ASGI transport, under `k8s.io` (kube-apiserver's
group names). Token lifetimes run on the server's wall clock, which follows
trio's: the MockClock ages a token by an hour at no cost.
"""

from __future__ import annotations

import json
from typing import Any

import jwt
import pytest
import trio

from runtime.machinery.serializer import protobuf
from tests.support.rbac import grant, ok, rule
from tests.support.server import Server, start_in_process

AUTHN = "authentication.k8s.io/v1"
SAS = "/api/v1/namespaces/default/serviceaccounts"
REVIEWS = "/apis/authentication.k8s.io/v1/tokenreviews"
WHOAMI = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
ISSUER = "https://kubernetes.default.svc.cluster.local"


@pytest.fixture
async def srv(nursery, tmp_path) -> Server:
    return await start_in_process(nursery, tmp_path, api_domain="k8s.io")


def sa(name: str, **extra: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}, **extra}


def token_request(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": AUTHN, "kind": "TokenRequest", "spec": spec}


async def new_token(srv: Server, name: str = "robot", namespace: str = "default", create: bool = True,
                    **spec: Any) -> str:
    async with srv.client() as c:
        if create:
            await ok(await c.post(f"/api/v1/namespaces/{namespace}/serviceaccounts", json=sa(name)), 201)
        answer = await ok(await c.post(f"/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token",
                                       json=token_request(**spec)), 201)
    return answer["status"]["token"]


async def whoami(srv: Server, token: str) -> tuple[int, dict[str, Any]]:
    async with srv.client(token=token) as c:
        r = await c.post(WHOAMI, json={"apiVersion": AUTHN, "kind": "SelfSubjectReview"})
    return r.status_code, r.json()


async def review(srv: Server, token: str, audiences: list[str] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"token": token}
    if audiences is not None:
        spec["audiences"] = audiences
    async with srv.client() as c:
        return (await ok(await c.post(REVIEWS, json={"apiVersion": AUTHN, "kind": "TokenReview", "spec": spec}),
                         201))["status"]


# ---- the ServiceAccount object -------------------------------------------------------------------

async def test_service_accounts_are_namespaced_with_kubernetes_validation_and_secret_references_by_name(srv):
    async with srv.client() as c:
        created = await ok(await c.post(SAS, json=sa("robot", secrets=[{"name": "s", "kind": "Secret", "uid": "u"}],
                                                     automountServiceAccountToken=False)), 201)
        assert created["secrets"] == [{"name": "s"}] and created["automountServiceAccountToken"] is False
        bad = await ok(await c.post(SAS, json=sa("Not_A_Subdomain")), 422)
        assert bad["message"].startswith('ServiceAccount "Not_A_Subdomain" is invalid: metadata.name: Invalid value: '
                                         '"Not_A_Subdomain": a lowercase RFC 1123 subdomain')
        assert (await c.put(f"{SAS}/ghost", json=sa("ghost"))).status_code == 404  # no create on update
        listed = await ok(await c.get("/api/v1/serviceaccounts"))
        assert [i["metadata"]["name"] for i in listed["items"]] == ["robot"]
        warned = await c.post(SAS, json=sa("old", metadata={"name": "old", "annotations": {
            "kubernetes.io/enforce-mountable-secrets": "true"}}))
        assert warned.status_code == 201
        assert "kubernetes.io/enforce-mountable-secrets]: deprecated in v1.32+" in warned.headers["Warning"]


async def test_service_accounts_and_token_requests_travel_in_protobuf_as_kubectl_sends_them(srv):
    pb = "application/vnd.kubernetes.protobuf"
    async with srv.client() as c:
        body = protobuf.encode(sa("typed"))
        r = await c.post(SAS, content=body, headers={"Content-Type": pb, "Accept": pb})
        assert r.status_code == 201 and protobuf.decode(r.content)["metadata"]["name"] == "typed"
        body = protobuf.encode({**token_request(audiences=["api"], expirationSeconds=600), "metadata": {}})
        r = await c.post(f"{SAS}/typed/token", content=body, headers={"Content-Type": pb, "Accept": pb})
        assert r.status_code == 201, r.text
        answer = protobuf.decode(r.content)
    assert answer["kind"] == "TokenRequest" and answer["spec"]["audiences"] == ["api"]
    assert answer["status"]["token"].count(".") == 2


# ---- TokenRequest ---------------------------------------------------------------------------------

async def test_a_token_request_answers_a_signed_jwt_with_kubernetes_claims(srv):
    async with srv.client() as c:
        account = await ok(await c.post(SAS, json=sa("robot")), 201)
        answer = await ok(await c.post(f"{SAS}/robot/token", json=token_request()), 201)
    assert answer["metadata"]["name"] == "robot" and answer["metadata"]["namespace"] == "default"
    assert answer["spec"] == {"audiences": [ISSUER], "expirationSeconds": 3600}
    token = answer["status"]["token"]
    header = jwt.get_unverified_header(token)
    claims = jwt.decode(token, options={"verify_signature": False})
    assert header["alg"] == "ES256" and header["kid"]
    assert claims["iss"] == ISSUER and claims["aud"] == [ISSUER]
    assert claims["sub"] == "system:serviceaccount:default:robot"
    assert claims["exp"] - claims["iat"] == 3600 and claims["nbf"] == claims["iat"]
    assert claims["kubernetes.io"] == {"namespace": "default", "serviceaccount": {
        "name": "robot", "uid": account["metadata"]["uid"]}}
    assert answer["status"]["expirationTimestamp"].endswith("Z")


async def test_a_token_authenticates_as_its_service_account_in_kubernetes_groups(srv):
    token = await new_token(srv)
    code, me = await whoami(srv, token)
    assert code == 201
    info = me["status"]["userInfo"]
    assert info["username"] == "system:serviceaccount:default:robot"
    assert info["groups"] == ["system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"]
    assert info["extra"]["authentication.kubernetes.io/credential-id"][0].startswith("JTI=")
    # RBAC sees the service account: a binding to it grants what it names, nothing more.
    async with srv.client(token=token) as c:
        assert (await c.get(SAS)).status_code == 403
    await grant(srv, {"kind": "ServiceAccount", "name": "robot", "namespace": "default"}, rule(["list"], ["serviceaccounts"]),
                namespace="default", role_kind="Role")
    async with srv.client(token=token) as c:
        assert (await c.get(SAS)).status_code == 200
        assert (await c.get("/api/v1/namespaces")).status_code == 403


@pytest.mark.parametrize("body,code,message", [
    (token_request(expirationSeconds=599), 422, 'TokenRequest.authentication.k8s.io "" is invalid: '
     "spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 10 minutes"),
    (token_request(expirationSeconds=(1 << 32) + 1), 422, 'TokenRequest.authentication.k8s.io "" is invalid: '
     "spec.expirationSeconds: Too long: may not be more than 4294967296 bytes"),
    ({**token_request(), "metadata": {"name": "other"}}, 422, 'TokenRequest.authentication.k8s.io "robot" is '
     'invalid: metadata.name: Invalid value: "other": must match the service account name if specified'),
    ({**token_request(), "metadata": {"namespace": "kube-system"}}, 400,
     "the namespace of the provided object does not match the namespace sent on the request"),
    ({**token_request(), "kind": "TokenReview"}, 400,
     "the kind in the data (TokenReview) does not match the expected kind (TokenRequest)"),
    (token_request(expirationSeconds="soon"), 400, "json: cannot unmarshal string into Go struct field "
     "TokenRequestSpec.spec.expirationSeconds of type int64"),
], ids=["too-short", "too-long", "other-name", "other-namespace", "wrong-kind", "mistyped"])
async def test_a_bad_token_request_is_refused_in_kubernetes_words(srv, body, code, message):
    async with srv.client() as c:
        await ok(await c.post(SAS, json=sa("robot")), 201)
        answer = await ok(await c.post(f"{SAS}/robot/token", json=body), code)
    assert message in answer["message"]


async def test_a_token_for_a_missing_account_is_404_and_the_subresource_takes_only_create(srv):
    async with srv.client() as c:
        missing = await ok(await c.post(f"{SAS}/ghost/token", json=token_request()), 404)
        assert missing["message"] == 'serviceaccounts "ghost" not found'
        await ok(await c.post(SAS, json=sa("robot")), 201)
        assert (await c.get(f"{SAS}/robot/token")).status_code == 405
        assert (await c.post(f"{SAS}/robot/nothing", json=token_request())).status_code == 404


async def test_only_callers_allowed_to_create_serviceaccounts_token_get_one(srv):
    async with srv.client() as c:
        await ok(await c.post(SAS, json=sa("robot")), 201)
    other = await new_token(srv, "other")
    async with srv.client(token=other) as c:
        denied = await ok(await c.post(f"{SAS}/robot/token", json=token_request()), 403)
    assert denied["message"] == ('serviceaccounts "robot" is forbidden: User "system:serviceaccount:default:other" '
                                 'cannot create resource "serviceaccounts/token" in API group "" in the namespace '
                                 '"default"')
    await grant(srv, {"kind": "ServiceAccount", "name": "other", "namespace": "default"},
                rule(["create"], ["serviceaccounts/token"], names=["robot"]), namespace="default", role_kind="Role")
    async with srv.client(token=other) as c:
        await ok(await c.post(f"{SAS}/robot/token", json=token_request()), 201)


async def test_a_token_is_refused_once_its_account_is_deleted_or_recreated(srv):
    token = await new_token(srv)
    assert (await whoami(srv, token))[0] == 201
    async with srv.client() as c:
        await ok(await c.delete(f"{SAS}/robot"))
        assert await srv.registry.cache.wait_fresh()
        assert (await whoami(srv, token))[0] == 401
        assert (await review(srv, token))["error"] == '[invalid bearer token, serviceaccounts "robot" not found]'
        recreated = await ok(await c.post(SAS, json=sa("robot")), 201)
    assert await srv.registry.cache.wait_fresh()
    assert (await whoami(srv, token))[0] == 401
    status = await review(srv, token)
    assert status["error"].startswith(f"[invalid bearer token, service account UID ({recreated['metadata']['uid']}) "
                                      "does not match claim (")
    assert "authenticated" not in status and status["user"] == {}


async def test_a_token_is_refused_once_expired_and_not_before(srv, autojump_clock):
    token = await new_token(srv, expirationSeconds=600)
    await trio.sleep(600 + 59)  # within the 60 s leeway Kubernetes allows for clock skew
    assert (await whoami(srv, token))[0] == 201
    await trio.sleep(2)
    assert (await whoami(srv, token))[0] == 401
    assert (await review(srv, token))["error"] == "[invalid bearer token, service account token has expired]"


async def test_a_token_is_only_good_for_its_audiences(srv):
    token = await new_token(srv, audiences=["vault"])
    assert (await whoami(srv, token))[0] == 401  # not for this server
    assert (await review(srv, token))["error"] == (
        f'[invalid bearer token, token audiences ["vault"] is invalid for the target audiences ["{ISSUER}"]]')
    status = await review(srv, token, ["vault", "other"])
    assert status["authenticated"] is True and status["audiences"] == ["vault"]
    both = await new_token(srv, create=False, audiences=["vault", ISSUER])
    assert (await whoami(srv, both))[0] == 201


async def test_a_tampered_or_foreign_token_is_refused(srv):
    token = await new_token(srv)
    head, payload, signature = token.split(".")
    forged = json.loads(jwt.utils.base64url_decode(payload))
    forged["sub"] = "system:serviceaccount:kube-system:admin"
    tampered = ".".join([head, jwt.utils.base64url_encode(json.dumps(forged).encode()).decode(), signature])
    assert (await whoami(srv, tampered))[0] == 401
    assert (await review(srv, tampered))["error"] == (
        "[invalid bearer token, go-jose/go-jose: error in cryptographic primitive]")
    foreign = jwt.encode({"iss": "https://elsewhere", "sub": "x"}, "secret-key-of-32-bytes-or-more!!", "HS256")
    assert (await review(srv, foreign))["error"] == "invalid bearer token"


async def test_a_bound_token_lives_only_as_long_as_its_object(srv):
    lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "holder"}, "spec": {}}
    leases = "/apis/coordination.k8s.io/v1/namespaces/default/leases"
    async with srv.client() as c:
        held = await ok(await c.post(leases, json=lease), 201)
    ref = {"kind": "Lease", "apiVersion": "coordination.k8s.io/v1", "name": "holder"}
    token = await new_token(srv, boundObjectRef={**ref, "uid": held["metadata"]["uid"]})
    code, me = await whoami(srv, token)
    assert code == 201 and me["status"]["userInfo"]["extra"]["authentication.kubernetes.io/lease-name"] == ["holder"]
    async with srv.client() as c:
        wrong = await ok(await c.post(f"{SAS}/robot/token", json=token_request(boundObjectRef={**ref, "uid": "x"})), 409)
        assert "the UID in the bound object reference (x) does not match the UID in record" in wrong["message"]
        gone = {**ref, "name": "gone"}
        assert (await c.post(f"{SAS}/robot/token", json=token_request(boundObjectRef=gone))).status_code == 404
        unserved = await ok(await c.post(f"{SAS}/robot/token", json=token_request(boundObjectRef={
            "kind": "ReplicationController", "apiVersion": "v1", "name": "p"})), 400)
        assert unserved["message"] == "cannot bind token to object of type /v1, Kind=ReplicationController"
        await ok(await c.delete(f"{leases}/holder"))
        assert await srv.registry.cache.wait_fresh()
        assert (await review(srv, token))["error"] == "[invalid bearer token, service account token has been invalidated]"
        await ok(await c.post(leases, json=lease), 201)  # the same name again: another object
    assert await srv.registry.cache.wait_fresh()
    assert "lease UID (" in (await review(srv, token))["error"]


async def test_the_server_maximum_shortens_a_token_with_a_warning(nursery, tmp_path):
    srv = await start_in_process(nursery, tmp_path, api_domain="k8s.io", service_account_max_token_expiration=3600)
    async with srv.client() as c:
        await ok(await c.post(SAS, json=sa("robot")), 201)
        r = await c.post(f"{SAS}/robot/token", json=token_request(expirationSeconds=7200))
    assert r.status_code == 201 and r.json()["spec"]["expirationSeconds"] == 3600
    assert "requested expiration of 7200 seconds shortened to 3600 seconds" in r.headers["Warning"]


# ---- TokenReview --------------------------------------------------------------------------------

async def test_a_token_review_answers_as_kube_apiserver(srv):
    token = await new_token(srv)
    status = await review(srv, token)
    assert status["authenticated"] is True and status["audiences"] == [ISSUER]
    assert status["user"]["username"] == "system:serviceaccount:default:robot"
    # The admin's static token is audience-agnostic: good for the server's audiences, not for others.
    assert (await review(srv, srv.token))["user"]["username"] == "admin"
    assert (await review(srv, srv.token, ["vault"]))["error"] == "invalid bearer token"
    async with srv.client() as c:
        empty = await ok(await c.post(REVIEWS, json={"apiVersion": AUTHN, "kind": "TokenReview", "spec": {}}), 400)
        assert empty["message"] == "token is required for TokenReview in authentication"
        assert (await c.get(REVIEWS)).status_code == 405


async def test_only_callers_rbac_allows_may_review_tokens(srv):
    token = await new_token(srv)
    body = {"apiVersion": AUTHN, "kind": "TokenReview", "spec": {"token": token}}
    async with srv.client(token=token) as c:
        denied = await ok(await c.post(REVIEWS, json=body), 403)
    assert 'cannot create resource "tokenreviews" in API group "authentication.k8s.io"' in denied["message"]
    async with srv.client() as c:  # the bootstrap role kube gives token reviewers
        await ok(await c.post("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", json={
            "metadata": {"name": "robot-reviews"}, "subjects": [
                {"kind": "ServiceAccount", "name": "robot", "namespace": "default"}],
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                        "name": "system:auth-delegator"}}), 201)
    async with srv.client(token=token) as c:
        assert (await ok(await c.post(REVIEWS, json=body), 201))["status"]["authenticated"] is True
    async with srv.client(token=None) as c:
        assert (await c.post(REVIEWS, json=body)).status_code == 403


async def test_deleting_a_namespace_removes_its_service_accounts(nursery, tmp_path, autojump_clock):
    srv = await start_in_process(nursery, tmp_path, api_domain="k8s.io", controllers=True)
    async with srv.client() as c:
        await ok(await c.post("/api/v1/namespaces", json={"metadata": {"name": "team"}}), 201)
        await ok(await c.post("/api/v1/namespaces/team/serviceaccounts", json=sa("robot")), 201)
    token = await new_token(srv, "robot", "team", create=False)
    async with srv.client() as c:
        await ok(await c.delete("/api/v1/namespaces/team"))
        with trio.fail_after(60):
            while (await c.get("/api/v1/namespaces/team")).status_code != 404:
                await trio.sleep(0.1)
        assert (await c.get("/api/v1/namespaces/team/serviceaccounts/robot")).status_code == 404
    assert (await whoami(srv, token))[0] == 401
