"""What the apps controllers' kinds (Deployment, StatefulSet, ReplicaSet, DaemonSet) share, as their
Kubernetes strategies do (`pkg/registry/apps/<kind>/strategy.go`).

- Defaulting: the kind's own (`pkg/apis/apps/v1/defaults.go`, `default_spec`;
  `default_rolling_update` the strategy part a Deployment and a DaemonSet share)
  and the pod template's (podspec's `default_pod_template`), on a create and,
  as Kubernetes decodes every body, on an update of the object (a PUT
  without `replicas` is defaulted to 1, not refused).
- A create's status is reset to the kind's zero status (`StatusRules`); a
  write of the object keeps the stored status, a write of `status` keeps
  the stored spec and metadata (`StatusSubresource`).
- `metadata.generation` is 1 on create and goes up by one when the spec
  changes (`counted`; a Deployment's annotations count too).
- Names are DNS subdomains (a StatefulSet's, DNS labels: v1.27 made the rule
  stricter, and an update does not check a stored name again); a PUT of a
  missing object is 404 (no create on update).
- An update is validated as a create (`validate_spec`), and the selector
  cannot change (`spec.selector: Invalid value: ...: field is immutable`); a
  status write is validated by the kind's `status_rules` only.
- A Deployment's or ReplicaSet's create whose name is no DNS label (its
  pods and hostnames are named after it) earns a warning (`warns_pod_names`;
  the pods' `pod_name_warnings`, a Job's too): `metadata.name: this is used in
  Pod names and hostnames, which can result in surprising behavior; a DNS
  label is recommended: [<IsDNS1123Label's words>]`.
- Field selectors: `metadata.name` and `metadata.namespace` only (apps/v1
  registers no field label conversion of its own: a ReplicaSet's
  `status.replicas` is extensions/v1beta1's), another label answered as
  `runtime.DefaultMetaV1FieldSelectorConversion` does: `"<label>" is not a
  known field selector: only "metadata.name", "metadata.namespace"`.

Internal to `runtime.server.kinds.apps`: imported by its modules only.
"""

from __future__ import annotations

from typing import Any

from runtime.machinery.validation import FieldError, validate_object_meta
from runtime.server.kinds.apps.rules import immutable_selector
from runtime.server.kinds.apps.status import StatusRules
from runtime.server.kinds.base import Strategy
from runtime.server.kinds.pods.podspec import default_pod_template, pod_name_warnings, pod_template_warnings
from runtime.server.kinds.subresources import StatusSubresource, Subresource

__all__ = ["WorkloadStrategy", "default_rolling_update"]


def default_rolling_update(spec: dict[str, Any], field: str, **rolling: Any) -> None:
    """`SetDefaults_Deployment`'s and `SetDefaults_DaemonSet`'s strategy part, in place: `spec.<field>.type`
    RollingUpdate when unset or "" (Go's zero value), and then the `rollingUpdate` values missing from
    `rolling` (a Deployment's `maxUnavailable`/`maxSurge` 25%, a DaemonSet's 1 and 0)."""
    strategy = spec.get(field)
    if not isinstance(strategy, dict):
        strategy = spec[field] = {}
    if not strategy.get("type"):
        strategy["type"] = "RollingUpdate"
    if strategy["type"] == "RollingUpdate":
        update = strategy.get("rollingUpdate")
        if not isinstance(update, dict):
            update = strategy["rollingUpdate"] = {}
        for name, value in rolling.items():
            update.setdefault(name, value)


class WorkloadStrategy(Strategy):
    """The shared behaviour of the apps kinds with a pod template (see the module doc)."""

    name_rule = "dns-subdomain"
    allow_create_on_update = False
    counts_generation = True
    subresources = {"status": StatusSubresource()}
    #: The kind's status counters and their rules.
    status_rules = StatusRules((), ())
    #: The name rule an update checks, when it is not `name_rule`: a StatefulSet's rule became stricter.
    stored_name_rule: str | None = None
    #: A create whose name is no DNS label earns a warning (the kind's pods are named after it).
    warns_pod_names = False

    # ---- defaulting ---------------------------------------------------------------------------------

    def default(self, obj: dict[str, Any]) -> None:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            spec = obj["spec"] = {}
        self.default_spec(spec)
        template = spec.get("template")
        if isinstance(template, dict):
            default_pod_template(template)

    def default_spec(self, spec: dict[str, Any]) -> None:
        """The kind's own defaults (`SetDefaults_<Kind>`), in place."""

    # ---- writes -------------------------------------------------------------------------------------

    def prepare_for_create(self, obj: dict[str, Any]) -> None:
        super().prepare_for_create(obj)
        obj["status"] = self.status_rules.new_status()

    def prepare_for_update(self, new: dict[str, Any], old: dict[str, Any],
                           subresource: Subresource | None = None) -> None:
        if isinstance(subresource, StatusSubresource):
            super().prepare_for_update(new, old, subresource)
            new["status"] = self.status_rules.written(new.get("status"))
            return
        super().prepare_for_update(new, old, subresource)

    # ---- validation ---------------------------------------------------------------------------------

    def validate_update(self, new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
        if new.get("status") != old.get("status"):
            # Only a write of `status` changes it (any other keeps the stored one): its own rules.
            return self.status_rules.errors(new.get("status") or {}, old.get("status") or {})
        meta = validate_object_meta(new.get("metadata") or {}, namespaced=self.rt.namespaced,
                                    name_rule=self.stored_name_rule or self.name_rule,
                                    kube_finalizers=self.kube_finalizers)
        return meta + self.validate_spec(new) + self.validate_spec_update(new, old)

    def validate_spec_update(self, new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
        """What an update may not change: the selector, in apps/v1."""
        return immutable_selector(new, old)

    def warnings(self, old: dict[str, Any] | None, new: dict[str, Any], manager: str) -> list[str]:
        """The name's warning on create, and the pod template's (GetWarningsForPodTemplate) on create and on an
        update that changes the spec, as each apps strategy's WarningsOnCreate/WarningsOnUpdate."""
        template = (new.get("spec") or {}).get("template") or {}
        if old is not None:
            changed = new["metadata"].get("generation") != old["metadata"].get("generation")
            return pod_template_warnings(template, "spec.template") if changed else []
        return self._name_warnings(new) + pod_template_warnings(template, "spec.template")

    def _name_warnings(self, new: dict[str, Any]) -> list[str]:
        return pod_name_warnings(new["metadata"].get("name") or "") if self.warns_pod_names else []
