"""Authentication: token file, client certificates, anonymous, impersonation.

Client certificates go through real HTTPS (a TLS handshake); the rest through
the HTTP app in process.

Who the server thinks the caller is, is read back with SelfSubjectReview
(`authentication.<domain>/v1`), which every caller may create.
"""

from __future__ import annotations

import ssl

import httpx
import pytest

from api.certs import ensure_pki, issue_client_cert
from tests.support.rbac import grant, rule, token_file, user
from tests.support.server import Server, start_in_process, start_server


@pytest.fixture
async def srv(nursery, tmp_path) -> Server:
    return await start_in_process(nursery, tmp_path, token_auth_file=token_file(tmp_path))


async def whoami(client: httpx.AsyncClient, srv: Server, **kw) -> httpx.Response:
    return await client.post(f"/apis/authentication.{srv.domain}/v1/selfsubjectreviews", json={}, **kw)


async def user_info(client: httpx.AsyncClient, srv: Server, **kw) -> dict:
    r = await whoami(client, srv, **kw)
    assert r.status_code == 201, r.text
    return r.json()["status"]["userInfo"]


# ---- token file ----------------------------------------------------------------------------------

async def test_token_file_user_has_its_name_uid_groups_and_system_authenticated(srv):
    async with srv.client(token="alice-token") as alice:
        assert await user_info(alice, srv) == {"username": "alice", "uid": "alice-uid",
                                               "groups": ["devs", "qa", "system:authenticated"]}


async def test_token_file_user_without_groups_is_only_authenticated(srv):
    async with srv.client(token="bob-token") as bob:
        assert (await user_info(bob, srv))["groups"] == ["system:authenticated"]


async def test_service_account_user_is_in_the_service_account_groups(srv):
    async with srv.client(token="robot-token") as robot:
        assert (await user_info(robot, srv))["groups"] == [
            "system:serviceaccounts", "system:serviceaccounts:team", "system:authenticated"]


async def test_unknown_token_is_401_unauthorized(srv):
    async with srv.client(token="not-a-token") as stranger:
        r = await stranger.get("/healthz")
    assert r.status_code == 401
    status = r.json()
    assert (status["kind"], status["reason"], status["message"], status["code"]) == \
        ("Status", "Unauthorized", "Unauthorized", 401)


async def test_admin_kubeconfig_token_is_in_system_masters(srv):
    async with srv.client() as admin:
        assert "system:masters" in (await user_info(admin, srv))["groups"]


# ---- anonymous -----------------------------------------------------------------------------------

async def test_no_credentials_is_system_anonymous_in_system_unauthenticated(srv):
    # Kubernetes' bootstrap policy lets only authenticated users ask who they are: grant it here.
    async with srv.client() as admin:
        binding = {"metadata": {"name": "anonymous-whoami"},
                   "roleRef": {"apiGroup": f"rbac.authorization.{srv.domain}", "kind": "ClusterRole",
                               "name": "system:basic-user"},
                   "subjects": [{"kind": "Group", "name": "system:unauthenticated"}]}
        assert (await admin.post(f"{srv.rbac}/clusterrolebindings", json=binding)).status_code == 201
    async with srv.client(token=None) as anonymous:
        assert await user_info(anonymous, srv) == {"username": "system:anonymous",
                                                   "groups": ["system:unauthenticated"]}


async def test_anonymous_may_not_ask_who_it_is_under_kubernetes_bootstrap_policy(srv):
    async with srv.client(token=None) as anonymous:
        r = await whoami(anonymous, srv)
    assert r.status_code == 403 and 'User "system:anonymous" cannot create resource "selfsubjectreviews"' in \
        r.json()["message"]


async def test_anonymous_auth_off_makes_no_credentials_a_401(nursery, tmp_path):
    srv = await start_in_process(nursery, tmp_path, token_auth_file=token_file(tmp_path), anonymous_auth=False)
    async with srv.client(token=None) as anonymous, srv.client(token="bob-token") as bob:
        assert (await anonymous.get("/healthz")).status_code == 401
        assert (await bob.get("/healthz")).status_code == 200


# ---- client certificates (real HTTPS: the certificate is the TLS handshake's) ------------------------

def _cert_client(srv: Server, tmp_path, cert_pem: bytes, key_pem: bytes) -> httpx.AsyncClient:
    (tmp_path / "client.crt").write_bytes(cert_pem)
    (tmp_path / "client.key").write_bytes(key_pem)
    ctx = ssl.create_default_context(cadata=srv.ca_pem.decode())
    ctx.load_cert_chain(tmp_path / "client.crt", tmp_path / "client.key")
    return httpx.AsyncClient(base_url=srv.url, verify=ctx, timeout=30)


async def test_client_certificate_common_name_is_the_user_and_organizations_the_groups(nursery, tmp_path):
    pki = ensure_pki(tmp_path / "data")
    srv = await start_server(nursery, tmp_path, client_ca_file=str(pki.ca_cert_path))
    cert, key = issue_client_cert(pki, "carol", ["ops", "dev"])
    async with _cert_client(srv, tmp_path, cert, key) as carol:
        assert await user_info(carol, srv) == {"username": "carol", "groups": ["ops", "dev", "system:authenticated"]}


async def test_client_certificate_of_another_ca_is_401(nursery, tmp_path):
    pki = ensure_pki(tmp_path / "data")
    other = ensure_pki(tmp_path / "elsewhere")
    srv = await start_server(nursery, tmp_path, client_ca_file=str(pki.ca_cert_path))
    cert, key = issue_client_cert(other, "mallory", ["system:masters"])
    try:
        async with _cert_client(srv, tmp_path, cert, key) as mallory:
            r = await whoami(mallory, srv)
    except (httpx.ConnectError, httpx.ReadError, httpx.RemoteProtocolError):
        return  # refused during the handshake: not authenticated either
    assert r.status_code == 401


# ---- impersonation -------------------------------------------------------------------------------

async def test_impersonate_user_and_groups_replaces_the_identity(srv):
    async with srv.client() as admin:
        info = await user_info(admin, srv, headers={"Impersonate-User": "alice", "Impersonate-Group": "devs"})
    assert info == {"username": "alice", "groups": ["devs", "system:authenticated"]}


async def test_repeated_impersonate_group_headers_are_each_a_group(srv):
    headers = [("Impersonate-User", "alice"), ("Impersonate-Group", "a"), ("Impersonate-Group", "b")]
    async with srv.client() as admin:
        r = await admin.post(f"/apis/authentication.{srv.domain}/v1/selfsubjectreviews", json={}, headers=headers)
    assert r.json()["status"]["userInfo"]["groups"] == ["a", "b", "system:authenticated"]


async def test_the_impersonated_user_is_authorized_as_itself(srv):
    async with srv.client() as admin:
        r = await admin.get(f"{srv.rbac}/clusterroles", headers={"Impersonate-User": "alice"})
    assert r.status_code == 403 and 'User "alice" cannot list resource "clusterroles"' in r.json()["message"]


async def test_impersonation_needs_the_impersonate_verb_on_users(srv):
    async with srv.client(token="bob-token") as bob:
        r = await whoami(bob, srv, headers={"Impersonate-User": "alice"})
    assert r.status_code == 403
    assert r.json()["message"] == ('users "alice" is forbidden: User "bob" cannot impersonate resource "users" '
                                   'in API group "" at the cluster scope')


async def test_impersonate_grant_with_resource_names_covers_those_users_only(srv):
    await grant(srv, user("bob"), rule(["impersonate"], ["users"], names=["alice"]))
    async with srv.client(token="bob-token") as bob:
        assert (await user_info(bob, srv, headers={"Impersonate-User": "alice"}))["username"] == "alice"
        assert (await whoami(bob, srv, headers={"Impersonate-User": "carol"})).status_code == 403


async def test_each_impersonated_group_is_authorized(srv):
    await grant(srv, user("bob"), rule(["impersonate"], ["users"]))
    async with srv.client(token="bob-token") as bob:
        r = await whoami(bob, srv, headers={"Impersonate-User": "alice", "Impersonate-Group": "system:masters"})
    assert r.status_code == 403 and 'cannot impersonate resource "groups"' in r.json()["message"]


async def test_impersonating_a_service_account_needs_impersonate_on_serviceaccounts(srv):
    await grant(srv, user("bob"), rule(["impersonate"], ["serviceaccounts"]))
    async with srv.client(token="bob-token") as bob:
        info = await user_info(bob, srv, headers={"Impersonate-User": "system:serviceaccount:team:robot"})
    assert info == {"username": "system:serviceaccount:team:robot",
                    "groups": ["system:serviceaccounts", "system:serviceaccounts:team", "system:authenticated"]}


async def test_impersonated_extra_and_uid_are_authorized_in_the_authentication_group(srv):
    g = f"authentication.{srv.domain}"
    await grant(srv, user("bob"), rule(["impersonate"], ["users"]), rule(["impersonate"], ["uids"], [g]),
                rule(["impersonate"], ["userextras/scopes"], [g]))
    headers = {"Impersonate-User": "alice", "Impersonate-Uid": "u-1", "Impersonate-Extra-Scopes": "read"}
    async with srv.client(token="bob-token") as bob:
        info = await user_info(bob, srv, headers=headers)
        denied = await whoami(bob, srv, headers={"Impersonate-User": "alice", "Impersonate-Extra-Other": "x"})
    assert (info["uid"], info["extra"]) == ("u-1", {"scopes": ["read"]})
    assert denied.status_code == 403 and 'cannot impersonate resource "userextras/other"' in denied.json()["message"]


async def test_impersonating_groups_without_a_user_is_400(srv):
    async with srv.client() as admin:
        r = await whoami(admin, srv, headers={"Impersonate-Group": "devs"})
    assert r.status_code == 400 and "without impersonating a user" in r.json()["message"]


async def test_anonymous_may_not_impersonate(srv):
    async with srv.client(token=None) as anonymous:
        r = await whoami(anonymous, srv, headers={"Impersonate-User": "admin"})
    assert r.status_code == 403 and r.json()["message"].startswith(
        'users "admin" is forbidden: User "system:anonymous" cannot impersonate')
