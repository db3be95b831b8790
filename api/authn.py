"""Authentication: who sent a request, from its credentials, then impersonation.

As kube-apiserver's authentication chain (`k8s.io/apiserver/pkg/authentication`):

- `TokenFile`: static bearer tokens, `--token-auth-file` CSV lines
  `token,user,uid[,"group1,group2"]` (`token/tokenfile/tokenfile.go`), plus
  tokens added in code (the admin token the server makes). Kept by their
  SHA-256 digest and compared with `hmac.compare_digest`: looking a token up
  takes no time that depends on how much of it matches a known one.
- Service account tokens: JWTs the server signed, checked by the
  `runtime.server.tokenauth.SignedTokenAuthenticator` the assembly gives (signature,
  issuer, audiences, expiry, the service account still there with the same uid).
- `Authenticator.authenticate(headers, client_cert_der) -> UserInfo`, in
  Kubernetes' order: client certificate (CN = user, each O = a group,
  `request/x509/x509.go`), then `Authorization: Bearer <token>`
  (`request/bearertoken/bearertoken.go`); when neither yields a user and
  nothing failed, the anonymous user (`request/anonymous`). A credential that
  was presented but is bad is a 401, anonymous or not (`union.NewFailOnError`).
  Every authenticated user gets `system:authenticated`
  (`group/authenticated_group_adder.go`).
- `Authenticator.authenticate_token(token, audiences)`: the bearer-token
  chain alone (static tokens, then signed ones), as TokenReview asks it.
  Static tokens are audience-agnostic: good for any request, and for a
  review only when its audiences include one of the server's.
- `impersonate(user, headers, authorize) -> UserInfo`: the `Impersonate-*`
  headers, each target authorized with verb `impersonate`
  (`endpoints/filters/impersonation.go`).
- `peer_certificate_der(scope)`: the client certificate of an ASGI request,
  from the ASGI `tls` extension or, under Hypercorn (which has none), from
  the connection's TLS object recorded by `capture_peer_certificates`.

Headers may be any mapping (`dict`, werkzeug `Headers`, values `str` or lists
of `str`) or ASGI's list of `(name, value)` byte pairs; names match without
regard to case. This module does no I/O apart from `TokenFile.load`.
"""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import hmac
import logging
import os
import re
import ssl
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Union
from urllib.parse import unquote

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.serialization import Encoding
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from runtime.machinery.errors import BadRequest, Forbidden, Unauthorized
from runtime.server.rbac.attributes import Attributes, resource_attributes
from runtime.server.rbac.authorizer import Decision
from runtime.server.rbac.describe import forbidden_status_message
from runtime.server.rbac.user import (
    ALL_AUTHENTICATED, ALL_UNAUTHENTICATED, ANONYMOUS, UserInfo, service_account_groups,
    split_service_account_username,
)
from runtime.machinery.scheme import DEFAULT_DOMAIN
from runtime.server.tokenauth import SignedTokenAuthenticator
from runtime.server.tokens import TokenAuthentication, refusal

__all__ = [
    "Headers", "TokenFile", "Authenticator", "ANONYMOUS_USER", "impersonate",
    "IMPERSONATE_USER", "IMPERSONATE_GROUP", "IMPERSONATE_UID", "IMPERSONATE_EXTRA_PREFIX",
    "peer_certificate_der", "capture_peer_certificates",
]

_log = logging.getLogger(__name__)

#: Headers as a mapping (values str or lists of str) or ASGI `(name, value)` pairs.
Headers = Union[Mapping[str, Any], Iterable[tuple[Union[str, bytes], Union[str, bytes]]]]

IMPERSONATE_USER = "Impersonate-User"
IMPERSONATE_GROUP = "Impersonate-Group"
IMPERSONATE_UID = "Impersonate-Uid"
IMPERSONATE_EXTRA_PREFIX = "Impersonate-Extra-"

#: What a request without credentials is, when anonymous requests are allowed.
ANONYMOUS_USER = UserInfo(name=ANONYMOUS, groups=(ALL_UNAUTHENTICATED,))

_UNAUTHORIZED = "Unauthorized"  # the whole Status.message of every 401, as Kubernetes


# --- headers ---------------------------------------------------------------------------------

def _text(value: str | bytes) -> str:
    return value.decode("latin-1") if isinstance(value, bytes) else value


def _header_items(headers: Headers) -> Iterator[tuple[str, str]]:
    """Yield every (name, value) pair; a list value yields one pair per item."""
    pairs = headers.items() if hasattr(headers, "items") else headers
    for name, value in pairs:
        if isinstance(value, (list, tuple)):
            for item in value:
                yield _text(name), _text(item)
        else:
            yield _text(name), _text(value)


def _header_values(headers: Headers, name: str) -> list[str]:
    getlist = getattr(headers, "getlist", None)
    if getlist is not None:  # a request's headers (werkzeug's, case-insensitive): no pass over all of them here
        return [_text(value) for value in getlist(name)]
    wanted = name.lower()
    return [value for key, value in _header_items(headers) if key.lower() == wanted]


def _header_first(headers: Headers, name: str) -> str:
    """The first value of `name`, "" when absent (Go's `Header.Get`)."""
    values = _header_values(headers, name)
    return values[0] if values else ""


# --- token file ------------------------------------------------------------------------------

class TokenFile:
    """Static bearer tokens: token -> `UserInfo` (groups as given, no implicit ones).

    `TokenFile({token: user})` builds one in code; `TokenFile.load(path)` reads
    Kubernetes' CSV format; `add` puts one more token in (the server's admin
    token).
    """

    def __init__(self, tokens: Mapping[str, UserInfo] | None = None) -> None:
        # digest -> (token, user): looked up by a hash the caller cannot steer, then compared in constant time.
        self._tokens: dict[bytes, tuple[str, UserInfo]] = {}
        for token, user in (tokens or {}).items():
            self.add(token, user)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> TokenFile:
        """Return the tokens of a CSV token file, parsed as kube-apiserver does.

        Each record is `token,user name,uid[,groups]`; `groups` is one field
        holding a comma-separated list, so it is quoted: `"g1,g2"`. Columns
        after the fourth are ignored; blank lines are skipped. There are no
        comments: a `#` line is a record like any other.
        Caveats (as Kubernetes): an empty token is skipped with a warning; a
        repeated token warns and the last record wins; an empty groups field
        gives the single group "".
        Raises ValueError for a record with fewer than 3 columns or bad CSV
        quoting, OSError when the file cannot be read.
        """
        tokens: dict[str, UserInfo] = {}
        record_num = 0
        with open(path, newline="", encoding="utf-8") as f:
            reader = csv.reader(f, strict=True)
            try:
                for record in reader:
                    if not record:  # Go's csv reader skips empty lines
                        continue
                    if len(record) < 3:
                        raise ValueError(
                            f"token file '{os.fspath(path)}' must have at least 3 columns "
                            f"(token, user name, user uid), found {len(record)}")
                    record_num += 1
                    token, name, uid = record[0], record[1], record[2]
                    if not token:
                        _log.warning("empty token has been found in token file '%s', "
                                     "record number '%d'", os.fspath(path), record_num)
                        continue
                    if token in tokens:
                        _log.warning("duplicate token has been found in token file '%s', "
                                     "record number '%d'", os.fspath(path), record_num)
                    groups = tuple(record[3].split(",")) if len(record) >= 4 else ()
                    tokens[token] = UserInfo(name=name, uid=uid, groups=groups)
            except csv.Error as err:
                raise ValueError(f"token file '{os.fspath(path)}': line {reader.line_num}: {err}") from err
        return cls(tokens)

    def add(self, token: str, user: UserInfo) -> None:
        """Make `token` authenticate as `user` (replacing any user it had). Raises ValueError for ""."""
        if not token:
            raise ValueError("a bearer token must not be empty")
        self._tokens[_digest(token)] = (token, user)

    def lookup(self, token: str) -> UserInfo | None:
        """Return the user of `token` as stored, or None for an unknown token (in constant time)."""
        found = self._tokens.get(_digest(token))
        if found is None or not hmac.compare_digest(found[0].encode(), token.encode()):
            return None
        return found[1]

    def __len__(self) -> int:
        return len(self._tokens)


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8", "surrogateescape")).digest()


# --- authenticator ---------------------------------------------------------------------------

class _CredentialError(Exception):
    """A presented credential was rejected (the text is for logs, never for the client)."""


def _bearer_token(headers: Headers) -> str | None:
    """The bearer token, or None when none is presented (as `bearertoken.go`).

    A non-Bearer scheme or `Bearer` without a token counts as not presented.
    """
    auth = _header_first(headers, "Authorization").strip()
    if not auth:
        return None
    parts = auth.split(" ", 2)
    if len(parts) < 2 or parts[0].lower() != "bearer" or not parts[1]:
        return None
    return parts[1]


def _with_authenticated(user: UserInfo) -> UserInfo:
    """Add `system:authenticated`, as `AuthenticatedGroupAdder`: not to the anonymous
    user, nor when it or `system:unauthenticated` is already there."""
    if user.name == ANONYMOUS or any(g in (ALL_AUTHENTICATED, ALL_UNAUTHENTICATED) for g in user.groups):
        return user
    return UserInfo(name=user.name, uid=user.uid, groups=(*user.groups, ALL_AUTHENTICATED),
                    extra=user.extra)


def _with_service_account_groups(user: UserInfo) -> UserInfo:
    """Give a service-account-named user its implicit groups, as the SA token authenticator."""
    split = split_service_account_username(user.name)
    if split is None:
        return user
    groups = tuple(dict.fromkeys((*service_account_groups(split[0]), *user.groups)))
    return UserInfo(name=user.name, uid=user.uid, groups=groups, extra=user.extra)


def _valid_at(cert: x509.Certificate, now: dt.datetime) -> bool:
    return cert.not_valid_before_utc <= now <= cert.not_valid_after_utc


class Authenticator:
    """Turns a request's credentials into a `UserInfo` (see the module docstring).

    tokens: the bearer tokens. client_ca_pem: PEM of the CA(s) client
    certificates must be issued by; None turns client certificates off (a
    presented one is then ignored). anonymous: whether a request with no
    credentials is `system:anonymous` (True) or a 401. signed_tokens: the
    tokens the server signed (`authenticate_signed(token, audiences)`: None
    for a token that is not one). api_audiences: the server's
    audiences (`--api-audiences`).
    """

    def __init__(self, tokens: TokenFile, *, client_ca_pem: bytes | None = None,
                 anonymous: bool = True,
                 signed_tokens: SignedTokenAuthenticator | None = None,
                 api_audiences: tuple[str, ...] = ()) -> None:
        self._tokens = tokens
        self._signed = signed_tokens
        self._api_audiences = tuple(api_audiences)
        self._client_cas: tuple[x509.Certificate, ...] = (
            tuple(x509.load_pem_x509_certificates(client_ca_pem)) if client_ca_pem else ())
        self._anonymous = anonymous

    def authenticate(self, headers: Headers, client_cert_der: bytes | None = None) -> UserInfo:
        """Return the caller of a request.

        client_cert_der: the DER of the peer's leaf certificate, or None. It
        must be signed directly by one of the client CAs, both valid now, and
        allowed for client auth; its CN is the user, its O values the groups.
        A certificate without a CN is passed over, as Kubernetes does.

        Raises `Unauthorized` (message `Unauthorized`) when a presented
        certificate or token is not accepted and no other credential is, or
        when nothing is presented and anonymous requests are off. The reason
        is chained as `__cause__`, for logs.
        """
        failures: list[str] = []
        if client_cert_der is not None and self._client_cas:
            try:
                user = self._certificate_user(client_cert_der)
            except _CredentialError as err:
                failures.append(str(err))
            else:
                if user is not None:
                    return _with_authenticated(user)
        token = _bearer_token(headers)
        if token is not None:
            answer = self.authenticate_token(token)
            if answer.user is not None:
                return answer.user
            failures.append(answer.error)
        if failures:
            raise Unauthorized(_UNAUTHORIZED) from _CredentialError("; ".join(failures))
        if self._anonymous:
            return ANONYMOUS_USER
        raise Unauthorized(_UNAUTHORIZED)

    def authenticate_token(self, token: str, audiences: tuple[str, ...] | None = None) -> TokenAuthentication:
        """Who a bearer token is: static tokens first, then the tokens the server signed.

        audiences: those a TokenReview asks for (None: a request to this
        server). The user has `system:authenticated` (and a service account's
        groups). Never raises: a refused token's `error` says why, in
        Kubernetes' words, never quoting the token.
        """
        errors: list[str] = []
        user = self._tokens.lookup(token)
        if user is not None:
            accepted = self._api_audiences if audiences is None else tuple(
                a for a in self._api_audiences if a in audiences)
            if audiences is None or accepted:
                return TokenAuthentication(_with_authenticated(_with_service_account_groups(user)), accepted)
        if self._signed is not None:
            answer = self._signed.authenticate_signed(token, audiences)
            if answer is not None and answer.user is not None:
                return TokenAuthentication(_with_authenticated(answer.user), answer.audiences)
            if answer is not None:
                errors.append(answer.error)
        return TokenAuthentication(None, error=refusal(errors))

    def _certificate_user(self, der: bytes) -> UserInfo | None:
        try:
            leaf = x509.load_der_x509_certificate(der)
        except ValueError as err:
            raise _CredentialError(f"parsing client certificate: {err}") from None
        now = dt.datetime.now(dt.timezone.utc)
        who = f'CN="{_common_name(leaf)}", serial {leaf.serial_number}'
        if not _valid_at(leaf, now):
            raise _CredentialError(
                f"verifying certificate {who} failed: x509: certificate has expired or is not yet valid")
        try:
            usages = leaf.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
        except x509.ExtensionNotFound:
            usages = None  # no EKU extension: any usage, as Go's verifier reads it
        if usages is not None and not ({ExtendedKeyUsageOID.CLIENT_AUTH,
                                        ExtendedKeyUsageOID.ANY_EXTENDED_KEY_USAGE} & set(usages)):
            raise _CredentialError(
                f"verifying certificate {who} failed: x509: certificate specifies an incompatible key usage")
        if not any(self._issued_by(leaf, ca, now) for ca in self._client_cas):
            raise _CredentialError(
                f"verifying certificate {who} failed: x509: certificate signed by unknown authority")
        name = _common_name(leaf)
        if not name:
            return None
        orgs = tuple(str(a.value) for a in leaf.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME))
        return UserInfo(name=name, groups=orgs)

    @staticmethod
    def _issued_by(leaf: x509.Certificate, ca: x509.Certificate, now: dt.datetime) -> bool:
        if leaf.issuer != ca.subject or not _valid_at(ca, now):
            return False
        try:
            leaf.verify_directly_issued_by(ca)
        except (ValueError, TypeError, InvalidSignature):
            return False
        return True


def _common_name(cert: x509.Certificate) -> str:
    """The subject CN; with several, the last, as Go's `pkix.Name` keeps it."""
    cns = cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    return str(cns[-1].value) if cns else ""


# --- impersonation ---------------------------------------------------------------------------

#: An impersonation target's kind (Kubernetes' ObjectReference kinds of `impersonation.go`), not a served kind.
_SERVICE_ACCOUNT_TARGET = "ServiceAccount"


@dataclass(frozen=True)
class _Target:
    """One thing to impersonate, as Kubernetes' `v1.ObjectReference` of it."""

    kind: str  # User, ServiceAccount, Group, UserExtra, UID
    name: str
    namespace: str = ""
    api_version: str = ""
    field_path: str = ""  # the extra key of a UserExtra

    def go_value(self) -> str:
        """Go's `%v` of the ObjectReference: every field, in order, space-separated."""
        fields = (self.kind, self.namespace, self.name, "", self.api_version, "", self.field_path)
        return "{" + " ".join(fields) + "}"


_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")


def _unescape_extra_key(encoded: str) -> str:
    """%-decode an extra key; left as it is when malformed (as Go's `url.PathUnescape` fails)."""
    if _PERCENT.search(encoded):
        return encoded
    return unquote(encoded, errors="replace")


def _targets(headers: Headers, authn_version: str) -> tuple[str, list[_Target], bool]:
    """Return (requested user, targets in Kubernetes' order, groups specified)."""
    requested = _header_first(headers, IMPERSONATE_USER)
    targets: list[_Target] = []
    if requested:
        split = split_service_account_username(requested)
        if split is not None:
            targets.append(_Target(_SERVICE_ACCOUNT_TARGET, split[1], namespace=split[0]))
        else:
            targets.append(_Target("User", requested))
    groups = _header_values(headers, IMPERSONATE_GROUP)
    targets.extend(_Target("Group", g) for g in groups)
    prefix = IMPERSONATE_EXTRA_PREFIX.lower()
    for name, value in _header_items(headers):
        if name.lower().startswith(prefix):
            key = _unescape_extra_key(name[len(prefix):].lower())
            targets.append(_Target("UserExtra", value, api_version=authn_version, field_path=key))
    uid = _header_first(headers, IMPERSONATE_UID)
    if uid:
        targets.append(_Target("UID", uid, api_version=authn_version))
    if not requested and targets:
        listed = "[" + " ".join(t.go_value() for t in targets) + "]"
        raise BadRequest(f"requested {listed} without impersonating a user")
    return requested, targets, bool(groups)


def _attributes(requestor: UserInfo, target: _Target, authn_group: str) -> Attributes:
    if target.kind == _SERVICE_ACCOUNT_TARGET:
        return resource_attributes(requestor, "impersonate", "serviceaccounts", api_version="v1",
                                   namespace=target.namespace, name=target.name)
    if target.kind in ("User", "Group"):
        resource = "users" if target.kind == "User" else "groups"
        return resource_attributes(requestor, "impersonate", resource, api_version="v1",
                                   name=target.name)
    if target.kind == "UserExtra":
        return resource_attributes(requestor, "impersonate", "userextras", api_group=authn_group,
                                   api_version="v1", subresource=target.field_path, name=target.name)
    return resource_attributes(requestor, "impersonate", "uids", api_group=authn_group,
                               api_version="v1", name=target.name)


def impersonate(
    user: UserInfo,
    headers: Headers,
    authorize: Callable[[Attributes], bool | Decision],
    *,
    domain: str = DEFAULT_DOMAIN,
) -> UserInfo:
    """Return the user the request acts as: `user` itself, or the one the `Impersonate-*` headers name.

    Headers: `Impersonate-User` (first value), `Impersonate-Group` (each
    value one group, repeatable), `Impersonate-Uid`, and
    `Impersonate-Extra-<key>` (key lower-cased, then %-decoded; each value
    one item). Every target is authorized for `user` with verb
    `impersonate`, in this order: `users` (name = user) or, for a
    `system:serviceaccount:<ns>:<name>` user, `serviceaccounts` in `<ns>`
    (name = `<name>`) in the core group; `groups` (name = group) in the core
    group; `userextras/<key>` (name = value) and `uids` (name = uid) in
    `authentication.<domain>`, as Kubernetes (there `authentication.k8s.io`).

    `authorize` returns a bool or a `Decision` (whose reason is then
    appended to the message, as Kubernetes does).

    The result: name, uid and extra as requested; groups as requested, or for
    a service account without `Impersonate-Group` its
    `system:serviceaccounts[:<ns>]` groups; then `system:authenticated` is
    added unless the user is `system:anonymous` or either
    `system:authenticated` or `system:unauthenticated` is listed, and
    `system:unauthenticated` is added to `system:anonymous` when missing.

    Raises `BadRequest` when groups, extras or a uid are given without a
    user (Kubernetes' text: `requested [{Group  devs    }] without
    impersonating a user`), `Forbidden` at the first target not allowed
    (`users "alice" is forbidden: User "bob" cannot impersonate resource
    "users" in API group "" at the cluster scope`).
    """
    authn_group = f"authentication.{domain}"
    requested, targets, groups_specified = _targets(headers, f"{authn_group}/v1")
    if not targets:
        return user
    groups: list[str] = []
    extra: dict[str, list[str]] = {}
    uid = ""
    for target in targets:
        attrs = _attributes(user, target, authn_group)
        decision = authorize(attrs)
        if isinstance(decision, bool):
            allowed, reason = decision, ""
        else:
            allowed, reason = decision.allowed, decision.reason
        if not allowed:
            raise Forbidden(forbidden_status_message(attrs, reason), name=attrs.name,
                            group=attrs.api_group, kind=attrs.resource)
        if target.kind == _SERVICE_ACCOUNT_TARGET and not groups_specified:
            groups = list(service_account_groups(target.namespace))
        elif target.kind == "Group":
            groups.append(target.name)
        elif target.kind == "UserExtra":
            extra.setdefault(target.field_path, []).append(target.name)
        elif target.kind == "UID":
            uid = target.name
    if requested != ANONYMOUS:
        if not any(g in (ALL_AUTHENTICATED, ALL_UNAUTHENTICATED) for g in groups):
            groups.append(ALL_AUTHENTICATED)
    elif ALL_UNAUTHENTICATED not in groups:
        groups.append(ALL_UNAUTHENTICATED)
    return UserInfo(name=requested, uid=uid, groups=tuple(groups), extra=extra)


# --- peer certificate ------------------------------------------------------------------------

# The TLS object of the connection the current task serves; set during the handshake
# (see `capture_peer_certificates`) and inherited by the tasks Hypercorn spawns for it.
_CONNECTION_TLS: ContextVar[ssl.SSLObject | ssl.SSLSocket | None] = ContextVar(
    "miniplane_connection_tls", default=None)


def capture_peer_certificates(context: ssl.SSLContext) -> ssl.SSLContext:
    """Make `peer_certificate_der` find the client certificate of connections served with `context`.

    Returns `context`, with an `sni_callback` (chained to any already set)
    that records the connection's TLS object in a context variable. The
    callback runs during the handshake, in the task that serves the
    connection; Hypercorn (trio worker) spawns the ASGI app from that task,
    so the app's tasks inherit the variable.

    Use it where Hypercorn builds the context, with client certificates
    requested but optional (so token users still connect)::

        class ServerConfig(hypercorn.config.Config):
            def create_ssl_context(self):
                return capture_peer_certificates(super().create_ssl_context())

        config.ca_certs = str(pki.ca_cert_path)
        config.verify_mode = ssl.CERT_OPTIONAL

    Caveats: relies on Hypercorn spawning the app from the connection's task
    (true of 0.18's trio and asyncio workers, for HTTP/1.1 and HTTP/2, not
    for HTTP/3); OpenSSL calls the callback for every ClientHello, with or
    without SNI.
    """
    previous = context.sni_callback

    def remember(conn: ssl.SSLObject | ssl.SSLSocket, server_name: str | None,
                 ctx: ssl.SSLContext) -> int | None:
        _CONNECTION_TLS.set(conn)
        return previous(conn, server_name, ctx) if previous is not None else None

    context.sni_callback = remember
    return context


def peer_certificate_der(scope: Mapping[str, Any]) -> bytes | None:
    """Return the DER of the client's leaf certificate for an ASGI request, or None.

    Reads the ASGI TLS extension (`scope["extensions"]["tls"]`, whose
    `client_cert_chain` holds PEM strings, leaf first) when the server
    provides it; otherwise the connection recorded by
    `capture_peer_certificates` (Hypercorn 0.18 has no TLS extension).
    Raises `Unauthorized` when the extension reports that the certificate
    failed verification (`client_cert_error`): a presented bad credential.
    """
    tls = (scope.get("extensions") or {}).get("tls")
    if tls is not None:
        if tls.get("client_cert_error"):
            raise Unauthorized(_UNAUTHORIZED)
        chain: Sequence[str] = tls.get("client_cert_chain") or ()
        if not chain:
            return None
        pem = chain[0].encode("ascii") if isinstance(chain[0], str) else chain[0]
        return x509.load_pem_x509_certificate(pem).public_bytes(Encoding.DER)
    conn = _CONNECTION_TLS.get()
    if conn is None:
        return None
    return conn.getpeercert(binary_form=True)

