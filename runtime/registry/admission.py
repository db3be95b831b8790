"""Admission: RBAC escalation prevention, then user-added admission plug-ins.

Escalation (Kubernetes' policy-based RBAC storage), on create and update of
the four RBAC kinds; members of `system:masters` skip it, and so does an
update that changes only what garbage collection changes (ownerReferences,
finalizers; Kubernetes' `IsOnlyMutatingGCFields`). A label change is checked:
it can pull a ClusterRole into an aggregated one.

- Role / ClusterRole: allowed with `escalate` on roles/clusterroles (this
  name, this namespace); else the caller must already hold every rule in it
  (`confirm_no_escalation`, in the role's namespace, "" for a ClusterRole);
  a ClusterRole with an `aggregationRule` also needs full authority
  (`*` on `*.*` and on every non-resource URL).
- RoleBinding / ClusterRoleBinding: allowed with `bind` on the referenced
  role; else the roleRef must resolve and the caller must hold every rule of
  the referenced role, in the binding's namespace.

A refusal is 403 Forbidden, `<resource>.<group> "<name>" is forbidden: user
"u" (groups=[...]) is attempting to grant RBAC permissions not currently
held:` followed by the missing rules, one per line.

A plug-in is `AdmissionPlugin(name, fn, side_effects)`; `fn(request)` may
change `request.obj` or raise a `StatusError`. Dry run: a plug-in declared
with side effects (outside the object) makes a dry-run request fail, before
any plug-in runs, with 400 `admission plugin "name" does not support dry run`
(Kubernetes' words for a webhook without `sideEffects: None`); one without
runs as usual and sees `request.dry_run` true. None is built in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Awaitable, Callable

from runtime import errors
from runtime.rbac import (
    AGGREGATION_RULE_FORBIDDEN, FULL_AUTHORITY_RULES, bind_attributes, confirm_no_escalation,
    escalate_attributes, escalation_allowed, resolve_role_ref,
)
from runtime.rbac.user import UserInfo
from runtime.scheme import ResourceType

if TYPE_CHECKING:
    from runtime.registry.registry import Registry

__all__ = ["AdmissionRequest", "AdmissionPlugin", "admit"]


@dataclass
class AdmissionRequest:
    user: UserInfo
    resource: ResourceType
    operation: str  # create | update | delete
    obj: dict[str, Any]
    old: dict[str, Any] | None
    dry_run: bool


@dataclass(frozen=True)
class AdmissionPlugin:
    """A user-added admission step; `side_effects` True: it acts outside the object (no dry run)."""

    name: str
    fn: Callable[[AdmissionRequest], Awaitable[None] | None]
    side_effects: bool = False


async def admit(registry: "Registry", user: UserInfo, rt: ResourceType, operation: str,
                obj: dict[str, Any], old: dict[str, Any] | None, opts: Any) -> None:
    if operation in ("create", "update") and rt.group == registry.scheme.rbac_group:
        if old is None or not _only_gc_fields_change(obj, old):
            _check_escalation(registry, user, rt, obj)
    dry_run = bool(getattr(opts, "dry_run", False))
    request = AdmissionRequest(user, rt, operation, obj, old, dry_run)
    if dry_run:
        # Refuse before anything runs: a dry run must have no effect at all.
        for plugin in registry.admission:
            if plugin.side_effects:
                raise errors.BadRequest(f'admission plugin "{plugin.name}" does not support dry run')
    for plugin in registry.admission:
        result = plugin.fn(request)
        if result is not None:
            await result


def _forbid(rt: ResourceType, name: str, message: str) -> errors.Forbidden:
    return errors.Forbidden(f'{rt.group_resource} "{name}" is forbidden: {message}', name=name,
                            group=rt.group, kind=rt.plural)


#: Metadata a garbage collector writes, or the server sets: changing only these is not an escalation.
_GC_OR_SERVER_FIELDS = ("ownerReferences", "finalizers", "selfLink", "managedFields", "resourceVersion",
                        "generation")


def _only_gc_fields_change(new: dict[str, Any], old: dict[str, Any]) -> bool:
    def strip(obj: dict[str, Any]) -> dict[str, Any]:
        meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in _GC_OR_SERVER_FIELDS}
        return dict(obj, metadata=meta)
    return strip(new) == strip(old)


def _check_escalation(registry: "Registry", user: UserInfo, rt: ResourceType, obj: dict[str, Any]) -> None:
    if escalation_allowed(user):
        return
    meta = obj["metadata"]
    name = meta.get("name", "")
    namespace = meta.get("namespace", "") if rt.namespaced else ""
    source = registry.rbac
    authorize = registry.authorizer.authorize
    if rt.kind in ("Role", "ClusterRole"):
        if authorize(escalate_attributes(user, api_group=rt.group, resource=rt.plural, namespace=namespace,
                                         name=name)).allowed:
            return
        message = confirm_no_escalation(user, namespace, obj.get("rules") or [], source)
        if message:
            raise _forbid(rt, name, message)
        # An aggregationRule can gather anything, so it takes * on *.* (as Kubernetes).
        if rt.kind == "ClusterRole" and obj.get("aggregationRule") is not None \
                and confirm_no_escalation(user, "", FULL_AUTHORITY_RULES, source):
            raise _forbid(rt, name, AGGREGATION_RULE_FORBIDDEN)
    elif rt.kind in ("RoleBinding", "ClusterRoleBinding"):
        ref = obj.get("roleRef") or {}
        check = bind_attributes(user, ref, namespace)
        if check is not None and authorize(check).allowed:
            return
        rules, error = resolve_role_ref(ref, namespace, source)
        if error:
            raise _forbid(rt, name, error)
        message = confirm_no_escalation(user, namespace, rules, source)
        if message:
            raise _forbid(rt, name, message)
