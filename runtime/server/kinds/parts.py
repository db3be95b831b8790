"""A kind's strategy parts, one concern each, as kube-apiserver's small REST interfaces.

kube-apiserver keeps a kind's behaviour in small interfaces
(`registry/rest`: RESTCreateStrategy, RESTUpdateStrategy,
RESTDeleteStrategy, TableConvertor, ...) that its generic store composes.
So does miniplane: each base here is one concern of a handful of members,
with the plain stored kind's defaults; `Strategy` (runtime.server.kinds.base)
composes the stored kind's parts, `VirtualStrategy` a review's. A kind
subclasses the composite and overrides what differs; the optional parts
(`SchemeObserver`, `TokenIssuer`) a kind mixes in only when it has them, and
the generic code asks `isinstance`, never a flag. Subresources that are
objects of their own are in `runtime.server.kinds.subresources`.

- `KindStrategy`: the binding (`scheme`, `rt`) and the request's scope;
- `Decoding`: a body as an object of the kind;
- `CreateStrategy`, `UpdateStrategy`, `DeleteStrategy`: the write hooks;
- `FieldSelection`, `TableConvertor`, `VersionConverter`: reads;
- `SchemeObserver`, `TokenIssuer`: optional.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, Callable, Mapping

from runtime.machinery import errors

from runtime.server.kinds.columns import DEFAULT_COLUMNS, Columns
from runtime.server.kinds.decoding import decode_object
from runtime.server.kinds.deletion_propagation import deletion_finalizers
from runtime.server.kinds.subresources import ObjectSubresource, StatusSubresource, Subresource
from runtime.server.rbac.user import UserInfo
from runtime.machinery.options import Body, ParsedDeleteOptions
from runtime.machinery.validation import FieldError, validate_object_meta

if TYPE_CHECKING:
    from runtime.server.kinds.base import AdmissionRequest, PolicyContext
    from runtime.machinery.storedobject import StoredObject
    from runtime.machinery.scheme import ResourceType, Scheme
    from runtime.server.tokens import TokenClaims

__all__ = ["KindStrategy", "Decoding", "CreateStrategy", "UpdateStrategy", "DeleteStrategy", "FieldSelection",
           "TableConvertor", "VersionConverter", "SchemeObserver", "TokenIssuer", "spec_of",
           "DEFAULT_FIELD_LABEL_ERROR", "FIELD_LABEL_NOT_SUPPORTED"]

#: `runtime.DefaultMetaV1FieldSelectorConversion`'s error: a kind with no field label conversion of its own.
DEFAULT_FIELD_LABEL_ERROR = '{quoted} is not a known field selector: only "metadata.name", "metadata.namespace"'
#: The error of most kinds' own field label conversions (`pkg/apis/core/v1/conversion.go`, a custom resource's).
FIELD_LABEL_NOT_SUPPORTED = "field label not supported: {label}"
#: Fields the server owns: an update body cannot set them.
_SERVER_META = ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation")
#: What is not an object's content: its type and its metadata.
_TYPE_META = ("metadata", "apiVersion", "kind")
#: The largest `metadata.generation` (Go's int64).
_INT64_MAX = 2**63 - 1
#: ObjectMeta's collections are `omitempty` in Kubernetes' JSON: an emptied one is not kept.
_OMITEMPTY_META = ("labels", "annotations", "ownerReferences", "finalizers", "managedFields")


class KindStrategy:
    """What every kind has: its binding to the `Scheme` and `ResourceType` it was registered as, its
    scope facts, and its subresources that are objects of their own.

    Facts: `namespace_kind` (objects of this kind are namespaces: other kinds
    live in them, and they are authorized in their own scope),
    `feeds_authorizer` (the RBAC index follows these objects),
    `anyone_may_create` (a review every caller may ask), `openapi_schema`
    (the kind's OpenAPI v3 schema when it has no pydantic model of its own),
    `supports_strategic_merge` (custom kinds: 415).
    """

    namespace_kind = False
    feeds_authorizer = False
    anyone_may_create = False
    openapi_schema: dict[str, Any] | None = None
    supports_strategic_merge = True
    #: Subresources that are objects of their own (`runtime.server.kinds.subresources`), by name.
    subresources: Mapping[str, Any] = {}

    def __init__(self, scheme: "Scheme", rt: "ResourceType") -> None:
        self.scheme = scheme
        self.rt = rt

    def authorization_namespace(self, namespace: str, name: str) -> str:
        """The namespace a request is authorized in: the path's, "" for cluster-scoped kinds."""
        if self.namespace_kind:
            # A namespace is authorized in its own scope (Kubernetes' RequestInfo), so a RoleBinding
            # in namespace "a" can grant reading namespace "a" itself.
            return name
        return namespace if self.rt.namespaced else ""


class Decoding(KindStrategy):
    """A request body as an object of the kind."""

    def decode(self, body: Body, field_validation: str,
               extra_problems: tuple[str, ...] = ()) -> tuple[dict[str, Any], list[str]]:
        """A request body as an object of this kind, and its field-validation warnings.

        Raises BadRequest (wrong type, wrong apiVersion/kind, Strict and an
        unknown or duplicate field); see `runtime.server.kinds.decoding`.
        """
        return decode_object(self.rt, body, field_validation=field_validation, extra_problems=extra_problems)


class CreateStrategy(KindStrategy):
    """RESTCreateStrategy: defaults, server fields, validation, warnings, the kind's own admission."""

    #: The server sets `metadata.generation` to 1 on create and counts changes of `counted` in it.
    #: Kubernetes leaves generation to each kind's strategy: of the kinds served here only
    #: CustomResourceDefinitions and custom resources count it; the others (RBAC, Namespace,
    #: ServiceAccount, Lease, Event) keep what a create sent (usually none) and no update changes it.
    counts_generation = False
    #: How names are checked: `path-segment` (most kinds), `dns-label`, `dns-subdomain`.
    name_rule = "path-segment"
    #: ObjectMeta is checked by Kubernetes' core validation, which refuses a finalizer without a
    #: domain unless standard (`metadata.finalizers[0]`); False where apimachinery's rules alone
    #: apply (Leases, CRDs, custom resources).
    kube_finalizers = True

    def default(self, obj: dict[str, Any]) -> None:
        """Kubernetes' scheme defaulting of a new object as decoded (before its managed fields are
        recorded: the creating manager owns what this sets). None by default."""

    def prepare_for_create(self, obj: dict[str, Any]) -> None:
        """Defaults a new object (after the server set uid, timestamps and a counted generation;
        what this sets is not owned by the creating manager)."""
        _drop_empty_meta(obj["metadata"])

    def validate(self, obj: dict[str, Any]) -> list[FieldError]:
        """Every rule of a new object: ObjectMeta, then the kind's own (`validate_spec`)."""
        errs = validate_object_meta(obj.get("metadata") or {}, namespaced=self.rt.namespaced,
                                    name_rule=self.name_rule, kube_finalizers=self.kube_finalizers)
        return errs + self.validate_spec(obj)

    def validate_spec(self, obj: dict[str, Any]) -> list[FieldError]:
        """The kind's own rules beyond ObjectMeta (none by default)."""
        return []

    def warnings(self, old: dict[str, Any] | None, new: dict[str, Any], manager: str) -> list[str]:
        """Warnings a write earns (none by default); `manager` is its field manager."""
        return []

    async def admit(self, policy: "PolicyContext", request: "AdmissionRequest") -> None:
        """The kind's own admission, before user plug-ins: raise a StatusError to refuse."""


class UpdateStrategy(CreateStrategy):
    """RESTUpdateStrategy: what an update keeps, counts and validates (the create rules plus its own).

    `allow_create_on_update`: a PUT of a missing object creates it
    (Kubernetes' AllowCreateOnUpdate).
    """

    allow_create_on_update = True

    @property
    def status_subresource(self) -> bool:
        """Spec and status are written apart: the kind has a `status` subresource (`StatusSubresource`)."""
        return isinstance(self.subresources.get("status"), StatusSubresource)

    @property
    def merge_schema(self) -> Any:
        """What the patch engines merge by: the model (its field markers), or a schema node."""
        return self.rt.model

    def prepare_for_update(self, new: dict[str, Any], old: dict[str, Any],
                           subresource: Subresource | None = None) -> None:
        """Carries server-owned fields over from `old`, keeps the write to its subresource (None: the
        main resource; `keep_to_subresource`), and counts changes in `generation` (`counts_generation`)."""
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

    def counted(self, obj: dict[str, Any]) -> dict[str, Any]:
        """What `generation` counts changes of: all but metadata, and status when a subresource writes it."""
        return spec_of(obj) if self.status_subresource else {k: v for k, v in obj.items() if k not in _TYPE_META}

    def keep_to_subresource(self, new: dict[str, Any], old: dict[str, Any],
                            subresource: Subresource | None) -> None:
        """Restrict an update to what its (sub)resource may change: a subresource that is the object
        itself restricts its own writes (`ObjectSubresource.keep`), the main resource `keep_to_main`."""
        if isinstance(subresource, ObjectSubresource):
            subresource.keep(new, old)
        else:
            self.keep_to_main(new, old)

    def keep_to_main(self, new: dict[str, Any], old: dict[str, Any]) -> None:
        """Restrict a write of the main resource: with `status_subresource`, the old status stays."""
        if not self.status_subresource:
            return
        if "status" in old:
            new["status"] = old["status"]
        else:
            new.pop("status", None)

    def validate_update(self, new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
        """The create rules plus what may not change (nothing more by default)."""
        return self.validate(new)


class DeleteStrategy(KindStrategy):
    """RESTDeleteStrategy and the generic store's deletion hooks.

    `returns_deleted_object`: an immediate delete answers the object, not a Status.
    """

    returns_deleted_object = False

    def check_delete(self, name: str) -> None:
        """Raise a StatusError when this object may never be deleted."""

    def grace_period(self, obj: dict[str, Any], asked: int | None) -> int | None:
        """Kubernetes' CheckGracefulDelete: the seconds a first delete of `obj` gives it before it goes
        (`asked`: the delete's gracePeriodSeconds, a negative one already made 1), or None when the kind
        has no graceful deletion (the default). A period of 0 deletes at once."""
        return None

    def has_finalizers(self, obj: dict[str, Any]) -> bool:
        """Whether something must still happen before the object may go."""
        return bool(obj["metadata"].get("finalizers"))

    def deletion_finalizers(self, finalizers: list[str], options: ParsedDeleteOptions) -> list[str]:
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
        """A terminating object whose last finalizer an update removed is gone, unless a grace period still
        runs (Kubernetes' shouldDeleteDuringUpdate: a Pod waits for its kubelet's delete)."""
        meta = obj["metadata"]
        return bool(meta.get("deletionTimestamp")) and not self.has_finalizers(obj) and \
            not meta.get("deletionGracePeriodSeconds")

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


class FieldSelection:
    """Field selectors: the labels a kind serves and its objects' values for them (Kubernetes'
    DefaultNamespaceScopedAttr / per-kind field label conversion, `<Kind>ToSelectableFields`), and what a
    selector on another label is told (`field_label_error`)."""

    field_labels: tuple[str, ...] = ("metadata.name", "metadata.namespace")
    #: The 400's message for a label not in `field_labels` (`{label}`, `{quoted}` as Go's %q): a kind with no
    #: field label conversion of its own answers `runtime.DefaultMetaV1FieldSelectorConversion`'s; one with
    #: its own (`AddFieldLabelConversionFunc`) sets its words, most `FIELD_LABEL_NOT_SUPPORTED`.
    field_label_error = DEFAULT_FIELD_LABEL_ERROR

    def selectable_fields(self, obj: dict[str, Any]) -> dict[str, str]:
        """The values a field selector matches `obj` on."""
        meta = obj["metadata"]
        return {"metadata.name": meta.get("name", ""), "metadata.namespace": meta.get("namespace", "")}


class TableConvertor:
    """`kubectl get` columns (Kubernetes' TableConvertor)."""

    columns: Columns = DEFAULT_COLUMNS


class VersionConverter:
    """Objects stored in another version than the kind's (`converts`: a custom kind's non-storage
    version) are rewritten by `present` as they are read."""

    converts = False

    def present(self, obj: "StoredObject") -> "StoredObject":
        """A stored object as this kind's version shows it (the object itself unless `converts`)."""
        return obj


class SchemeObserver(ABC):
    """A kind whose strategy follows every change of its objects the watch cache sees (CRDs: every
    server serves what they define). Mix it in; the registry finds observers by `isinstance`."""

    @abstractmethod
    def observe(self, event_type: str, obj: dict[str, Any]) -> None:
        """Follow a change of one object of this kind."""

    def observe_list(self, objs: list[dict[str, Any]]) -> None:
        """Follow a (re)list: `objs` are every object of this kind now."""
        for obj in objs:
            self.observe("ADDED", obj)


class TokenIssuer(ABC):
    """A kind whose objects are identities the server signs tokens for (ServiceAccount). Mix it in;
    the token authenticator finds the identity kind by `isinstance`."""

    @abstractmethod
    def token_user(self, claims: "TokenClaims", lookup: Callable[[Any, str, str], "dict[str, Any] | None"],
                   now: float) -> UserInfo:
        """The user a verified token of this kind's identity is; raises TokenError once it is no longer valid.

        `lookup(resource_type, namespace, name)` reads the watch cache.
        """


def spec_of(obj: dict[str, Any]) -> dict[str, Any]:
    """Everything but metadata and status: what a kind with a status subresource counts changes of."""
    return {k: v for k, v in obj.items() if k not in _TYPE_META and k != "status"}


def _drop_empty_meta(meta: dict[str, Any]) -> None:
    for name in _OMITEMPTY_META:
        if name in meta and not meta[name]:
            del meta[name]
