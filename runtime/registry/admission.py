"""Admission: RBAC escalation prevention, then user-added admission plug-ins.

Escalation (Kubernetes' policy-based RBAC storage): writing a Role or
ClusterRole needs every permission in it, or `escalate` on the kind; writing
a binding needs the bound role's permissions, or `bind` on it. Members of
`system:masters` skip both. Writes that touch only metadata (finalizers,
labels, ownerReferences) are not checked, as Kubernetes skips GC-only changes.

A plug-in is `AdmissionPlugin(name, fn, side_effects)`; `fn(request)` may
change `request.obj` or raise a `StatusError`. A plug-in with side effects
makes a dry-run request fail rather than run, as the spec says.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Awaitable, Callable

from runtime import errors
from runtime.rbac import (
    bind_attributes, confirm_no_escalation, escalate_attributes, escalation_allowed,
    resolve_role_ref,
)
from runtime.rbac.user import UserInfo
from runtime.registry.strategy import spec_of
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
    name: str
    fn: Callable[[AdmissionRequest], Awaitable[None] | None]
    side_effects: bool = False


async def admit(registry: "Registry", user: UserInfo, rt: ResourceType, operation: str,
                obj: dict[str, Any], old: dict[str, Any] | None, opts: Any) -> None:
    if operation in ("create", "update") and rt.group == registry.scheme.rbac_group:
        if old is None or spec_of(obj) != spec_of(old):
            _check_escalation(registry, user, rt, obj)
    dry_run = bool(getattr(opts, "dry_run", False))
    request = AdmissionRequest(user, rt, operation, obj, old, dry_run)
    for plugin in registry.admission:
        if dry_run and plugin.side_effects:
            raise errors.BadRequest(f"admission plugin {plugin.name!r} has side effects and does not "
                                    "support dry run")
        result = plugin.fn(request)
        if result is not None:
            await result


def _forbid(rt: ResourceType, name: str, message: str) -> errors.Forbidden:
    return errors.Forbidden(f'{rt.group_resource} "{name}" is forbidden: {message}', name=name,
                            group=rt.group, kind=rt.plural)


def _check_escalation(registry: "Registry", user: UserInfo, rt: ResourceType, obj: dict[str, Any]) -> None:
    if escalation_allowed(user):
        return
    meta = obj["metadata"]
    name, namespace = meta.get("name", ""), meta.get("namespace", "")
    source = registry.rbac
    authorize = registry.authorizer.authorize
    if rt.kind in ("Role", "ClusterRole"):
        if authorize(escalate_attributes(user, api_group=rt.group, resource=rt.plural, namespace=namespace,
                                         name=name)).allowed:
            return
        if rt.kind == "ClusterRole" and obj.get("aggregationRule"):
            raise _forbid(rt, name, "must have cluster-admin privileges to use the aggregationRule")
        message = confirm_no_escalation(user, namespace, obj.get("rules") or [], source)
        if message:
            raise _forbid(rt, name, message)
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
