"""Bearer tokens the server signed: a service account token verified, then checked against the watch cache.

`SignedTokenAuthenticator(signer, scheme, cache)` is the server's own token
authentication, built once by the assembly and handed both to the HTTP
layer's `Authenticator` (as its signed-token step) and, for TokenReview, to
the registry. `authenticate_signed(token, audiences)` returns None for a
token that is not the server's (not a JWT, or another issuer's), else a
`TokenAuthentication`: the identity's user, or the error in Kubernetes'
words (bad signature, audiences, expired; the service account or bound
object gone or recreated). The identity kind is the one whose strategy
is a `TokenIssuer`; reads are the watch cache's, never the store's (this runs
for every request that carries such a token).

A legacy token (issuer `kubernetes/serviceaccount`, the one the token
controller writes into a Secret of type `kubernetes.io/service-account-token`)
is looked up as Kubernetes' legacy validator (`pkg/serviceaccount/legacy.go`)
looks it up, by `legacy_user`: its Secret must stand (not being deleted), hold
that very token in `data.token` and carry no `kubernetes.io/legacy-token-invalid-since`
label; its service account must stand with the uid the token names. The user
is the service account, in Kubernetes' groups, with no extra.

`TokenAuthenticator` is what the registry asks a TokenReview of: any
object with `authenticate_token(token, audiences) -> TokenAuthentication`.
"""

from __future__ import annotations

import base64
import binascii
import hmac
from typing import TYPE_CHECKING, Any, Callable, Protocol

from runtime.server.kinds import TokenIssuer
from runtime.server.rbac.user import UserInfo, service_account_groups, service_account_username
from runtime.server.tokens import TokenAuthentication, TokenClaims, TokenError, TokenSigner, refusal

if TYPE_CHECKING:
    from runtime.machinery.scheme import Scheme
    from runtime.server.watchcache import WatchCache

__all__ = ["TokenAuthenticator", "SignedTokenAuthenticator", "legacy_user", "INVALID_SINCE_LABEL"]

#: The label marking a legacy token's Secret invalid (Kubernetes' LegacyServiceAccountTokenCleanUp).
INVALID_SINCE_LABEL = "kubernetes.io/legacy-token-invalid-since"

#: Reads one object of the watch cache: (resource type, namespace, name) -> object or None.
Lookup = Callable[[Any, str, str], "dict[str, Any] | None"]


class TokenAuthenticator(Protocol):
    """Who a bearer token is, for `audiences` (None: the server's). Never raises: a refusal's `error` says why."""

    def authenticate_token(self, token: str, audiences: tuple[str, ...] | None = None) -> TokenAuthentication: ...


class SignedTokenAuthenticator:
    """The tokens `signer` signed, for identities of `scheme` as `cache` holds them (see the module doc)."""

    def __init__(self, signer: TokenSigner, scheme: "Scheme", cache: "WatchCache") -> None:
        self.signer = signer
        self._cache = cache
        self._identity = next((t for t in scheme.stored_types() if isinstance(t.strategy, TokenIssuer)), None)
        self._secrets = scheme.by_api_version_kind("v1", "Secret")

    def authenticate_signed(self, token: str, audiences: tuple[str, ...] | None = None) -> TokenAuthentication | None:
        """See the module doc; `audiences` default to the server's."""
        try:
            claims = self.signer.verify(token, audiences)
        except TokenError as exc:
            return TokenAuthentication(None, error=str(exc))
        if claims is None:
            return None
        identity = self._identity
        if identity is None:
            return TokenAuthentication(None, error="service account tokens are not served")
        try:
            if claims.secret:
                user = legacy_user(claims, token, self._lookup, self._secrets, identity)
            else:
                user = identity.strategy.token_user(claims, self._lookup, self.signer.clock())
        except TokenError as exc:
            return TokenAuthentication(None, error=str(exc))
        return TokenAuthentication(user, claims.audiences)

    def authenticate_token(self, token: str, audiences: tuple[str, ...] | None = None) -> TokenAuthentication:
        """Only the tokens this server signs, as a whole authenticator (a registry served in process)."""
        answer = self.authenticate_signed(token, audiences)
        if answer is None or answer.user is None:
            return TokenAuthentication(None, error=refusal([answer.error] if answer is not None else []))
        return answer

    def _lookup(self, rt: Any, namespace: str, name: str) -> dict[str, Any] | None:
        found = self._cache.kind(rt.storage_prefix).get(rt.storage_key(namespace if rt.namespaced else None, name))
        return None if found is None else found.obj


def legacy_user(claims: TokenClaims, token: str, lookup: Lookup, secrets: Any, accounts: Any) -> UserInfo:
    """The user a verified legacy `token` is, once its Secret (of kind `secrets`) and its service account (of
    kind `accounts`) stand as `lookup` reads them (see the module doc).

    Raises TokenError in Kubernetes' words (`Token has been invalidated`,
    `Token does not match server's copy`, `serviceaccounts "x" not found`, ...).
    """
    namespace, name = claims.namespace, claims.name
    secret = lookup(secrets, namespace, claims.secret) if secrets is not None else None
    if secret is None or secret["metadata"].get("deletionTimestamp"):
        raise TokenError("Token has been invalidated")
    if not hmac.compare_digest(_token_data(secret), token.encode()):
        raise TokenError("Token does not match server's copy")
    account = lookup(accounts, namespace, name)
    if account is None:
        raise TokenError(f'{accounts.plural} "{name}" not found')
    if account["metadata"].get("deletionTimestamp"):
        raise TokenError(f"ServiceAccount {namespace}/{name} has been deleted")
    uid = account["metadata"].get("uid", "")
    if uid != claims.uid:
        raise TokenError(f"ServiceAccount UID ({uid}) does not match claim ({claims.uid})")
    if (secret["metadata"].get("labels") or {}).get(INVALID_SINCE_LABEL):
        raise TokenError(f"the token in secret {namespace}/{claims.secret} for service account {namespace}/{name} "
                         "has been marked invalid. Use tokens from the TokenRequest API or manually created "
                         "secret-based tokens, or remove the "
                         f"'{INVALID_SINCE_LABEL}' label from the secret to temporarily allow use of this token")
    return UserInfo(service_account_username(namespace, name), uid=claims.uid,
                    groups=service_account_groups(namespace))


def _token_data(secret: dict[str, Any]) -> bytes:
    value = (secret.get("data") or {}).get("token")
    try:
        return base64.b64decode(value, validate=True) if isinstance(value, str) else b""
    except (binascii.Error, ValueError):
        return b""
