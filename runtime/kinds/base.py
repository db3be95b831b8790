"""`KindInfo` (a kind's facts) and `Strategy` (its behaviour): the generic registry asks, never compares names.

Kubernetes keeps what differs per kind in a strategy
(`pkg/registry/<group>/<kind>/strategy.go`) that its one generic store calls;
so does miniplane. A kind is a `KindInfo` plus a `Strategy` subclass,
registered on the `Scheme`; the registry, the HTTP layer and the controllers
read the facts and call the hooks below, whatever the kind. The defaults here
are those of a plain stored kind, so a new kind overrides only what differs.

Facts (class attributes): `allow_create_on_update` (a PUT of a missing object
creates it; Kubernetes' AllowCreateOnUpdate), `namespace_kind` (objects of this kind are namespaces: other
kinds live in them, and they are authorized in their own scope),
`feeds_authorizer` (the RBAC index follows these objects),
`returns_deleted_object` (an immediate delete answers the object, not a
Status), `anyone_may_create` (a review every caller may ask),
`status_subresource` (spec and status are written apart), `counts_generation`
(the server sets and counts `metadata.generation`: off, as in Kubernetes'
generic store, but for CRDs and custom kinds), `field_labels`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Protocol

from pydantic import BaseModel

from runtime import errors

from runtime.kinds.columns import DEFAULT_COLUMNS, Columns
from runtime.kinds.decoding import decode_object
from runtime.kinds.propagation import deletion_finalizers
from runtime.rbac import Decision, RoleSource
from runtime.rbac.attributes import Attributes
from runtime.rbac.user import UserInfo
from runtime.requests import Body, DeleteOptions
from runtime.validation import FieldError, validate_object_meta

if TYPE_CHECKING:
    from runtime.objects import StoredObject
    from runtime.scheme import ResourceType, Scheme
    from runtime.tokenauth import TokenAuthenticator
    from runtime.tokens import TokenClaims, TokenSigner

__all__ = ["KindInfo", "Strategy", "PolicyContext", "AdmissionRequest", "STORED_VERBS", "STATUS_VERBS"]

#: Verbs of a stored kind's resource.
STORED_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
#: Verbs of a `status`-like subresource.
STATUS_VERBS = ("get", "patch", "update")

#: Fields the server owns: an update body cannot set them.
_SERVER_META = ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation")
#: What is not an object's content: its type and its metadata.
_TYPE_META = ("metadata", "apiVersion", "kind")
#: The largest `metadata.generation` (Go's int64).
_INT64_MAX = 2**63 - 1
#: ObjectMeta's collections are `omitempty` in Kubernetes' JSON: an emptied one is not kept.
_OMITEMPTY_META = ("labels", "annotations", "ownerReferences", "finalizers", "managedFields")


@dataclass(frozen=True)
class KindInfo:
    """A kind's facts, independent of the API domain.

    `group_prefix` is "" for core and otherwise the group name without the
    domain (`rbac.authorization`); `group` an absolute group name instead (custom
    kinds). `subresources` maps each subresource to its verbs.
    """

    group_prefix: str
    kind: str
    plural: str
    singular: str
    namespaced: bool
    model: type[BaseModel]
    list_model: type[BaseModel] | None = None
    short_names: tuple[str, ...] = ()
    verbs: tuple[str, ...] = STORED_VERBS
    categories: tuple[str, ...] = ()
    virtual: bool = False  # a review: create only, never stored
    subresources: tuple[tuple[str, tuple[str, ...]], ...] = ()
    group: str | None = None
    version: str = "v1"

    def subresource_verbs(self, name: str) -> tuple[str, ...] | None:
        """The verbs of subresource `name`, None when the kind has no such subresource."""
        return dict(self.subresources).get(name)


class PolicyContext(Protocol):
    """What a kind's admission and evaluation may ask of the server: authorization decisions, the RBAC
    policy, the service account token signer, the server's token authentication, and reads of stored objects."""

    rbac: RoleSource
    tokens: "TokenSigner"
    authenticator: "TokenAuthenticator"

    def decide(self, attrs: Attributes) -> Decision: ...

    async def read_current(self, rt: "ResourceType", key: str, name: str = "") -> "StoredObject | None": ...


@dataclass
class AdmissionRequest:
    """A write as admission sees it; `obj` may be changed by admission steps."""

    user: UserInfo
    resource: "ResourceType"
    operation: str  # create | update | delete
    obj: dict[str, Any]
    old: dict[str, Any] | None
    dry_run: bool


class Strategy:
    """The behaviour of one kind. Subclass it; every hook has the plain stored kind's default.

    An instance is bound to its `Scheme` and `ResourceType` when registered
    (`self.scheme`, `self.rt`). Hooks are pure (no I/O) except `admit` and
    `evaluate`, which may consult `PolicyContext`.
    """

    allow_create_on_update = True
    #: Strategic merge patch is served (custom kinds: 415).
    supports_strategic_merge = True
    #: The OpenAPI v3 schema of the kind when it has no pydantic model of its own (custom kinds).
    openapi_schema: dict[str, Any] | None = None
    #: `observe(event_type, obj)` is called for every change of this kind the cache sees.
    observes = False
    namespace_kind = False
    feeds_authorizer = False
    returns_deleted_object = False
    anyone_may_create = False
    status_subresource = False
    #: Field selector labels (Kubernetes' DefaultNamespaceScopedAttr / per-kind field label conversion).
    field_labels: tuple[str, ...] = ("metadata.name", "metadata.namespace")
    columns: Columns = DEFAULT_COLUMNS

    def __init__(self, scheme: "Scheme", rt: "ResourceType") -> None:
        self.scheme = scheme
        self.rt = rt

    @property
    def merge_schema(self) -> Any:
        """What the patch engines merge by: the model (its field markers), or a schema node."""
        return self.rt.model

    # ---- scope -------------------------------------------------------------------------------------

    def authorization_namespace(self, namespace: str, name: str) -> str:
        """The namespace a request is authorized in: the path's, "" for cluster-scoped kinds."""
        if self.namespace_kind:
            # A namespace is authorized in its own scope (Kubernetes' RequestInfo), so a RoleBinding
            # in namespace "a" can grant reading namespace "a" itself.
            return name
        return namespace if self.rt.namespaced else ""

    # ---- writes ------------------------------------------------------------------------------------

    def decode(self, body: Body, field_validation: str,
               extra_problems: tuple[str, ...] = ()) -> tuple[dict[str, Any], list[str]]:
        """A request body as an object of this kind, and its field-validation warnings.

        Raises BadRequest (wrong type, wrong apiVersion/kind, Strict and an
        unknown or duplicate field); see `runtime.kinds.decoding`.
        """
        return decode_object(self.rt, body, field_validation=field_validation, extra_problems=extra_problems)

    def default(self, obj: dict[str, Any]) -> None:
        """Kubernetes' scheme defaulting of a new object as decoded (before its managed fields are
        recorded: the creating manager owns what this sets). None by default."""

    def prepare_for_create(self, obj: dict[str, Any]) -> None:
        """Defaults a new object (after the server set uid, timestamps and a counted generation;
        what this sets is not owned by the creating manager)."""
        _drop_empty_meta(obj["metadata"])

    def prepare_for_update(self, new: dict[str, Any], old: dict[str, Any], subresource: str = "") -> None:
        """Carries server-owned fields over from `old`, keeps the write to its subresource
        (`keep_to_subresource`), and counts changes in `generation` (`counts_generation`)."""
        meta, old_meta = new["metadata"], old["metadata"]
        _drop_empty_meta(meta)
        for name in _SERVER_META:
            if name in old_meta:
                meta[name] = old_meta[name]
            else:
                meta.pop(name, None)
        if self.rt.namespaced:
            meta["namespace"] = old_meta.get("namespace")
        self.keep_to_subresource(new, old, subresource)
        if self.counts_generation and self.counted(new) != self.counted(old):
            new["metadata"]["generation"] = int(old_meta.get("generation") or 0) + 1

    #: The server sets `metadata.generation` to 1 on create and counts changes of `counted` in it.
    #: Kubernetes leaves generation to each kind's strategy: of the kinds served here only
    #: CustomResourceDefinitions and custom resources count it; the others (RBAC, Namespace,
    #: ServiceAccount, Lease, Event) keep what a create sent (usually none) and no update changes it.
    counts_generation = False

    def counted(self, obj: dict[str, Any]) -> dict[str, Any]:
        """What `generation` counts changes of: all but metadata, and status when a subresource writes it."""
        return spec_of(obj) if self.status_subresource else {k: v for k, v in obj.items() if k not in _TYPE_META}

    def keep_to_subresource(self, new: dict[str, Any], old: dict[str, Any], subresource: str) -> None:
        """Restrict an update to what its (sub)resource may change.

        With `status_subresource`, the main resource keeps the old status and
        `status` changes only status (metadata and spec stay as stored).
        """
        if not self.status_subresource:
            return
        if subresource == "status":
            status = new.get("status")
            new.clear()
            new.update({k: v for k, v in old.items() if k != "status"})
            new["metadata"] = dict(old["metadata"])
            if status is not None:
                new["status"] = status
        elif "status" in old:
            new["status"] = old["status"]
        else:
            new.pop("status", None)

    def validate(self, obj: dict[str, Any]) -> list[FieldError]:
        """Every rule of a new object: ObjectMeta, then the kind's own (`validate_spec`)."""
        errs = validate_object_meta(obj.get("metadata") or {}, namespaced=self.rt.namespaced,
                                    name_rule=self.name_rule, kube_finalizers=self.kube_finalizers)
        return errs + self.validate_spec(obj)

    #: How names are checked: `path-segment` (most kinds), `dns-label`, `dns-subdomain`.
    name_rule = "path-segment"
    #: ObjectMeta is checked by Kubernetes' core validation, which refuses a finalizer without a
    #: domain unless standard (`metadata.finalizers[0]`); False where apimachinery's rules alone
    #: apply (Leases, CRDs, custom resources).
    kube_finalizers = True

    def validate_spec(self, obj: dict[str, Any]) -> list[FieldError]:
        """The kind's own rules beyond ObjectMeta (none by default)."""
        return []

    def validate_update(self, new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
        """The create rules plus what may not change (nothing more by default)."""
        return self.validate(new)

    def warnings(self, old: dict[str, Any] | None, new: dict[str, Any], manager: str) -> list[str]:
        """Warnings a write earns (none by default); `manager` is its field manager."""
        return []

    async def admit(self, policy: PolicyContext, request: AdmissionRequest) -> None:
        """The kind's own admission, before user plug-ins: raise a StatusError to refuse."""

    # ---- deletion ----------------------------------------------------------------------------------

    def check_delete(self, name: str) -> None:
        """Raise a StatusError when this object may never be deleted."""

    def has_finalizers(self, obj: dict[str, Any]) -> bool:
        """Whether something must still happen before the object may go."""
        return bool(obj["metadata"].get("finalizers"))

    def deletion_finalizers(self, finalizers: list[str], options: DeleteOptions) -> list[str]:
        """The garbage collector's finalizers a first delete with `options` leaves (see `propagation`)."""
        return deletion_finalizers(finalizers, options)

    def prepare_for_delete(self, obj: dict[str, Any]) -> None:
        """Marks an object that becomes terminating (it already has its deletionTimestamp) as the
        generic store's markAsDeleting does: `deletionGracePeriodSeconds: 0`, a positive generation
        bumped (never past int64's largest, which a create may send)."""
        meta = obj["metadata"]
        meta["deletionGracePeriodSeconds"] = 0
        if 0 < int(meta.get("generation") or 0) < _INT64_MAX:
            meta["generation"] = int(meta["generation"]) + 1

    def should_delete_on_update(self, obj: dict[str, Any]) -> bool:
        """A terminating object whose last finalizer an update removed is gone."""
        return bool(obj["metadata"].get("deletionTimestamp")) and not self.has_finalizers(obj)

    def precondition_failed(self, name: str, field: str, wanted: str, actual: str) -> errors.Conflict:
        """A delete precondition (`field` "UID" or "ResourceVersion") that does not match, as Kubernetes'
        rest.BeforeDelete words it: a Conflict on `<Kind>.<group>`, details naming the kind."""
        tail = ("The object might have been deleted and then recreated" if field == "UID"
                else "The object might have been modified")
        rt = self.rt
        qualified = f"{rt.kind}.{rt.group}" if rt.group else rt.kind
        return errors.Conflict(f'Operation cannot be fulfilled on {qualified} "{name}": the {field} in the '
                               f"precondition ({wanted}) does not match the {field} in record ({actual}). {tail}",
                               name=name, group=rt.group, kind=rt.kind)

    # ---- reads -------------------------------------------------------------------------------------

    def selectable_fields(self, obj: dict[str, Any]) -> dict[str, str]:
        """The values a field selector matches `obj` on (Kubernetes' `<Kind>ToSelectableFields`)."""
        meta = obj["metadata"]
        return {"metadata.name": meta.get("name", ""), "metadata.namespace": meta.get("namespace", "")}

    #: Objects are stored in another version than this kind's (a custom kind's non-storage version):
    #: `present` rewrites what is read.
    converts = False

    def present(self, obj: "StoredObject") -> "StoredObject":
        """A stored object as this kind's version shows it (the object itself unless `converts`)."""
        return obj

    def has_view(self, subresource: str) -> bool:
        """Whether `subresource` is another kind's view of the object (a Scale), not the object itself."""
        return False

    def view_kind(self, subresource: str) -> tuple[str, str, str] | None:
        """(group, version, kind) of a subresource that is another kind: a view (`has_view`, a custom kind's
        Scale) or the body one POSTs (a ServiceAccount's `token`: a TokenRequest); None: the object's own."""
        return None

    def view(self, subresource: str, obj: dict[str, Any]) -> dict[str, Any]:
        """What a GET of `subresource` answers (the object itself, unless the subresource is another kind)."""
        return obj

    def from_view(self, subresource: str, view: dict[str, Any], current: dict[str, Any]) -> dict[str, Any]:
        """The object a write of a subresource that is another kind (a Scale) makes of `current`."""
        raise NotImplementedError(f"{subresource} of {self.rt.kind} is the object itself")

    def observe(self, event_type: str, obj: dict[str, Any]) -> None:
        """Follow a change of one object of this kind (only when `observes`)."""

    def observe_list(self, objs: list[dict[str, Any]]) -> None:
        """Follow a (re)list: `objs` are every object of this kind now."""
        for obj in objs:
            self.observe("ADDED", obj)

    # ---- subresources of another kind --------------------------------------------------------------

    def subresource_model(self, subresource: str) -> type[BaseModel] | None:
        """The model of a subresource one POSTs another kind to (`view_kind`; what OpenAPI shows), else None."""
        return None

    def decode_subresource(self, subresource: str, body: Body, field_validation: str) -> tuple[dict[str, Any],
                                                                                               list[str]]:
        """The body of a POST to `subresource`, decoded as its own kind; raises BadRequest."""
        raise NotImplementedError(f"{self.rt.kind} has no subresource one creates")

    async def create_subresource(self, policy: PolicyContext, user: UserInfo, subresource: str, namespace: str,
                                 name: str, request: dict[str, Any],
                                 load: Callable[[], Awaitable[dict[str, Any]]]) -> tuple[dict[str, Any], list[str]]:
        """The answer to a POST of `request` to `subresource` of object `name`, and its warnings.

        `load()` reads the object (404 when it is missing); nothing is stored
        by the generic code. Raises a StatusError to refuse.
        """
        raise NotImplementedError(f"{self.rt.kind} has no subresource one creates")

    # ---- identities --------------------------------------------------------------------------------

    #: Objects of this kind are identities whose tokens the server signs (ServiceAccount).
    issues_tokens = False

    def token_user(self, claims: "TokenClaims", lookup: Callable[[Any, str, str], "dict[str, Any] | None"],
                   now: float) -> UserInfo:
        """The user a verified token of this kind's identity is; raises TokenError once it is no longer valid.

        `lookup(resource_type, namespace, name)` reads the watch cache.
        """
        raise NotImplementedError(f"{self.rt.kind} issues no tokens")

    # ---- virtual kinds -----------------------------------------------------------------------------

    def evaluate(self, policy: PolicyContext, user: UserInfo, namespace: str, obj: dict[str, Any]) -> dict[str, Any]:
        """A virtual kind's answer to a create (the reviews); stored kinds never get here."""
        raise NotImplementedError(f"{self.rt.kind} is stored, not evaluated")


def spec_of(obj: dict[str, Any]) -> dict[str, Any]:
    """Everything but metadata and status: what a kind with a status subresource counts changes of."""
    return {k: v for k, v in obj.items() if k not in _TYPE_META and k != "status"}


def _drop_empty_meta(meta: dict[str, Any]) -> None:
    for name in _OMITEMPTY_META:
        if name in meta and not meta[name]:
            del meta[name]
