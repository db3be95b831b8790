"""Core `Namespace`: the scope other kinds live in (Kubernetes' `pkg/registry/core/namespace`).

- Create (POST only: a PUT of a missing namespace is 404): `spec.finalizers` gets `kubernetes` (the namespace controller's),
  `status.phase` is `Active`, and the `kubernetes.io/metadata.name` label
  always names the namespace (it cannot be removed or changed).
- Update: the main resource changes neither spec nor status; `status`
  changes only status (an empty phase defaults to Active); `finalize`
  changes only `spec.finalizers`. The phase follows `deletionTimestamp`.
- Delete: `default` may never be deleted; the first delete makes it
  Terminating (no `deletionGracePeriodSeconds`: the namespace storage sets
  none); it goes once both `metadata.finalizers` and `spec.finalizers`
  are empty, and the answer is the namespace itself.
- Fields: `metadata.name` and `status.phase` (no `metadata.namespace`).
"""

from __future__ import annotations

from typing import Any

from runtime.machinery import errors
from runtime.server.kinds.base import Strategy
from runtime.server.kinds.parts import FIELD_LABEL_NOT_SUPPORTED
from runtime.server.kinds.columns import AGE_COLUMN, NAME_COLUMN, Columns, age, column
from runtime.server.kinds.deletion_propagation import namespace_deletion_finalizers
from runtime.server.kinds.subresources import ObjectSubresource, StatusSubresource, Subresource
from runtime.machinery.options import ParsedDeleteOptions
from runtime.machinery.wellknown import NAMESPACE_FINALIZER
from runtime.machinery.validation import FieldError
from runtime.machinery.validation.fielderrors import invalid
from runtime.machinery.validation.names import is_standard_or_qualified_finalizer, qualified_name_errors

__all__ = ["NamespaceStrategy", "NamespaceStatus", "NamespaceFinalize", "NAMESPACE_FINALIZER", "NAMESPACE_NAME_LABEL",
           "PROTECTED_NAMESPACES"]

#: The label every Namespace carries with its own name (Kubernetes' `v1.LabelMetadataName`).
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
#: NamespaceLifecycle's immortal namespaces: deleting one is 403 (kube-node-lease may go).
PROTECTED_NAMESPACES = ("default", "kube-system", "kube-public")


def _label_namespace(obj: dict[str, Any]) -> None:
    # Kubernetes sets it on every create and update (defaulting and Canonicalize), so it
    # always names the namespace and cannot be removed or changed.
    meta = obj["metadata"]
    if meta.get("name"):
        meta["labels"] = dict(meta.get("labels") or {}, **{NAMESPACE_NAME_LABEL: meta["name"]})


def _cells(obj: dict[str, Any]) -> list[Any]:
    meta = obj["metadata"]
    return [meta.get("name", ""), (obj.get("status") or {}).get("phase", ""), age(meta.get("creationTimestamp"))]


class NamespaceStatus(StatusSubresource):
    """A Namespace's `status`: Kubernetes defaults an empty phase to Active when it decodes a Namespace."""

    def keep(self, new: dict[str, Any], old: dict[str, Any]) -> None:
        status = dict(new.get("status") or {})
        status["phase"] = status.get("phase") or "Active"
        super().keep(new, old)
        new["status"] = status


class NamespaceFinalize(ObjectSubresource):
    """A Namespace's `finalize`: a write changes only `spec.finalizers` (Kubernetes' FinalizeREST)."""

    name = "finalize"
    verbs = ("update",)

    def keep(self, new: dict[str, Any], old: dict[str, Any]) -> None:
        spec = dict(old.get("spec") or {})
        spec["finalizers"] = list((new.get("spec") or {}).get("finalizers") or [])
        new.clear()
        new.update({k: v for k, v in old.items() if k not in ("spec", "status")})
        new["spec"] = spec
        if old.get("status") is not None:
            new["status"] = old["status"]


class NamespaceStrategy(Strategy):
    """See the module doc."""

    namespace_kind = True
    returns_deleted_object = True
    allow_create_on_update = False  # PUT of a missing namespace is 404, as Kubernetes' namespace strategy
    field_labels = ("metadata.name", "status.phase")
    field_label_error = FIELD_LABEL_NOT_SUPPORTED  # AddFieldLabelConversionsForNamespace
    name_rule = "dns-label"
    columns = Columns((NAME_COLUMN, column("Status", "The status of the namespace"), AGE_COLUMN), _cells)
    subresources = {"status": NamespaceStatus(), "finalize": NamespaceFinalize()}

    def default(self, obj: dict[str, Any]) -> None:
        # SetDefaults_Namespace: the name label is a default, so the creating manager owns it.
        _label_namespace(obj)

    def prepare_for_create(self, obj: dict[str, Any]) -> None:
        super().prepare_for_create(obj)
        finalizers = obj.setdefault("spec", {}).setdefault("finalizers", [])
        if NAMESPACE_FINALIZER not in finalizers:
            finalizers.append(NAMESPACE_FINALIZER)
        obj["status"] = {"phase": "Active"}
        _label_namespace(obj)

    def keep_to_subresource(self, new: dict[str, Any], old: dict[str, Any],
                            subresource: Subresource | None) -> None:
        super().keep_to_subresource(new, old, subresource)
        new["metadata"] = dict(new["metadata"])  # never the stored object's own dict
        _label_namespace(new)

    def keep_to_main(self, new: dict[str, Any], old: dict[str, Any]) -> None:
        # Kubernetes' namespace strategy: an update of the namespace changes neither spec nor status.
        for part in ("spec", "status"):
            if part in old:
                new[part] = old[part]
            else:
                new.pop(part, None)

    def validate_spec(self, obj: dict[str, Any]) -> list[FieldError]:
        # ValidateNamespace: each finalizer at `spec.finalizers` (no index), a qualified name, and
        # either standard (`kubernetes`, `orphan`, `foregroundDeletion`) or fully qualified (with a '/').
        errs: list[FieldError] = []
        for fin in (obj.get("spec") or {}).get("finalizers") or []:
            errs.extend(invalid("spec.finalizers", fin, p) for p in qualified_name_errors(fin))
            if not is_standard_or_qualified_finalizer(fin):
                errs.append(invalid("spec.finalizers", fin,
                                    "name is neither a standard finalizer name nor is it fully qualified"))
        return errs

    def validate_update(self, new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
        errs = self.validate(new)
        if new.get("status") != old.get("status"):
            errs.extend(_phase_errors(new))
        return errs

    def check_delete(self, name: str) -> None:
        if name in PROTECTED_NAMESPACES:
            raise errors.Forbidden(f'namespaces "{name}" is forbidden: this namespace may not be deleted',
                                   name=name, kind="namespaces")

    def has_finalizers(self, obj: dict[str, Any]) -> bool:
        return super().has_finalizers(obj) or bool((obj.get("spec") or {}).get("finalizers"))

    def deletion_finalizers(self, finalizers: list[str], options: ParsedDeleteOptions) -> list[str]:
        return namespace_deletion_finalizers(finalizers, options)

    def prepare_for_delete(self, obj: dict[str, Any]) -> None:
        # The namespace's own storage, not markAsDeleting: no grace period, no generation bump.
        obj.setdefault("status", {})["phase"] = "Terminating"

    def precondition_failed(self, name: str, field: str, wanted: str, actual: str) -> errors.Conflict:
        # The namespace REST storage checks its preconditions itself, in its own words.
        return errors.Conflict(f'Operation cannot be fulfilled on namespaces "{name}": Precondition failed: '
                               f"{field} in precondition: {wanted}, {field} in object meta: {actual}",
                               name=name, kind="namespaces")

    def selectable_fields(self, obj: dict[str, Any]) -> dict[str, str]:
        return {"metadata.name": obj["metadata"].get("name", ""),
                "status.phase": (obj.get("status") or {}).get("phase", "")}


def _phase_errors(ns: dict[str, Any]) -> list[FieldError]:
    """Kubernetes' ValidateNamespaceStatusUpdate: the phase follows deletionTimestamp.

    The path is written `status.Phase`, as Kubernetes writes it.
    """
    phase = (ns.get("status") or {}).get("phase", "")
    if not (ns.get("metadata") or {}).get("deletionTimestamp"):
        if phase != "Active":
            return [invalid("status.Phase", phase, "may only be 'Active' if `deletionTimestamp` is empty")]
    elif phase != "Terminating":
        return [invalid("status.Phase", phase, "may only be 'Terminating' if `deletionTimestamp` is not empty")]
    return []
