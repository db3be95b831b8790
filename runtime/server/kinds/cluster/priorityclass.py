"""`scheduling/v1` `PriorityClass`: a named pod priority (Kubernetes' `pkg/registry/scheduling/priorityclass`
and the Priority admission plugin's rules for the kind), cluster-scoped.

- Defaults (`SetDefaults_PriorityClass`): `preemptionPolicy`
  PreemptLowerPriority; `value` is 0 when unset (a Go int32, always written).
- Validation (`ValidatePriorityClass`): the name is a DNS subdomain; names
  with the `system-` prefix are reserved for the two built-in classes, with
  their values and no globalDefault ("priority class names with 'system-'
  prefix are reserved for system use only. error: ..."); other classes'
  values are at most 1000000000; `preemptionPolicy` PreemptLowerPriority or
  Never.
- Update (`ValidatePriorityClassUpdate`): `value` ("may not be changed in
  an update.") and `preemptionPolicy` are immutable.
- Admission (the Priority plugin): only one class may be `globalDefault`
  (403 "PriorityClass X is already marked as default. Only one default can
  exist"); the strategy follows the classes the watch cache holds.
- `SYSTEM_PRIORITY_CLASSES`: system-node-critical (2000001000) and
  system-cluster-critical (2000000000), which the server's bootstrap creates
  when missing, as kube-apiserver's post-start hook; they may not be deleted
  (403 "this is a system priority class and cannot be deleted").
- A PUT of a missing class is 404 (the strategy's AllowCreateOnUpdate is false).
- `kubectl get`: NAME VALUE GLOBAL-DEFAULT AGE PREEMPTIONPOLICY.
"""

from __future__ import annotations

from typing import Any

from runtime.machinery import errors
from runtime.machinery.validation import FieldError
from runtime.machinery.validation.fielderrors import forbidden, invalid, not_supported, required
from runtime.models.k8s.scheduling_v1 import PriorityClass
from runtime.server.kinds.base import AdmissionRequest, PolicyContext
from runtime.server.kinds.columns import doc_column
from runtime.server.kinds.cluster.stored import ClusterStrategy
from runtime.server.kinds.columns import AGE_COLUMN, NAME_COLUMN, Columns, age
from runtime.server.kinds.parts import SchemeObserver

__all__ = ["PriorityClassStrategy", "SYSTEM_PRIORITY_CLASSES", "HIGHEST_USER_PRIORITY"]

HIGHEST_USER_PRIORITY = 1_000_000_000
_SYSTEM_CRITICAL = 2 * HIGHEST_USER_PRIORITY
_PREFIX = "system-"
_POLICIES = ["PreemptLowerPriority", "Never"]
#: Kubernetes' built-in classes (`scheduling.SystemPriorityClasses()`): name, value, description.
SYSTEM_PRIORITY_CLASSES = (
    ("system-node-critical", _SYSTEM_CRITICAL + 1000,
     "Used for system critical pods that must not be moved from their current node."),
    ("system-cluster-critical", _SYSTEM_CRITICAL,
     "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary."),
)


def _system_class_error(name: str, value: int, global_default: bool) -> str | None:
    """`IsKnownSystemPriorityClass`'s error, None for a built-in class as Kubernetes defines it."""
    for known, known_value, _ in SYSTEM_PRIORITY_CLASSES:
        if known == name:
            if value != known_value:
                return f"value of {known} PriorityClass must be {known_value}"
            if global_default:
                return f"globalDefault of {known} PriorityClass must be false"
            return None
    return f"{name} is not a known system priority class"


def _cells(obj: dict[str, Any]) -> list[Any]:
    meta = obj["metadata"]
    return [meta.get("name", ""), obj.get("value", 0), bool(obj.get("globalDefault")),
            age(meta.get("creationTimestamp")), obj.get("preemptionPolicy", "")]


_COLUMNS = Columns((
    NAME_COLUMN,
    doc_column("Value", PriorityClass, "value", type_="integer"),
    doc_column("Global-Default", PriorityClass, "globalDefault", type_="boolean"),
    AGE_COLUMN,
    doc_column("PreemptionPolicy", PriorityClass, "preemptionPolicy"),
), _cells)


class PriorityClassStrategy(ClusterStrategy, SchemeObserver):
    """See the module doc."""

    name_rule = "dns-subdomain"
    allow_create_on_update = False
    columns = _COLUMNS

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        #: The classes marked globalDefault the watch cache holds: name -> value.
        self.global_defaults: dict[str, int] = {}

    def observe(self, event_type: str, obj: dict[str, Any]) -> None:
        name = obj["metadata"].get("name", "")
        if event_type != "DELETED" and obj.get("globalDefault"):
            self.global_defaults[name] = int(obj.get("value", 0))
        else:
            self.global_defaults.pop(name, None)

    def observe_list(self, objs: list[dict[str, Any]]) -> None:
        self.global_defaults.clear()
        super().observe_list(objs)

    def default(self, obj: dict[str, Any]) -> None:
        obj.setdefault("value", 0)
        if obj.get("preemptionPolicy") is None:
            obj["preemptionPolicy"] = "PreemptLowerPriority"

    def validate_spec(self, obj: dict[str, Any]) -> list[FieldError]:
        name, value = obj["metadata"].get("name", ""), int(obj.get("value", 0))
        errs: list[FieldError] = []
        if name.startswith(_PREFIX):
            problem = _system_class_error(name, value, bool(obj.get("globalDefault")))
            if problem is not None:
                errs.append(forbidden("metadata.name", f"priority class names with '{_PREFIX}' prefix are reserved "
                                                       f"for system use only. error: {problem}"))
        elif value > HIGHEST_USER_PRIORITY:
            errs.append(forbidden("value",
                                  f"maximum allowed value of a user defined priority is {HIGHEST_USER_PRIORITY}"))
        policy = obj.get("preemptionPolicy")
        if policy is not None:
            if policy == "":
                errs.append(required("preemptionPolicy"))
            elif policy not in _POLICIES:
                errs.append(not_supported("preemptionPolicy", policy, _POLICIES))
        return errs

    def validate_update(self, new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
        # ValidatePriorityClassUpdate: what may not change, nothing more.
        errs = []
        if new.get("value", 0) != old.get("value", 0):
            errs.append(forbidden("value", "may not be changed in an update."))
        if new.get("preemptionPolicy") != old.get("preemptionPolicy"):
            errs.append(invalid("preemptionPolicy", new.get("preemptionPolicy"), "field is immutable"))
        return errs

    def check_delete(self, name: str) -> None:
        """The built-in classes may not be deleted (Kubernetes' priorityclass REST.Delete)."""
        if any(name == known for known, _, _ in SYSTEM_PRIORITY_CLASSES):
            rt = self.rt
            raise errors.Forbidden(f'{rt.group_resource} "{name}" is forbidden: this is a system priority class and '
                                   "cannot be deleted", name=name, group=rt.group, kind=rt.plural)

    async def admit(self, policy: PolicyContext, request: AdmissionRequest) -> None:
        obj = request.obj
        if request.operation not in ("create", "update") or not obj.get("globalDefault"):
            return
        name = obj["metadata"].get("name", "")
        if not self.global_defaults:
            return
        # Of several (a race), Kubernetes names the one with the lowest value.
        current = min(self.global_defaults, key=lambda n: (self.global_defaults[n], n))
        if request.operation == "create" or current != name:
            rt = self.rt
            raise errors.Forbidden(f'{rt.group_resource} "{name}" is forbidden: PriorityClass {current} is already '
                                   "marked as default. Only one default can exist",
                                   name=name, group=rt.group, kind=rt.plural)
