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
