"""authentication/v1 `TokenReview`: is this bearer token valid, and whose is it? (virtual: create only)

As Kubernetes' `pkg/registry/authentication/tokenreview`: `spec.token` is
required (400 `token is required for TokenReview in authentication`); the
token goes through the server's whole token authentication (static tokens,
service account tokens) for `spec.audiences`, or the server's audiences
when none are given. The answer echoes the review with its `status`:
`authenticated` (left out when false, as Go's `omitempty`), `user` (an
empty object when not authenticated), the `audiences` the token is good
for, and `error` saying why a token was refused. Who may create one is
RBAC's to say (the bootstrap policy grants it to `system:auth-delegator`).
"""

from __future__ import annotations

from typing import Any

from runtime.machinery import errors
from runtime.server.kinds.base import PolicyContext, VirtualStrategy
from runtime.server.rbac.user import UserInfo

__all__ = ["TokenReviewStrategy"]


class TokenReviewStrategy(VirtualStrategy):
    """See the module doc."""

    def evaluate(self, policy: PolicyContext, user: UserInfo, namespace: str, obj: dict[str, Any]) -> dict[str, Any]:
        spec = obj.get("spec") or {}
        token = spec.get("token") or ""
        if not token:
            raise errors.BadRequest("token is required for TokenReview in authentication")
        answer = policy.authenticator.authenticate_token(token, tuple(spec.get("audiences") or ()) or None)
        status: dict[str, Any] = {"user": {}}
        if answer.user is not None:
            status = {"authenticated": True, "user": answer.user.as_json()}
            if answer.audiences:
                status["audiences"] = list(answer.audiences)
        if answer.error:
            status["error"] = answer.error
        obj["status"] = status
        return obj
