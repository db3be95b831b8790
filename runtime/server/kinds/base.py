"""A kind's strategy (its behaviour): the generic registry asks, never compares names.

Kubernetes keeps what differs per kind in a strategy
(`pkg/registry/<group>/<kind>/strategy.go`) that its one generic store calls;
so does miniplane. A kind is a `KindInfo` (its facts,
`runtime.machinery.kindinfo`; the built-in kinds' are `runtime.models.catalog`)
plus a strategy class, registered on the `Scheme`; the registry, the HTTP
layer and the controllers read the facts and call the hooks, whatever the
kind. A strategy is composed of small parts, one concern each
(`runtime.server.kinds.parts`, as kube's RESTCreateStrategy,
RESTUpdateStrategy, RESTDeleteStrategy, TableConvertor):

- `Strategy`: a stored kind (decoding, create, update, delete, field
  selection, table columns, version conversion), with the plain stored
  kind's defaults, so a new kind overrides only what differs;
- `VirtualStrategy`: a virtual kind (a review: create only, never stored),
  which `evaluate`s instead of storing;
- a kind that has them mixes in `SchemeObserver` or `TokenIssuer`, and
  lists its subresources that are objects of their own in `subresources`
  (`runtime.server.kinds.subresources`: a Scale view, a token action).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Protocol

from runtime.server.kinds.parts import (
    Decoding, DeleteStrategy, FieldSelection, TableConvertor, UpdateStrategy, VersionConverter, spec_of,
)
from runtime.server.rbac import Decision, RoleSource
from runtime.server.rbac.attributes import Attributes
from runtime.server.rbac.user import UserInfo

if TYPE_CHECKING:
    from runtime.machinery.storedobject import StoredObject
    from runtime.machinery.scheme import ResourceType
    from runtime.server.tokenauth import TokenAuthenticator
    from runtime.server.tokens import TokenSigner
    from runtime.server.kinds.services.ranges import ServiceRanges
    from runtime.server.storage import Store

__all__ = ["Strategy", "VirtualStrategy", "PolicyContext", "AdmissionRequest", "AUDIT_ANNOTATIONS", "AUDIT_LEVEL", "spec_of"]


class PolicyContext(Protocol):
    """What a kind's admission and evaluation may ask of the server: authorization decisions, the RBAC
    policy, the service account token signer, the server's token authentication, reads of stored objects, the
    store itself (for what a kind reserves beside its objects: a Service's IPs and ports) and the ranges
    Services allocate from (`--service-cluster-ip-range`, `--service-node-port-range`)."""

    rbac: RoleSource
    tokens: "TokenSigner"
    authenticator: "TokenAuthenticator"
    store: "Store"
    service_ranges: "ServiceRanges"

    def decide(self, attrs: Attributes) -> Decision: ...

    async def read_current(self, rt: "ResourceType", key: str, name: str = "") -> "StoredObject | None": ...


@dataclass
class AdmissionRequest:
    """A write as admission sees it; `obj` may be changed by admission steps.

    `operation` is create, update or delete; `obj` the new object (a
    delete's: the object being deleted, as `old`); `subresource` the
    subresource written ("" for the main resource); `options` the write's
    options as parsed (`WriteOptions`, or `ParsedDeleteOptions` for a
    delete); `kind` the object's kind when it is not the resource's (an
    action subresource's body). Steps answer beside the object through `warn` (Warning headers
    of the answer) and `annotate` (the request's audit event), and keep
    their own per-request memory in `state` (a mutating webhook's
    reinvocation).
    """

    user: UserInfo
    resource: "ResourceType"
    operation: str  # create | update | delete
    obj: dict[str, Any]
    old: dict[str, Any] | None
    dry_run: bool
    #: What the kind's admission reserved beside the object settles once the write has (Kubernetes'
    #: BeginCreate/BeginUpdate FinishFunc): each is awaited with True if a create or update was stored, else
    #: False; a delete's with True once the object is removed (Kubernetes' AfterDelete), else not at all.
    on_finish: list[Callable[[bool], Awaitable[None]]] = field(default_factory=list)
    subresource: str = ""
    options: Any = None
    warnings: list[str] = field(default_factory=list)
    audit_annotations: dict[str, str] = field(default_factory=dict)
    state: dict[str, Any] = field(default_factory=dict)

    #: (group, version, kind) of `obj` when it is another kind than the resource's (an action subresource's
    #: body: a Binding, an Eviction, a TokenRequest); None: the resource's own kind.
    kind: tuple[str, str, str] | None = None
    #: The object's name and namespace (from its metadata unless the registry names them: an action's object).
    name: str = ""
    namespace: str = ""
    #: The registry generated `name` from generateName. kube generates it after mutating admission (in
    #: BeforeCreate): mutating webhooks are shown no name, validating ones the generated one.
    generated_name: bool = False

    def __post_init__(self) -> None:
        meta = (self.obj if self.obj is not None else self.old or {}).get("metadata") or {}
        self.name = self.name or meta.get("name") or ""
        self.namespace = self.namespace or meta.get("namespace") or ""

    def warn(self, text: str) -> None:
        """Answer `text` as a Warning header (once, however many steps say it)."""
        if text not in self.warnings:
            self.warnings.append(text)

    def annotate(self, key: str, value: str, *, level: str = "Metadata") -> None:
        """Record `key: value` in the request's audit event (the first value of a key stands, as kube's
        `AddAnnotation`); one of `level` Request is left out of an event audited below it (kube's
        `AddAnnotationWithLevel`: a mutating webhook's patch)."""
        self.audit_annotations.setdefault(key, value)
        sink = AUDIT_ANNOTATIONS.get()
        if sink is not None and (level == "Metadata" or AUDIT_LEVEL.get() in ("Request", "RequestResponse")):
            sink.setdefault(key, value)

    async def finish(self, committed: bool) -> None:
        """Run `on_finish` (the registry calls it once per admitted write, shielded from cancellation)."""
        for settle in self.on_finish:
            await settle(committed)


#: The audit annotations of the request being served: the HTTP layer sets it to its audit event's
#: annotations (a context variable, as the request's context carries kube's audit event to admission).
AUDIT_ANNOTATIONS: ContextVar[dict[str, str] | None] = ContextVar("miniplane_audit_annotations", default=None)
#: The audit level of the request being served (None, Metadata, Request, RequestResponse), set with
#: `AUDIT_ANNOTATIONS`: an annotation of a higher level than the event's is left out of it (kube's
#: `AddAnnotationWithLevel`).
AUDIT_LEVEL: ContextVar[str] = ContextVar("miniplane_audit_level", default="None")


class Strategy(Decoding, UpdateStrategy, DeleteStrategy, FieldSelection, TableConvertor, VersionConverter):
    """A stored kind's behaviour, composed of its parts (`runtime.server.kinds.parts`). Subclass it and
    override what differs; every hook has the plain stored kind's default.

    An instance is bound to its `Scheme` and `ResourceType` when registered
    (`self.scheme`, `self.rt`). Hooks are pure (no I/O) except `admit`, which
    may consult `PolicyContext`.
    """


class VirtualStrategy(Decoding, FieldSelection, TableConvertor, VersionConverter, ABC):
    """A virtual kind's behaviour (a review: create only, never stored): its answer to a create."""

    @abstractmethod
    def evaluate(self, policy: PolicyContext, user: UserInfo, namespace: str, obj: dict[str, Any]) -> dict[str, Any]:
        """The answer to a create of `obj` (its `status` filled in); raises a StatusError to refuse."""
