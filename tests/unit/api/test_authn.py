"""Authentication and impersonation, as kube-apiserver does them."""

from __future__ import annotations

import datetime as dt
import json
import logging
import ssl
from functools import partial
from pathlib import Path

import httpx
import pytest
import trio
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from hypercorn.config import Config
from hypercorn.trio import serve

from api.authn import (
    ANONYMOUS_USER, Authenticator, TokenFile, capture_peer_certificates, impersonate,
    peer_certificate_der,
)
from api.certs import ensure_pki, issue_client_cert
from runtime.machinery.errors import BadRequest, Forbidden, Unauthorized
from runtime.server.rbac import Decision, UserInfo

BOB = UserInfo("bob", groups=("system:authenticated",))


# --- helpers ---------------------------------------------------------------------------------

def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def _ca(cn: str = "test-ca") -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(_now() - dt.timedelta(days=1))
            .not_valid_after(_now() + dt.timedelta(days=10))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .sign(key, hashes.SHA256()))
    return cert, key


def _client_cert(ca: tuple[x509.Certificate, ec.EllipticCurvePrivateKey], cn: str | None,
                 orgs: tuple[str, ...] = (), *, expired: bool = False,
                 usage: x509.ObjectIdentifier = ExtendedKeyUsageOID.CLIENT_AUTH) -> bytes:
    ca_cert, ca_key = ca
    attrs = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in orgs]
    if cn is not None:
        attrs.append(x509.NameAttribute(NameOID.COMMON_NAME, cn))
    end = _now() - dt.timedelta(hours=1) if expired else _now() + dt.timedelta(days=1)
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (x509.CertificateBuilder().subject_name(x509.Name(attrs)).issuer_name(ca_cert.subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(_now() - dt.timedelta(days=1)).not_valid_after(end)
            .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
            .sign(ca_key, hashes.SHA256()))
    return cert.public_bytes(serialization.Encoding.DER)


def _pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


class _Recorder:
    """A fake authorizer: allows all but `deny`, records what was asked."""

    def __init__(self, deny: tuple[str, str] | None = None) -> None:
        self.deny = deny
        self.asked: list[tuple[str, str, str, str, str, str]] = []

    def __call__(self, attrs) -> bool:
        self.asked.append((attrs.verb, attrs.api_group, attrs.resource, attrs.subresource,
                           attrs.namespace, attrs.name))
        return (attrs.resource, attrs.name) != self.deny


# --- token file ------------------------------------------------------------------------------

def test_token_file_reads_user_uid_and_quoted_groups(tmp_path: Path) -> None:
    path = tmp_path / "tokens.csv"
    path.write_text('t1,alice,uid-1,"devs,ops"\nt2,bob,uid-2\n')
    tokens = TokenFile.load(path)
    assert tokens.lookup("t1") == UserInfo("alice", uid="uid-1", groups=("devs", "ops"))
    assert tokens.lookup("t2") == UserInfo("bob", uid="uid-2")
    assert tokens.lookup("t3") is None


def test_token_file_record_with_fewer_than_three_columns_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "tokens.csv"
    path.write_text("t1,alice,uid-1\nt2,bob\n")
    with pytest.raises(ValueError) as err:
        TokenFile.load(path)
    assert str(err.value) == (f"token file '{path}' must have at least 3 columns "
                              "(token, user name, user uid), found 2")


def test_token_file_comment_lines_are_records_not_comments(tmp_path: Path) -> None:
    path = tmp_path / "tokens.csv"
    path.write_text("# tokens\nt1,alice,uid-1\n")
    with pytest.raises(ValueError, match="found 1"):
        TokenFile.load(path)


def test_token_file_bad_quoting_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "tokens.csv"
    path.write_text('t1,alice,uid-1,"devs"x\n')
    with pytest.raises(ValueError, match="token file"):
        TokenFile.load(path)


def test_token_file_skips_blank_lines_and_empty_tokens(tmp_path: Path) -> None:
    path = tmp_path / "tokens.csv"
    path.write_text("\nt1,alice,uid-1\n\n,nobody,uid-0\n")
    assert len(TokenFile.load(path)) == 1


def test_token_file_duplicate_token_warns_and_last_wins(tmp_path: Path, caplog) -> None:
    path = tmp_path / "tokens.csv"
    path.write_text("t1,alice,uid-1\nt1,bob,uid-2\n")
    with caplog.at_level(logging.WARNING):
        tokens = TokenFile.load(path)
    assert tokens.lookup("t1") == UserInfo("bob", uid="uid-2")
    assert "duplicate token" in caplog.text and "record number '2'" in caplog.text


def test_tokens_added_in_code_authenticate() -> None:
    tokens = TokenFile({"a": UserInfo("alice")})
    tokens.add("admin", UserInfo("admin", groups=("system:masters",)))
    assert tokens.lookup("admin") == UserInfo("admin", groups=("system:masters",))
    with pytest.raises(ValueError):
        tokens.add("", UserInfo("x"))


# --- authenticator: tokens and anonymous -----------------------------------------------------

def test_known_bearer_token_is_its_user_plus_system_authenticated() -> None:
    authn = Authenticator(TokenFile({"t1": UserInfo("alice", uid="u1", groups=("devs",))}))
    assert authn.authenticate(_bearer("t1"), None) == \
        UserInfo("alice", uid="u1", groups=("devs", "system:authenticated"))


def test_bearer_scheme_is_case_insensitive_and_header_name_too() -> None:
    authn = Authenticator(TokenFile({"t1": UserInfo("alice")}))
    assert authn.authenticate({"authorization": "bearer t1"}).name == "alice"
    assert authn.authenticate([(b"authorization", b"Bearer t1")]).name == "alice"


def test_unknown_bearer_token_is_401_even_with_anonymous_on() -> None:
    authn = Authenticator(TokenFile({"t1": UserInfo("alice")}), anonymous=True)
    with pytest.raises(Unauthorized) as err:
        authn.authenticate(_bearer("nope"), None)
    assert err.value.status() == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "Unauthorized", "reason": "Unauthorized", "code": 401}


def test_no_credentials_is_anonymous_when_allowed() -> None:
    user = Authenticator(TokenFile()).authenticate({}, None)
    assert user == ANONYMOUS_USER == UserInfo("system:anonymous", groups=("system:unauthenticated",))


def test_no_credentials_is_401_when_anonymous_is_off() -> None:
    with pytest.raises(Unauthorized, match="^Unauthorized$"):
        Authenticator(TokenFile(), anonymous=False).authenticate({}, None)


def test_non_bearer_authorization_counts_as_no_credentials() -> None:
    authn = Authenticator(TokenFile())
    assert authn.authenticate({"Authorization": "Basic YTpi"}) == ANONYMOUS_USER
    assert authn.authenticate({"Authorization": "Bearer "}) == ANONYMOUS_USER


def test_system_authenticated_is_added_once() -> None:
    authn = Authenticator(TokenFile({"t1": UserInfo("alice", groups=("system:authenticated", "devs"))}))
    assert authn.authenticate(_bearer("t1")).groups == ("system:authenticated", "devs")


def test_service_account_token_user_gets_service_account_groups() -> None:
    tokens = TokenFile({"sa": UserInfo("system:serviceaccount:ns1:builder", uid="u9", groups=("ci",))})
    assert Authenticator(tokens).authenticate(_bearer("sa")) == UserInfo(
        "system:serviceaccount:ns1:builder", uid="u9",
        groups=("system:serviceaccounts", "system:serviceaccounts:ns1", "ci", "system:authenticated"))


# --- authenticator: client certificates ------------------------------------------------------

def test_client_certificate_cn_is_user_and_organizations_are_groups() -> None:
    ca = _ca()
    authn = Authenticator(TokenFile(), client_ca_pem=_pem(ca[0]), anonymous=False)
    user = authn.authenticate({}, _client_cert(ca, "carol", ("devs", "ops")))
    assert user == UserInfo("carol", groups=("devs", "ops", "system:authenticated"))


def test_client_certificate_from_another_ca_is_401() -> None:
    authn = Authenticator(TokenFile(), client_ca_pem=_pem(_ca()[0]))
    with pytest.raises(Unauthorized) as err:
        authn.authenticate({}, _client_cert(_ca(), "mallory"))
    assert "signed by unknown authority" in str(err.value.__cause__)


def test_expired_client_certificate_is_401() -> None:
    ca = _ca()
    authn = Authenticator(TokenFile(), client_ca_pem=_pem(ca[0]))
    with pytest.raises(Unauthorized):
        authn.authenticate({}, _client_cert(ca, "carol", expired=True))


def test_certificate_not_for_client_auth_is_401() -> None:
    ca = _ca()
    authn = Authenticator(TokenFile(), client_ca_pem=_pem(ca[0]))
    with pytest.raises(Unauthorized):
        authn.authenticate({}, _client_cert(ca, "carol", usage=ExtendedKeyUsageOID.SERVER_AUTH))


def test_rejected_certificate_falls_through_to_a_valid_token() -> None:
    authn = Authenticator(TokenFile({"t1": UserInfo("alice")}), client_ca_pem=_pem(_ca()[0]))
    assert authn.authenticate(_bearer("t1"), _client_cert(_ca(), "mallory")).name == "alice"


def test_valid_certificate_is_tried_before_the_token() -> None:
    ca = _ca()
    authn = Authenticator(TokenFile({"t1": UserInfo("alice")}), client_ca_pem=_pem(ca[0]))
    assert authn.authenticate(_bearer("t1"), _client_cert(ca, "carol")).name == "carol"


def test_certificate_without_common_name_authenticates_no_one() -> None:
    ca = _ca()
    authn = Authenticator(TokenFile(), client_ca_pem=_pem(ca[0]))
    assert authn.authenticate({}, _client_cert(ca, None, ("devs",))) == ANONYMOUS_USER


def test_certificate_is_ignored_without_a_client_ca() -> None:
    assert Authenticator(TokenFile()).authenticate({}, _client_cert(_ca(), "carol")) == ANONYMOUS_USER


# --- impersonation ---------------------------------------------------------------------------

def test_no_impersonation_headers_leave_the_user_as_is() -> None:
    authorize = _Recorder()
    assert impersonate(BOB, {"Accept": "application/json"}, authorize) is BOB
    assert authorize.asked == []


def test_impersonating_a_user_checks_each_attribute_and_adds_system_authenticated() -> None:
    authorize = _Recorder()
    headers = [("Impersonate-User", "alice"), ("Impersonate-Group", "devs"),
               ("Impersonate-Group", "ops"), ("Impersonate-Uid", "u-1"),
               ("Impersonate-Extra-Scopes", "view"), ("Impersonate-Extra-Scopes", "edit")]
    user = impersonate(BOB, headers, authorize, domain="k8s.io")
    assert user == UserInfo("alice", uid="u-1", groups=("devs", "ops", "system:authenticated"),
                            extra={"scopes": ("view", "edit")})
    assert authorize.asked == [
        ("impersonate", "", "users", "", "", "alice"),
        ("impersonate", "", "groups", "", "", "devs"),
        ("impersonate", "", "groups", "", "", "ops"),
        ("impersonate", "authentication.k8s.io", "userextras", "scopes", "", "view"),
        ("impersonate", "authentication.k8s.io", "userextras", "scopes", "", "edit"),
        ("impersonate", "authentication.k8s.io", "uids", "", "", "u-1"),
    ]


def test_impersonate_group_accepts_a_list_of_values() -> None:
    user = impersonate(BOB, {"Impersonate-User": "alice", "Impersonate-Group": ["a", "b"]}, _Recorder())
    assert user.groups == ("a", "b", "system:authenticated")


@pytest.mark.parametrize(("deny", "message"), [
    (("users", "alice"),
     'users "alice" is forbidden: User "bob" cannot impersonate resource "users" in API group "" '
     'at the cluster scope'),
    (("groups", "devs"),
     'groups "devs" is forbidden: User "bob" cannot impersonate resource "groups" in API group "" '
     'at the cluster scope'),
    (("uids", "u-1"),
     'uids.authentication.k8s.io "u-1" is forbidden: User "bob" cannot impersonate resource "uids" '
     'in API group "authentication.k8s.io" at the cluster scope'),
    (("userextras", "view"),
     'userextras.authentication.k8s.io "view" is forbidden: User "bob" cannot impersonate resource '
     '"userextras/scopes" in API group "authentication.k8s.io" at the cluster scope'),
])
def test_impersonation_refused_for_any_attribute_is_forbidden(deny, message) -> None:
    headers = {"Impersonate-User": "alice", "Impersonate-Group": "devs", "Impersonate-Uid": "u-1",
               "Impersonate-Extra-Scopes": "view"}
    with pytest.raises(Forbidden) as err:
        impersonate(BOB, headers, _Recorder(deny=deny), domain="k8s.io")
    assert err.value.message == message
    assert (err.value.name, err.value.kind) == (deny[1], deny[0])


def test_impersonating_a_service_account_checks_serviceaccounts_in_its_namespace() -> None:
    with pytest.raises(Forbidden) as err:
        impersonate(BOB, {"Impersonate-User": "system:serviceaccount:ns1:sa"},
                    _Recorder(deny=("serviceaccounts", "sa")))
    assert err.value.message == ('serviceaccounts "sa" is forbidden: User "bob" cannot impersonate '
                                 'resource "serviceaccounts" in API group "" in the namespace "ns1"')


def test_impersonated_service_account_gets_its_groups_unless_groups_are_given() -> None:
    sa = {"Impersonate-User": "system:serviceaccount:ns1:sa"}
    assert impersonate(BOB, sa, _Recorder()).groups == (
        "system:serviceaccounts", "system:serviceaccounts:ns1", "system:authenticated")
    assert impersonate(BOB, {**sa, "Impersonate-Group": "g"}, _Recorder()).groups == (
        "g", "system:authenticated")


def test_impersonated_anonymous_gets_system_unauthenticated_only() -> None:
    user = impersonate(BOB, {"Impersonate-User": "system:anonymous"}, _Recorder())
    assert user.groups == ("system:unauthenticated",)


def test_listing_system_unauthenticated_keeps_system_authenticated_out() -> None:
    user = impersonate(BOB, {"Impersonate-User": "alice", "Impersonate-Group": "system:unauthenticated"},
                       _Recorder())
    assert user.groups == ("system:unauthenticated",)


def test_impersonating_groups_without_a_user_is_400() -> None:
    with pytest.raises(BadRequest) as err:
        impersonate(BOB, [("Impersonate-Group", "devs"), ("Impersonate-Group", "ops")], _Recorder())
    assert err.value.message == "requested [{Group  devs    } {Group  ops    }] without impersonating a user"
    assert err.value.code == 400


def test_impersonating_extra_or_uid_without_a_user_is_400() -> None:
    with pytest.raises(BadRequest) as err:
        impersonate(BOB, {"Impersonate-Extra-Scopes": "view", "Impersonate-Uid": "u"}, _Recorder(),
                    domain="k8s.io")
    assert err.value.message == (
        "requested [{UserExtra  view  authentication.k8s.io/v1  scopes} "
        "{UID  u  authentication.k8s.io/v1  }] without impersonating a user")


def test_extra_header_key_is_lowercased_then_percent_decoded() -> None:
    headers = {"Impersonate-User": "alice",
               "Impersonate-Extra-Example.COM%2Fscopes": "a",
               "Impersonate-Extra-Bad%zzKey": "b"}
    user = impersonate(BOB, headers, _Recorder())
    assert dict(user.extra) == {"example.com/scopes": ("a",), "bad%zzkey": ("b",)}


def test_forbidden_impersonation_carries_the_authorizer_reason() -> None:
    with pytest.raises(Forbidden) as err:
        impersonate(BOB, {"Impersonate-User": "alice"}, lambda attrs: Decision(False, "RBAC: oops"))
    assert err.value.message.endswith("at the cluster scope: RBAC: oops")


# --- peer certificate ------------------------------------------------------------------------

def test_peer_certificate_from_the_asgi_tls_extension_is_der() -> None:
    der = _client_cert(_ca(), "carol")
    pem = x509.load_der_x509_certificate(der).public_bytes(serialization.Encoding.PEM).decode()
    scope = {"extensions": {"tls": {"client_cert_chain": [pem], "client_cert_error": None}}}
    assert peer_certificate_der(scope) == der


def test_no_peer_certificate_without_tls() -> None:
    assert peer_certificate_der({"type": "http", "extensions": {}}) is None
    assert peer_certificate_der({"extensions": {"tls": {"client_cert_chain": []}}}) is None


def test_tls_extension_reporting_a_failed_certificate_is_401() -> None:
    with pytest.raises(Unauthorized):
        peer_certificate_der({"extensions": {"tls": {"client_cert_chain": [],
                                                     "client_cert_error": "expired"}}})


class _ServerConfig(Config):
    def create_ssl_context(self) -> ssl.SSLContext | None:
        context = super().create_ssl_context()
        return capture_peer_certificates(context) if context is not None else None


async def test_hypercorn_passes_the_client_certificate_to_the_app(tmp_path: Path) -> None:
    pki = ensure_pki(tmp_path)
    cert_pem, key_pem = issue_client_cert(pki, "carol", ["devs"])
    (tmp_path / "client.crt").write_bytes(cert_pem)
    (tmp_path / "client.key").write_bytes(key_pem)
    authn = Authenticator(TokenFile({"t1": UserInfo("alice")}), client_ca_pem=pki.ca_cert_pem)

    async def app(scope, receive, send):
        if scope["type"] == "lifespan":
            for reply in ("lifespan.startup.complete", "lifespan.shutdown.complete"):
                await receive()
                await send({"type": reply})
            return
        user = authn.authenticate(scope["headers"], peer_certificate_der(scope))
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": json.dumps([user.name, user.groups]).encode()})

    config = _ServerConfig()
    config.bind = ["127.0.0.1:0"]
    config.certfile, config.keyfile = str(pki.serving_cert_path), str(pki.serving_key_path)
    config.ca_certs, config.verify_mode = str(pki.ca_cert_path), ssl.CERT_OPTIONAL
    config.accesslog = config.errorlog = None
    async with trio.open_nursery() as nursery:
        binds = await nursery.start(partial(serve, app, config))
        url = binds[0]
        with_cert = ssl.create_default_context(cafile=str(pki.ca_cert_path))
        with_cert.load_cert_chain(tmp_path / "client.crt", tmp_path / "client.key")
        async with httpx.AsyncClient(verify=with_cert) as client:
            assert (await client.get(url)).json() == ["carol", ["devs", "system:authenticated"]]
        without_cert = ssl.create_default_context(cafile=str(pki.ca_cert_path))
        async with httpx.AsyncClient(verify=without_cert) as client:
            assert (await client.get(url)).json() == ["system:anonymous", ["system:unauthenticated"]]
            assert (await client.get(url, headers=_bearer("t1"))).json() == \
                ["alice", ["system:authenticated"]]
        nursery.cancel_scope.cancel()
