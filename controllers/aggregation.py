"""ClusterRole aggregation: a ClusterRole with `aggregationRule` gets the rules of the roles it selects.

For an aggregated ClusterRole (Kubernetes' `clusterroleaggregation_controller.go`):
for each selector of `aggregationRule.clusterRoleSelectors` in order, the
ClusterRoles it matches sorted by name (never the role itself), each of their
rules appended unless an identical rule is already there. The result is
written only when it differs from the role's rules, by server-side apply
(fieldManager `clusterrole-aggregation-controller`, force) of
`{apiVersion, kind, metadata.name, rules}`.

Any ClusterRole change reaches the aggregated roles whose selectors match
its labels, old or new: a role labelled into an aggregation adds its rules,
a role labelled out (or deleted) takes them away. Chains work (view is
aggregated into edit, edit into admin) because an aggregated role's own
change reaches the roles aggregating it.

Label keys are never assumed: the selectors are read from the roles.
"""

from __future__ import annotations

from typing import Any

from runtime.client import APPLY_PATCH, Client, ObjectKey, object_meta
from runtime.controller import Result, TerminalError
from runtime.informer import Informer, ObjectEvent
from runtime.kinds import AGGREGATION_MANAGER
from runtime.manager import Manager
# The pure aggregation lives in runtime (runtime never imports controllers); re-exported here.
from runtime.rbac.aggregation import aggregate_rules, aggregation_selectors, same_rules
from runtime.selectors import SelectorError

__all__ = ["FIELD_MANAGER", "AggregationController", "aggregate_rules", "same_rules", "setup"]

FIELD_MANAGER = AGGREGATION_MANAGER  # the registry spares this manager its rules warning


class AggregationController:
    """The reconciler of aggregated ClusterRoles, reading the shared ClusterRole cache."""

    def __init__(self, client: Client, roles: Informer) -> None:
        self.client = client
        self.roles = roles
        self.rt = roles.kind

    @staticmethod
    def aggregated(event: ObjectEvent) -> bool:
        """Only roles with an aggregationRule are reconciled for their own changes."""
        return event.type != "DELETED" and bool(event.obj.get("aggregationRule"))

    def aggregators_of(self, obj: dict[str, Any]) -> list[ObjectKey]:
        """The aggregated roles (other than `obj`) with a selector matching `obj`'s labels."""
        labels = object_meta(obj).get("labels") or {}
        name = object_meta(obj).get("name")
        keys = []
        for role in self.roles.list():
            if not role.get("aggregationRule") or object_meta(role).get("name") == name:
                continue
            try:
                if any(s.matches(labels) for s in aggregation_selectors(role)):
                    keys.append(ObjectKey("", object_meta(role).get("name") or ""))
            except SelectorError:
                continue  # reported when that role itself is reconciled
        return keys

    async def reconcile(self, key: ObjectKey) -> Result:
        role = self.roles.get(key)
        if role is None or not role.get("aggregationRule"):
            return Result()
        try:
            rules = aggregate_rules(role, self.roles.list())
        except SelectorError as exc:
            raise TerminalError(f"clusterrole {key.name}: bad aggregationRule: {exc}") from exc
        if same_rules(rules, role.get("rules") or []):
            return Result()
        body = {"apiVersion": self.rt.api_version, "kind": self.rt.kind, "metadata": {"name": key.name},
                "rules": rules}
        await self.client.patch(self.rt, key.name, body, patch_type=APPLY_PATCH, field_manager=FIELD_MANAGER,
                                force=True)
        return Result()


def setup(manager: Manager) -> AggregationController:
    """Add the ClusterRole aggregation controller to `manager`."""
    rt = manager.scheme.by_kind("ClusterRole")
    controller = AggregationController(manager.client, manager.informers.informer(rt))
    manager.controller("clusterrole-aggregation") \
        .for_(rt, controller.aggregated) \
        .watches(rt, controller.aggregators_of) \
        .complete(controller.reconcile)
    return controller
