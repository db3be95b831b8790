"""Every verb of the registry asks the authorizer before it reads or writes anything (kube-apiserver's order).

kube-apiserver authorizes a request's own verb in its filter chain, before
any handler touches storage; only an update or apply that turns into a
create asks for `create` too, later (withAuthorization in
endpoints/handlers/update.go and patch.go). Here the registry's store and
its watch cache reads are replaced by guards that fail any access made
before the authorizer was asked, and every verb runs once denied and once
allowed: a denied request touches nothing, and the first question any
request asks is its own verb.
"""

from __future__ import annotations

import copy
from typing import Any, Awaitable, Callable

import pytest

from runtime.machinery import errors
from runtime.server.bootstrap import bootstrap
from runtime.server.rbac import Decision
from runtime.server.rbac.attributes import Attributes
from runtime.server.rbac.user import UserInfo
from runtime.server.registry import Registry
from runtime.machinery.options import Body, ListOptions, ParsedDeleteOptions, PatchType, WriteOptions
from runtime.machinery.scheme import Scheme
from runtime.server.storage import MemoryStore

GROUP = "rbac.authorization.svc.io"
CALLER = UserInfo("caller", uid="caller", groups=("system:authenticated",))


class Recorder:
    """An authorizer that allows everything or nothing, and remembers what it was asked since `reset()`."""

    def __init__(self) -> None:
        self.allow = True
        self.asked: list[Attributes] = []
        self.violations: list[str] = []
        self.guarding = False

    def reset(self, *, allow: bool) -> None:
        self.allow, self.asked, self.violations, self.guarding = allow, [], [], True

    def authorize(self, attrs: Attributes) -> Decision:
        self.asked.append(attrs)
        return Decision(allowed=self.allow)

    def check(self, what: str) -> None:
        """Fail an access (`what`) made before the authorizer was asked, or after it denied."""
        if not self.guarding:
            return
        if not self.asked or not self.allow:
            self.violations.append(what)
            raise AssertionError(f"{what} before the authorizer allowed the request")


class GuardedStore:
    """The registry's store, each call checked by the recorder first."""

    def __init__(self, inner: Any, recorder: Recorder) -> None:
        self._inner, self._recorder = inner, recorder

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._inner, name)
        if not callable(attr):
            return attr

        def guarded(*args: Any, **kwargs: Any) -> Any:
            self._recorder.check(f"store.{name}")
            return attr(*args, **kwargs)
        return guarded


@pytest.fixture
async def guarded(nursery) -> tuple[Registry, Recorder]:
    recorder = Recorder()
    registry = Registry(MemoryStore(), Scheme(), authorizer=recorder)
    await nursery.start(registry.run)
    await bootstrap(registry)
    registry.store = GuardedStore(registry.store, recorder)  # type: ignore[assignment]
    kind_cache = registry.kind_cache

    def guarded_kind_cache(rt: Any) -> Any:
        recorder.check(f"cache of {rt.plural}")
        return kind_cache(rt)
    registry.kind_cache = guarded_kind_cache  # type: ignore[method-assign]
    return registry, recorder


def cluster_role(name: str) -> dict[str, Any]:
    return {"apiVersion": f"{GROUP}/v1", "kind": "ClusterRole", "metadata": {"name": name}, "rules": []}


def namespace(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


APPLY = WriteOptions(field_manager="me")
PATCHES: dict[PatchType, Any] = {
    PatchType.JSON: [{"op": "add", "path": "/metadata/labels", "value": {"a": "b"}}],
    PatchType.MERGE: {"metadata": {"labels": {"a": "b"}}},
    PatchType.STRATEGIC: {"metadata": {"labels": {"a": "b"}}},
}

Call = Callable[[Registry], Awaitable[Any]]


def requests() -> list[tuple[str, str, Call]]:
    """(id, the verb asked first, the call): every verb, on an existing object ("there") and a missing one."""
    rt_name = "ClusterRole"

    def rt(r: Registry, kind: str = rt_name) -> Any:
        return r.scheme.by_kind(kind)

    async def watch(r: Registry) -> None:
        stream = await r.open_watch(CALLER, rt(r), "", ListOptions(resource_version="0"))
        events = stream.__aiter__()
        try:
            await events.__anext__()
        finally:
            await events.aclose()

    calls: list[tuple[str, str, Call]] = [
        ("list", "list", lambda r: r.list(CALLER, rt(r), "", ListOptions())),
        ("watch", "watch", watch),
        ("create", "create", lambda r: r.create(CALLER, rt(r), "", Body(cluster_role("new")))),
        ("deletecollection", "deletecollection", lambda r: r.delete_collection(
            CALLER, rt(r), "", ListOptions(label_selector="none=here"), ParsedDeleteOptions())),
        ("get-status", "get", lambda r: r.get(CALLER, rt(r, "Namespace"), "", "default", subresource="status")),
        ("update-status", "update", lambda r: r.update(
            CALLER, rt(r, "Namespace"), "", "default", Body(namespace("default")), subresource="status")),
        ("update-status-missing", "update", lambda r: r.update(
            CALLER, rt(r, "Namespace"), "", "ghost", Body(namespace("ghost")), subresource="status")),
        ("create-token", "create", lambda r: r.create(
            CALLER, rt(r, "ServiceAccount"), "default", Body({"spec": {}}), name="default", subresource="token")),
        ("subjectaccessreview", "create", lambda r: r.create(
            CALLER, rt(r, "SubjectAccessReview"), "", Body({
                "apiVersion": "authorization.svc.io/v1", "kind": "SubjectAccessReview",
                "spec": {"user": "x", "resourceAttributes": {"verb": "get", "resource": "pods"}}}))),
    ]
    for name in ("there", "ghost"):
        calls += [
            (f"get-{name}", "get", lambda r, n=name: r.get(CALLER, rt(r), "", n)),
            (f"update-{name}", "update", lambda r, n=name: r.update(CALLER, rt(r), "", n, Body(cluster_role(n)))),
            (f"apply-{name}", "patch", lambda r, n=name: r.patch(
                CALLER, rt(r), "", n, PatchType.APPLY, Body(cluster_role(n)), APPLY)),
            (f"delete-{name}", "delete", lambda r, n=name: r.delete(CALLER, rt(r), "", n)),
        ]
        for kind, patch in PATCHES.items():
            calls.append((f"patch-{kind.value}-{name}", "patch", lambda r, n=name, k=kind, p=patch: r.patch(
                CALLER, rt(r), "", n, k, Body(copy.deepcopy(p)))))
    return calls


REQUESTS = requests()


async def _prepared(guarded: tuple[Registry, Recorder]) -> tuple[Registry, Recorder]:
    registry, recorder = guarded
    await registry.create(CALLER, registry.scheme.by_kind("ClusterRole"), "", Body(cluster_role("there")))
    return registry, recorder


@pytest.mark.parametrize("verb,call", [(v, c) for _, v, c in REQUESTS], ids=[i for i, _, _ in REQUESTS])
async def test_a_denied_request_touches_neither_store_nor_cache_and_asks_its_own_verb(guarded, verb, call):
    registry, recorder = await _prepared(guarded)
    recorder.reset(allow=False)
    with pytest.raises(errors.Forbidden):
        await call(registry)
    assert recorder.violations == []
    assert [a.verb for a in recorder.asked] == [verb]


@pytest.mark.parametrize("verb,call", [(v, c) for _, v, c in REQUESTS], ids=[i for i, _, _ in REQUESTS])
async def test_an_allowed_request_asks_its_own_verb_before_reading_anything(guarded, verb, call):
    registry, recorder = await _prepared(guarded)
    recorder.reset(allow=True)
    try:
        await call(registry)
    except (errors.NotFound, errors.Invalid):
        pass  # a missing object, a body the kind refuses: answered after authorization, which is what counts
    assert recorder.violations == []
    assert recorder.asked and recorder.asked[0].verb == verb


# RBAC storage asks `escalate` before its store creates (Kubernetes' policy-based storage): between the two.
async def test_a_put_that_creates_asks_update_then_create(guarded):
    registry, recorder = await _prepared(guarded)
    recorder.reset(allow=True)
    result = await registry.update(CALLER, registry.scheme.by_kind("ClusterRole"), "", "made",
                                   Body(cluster_role("made")))
    assert result.created
    assert [(a.verb, a.name) for a in recorder.asked] == [("update", "made"), ("escalate", "made"), ("create", "made")]


async def test_an_apply_that_creates_asks_patch_then_create(guarded):
    registry, recorder = await _prepared(guarded)
    recorder.reset(allow=True)
    result = await registry.patch(CALLER, registry.scheme.by_kind("ClusterRole"), "", "made", PatchType.APPLY,
                                  Body(cluster_role("made")), APPLY)
    assert result.created
    assert [(a.verb, a.name) for a in recorder.asked] == [("patch", "made"), ("escalate", "made"), ("create", "made")]


def _ns(r: Registry) -> Any:
    return r.scheme.by_kind("Namespace")


#: Each verb on a subresource no kind has.
UNSERVED: dict[str, Call] = {
    "get": lambda r: r.get(CALLER, _ns(r), "", "default", subresource="nope"),
    "update": lambda r: r.update(CALLER, _ns(r), "", "default", Body(namespace("default")), subresource="nope"),
    "patch": lambda r: r.patch(CALLER, _ns(r), "", "default", PatchType.MERGE, Body({}), subresource="nope"),
    "create": lambda r: r.create(CALLER, _ns(r), "", Body({}), name="default", subresource="nope"),
}


@pytest.mark.parametrize("verb", sorted(UNSERVED))
async def test_a_subresource_the_kind_does_not_have_is_403_then_405_touching_nothing(guarded, verb):
    """In process (the HTTP layer answers 404 before): refused as a verb the kind does not offer."""
    registry, recorder = await _prepared(guarded)
    for allow, refusal in ((False, errors.Forbidden), (True, errors.MethodNotAllowed)):
        recorder.reset(allow=allow)
        with pytest.raises(refusal):
            await UNSERVED[verb](registry)
        assert recorder.violations == []
        assert [(a.verb, a.subresource) for a in recorder.asked] == [(verb, "nope")]
