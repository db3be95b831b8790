"""Service account tokens: signed JWTs, issued and verified as Kubernetes' bound service account tokens.

`TokenSigner` holds one ECDSA P-256 key (ES256, signed and verified by PyJWT)
and the server's issuer and audiences (kube-apiserver's
`--service-account-issuer`, `--api-audiences`):

- `issue(...)` writes Kubernetes' claims (`pkg/serviceaccount/claims.go`):
  `iss`, `sub` (`system:serviceaccount:<ns>:<name>`), `aud`, `iat`, `nbf`,
  `exp`, `jti`, and the private `kubernetes.io` claim naming the namespace,
  the service account (name, uid) and a bound object (name, uid, under its
  lower-cased kind, with its apiVersion). The header carries `kid`, derived
  from the public key as Kubernetes derives it.
- `verify(token, audiences)` checks what the token itself says: the
  issuer (a token of another issuer is not this signer's: None), the
  signature, the time claims with Kubernetes' leeway of 60 s, and the
  audiences against the requested ones (the server's by default), as
  Kubernetes' `jwtTokenAuthenticator`. It raises `TokenError` in
  Kubernetes' words. Whether the service account (and bound object) still
  exists is the caller's to check (`runtime.server.kinds.serviceaccount`).
- `issue_legacy(namespace, name, uid, secret)` writes a legacy token, the
  one kube-controller-manager's token controller puts in a Secret of type
  `kubernetes.io/service-account-token` (`pkg/serviceaccount/legacy.go`'s
  LegacyClaims): issuer `kubernetes/serviceaccount`, `sub`, and the
  `kubernetes.io/serviceaccount/...` claims naming the namespace, the
  Secret and the service account (name, uid); no audience, no expiry.
  `verify` accepts it for the server's audiences only and checks its claims
  as Kubernetes' legacy validator (`sub claim is missing`, ...); the claims
  then name the Secret (`TokenClaims.secret`), which must still hold that
  very token (`runtime.server.tokenauth`).

The clock is the caller's (wall seconds), so tests can move it; PyJWT's
own time checks are off. A key is PEM (PKCS#8); `generate_key()` makes one.

Caveats: one signing key, no rotation; decoded signatures are remembered
(up to 4096 tokens) so that a client reusing its token pays for one
signature check, as Kubernetes caches authentications.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import time
import uuid
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from runtime.server.rbac.user import UserInfo, service_account_username, split_service_account_username
from runtime.machinery.validation.gofmt import go_quote_list

__all__ = [
    "TokenSigner", "TokenClaims", "TokenError", "TokenAuthentication", "generate_key",
    "DEFAULT_ISSUER", "DEFAULT_EXPIRATION_SECONDS", "MIN_EXPIRATION_SECONDS", "MAX_EXPIRATION_SECONDS",
    "LEEWAY_SECONDS", "CREDENTIAL_ID_KEY", "LEGACY_ISSUER", "looks_like_jwt", "refusal",
]

#: kube-apiserver's usual `--service-account-issuer` (kubeadm's), the default audience too.
DEFAULT_ISSUER = "https://kubernetes.default.svc.cluster.local"
#: TokenRequest's defaults and bounds (authentication/v1 defaulting and validation).
DEFAULT_EXPIRATION_SECONDS = 3600
MIN_EXPIRATION_SECONDS = 600
MAX_EXPIRATION_SECONDS = 1 << 32
#: go-jose's DefaultLeeway: clock skew allowed on exp, nbf and iat.
LEEWAY_SECONDS = 60
#: The user extra naming a token's `jti` (`JTI=<jti>`), as Kubernetes' ServiceAccountTokenJTI.
CREDENTIAL_ID_KEY = "authentication.kubernetes.io/credential-id"

#: The issuer of legacy (Secret-based) tokens, Kubernetes' serviceaccount.LegacyIssuer.
LEGACY_ISSUER = "kubernetes/serviceaccount"

_ALGORITHM = "ES256"
_LEGACY = "kubernetes.io/serviceaccount/"
#: A legacy token's claims, each with the name Kubernetes' legacy validator gives it when missing.
_LEGACY_CLAIMS = (("namespace", "namespace"), ("secret.name", "secretName"),
                  ("service-account.name", "serviceAccountName"), ("service-account.uid", "serviceAccountUID"))
_PRIVATE = "kubernetes.io"
_MEMO_SIZE = 4096


class TokenError(Exception):
    """A token of this issuer that is not valid (the message is Kubernetes')."""


@dataclass(frozen=True)
class TokenAuthentication:
    """What a bearer token is: its user (None when not authenticated), the audiences it is good for, the error."""

    user: UserInfo | None
    audiences: tuple[str, ...] = ()
    error: str = ""


@dataclass(frozen=True)
class TokenClaims:
    """The claims of a verified token: whose it is, what it is bound to, the audiences it was accepted for."""

    namespace: str
    name: str
    uid: str
    jti: str
    audiences: tuple[str, ...]
    #: (apiVersion, kind, name, uid) of the bound object, or None.
    bound: tuple[str, str, str, str] | None = None
    expiry: int = 0
    issued_at: int = 0
    #: The Secret a legacy token lives in (its `secret.name` claim); "" for a bound token.
    secret: str = ""


def refusal(errors: list[str]) -> str:
    """Why a bearer token was refused, as Kubernetes' authenticator chain words it.

    `invalid bearer token` when no authenticator knew it; with the errors of
    those that knew it but refused it, `[invalid bearer token, <error>, ...]`.
    """
    return "[" + ", ".join(["invalid bearer token", *errors]) + "]" if errors else "invalid bearer token"


def generate_key() -> bytes:
    """A new ECDSA P-256 private key, PEM (PKCS#8, unencrypted)."""
    key = ec.generate_private_key(ec.SECP256R1())
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _b64_json(segment: str) -> Any:
    padded = segment + "=" * (-len(segment) % 4)
    return json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))


def looks_like_jwt(token: str) -> dict[str, Any] | None:
    """The unverified payload of a compact JWS (three dot-separated base64url parts), else None."""
    parts = token.split(".")
    if len(parts) != 3:
        return None
    try:
        payload = _b64_json(parts[1])
    except (ValueError, UnicodeError, binascii.Error):
        return None
    return payload if isinstance(payload, dict) else None


class TokenSigner:
    """Issues and verifies service account tokens (see the module doc).

    key_pem: the private key (PEM); None makes a new one (tokens then die
    with the process). clock: wall time in seconds.
    """

    def __init__(self, key_pem: bytes | None = None, *, issuer: str = DEFAULT_ISSUER,
                 audiences: tuple[str, ...] | None = None, clock: Callable[[], float] = time.time,
                 max_expiration_seconds: int = 0) -> None:
        key = serialization.load_pem_private_key(key_pem or generate_key(), password=None)
        if not isinstance(key, ec.EllipticCurvePrivateKey) or not isinstance(key.curve, ec.SECP256R1):
            raise ValueError("the service account signing key must be an ECDSA P-256 key")
        self._key = key
        self._public = key.public_key()
        der = self._public.public_bytes(serialization.Encoding.DER,
                                        serialization.PublicFormat.SubjectPublicKeyInfo)
        self.key_id = base64.urlsafe_b64encode(hashlib.sha256(der).digest()).rstrip(b"=").decode()
        self.issuer = issuer
        self.audiences = tuple(audiences) if audiences else (issuer,)
        self.clock = clock
        self.max_expiration_seconds = max_expiration_seconds
        self._verified: OrderedDict[str, dict[str, Any]] = OrderedDict()

    def issue(self, namespace: str, name: str, uid: str, *, audiences: tuple[str, ...],
              expiration_seconds: int, bound: tuple[str, str, str, str] | None = None) -> tuple[str, int]:
        """A signed token for the service account `namespace/name` (`uid`), and its expiry (epoch seconds)."""
        now = int(self.clock())
        expiry = now + expiration_seconds
        private: dict[str, Any] = {"namespace": namespace, "serviceaccount": {"name": name, "uid": uid}}
        if bound is not None:
            api_version, kind, bound_name, bound_uid = bound
            private[kind.lower()] = {"apiVersion": api_version, "kind": kind, "name": bound_name, "uid": bound_uid}
        claims = {"aud": list(audiences), "exp": expiry, "iat": now, "iss": self.issuer, "jti": str(uuid.uuid4()),
                  _PRIVATE: private, "nbf": now, "sub": service_account_username(namespace, name)}
        token = jwt.encode(claims, self._key, algorithm=_ALGORITHM, headers={"kid": self.key_id})
        return token, expiry

    def issue_legacy(self, namespace: str, name: str, uid: str, secret: str) -> str:
        """A legacy token of the service account `namespace/name` (`uid`) for the Secret `secret` (see the module doc)."""
        claims = {"iss": LEGACY_ISSUER, f"{_LEGACY}namespace": namespace, f"{_LEGACY}secret.name": secret,
                  f"{_LEGACY}service-account.name": name, f"{_LEGACY}service-account.uid": uid,
                  "sub": service_account_username(namespace, name)}
        return jwt.encode(claims, self._key, algorithm=_ALGORITHM, headers={"kid": self.key_id})

    def claims_issuer(self, token: str) -> bool:
        """Whether `token` claims to be this signer's, bound or legacy (Kubernetes' hasCorrectIssuer, before any
        check)."""
        return self._claimed_issuer(token) is not None

    def _claimed_issuer(self, token: str) -> str | None:
        """The issuer `token` claims if it is this signer's (bound or legacy), else None (unverified)."""
        payload = looks_like_jwt(token)
        issuer = payload.get("iss") if payload is not None else None
        return issuer if issuer in (self.issuer, LEGACY_ISSUER) else None

    def verify(self, token: str, audiences: tuple[str, ...] | None = None) -> TokenClaims | None:
        """The claims of `token` if it is valid for one of `audiences` (default: the server's).

        Returns None for a token that is not this issuer's (another
        authenticator may know it). Raises TokenError for one that is but
        fails: a bad signature, wrong audiences, expired, not yet valid, a
        legacy token's claim missing.
        """
        issuer = self._claimed_issuer(token)
        if issuer is None:
            return None
        payload = self._signed_payload(token)
        legacy = issuer == LEGACY_ISSUER and self.issuer != LEGACY_ISSUER
        private = payload.get(_PRIVATE)
        if not legacy and not isinstance(private, dict):
            raise TokenError("service account token claims could not be validated due to unexpected validation "
                             "error")
        aud = payload.get("aud")
        token_auds = tuple(a for a in ([aud] if isinstance(aud, str) else aud or ()) if isinstance(a, str))
        if not token_auds:
            token_auds = self.audiences  # a legacy token without audiences: the server's
        requested = tuple(audiences) if audiences else self.audiences
        accepted = tuple(a for a in token_auds if a in requested)
        if not accepted:
            raise TokenError(f"token audiences {go_quote_list(token_auds)} is invalid for the target audiences "
                             f"{go_quote_list(requested)}")
        if legacy:
            return _legacy_claims(payload, accepted)
        self._check_times(payload)
        account = private.get("serviceaccount") or {}
        bound = None
        for value in private.values():
            if isinstance(value, dict) and "kind" in value and "apiVersion" in value:
                bound = (str(value["apiVersion"]), str(value["kind"]), str(value.get("name", "")),
                         str(value.get("uid", "")))
        return TokenClaims(namespace=str(private.get("namespace", "")), name=str(account.get("name", "")),
                           uid=str(account.get("uid", "")), jti=str(payload.get("jti", "")), audiences=accepted,
                           bound=bound, expiry=int(payload.get("exp") or 0), issued_at=int(payload.get("iat") or 0))

    def _signed_payload(self, token: str) -> dict[str, Any]:
        memo = self._verified.get(token)
        if memo is not None:
            self._verified.move_to_end(token)
            return memo
        try:
            payload = jwt.decode(token, self._public, algorithms=[_ALGORITHM],
                                 options={"verify_exp": False, "verify_nbf": False, "verify_iat": False,
                                          "verify_aud": False, "verify_iss": False})
        except jwt.InvalidTokenError:
            raise TokenError("go-jose/go-jose: error in cryptographic primitive") from None
        self._verified[token] = payload
        if len(self._verified) > _MEMO_SIZE:
            self._verified.popitem(last=False)
        return payload

    def _check_times(self, payload: dict[str, Any]) -> None:
        now = self.clock()
        numbers = {k: payload.get(k) for k in ("exp", "nbf", "iat")}
        if any(v is not None and not isinstance(v, (int, float)) for v in numbers.values()):
            raise TokenError("service account token claims could not be validated due to unexpected validation "
                             "error")
        if numbers["exp"] is not None and now - LEEWAY_SECONDS > numbers["exp"]:
            raise TokenError("service account token has expired")
        if numbers["nbf"] is not None and now + LEEWAY_SECONDS < numbers["nbf"]:
            raise TokenError("service account token is not valid yet")
        if numbers["iat"] is not None and now + LEEWAY_SECONDS < numbers["iat"]:
            raise TokenError("service account token is issued in the future")


def _legacy_claims(payload: dict[str, Any], audiences: tuple[str, ...]) -> TokenClaims:
    """A legacy token's claims, checked as Kubernetes' legacyValidator checks them (no lookup: the caller's)."""
    if not _text(payload.get("sub")):
        raise TokenError("sub claim is missing")
    values = {}
    for claim, name in _LEGACY_CLAIMS:
        values[claim] = _text(payload.get(_LEGACY + claim))
        if not values[claim]:
            raise TokenError(f"{name} claim is missing")
    namespace, name = values["namespace"], values["service-account.name"]
    if split_service_account_username(_text(payload.get("sub"))) != (namespace, name):
        raise TokenError("sub claim is invalid")
    return TokenClaims(namespace=namespace, name=name, uid=values["service-account.uid"], jti="",
                       audiences=audiences, secret=values["secret.name"])


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""
