"""Bearer tokens the server signed: a service account token verified, then checked against the watch cache.

`authenticate_signed_token(core, token, audiences)` returns None for a
token that is not the server's (not a JWT, or another issuer's), else a
`TokenAuthentication`: the identity's user, or the error in Kubernetes'
words (bad signature, audiences, expired; the service account or bound
object gone or recreated). The identity kind is the one whose strategy
`issues_tokens`; reads are the watch cache's, never the store's (this runs
for every request that carries such a token).
"""

from __future__ import annotations

from typing import Any

from runtime.registry.core import RegistryCore
from runtime.tokens import TokenAuthentication, TokenError

__all__ = ["authenticate_signed_token"]


def authenticate_signed_token(core: RegistryCore, token: str,
                              audiences: tuple[str, ...] | None = None) -> TokenAuthentication | None:
    """See the module doc; `audiences` default to the server's."""
    try:
        claims = core.tokens.verify(token, audiences)
    except TokenError as exc:
        return TokenAuthentication(None, error=str(exc))
    if claims is None:
        return None
    identity = next((t for t in core.scheme.stored_types() if t.strategy.issues_tokens), None)
    if identity is None:
        return TokenAuthentication(None, error="service account tokens are not served")

    def lookup(rt: Any, namespace: str, name: str) -> dict[str, Any] | None:
        found = core.kind_cache(rt).get(rt.storage_key(namespace if rt.namespaced else None, name))
        return None if found is None else found.obj

    try:
        user = identity.strategy.token_user(claims, lookup, core.tokens.clock())
    except TokenError as exc:
        return TokenAuthentication(None, error=str(exc))
    return TokenAuthentication(user, claims.audiences)
