"""Security rules, one test each: every route authenticated and authorized as in Kubernetes, tokens compared in
constant time, secret files written 0600, and no secret in any log line (the audit log included).

Every route: each path and method of the server's own OpenAPI v3 documents
(every group-version; `{namespace}`/`{name}` filled in), each list path
as a watch, and the non-resource paths (discovery, OpenAPI, `/metrics`,
health, version, an unknown path). A bad token is 401 on all of them; no
credentials is 403 on all of them but what Kubernetes' bootstrap policy
lets anyone read (`system:public-info-viewer`: health and version; the
self reviews a user may always ask); an authenticated user without
bindings reaches discovery and OpenAPI (`system:discovery`) and nothing else.
The kinds every caller may create (`anyone_may_create`: the self reviews,
the RBAC insight kinds) answer within the caller's own permissions.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import stat
from types import SimpleNamespace

import pytest

from api import authn
from runtime.server.tokens import generate_key
from tests.support.rbac import ok
from tests.support.server import Server, start_in_process, start_server

BAD = "not-a-known-token"
PUBLIC_INFO = ("/healthz", "/livez", "/readyz", "/version")
DISCOVERY = ("/api", "/api/v1", "/apis", "/apis/rbac.authorization.k8s.io", "/apis/rbac.authorization.k8s.io/v1",
             "/openapi/v2", "/openapi/v3", "/openapi/v3/api/v1")
OTHER_NON_RESOURCE = ("/metrics", "/healthz/ping", "/no/such/path")


@pytest.fixture
async def srv(nursery, tmp_path) -> Server:
    return await start_in_process(nursery, tmp_path, api_domain="k8s.io")


async def resource_routes(srv: Server) -> list[tuple[str, str]]:
    """(method, path) of every operation the server's OpenAPI v3 documents list, plus each list as a watch."""
    routes: list[tuple[str, str]] = []
    async with srv.client() as c:
        index = await ok(await c.get("/openapi/v3"))
        for entry in index["paths"].values():
            doc = await ok(await c.get(entry["serverRelativeURL"]))
            for path, item in doc["paths"].items():
                concrete = path.replace("{namespace}", "default").replace("{name}", "x")
                for method, op in item.items():
                    if method == "parameters":
                        continue
                    routes.append((method.upper(), concrete))
                    if op.get("x-kubernetes-action") == "list":
                        routes.append(("GET", concrete + "?watch=true"))
    assert len(routes) > 100
    return routes


def open_to_all(srv: Server) -> set[str]:
    """The plurals every caller may POST (their strategy says `anyone_may_create`: a user can always check
    itself, as the spec says; what they answer is the caller's own permissions)."""
    return {t.plural for t in srv.registry.scheme.types if t.strategy.anyone_may_create}


async def answer(srv: Server, token: str | None, method: str, path: str) -> int:
    async with srv.client(token=token) as c:
        body = b"{}" if method in ("POST", "PUT", "PATCH") else None
        headers = {"Content-Type": "application/merge-patch+json" if method == "PATCH" else "application/json"}
        r = await c.request(method, path, content=body, headers=headers, params={"timeoutSeconds": "1"})
        return r.status_code


async def test_every_route_refuses_a_bad_token_with_401(srv):
    routes = await resource_routes(srv) + [("GET", p) for p in (*PUBLIC_INFO, *DISCOVERY, *OTHER_NON_RESOURCE)]
    codes = {route: await answer(srv, BAD, *route) for route in routes}
    assert {route: code for route, code in codes.items() if code != 401} == {}


async def test_without_credentials_only_public_info_and_self_reviews_are_allowed(srv):
    for path in PUBLIC_INFO:
        assert await answer(srv, None, "GET", path) == 200, path
    refused = {}
    for route in await resource_routes(srv) + [("GET", p) for p in (*DISCOVERY, *OTHER_NON_RESOURCE)]:
        if route[0] == "POST" and route[1].rsplit("/", 1)[-1] in open_to_all(srv):
            continue
        code = await answer(srv, None, *route)
        if code != 403:
            refused[route] = code
    assert refused == {}


async def test_an_authenticated_user_without_bindings_reaches_discovery_and_public_info_only(nursery, tmp_path):
    tokens = tmp_path / "tokens.csv"
    tokens.write_text("nobody-token,nobody,nobody-uid\n")
    srv = await start_in_process(nursery, tmp_path, api_domain="k8s.io", token_auth_file=str(tokens))
    for path in (*PUBLIC_INFO, *DISCOVERY):
        assert await answer(srv, "nobody-token", "GET", path) == 200, path
    assert await answer(srv, "nobody-token", "GET", "/metrics") == 403  # system:monitoring's, not everyone's
    denied = {route: code for route in await resource_routes(srv)
              if not (route[0] == "POST" and route[1].rsplit("/", 1)[-1] in {*open_to_all(srv), "selfsubjectreviews"})
              if (code := await answer(srv, "nobody-token", *route)) != 403}
    assert denied == {}


async def test_health_and_version_are_public_through_the_bootstrap_binding_not_a_bypass(srv):
    async with srv.client() as admin:
        binding = await ok(await admin.get(
            "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/system:public-info-viewer"))
        assert binding["roleRef"]["name"] == "system:public-info-viewer"
        assert {s["name"] for s in binding["subjects"]} == {"system:authenticated", "system:unauthenticated"}
        await ok(await admin.delete(
            "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/system:public-info-viewer"))
    assert await srv.registry.cache.wait_fresh()
    for path in PUBLIC_INFO:
        assert await answer(srv, None, "GET", path) == 403, path


async def test_static_tokens_are_looked_up_by_digest_and_compared_in_constant_time(monkeypatch):
    compared: list[tuple[bytes, bytes]] = []
    constant_time = hmac.compare_digest

    def recording(a: bytes, b: bytes) -> bool:
        compared.append((a, b))
        return constant_time(a, b)

    monkeypatch.setattr(authn.hmac, "compare_digest", recording)
    table = authn.TokenFile({"s3cret-token": authn.UserInfo("alice")})
    assert table.lookup("s3cret-token").name == "alice"
    assert compared == [(b"s3cret-token", b"s3cret-token")]
    assert table.lookup("s3cret-tokeN") is None and table.lookup("") is None
    # Nothing keyed by the token itself: a lookup's time does not depend on how much of a guess matches.
    # With a digest under which every token collides, a guess finds the stored token by the digest alone
    # and is refused by the constant-time comparison.
    monkeypatch.setattr(authn, "hashlib", SimpleNamespace(sha256=lambda data: hashlib.sha256(b"one digest")))
    compared.clear()
    table = authn.TokenFile({"s3cret-token": authn.UserInfo("alice")})
    assert table.lookup("another guess") is None
    assert compared == [(b"s3cret-token", b"another guess")]


@pytest.mark.stores("memory", "sqlite")  # on etcd the signing key lives in the store, not in sa.key
async def test_the_admin_kubeconfig_and_every_key_file_are_written_0600(nursery, tmp_path):
    srv = await start_server(nursery, tmp_path)
    data = srv.data_dir
    assert stat.S_IMODE(data.stat().st_mode) == 0o700  # the store (its continue key) and all else: owner only
    secrets = [data / "admin.kubeconfig", data / "admin.token", data / "sa.key", *sorted((data / "pki").glob("*.key"))]
    assert len(secrets) >= 5
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in secrets}
    assert modes == {name: 0o600 for name in modes}


@pytest.mark.stores("memory", "sqlite")  # on etcd the signing key lives in the store, not in sa.key
async def test_a_key_file_found_readable_by_others_is_narrowed_to_0600(nursery, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "sa.key").write_bytes(key := generate_key())
    (data / "sa.key").chmod(0o644)
    srv = await start_in_process(nursery, tmp_path)
    assert stat.S_IMODE((srv.data_dir / "sa.key").stat().st_mode) == 0o600
    assert (srv.data_dir / "sa.key").read_bytes() == key


async def test_no_secret_reaches_a_log_line(nursery, tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    tokens = tmp_path / "tokens.csv"
    tokens.write_text("static-secret-token-1234,carol,carol-uid\n")
    policy = tmp_path / "audit-policy.yaml"  # the most a log can hold: every request with its bodies
    policy.write_text("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: RequestResponse\n")
    audit = tmp_path / "audit.log"
    srv = await start_server(nursery, tmp_path, api_domain="k8s.io", token_auth_file=str(tokens),
                             audit_policy_file=str(policy), audit_log_path=str(audit))
    sas = "/api/v1/namespaces/default/serviceaccounts"
    reviews = "/apis/authentication.k8s.io/v1/tokenreviews"
    async with srv.client() as admin:
        await ok(await admin.post(sas, json={"metadata": {"name": "robot"}}), 201)
        jwt_token = (await ok(await admin.post(f"{sas}/robot/token", json={"spec": {}}), 201))["status"]["token"]
        for token in (jwt_token, "static-secret-token-1234", "wrong-secret-token-5678", jwt_token[:-4] + "AAAA"):
            await admin.post(reviews, json={"spec": {"token": token}})
    secrets = [srv.token, jwt_token, "static-secret-token-1234", "wrong-secret-token-5678", jwt_token.split(".")[2]]
    for token in secrets:  # each as a caller: allowed, forbidden, malformed, missing
        async with srv.client(token=token) as c:
            await c.get(sas)
            await c.post(sas, content=b"{broken")
            await c.get("/api/v1/namespaces/default/serviceaccounts/missing")
            await c.get("/version", headers={"Impersonate-User": "someone"})
    async with srv.client(token=None, headers={"Authorization": "Basic c2VjcmV0OnBhc3N3b3Jk"}) as c:
        await c.get(sas)
    async with srv.client() as admin:
        await ok(await admin.delete(f"{sas}/robot"))
    async with srv.client(token=jwt_token) as c:
        assert (await c.get(sas)).status_code == 401  # a refused token, logged as refused
    text = caplog.text + "\n".join(repr(r.args) for r in caplog.records) + audit.read_text()
    assert caplog.records and "tokenreviews" in audit.read_text()  # the traffic was logged and audited
    leaked = [s[:12] for s in (*secrets, "c2VjcmV0OnBhc3N3b3Jk") if s in text]
    assert leaked == []
