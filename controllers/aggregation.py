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

What one event costs does not grow with the number of ClusterRoles: the
shared ClusterRole informer gets two indexes. `AGGREGATING_INDEX` holds the
(few) roles with an `aggregationRule`, so a changed role is matched against
those selectors only; `runtime.controller.indexers.LABEL_INDEX` answers each selector of
a reconciled role with the roles filed under its labels, so a reconcile reads
the selected roles, not all of them (see `runtime.controller.indexers` for the one
exception: a selector with no positive requirement, such as `{}`, scans).
"""

from __future__ import annotations

from typing import Any

from runtime.client.interface import APPLY_PATCH, Client, ObjectKey, key_of, object_meta
from runtime.controller.controller import Result, TerminalError
from runtime.controller.indexers import LABEL_INDEX, by_label_selector, label_index_values
from runtime.controller.informer import Informer, ObjectEvent
from runtime.machinery.wellknown import AGGREGATION_MANAGER
from runtime.controller.manager import Manager
from runtime.controller.transforms import without_managed_fields
# The pure aggregation lives in runtime (runtime never imports controllers); re-exported here.
from runtime.machinery.rbacaggregation import aggregate_rules, aggregation_selectors, same_rules
from runtime.machinery.selectors import ParsedLabelSelector, SelectorError

__all__ = ["FIELD_MANAGER", "AGGREGATING_INDEX", "AggregationController", "aggregate_rules", "same_rules",
           "setup"]

FIELD_MANAGER = AGGREGATION_MANAGER  # the registry spares this manager its rules warning
#: Informer index: the ClusterRoles with an aggregationRule, all under the value "true".
AGGREGATING_INDEX = "clusterrole-aggregating"


def _aggregating(role: dict[str, Any]) -> list[str]:
    return ["true"] if role.get("aggregationRule") else []


class AggregationController:
    """The reconciler of aggregated ClusterRoles, reading the shared ClusterRole cache.

    Adds `AGGREGATING_INDEX` and `LABEL_INDEX` to `roles` (see the module docs).
    """

    def __init__(self, client: Client, roles: Informer) -> None:
        self.client = client
        self.roles = roles
        self.rt = roles.kind
        roles.add_indexers({AGGREGATING_INDEX: _aggregating, LABEL_INDEX: label_index_values})
        # Parsed selectors of the aggregating roles, by name, with the resourceVersion they were read at.
        self._selectors: dict[str, tuple[str, list[ParsedLabelSelector] | SelectorError]] = {}

    def selectors(self, role: dict[str, Any]) -> list[ParsedLabelSelector]:
        """`aggregation_selectors(role)`, parsed once per version of the role. Raises SelectorError."""
        meta = object_meta(role)
        name, version = meta.get("name") or "", meta.get("resourceVersion") or ""
        known = self._selectors.get(name)
        if known is None or known[0] != version:
            try:
                parsed: list[ParsedLabelSelector] | SelectorError = aggregation_selectors(role)
            except SelectorError as exc:
                parsed = exc
            known = self._selectors[name] = (version, parsed)
            if len(self._selectors) > 4 * (self.roles.index_size(AGGREGATING_INDEX, "true") + 16):
                self._selectors.clear()  # forget roles that stopped aggregating (rare)
        if isinstance(known[1], SelectorError):
            raise known[1]
        return known[1]

    @staticmethod
    def aggregated(event: ObjectEvent) -> bool:
        """Only roles with an aggregationRule are reconciled for their own changes."""
        return event.type != "DELETED" and bool(event.obj.get("aggregationRule"))

    def aggregators_of(self, obj: dict[str, Any]) -> list[ObjectKey]:
        """The aggregated roles (other than `obj`) with a selector matching `obj`'s labels."""
        labels = object_meta(obj).get("labels") or {}
        name = object_meta(obj).get("name")
        keys = []
        for role in self.roles.by_index(AGGREGATING_INDEX, "true"):
            if object_meta(role).get("name") == name:
                continue
            try:
                if any(s.matches(labels) for s in self.selectors(role)):
                    keys.append(ObjectKey("", object_meta(role).get("name") or ""))
            except SelectorError:
                continue  # reported when that role itself is reconciled
        return keys

    def selected(self, role: dict[str, Any]) -> list[dict[str, Any]]:
        """The cached roles some selector of `role`'s aggregationRule matches, through the label index.

        Raises SelectorError for a malformed selector.
        """
        found: dict[ObjectKey, dict[str, Any]] = {}
        for selector in self.selectors(role):
            for other in by_label_selector(self.roles, selector):
                found[key_of(other)] = other
        return list(found.values())

    async def reconcile(self, key: ObjectKey) -> Result:
        role = self.roles.get(key)
        if role is None or not role.get("aggregationRule"):
            return Result()
        try:
            rules = aggregate_rules(role, self.selected(role))
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
    # Managed fields are a third of a small role, and aggregation reads none of them.
    controller = AggregationController(manager.client, manager.informers.informer(rt, transform=without_managed_fields))
    # No replay for `watches`: every aggregating role is reconciled at start through `for_`.
    manager.controller("clusterrole-aggregation") \
        .for_(rt, controller.aggregated, transform=without_managed_fields) \
        .watches(rt, controller.aggregators_of, replay=False, transform=without_managed_fields) \
        .complete(controller.reconcile)
    return controller
