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

`TokenAuthenticator` is what the registry asks a TokenReview of: any
object with `authenticate_token(token, audiences) -> TokenAuthentication`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from runtime.server.kinds import TokenIssuer
from runtime.server.tokens import TokenAuthentication, TokenError, TokenSigner, refusal

if TYPE_CHECKING:
    from runtime.machinery.scheme import Scheme
    from runtime.server.watchcache import WatchCache

__all__ = ["TokenAuthenticator", "SignedTokenAuthenticator"]


class TokenAuthenticator(Protocol):
    """Who a bearer token is, for `audiences` (None: the server's). Never raises: a refusal's `error` says why."""

    def authenticate_token(self, token: str, audiences: tuple[str, ...] | None = None) -> TokenAuthentication: ...


class SignedTokenAuthenticator:
    """The tokens `signer` signed, for identities of `scheme` as `cache` holds them (see the module doc)."""

    def __init__(self, signer: TokenSigner, scheme: "Scheme", cache: "WatchCache") -> None:
        self.signer = signer
        self._cache = cache
        self._identity = next((t for t in scheme.stored_types() if isinstance(t.strategy, TokenIssuer)), None)

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
