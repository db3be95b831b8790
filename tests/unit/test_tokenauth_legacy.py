"""Legacy (Secret-based) service account tokens as Kubernetes' legacy validator looks them up (`runtime.server.tokenauth`).

A verified legacy token is good only while its Secret stands holding that
very token and its service account stands with the uid the token names;
each refusal in Kubernetes' words. The lookups are a dict here (the watch
cache in the server).
"""

from __future__ import annotations

import base64
from typing import Any

import pytest

from runtime.server.tokenauth import INVALID_SINCE_LABEL, legacy_user
from runtime.server.tokens import TokenError, TokenSigner, generate_key

SECRETS, ACCOUNTS = "secrets", "serviceaccounts"


class Rt:
    def __init__(self, plural: str) -> None:
        self.plural = plural


SECRET_RT, ACCOUNT_RT = Rt(SECRETS), Rt(ACCOUNTS)


@pytest.fixture
def signer() -> TokenSigner:
    return TokenSigner(generate_key(), issuer="https://issuer", audiences=("api",))


def objects(token: str, **meta: Any) -> dict[tuple[str, str, str], dict[str, Any]]:
    secret = {"metadata": {"name": "robot-token", "namespace": "ns", **meta},
              "type": "kubernetes.io/service-account-token",
              "data": {"token": base64.b64encode(token.encode()).decode()}}
    account = {"metadata": {"name": "robot", "namespace": "ns", "uid": "uid-1"}}
    return {(SECRETS, "ns", "robot-token"): secret, (ACCOUNTS, "ns", "robot"): account}


def user(signer: TokenSigner, token: str, found: dict[tuple[str, str, str], dict[str, Any]]):
    claims = signer.verify(token)
    return legacy_user(claims, token, lambda rt, ns, name: found.get((rt.plural, ns, name)), SECRET_RT, ACCOUNT_RT)


def refusal(signer, token, found) -> str:
    with pytest.raises(TokenError) as refused:
        user(signer, token, found)
    return str(refused.value)


def test_a_legacy_token_is_its_service_account_in_kubernetes_groups(signer):
    token = signer.issue_legacy("ns", "robot", "uid-1", "robot-token")
    who = user(signer, token, objects(token))
    assert (who.name, who.uid) == ("system:serviceaccount:ns:robot", "uid-1")
    assert who.groups == ("system:serviceaccounts", "system:serviceaccounts:ns")


def test_a_legacy_token_is_refused_once_its_secret_is_gone_or_being_deleted(signer):
    token = signer.issue_legacy("ns", "robot", "uid-1", "robot-token")
    found = objects(token)
    del found[(SECRETS, "ns", "robot-token")]
    assert refusal(signer, token, found) == "Token has been invalidated"
    assert refusal(signer, token, objects(token, deletionTimestamp="2026-01-01T00:00:00Z")) == \
        "Token has been invalidated"


def test_a_legacy_token_no_longer_in_its_secret_is_refused(signer):
    token = signer.issue_legacy("ns", "robot", "uid-1", "robot-token")
    other = signer.issue_legacy("ns", "robot", "uid-1", "robot-token-2")
    assert refusal(signer, token, objects(other)) == "Token does not match server's copy"
    found = objects(token)
    del found[(SECRETS, "ns", "robot-token")]["data"]
    assert refusal(signer, token, found) == "Token does not match server's copy"


def test_a_legacy_token_is_refused_once_its_account_is_gone_deleted_or_recreated(signer):
    token = signer.issue_legacy("ns", "robot", "uid-1", "robot-token")
    found = objects(token)
    del found[(ACCOUNTS, "ns", "robot")]
    assert refusal(signer, token, found) == 'serviceaccounts "robot" not found'
    found = objects(token)
    found[(ACCOUNTS, "ns", "robot")]["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    assert refusal(signer, token, found) == "ServiceAccount ns/robot has been deleted"
    found = objects(token)
    found[(ACCOUNTS, "ns", "robot")]["metadata"]["uid"] = "uid-2"
    assert refusal(signer, token, found) == "ServiceAccount UID (uid-2) does not match claim (uid-1)"


def test_a_legacy_token_whose_secret_is_labelled_invalid_is_refused(signer):
    token = signer.issue_legacy("ns", "robot", "uid-1", "robot-token")
    found = objects(token, labels={INVALID_SINCE_LABEL: "2026-01-01"})
    assert refusal(signer, token, found) == (
        "the token in secret ns/robot-token for service account ns/robot has been marked invalid. Use tokens from "
        "the TokenRequest API or manually created secret-based tokens, or remove the "
        "'kubernetes.io/legacy-token-invalid-since' label from the secret to temporarily allow use of this token")


def test_a_legacy_token_is_checked_in_kubernetes_order_secret_then_account_then_invalid_label(signer):
    # legacy.go: the Secret (gone, then its token), then the account (gone, deleted, uid), the label last.
    token = signer.issue_legacy("ns", "robot", "uid-1", "robot-token")
    other = signer.issue_legacy("ns", "robot", "uid-1", "robot-token-2")
    labelled = {"labels": {INVALID_SINCE_LABEL: "2026-01-01"}}
    found = objects(other, **labelled)
    del found[(ACCOUNTS, "ns", "robot")]
    assert refusal(signer, token, found) == "Token does not match server's copy"
    found = objects(token, **labelled)
    found[(ACCOUNTS, "ns", "robot")]["metadata"]["uid"] = "uid-2"
    assert refusal(signer, token, found) == "ServiceAccount UID (uid-2) does not match claim (uid-1)"
