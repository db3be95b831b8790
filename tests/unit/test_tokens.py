"""Service account tokens (`runtime.server.tokens`): Kubernetes' claims, signature, time and audience checks, on a fake clock."""

from __future__ import annotations

import jwt
import pytest

from runtime.server.tokens import LEEWAY_SECONDS, TokenError, TokenSigner, generate_key, refusal


class Clock:
    def __init__(self, now: float = 1_700_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def signer(clock) -> TokenSigner:
    return TokenSigner(generate_key(), issuer="https://issuer", audiences=("api",), clock=clock)


def test_a_token_carries_kubernetes_claims_and_verifies_for_the_server_audiences(signer, clock):
    token, expiry = signer.issue("ns", "robot", "uid-1", audiences=("api", "vault"), expiration_seconds=600)
    assert expiry == int(clock.now) + 600
    claims = signer.verify(token)
    assert (claims.namespace, claims.name, claims.uid, claims.audiences) == ("ns", "robot", "uid-1", ("api",))
    assert claims.jti and claims.bound is None
    assert signer.verify(token, ("vault",)).audiences == ("vault",)
    payload = jwt.decode(token, options={"verify_signature": False})
    assert payload["sub"] == "system:serviceaccount:ns:robot" and payload["iss"] == "https://issuer"
    assert jwt.get_unverified_header(token)["kid"] == signer.key_id


def test_times_are_checked_with_kubernetes_leeway(signer, clock):
    token, expiry = signer.issue("ns", "robot", "u", audiences=("api",), expiration_seconds=600)
    clock.now = expiry + LEEWAY_SECONDS
    assert signer.verify(token) is not None
    clock.now += 1
    with pytest.raises(TokenError, match="^service account token has expired$"):
        signer.verify(token)
    clock.now -= 600 + 2 * LEEWAY_SECONDS + 2  # before nbf and iat, beyond the leeway
    with pytest.raises(TokenError, match="^service account token is not valid yet$"):
        signer.verify(token)


def test_audiences_are_refused_in_gos_words(signer):
    token, _ = signer.issue("ns", "robot", "u", audiences=("vault", "db"), expiration_seconds=600)
    with pytest.raises(TokenError) as refused:
        signer.verify(token)
    assert str(refused.value) == 'token audiences ["vault" "db"] is invalid for the target audiences ["api"]'


def test_another_key_or_issuer_is_not_this_signers_token(signer, clock):
    other = TokenSigner(generate_key(), issuer="https://issuer", audiences=("api",), clock=clock)
    token, _ = other.issue("ns", "robot", "u", audiences=("api",), expiration_seconds=600)
    with pytest.raises(TokenError, match="error in cryptographic primitive"):
        signer.verify(token)
    elsewhere = TokenSigner(generate_key(), issuer="https://elsewhere", clock=clock)
    foreign, _ = elsewhere.issue("ns", "robot", "u", audiences=("api",), expiration_seconds=600)
    assert signer.verify(foreign) is None
    for junk in ("", "a.b", "a.b.c", "not a token", "e30.e30.e30"):
        assert signer.verify(junk) is None


def test_a_bound_object_travels_in_the_private_claim(signer):
    bound = ("coordination.k8s.io/v1", "Lease", "holder", "uid-l")
    token, _ = signer.issue("ns", "robot", "u", audiences=("api",), expiration_seconds=600, bound=bound)
    assert signer.verify(token).bound == bound


def test_the_signing_key_must_be_an_ecdsa_p256_key(signer):
    with pytest.raises(ValueError):
        TokenSigner(b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")
    assert len(signer.key_id) == 43  # base64url of a SHA-256 of the public key, as Kubernetes' kid


def test_refusals_read_as_kubernetes_authenticator_chain():
    assert refusal([]) == "invalid bearer token"
    assert refusal(["service account token has expired"]) == "[invalid bearer token, service account token has expired]"


# ---- legacy (Secret-based) tokens: Kubernetes' LegacyClaims and the legacy validator's claim checks --------------

LEGACY = "kubernetes.io/serviceaccount/"


def legacy_claims(**changes) -> dict:
    claims = {"iss": "kubernetes/serviceaccount", "sub": "system:serviceaccount:ns:robot",
              f"{LEGACY}namespace": "ns", f"{LEGACY}secret.name": "robot-token",
              f"{LEGACY}service-account.name": "robot", f"{LEGACY}service-account.uid": "uid-1"}
    claims.update(changes)
    return {k: v for k, v in claims.items() if v is not None}


@pytest.fixture
def key() -> bytes:
    return generate_key()


def test_a_legacy_token_carries_kubernetes_legacy_claims_and_no_expiry(key, clock):
    signer = TokenSigner(key, issuer="https://issuer", audiences=("api",), clock=clock)
    token = signer.issue_legacy("ns", "robot", "uid-1", "robot-token")
    assert jwt.decode(token, options={"verify_signature": False}) == legacy_claims()
    assert jwt.get_unverified_header(token) == {"alg": "ES256", "kid": signer.key_id, "typ": "JWT"}
    clock.now += 10 * 365 * 86400  # no expiry: good in ten years
    claims = signer.verify(token)
    assert (claims.namespace, claims.name, claims.uid, claims.secret) == ("ns", "robot", "uid-1", "robot-token")
    assert claims.audiences == ("api",) and claims.bound is None and claims.expiry == 0


def test_a_legacy_token_is_good_only_for_the_server_audiences(key, clock):
    signer = TokenSigner(key, issuer="https://issuer", audiences=("api",), clock=clock)
    token = signer.issue_legacy("ns", "robot", "uid-1", "robot-token")
    with pytest.raises(TokenError) as refused:
        signer.verify(token, ("vault",))
    assert str(refused.value) == 'token audiences ["api"] is invalid for the target audiences ["vault"]'


def test_a_bound_token_names_no_secret(signer):
    token, _ = signer.issue("ns", "robot", "u", audiences=("api",), expiration_seconds=600)
    assert signer.verify(token).secret == ""


@pytest.mark.parametrize("changes, message", [
    ({"sub": None}, "sub claim is missing"),
    ({f"{LEGACY}namespace": None}, "namespace claim is missing"),
    ({f"{LEGACY}secret.name": ""}, "secretName claim is missing"),
    ({f"{LEGACY}service-account.name": None}, "serviceAccountName claim is missing"),
    ({f"{LEGACY}service-account.uid": None}, "serviceAccountUID claim is missing"),
    ({"sub": "system:serviceaccount:other:robot"}, "sub claim is invalid"),
    ({"sub": "system:serviceaccount:ns:robot2"}, "sub claim is invalid"),
    ({"sub": "robot"}, "sub claim is invalid"),
])
def test_a_legacy_token_missing_a_claim_is_refused_in_kubernetes_words(key, clock, changes, message):
    signer = TokenSigner(key, issuer="https://issuer", audiences=("api",), clock=clock)
    token = jwt.encode(legacy_claims(**changes), key, algorithm="ES256")
    with pytest.raises(TokenError) as refused:
        signer.verify(token)
    assert str(refused.value) == message


def test_a_legacy_token_signed_by_another_key_is_refused(key, clock):
    signer = TokenSigner(key, issuer="https://issuer", audiences=("api",), clock=clock)
    token = jwt.encode(legacy_claims(), generate_key(), algorithm="ES256")
    with pytest.raises(TokenError, match="error in cryptographic primitive"):
        signer.verify(token)
