"""The registry's parts are given to it: authorizer, token authenticator, admission, signer (issue 36, point 2).

kube-apiserver builds its authorizer, authenticator and admission chain once
from configuration and hands them to the storage it builds
(`k8s.io/apiserver/pkg/server/config.go`); nothing is set on the storage
afterwards. So here: `Registry(...)` takes each part as an argument, uses the
one it was given, and the registry has no authentication of its own.
"""

from __future__ import annotations

from typing import Any

from runtime.server.bootstrap import bootstrap
from runtime.server.rbac import Decision, RBACAuthorizer, RBACIndex
from runtime.server.rbac.attributes import Attributes
from runtime.server.rbac.user import UserInfo
from runtime.server.registry import AdmissionPlugin, Registry, watch_cache_for
from runtime.machinery.options import Body
from runtime.machinery.scheme import Scheme
from runtime.server.storage import MemoryStore
from runtime.server.tokenauth import SignedTokenAuthenticator
from runtime.server.tokens import TokenAuthentication, TokenSigner

ADMIN = UserInfo("admin", uid="admin", groups=("system:masters",))


class AllowAll:
    def __init__(self) -> None:
        self.asked: list[Attributes] = []

    def authorize(self, attrs: Attributes) -> Decision:
        self.asked.append(attrs)
        return Decision(allowed=True)


class OneToken:
    """A token authenticator that knows one token."""

    def authenticate_token(self, token: str, audiences: tuple[str, ...] | None = None) -> TokenAuthentication:
        if token == "known":
            return TokenAuthentication(UserInfo("known-user", groups=("system:authenticated",)), ("aud",))
        return TokenAuthentication(None, error="invalid bearer token")


def token_review(token: str) -> Body:
    return Body({"apiVersion": "authentication.svc.io/v1", "kind": "TokenReview", "spec": {"token": token}})


async def test_the_registry_uses_the_parts_it_is_given(nursery):
    store, scheme = MemoryStore(), Scheme()
    authorizer, seen = AllowAll(), []
    signer = TokenSigner()
    registry = Registry(store, scheme, authorizer, authenticator=OneToken(), tokens=signer,
                        admission=[AdmissionPlugin("seen", lambda req: seen.append(req.operation))])
    await nursery.start(registry.run)
    review = await registry.create(ADMIN, scheme.by_kind("TokenReview"), "", token_review("known"))
    assert review.obj.obj["status"]["user"]["username"] == "known-user"
    await registry.create(ADMIN, scheme.by_kind("Namespace"), "", Body(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}}))
    assert seen == ["create"]
    assert authorizer.asked and registry.authorizer is authorizer and registry.tokens is signer


async def test_the_assembly_order_builds_every_part_before_the_registry(nursery):
    store, scheme = MemoryStore(), Scheme()
    cache = watch_cache_for(store, scheme, history_seconds=60)
    rbac = RBACIndex()
    signer = TokenSigner()
    signed = SignedTokenAuthenticator(signer, scheme, cache)
    registry = Registry(store, scheme, RBACAuthorizer(rbac), rbac=rbac, cache=cache, authenticator=signed,
                        tokens=signer)
    await nursery.start(registry.run)
    await bootstrap(registry)
    assert registry.cache is cache and registry.rbac is rbac
    sa = scheme.by_kind("ServiceAccount")
    await registry.create(ADMIN, sa, "default", Body(
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "robot", "namespace": "default"}}))
    issued = await registry.create(ADMIN, sa, "default", Body(
        {"spec": {}}),
        name="robot", subresource="token")
    answer = signed.authenticate_token(issued.obj.obj["status"]["token"])
    assert answer.user is not None and answer.user.name == "system:serviceaccount:default:robot"
    refused = signed.authenticate_token("not-a-token")
    assert refused.user is None and refused.error == "invalid bearer token"
    assert signed.authenticate_signed("not-a-token") is None


def test_authentication_is_not_the_registrys():
    assert not [name for name in ("authenticate_token", "authenticate_signed_token", "token_authenticator")
                if hasattr(Registry, name)]


def test_default_parts_serve_an_in_process_registry():
    registry: Any = Registry(MemoryStore(), Scheme())
    assert registry.admission == () and registry.authorizer is not None


def test_admission_plugins_are_fixed_at_construction():
    given = [AdmissionPlugin("given", lambda req: None)]
    registry: Any = Registry(MemoryStore(), Scheme(), admission=given)
    given.append(AdmissionPlugin("late", lambda req: None))
    assert isinstance(registry.admission, tuple) and [p.name for p in registry.admission] == ["given"]
