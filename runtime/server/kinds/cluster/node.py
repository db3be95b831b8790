"""Core `Node`: a machine of the cluster, cluster-scoped (Kubernetes' `pkg/registry/core/node`).

- Decoding (`Convert_v1_NodeSpec_To_core_NodeSpec` and back): `podCIDRs` is
  the truth; a body with only `podCIDR` has it as `podCIDRs[0]`, and
  `podCIDR` is always `podCIDRs[0]`. Defaults (`SetDefaults_NodeStatus`):
  `status.allocatable` is the capacity when unset.
- Validation (`ValidateNode`): the name is a DNS subdomain; taints (at
  `metadata.taints`, Kubernetes' own path) have a label-name key, a
  label-value value, an effect NoSchedule, PreferNoSchedule or NoExecute,
  and are unique by key and effect; `status.capacity` and
  `status.allocatable` are valid quantities (path `status.capacity.cpu`);
  `spec.podCIDRs` are CIDRs, at most one per IP family, no duplicates.
- Update (`ValidateNodeUpdate`): podCIDRs and providerID may only be set
  from empty ("node updates may not change podCIDR except from \"\" to
  valid"), externalID never; status addresses are unique; taints and
  quantities as on create.
- A create keeps the status it is sent (a kubelet registers with one);
  writes of the main resource keep the stored status, `status` writes the
  spec. A PUT of a missing node is 404.
- Field selectors: `metadata.name`, `spec.unschedulable` (Kubernetes'
  field label conversion for Node); another is `field label not supported: <label>`.
- `kubectl get`: NAME STATUS ROLES AGE VERSION, `-o wide` INTERNAL-IP
  EXTERNAL-IP OS-IMAGE KERNEL-VERSION CONTAINER-RUNTIME (printNode: Ready or
  NotReady from the Ready condition, else Unknown, plus SchedulingDisabled;
  roles from `node-role.kubernetes.io/<role>` and `kubernetes.io/role`).
"""

from __future__ import annotations

import json
from typing import Any

from runtime.machinery.validation import FieldError, validate_object_meta
from runtime.machinery.validation.fielderrors import duplicate, forbidden, invalid, not_supported, required
from runtime.machinery.validation.gofmt import GoText, go_quote
from runtime.machinery.validation.labels import label_value_errors
from runtime.machinery.validation.names import qualified_name_errors
from runtime.models.k8s.core_v1 import NodeStatus, NodeSystemInfo
from runtime.server.kinds.cluster.netrules import parse_cidr
from runtime.server.kinds.columns import doc_column
from runtime.server.kinds.cluster.resources import quantity_value_errors
from runtime.server.kinds.cluster.stored import ClusterStrategy
from runtime.server.kinds.parts import FIELD_LABEL_NOT_SUPPORTED
from runtime.server.kinds.columns import AGE_COLUMN, NAME_COLUMN, Columns, age, column
from runtime.server.kinds.subresources import StatusSubresource

__all__ = ["NodeStrategy", "TAINT_EFFECTS", "taint_errors"]

TAINT_EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"]
_ROLE_PREFIX = "node-role.kubernetes.io/"
_ROLE_LABEL = "kubernetes.io/role"
_POD_CIDR_CHANGE = 'node updates may not change podCIDR except from "" to valid'


def _go_taint(taint: dict[str, Any]) -> GoText:
    """A taint as Go's `%#v` prints a `core.Taint` (timeAdded as a nil or set pointer)."""
    added = "(*v1.Time)(nil)" if taint.get("timeAdded") is None else f"time.Date({taint['timeAdded']})"
    return GoText(f"core.Taint{{Key:{go_quote(taint.get('key', ''))}, Value:{go_quote(taint.get('value', ''))}, "
                  f"Effect:{go_quote(taint.get('effect', ''))}, TimeAdded:{added}}}")


def taint_errors(taints: list[dict[str, Any]], path: str) -> list[FieldError]:
    """`validateNodeTaints` at `path`."""
    errs: list[FieldError] = []
    seen: set[tuple[str, str]] = set()
    for i, taint in enumerate(taints):
        at = f"{path}[{i}]"
        key, value, effect = taint.get("key", ""), taint.get("value", ""), taint.get("effect", "")
        errs += [invalid(f"{at}.key", key, msg) for msg in qualified_name_errors(key)]
        problems = label_value_errors(value)
        if problems:
            errs.append(invalid(f"{at}.value", value, ";".join(problems)))
        if not effect:
            errs.append(required(f"{at}.effect"))
        elif effect not in TAINT_EFFECTS:
            errs.append(not_supported(f"{at}.effect", effect, TAINT_EFFECTS))
        if (key, effect) in seen:
            errs.append(FieldError("FieldValueDuplicate", at, "taints must be unique by key and effect pair",
                                   _go_taint(taint)))
            continue
        seen.add((key, effect))
    return errs


def _pod_cidr_errors(cidrs: list[str]) -> list[FieldError]:
    path = "spec.podCIDRs"
    parsed = [parse_cidr(c) for c in cidrs]
    errs = [invalid(f"{path}[{i}]", cidrs, "must be valid CIDR") for i, net in enumerate(parsed) if net is None]
    if len(cidrs) > 1 and not errs:
        families = {net.version for net in parsed if net is not None}
        if families != {4, 6} or len(cidrs) > 2:
            errs.append(invalid(path, cidrs, "may specify no more than one CIDR for each IP family"))
        seen: set[str] = set()
        for i, value in enumerate(cidrs):
            if value in seen:
                errs.append(duplicate(f"{path}[{i}]", value))
            seen.add(value)
    return errs


def _resource_errors(obj: dict[str, Any]) -> list[FieldError]:
    """`ValidateNodeResources`: capacity and allocatable quantities (paths `status.capacity.<name>`)."""
    status = obj.get("status") or {}
    return [e for field in ("capacity", "allocatable")
            for name, value in sorted((status.get(field) or {}).items())
            for e in quantity_value_errors(name, value, f"status.{field}.{name}")]


def _roles(labels: dict[str, str]) -> list[str]:
    roles = set()
    for key, value in labels.items():
        if key.startswith(_ROLE_PREFIX) and key[len(_ROLE_PREFIX):]:
            roles.add(key[len(_ROLE_PREFIX):])
        elif key == _ROLE_LABEL and value:
            roles.add(value)
    return sorted(roles)


def _address(status: dict[str, Any], kind: str) -> str:
    return next((a.get("address", "") for a in status.get("addresses") or () if a.get("type") == kind), "<none>")


def _cells(obj: dict[str, Any]) -> list[Any]:
    meta, spec, status = obj["metadata"], obj.get("spec") or {}, obj.get("status") or {}
    ready = next((c for c in reversed(status.get("conditions") or []) if c.get("type") == "Ready"), None)
    states = [] if ready is None else ["Ready" if ready.get("status") == "True" else "NotReady"]
    states = states or ["Unknown"]
    if spec.get("unschedulable"):
        states.append("SchedulingDisabled")
    info = status.get("nodeInfo") or {}
    return [meta.get("name", ""), ",".join(states), ",".join(_roles(meta.get("labels") or {})) or "<none>",
            age(meta.get("creationTimestamp")), info.get("kubeletVersion", ""),
            _address(status, "InternalIP"), _address(status, "ExternalIP"),
            info.get("osImage") or "<unknown>", info.get("kernelVersion") or "<unknown>",
            info.get("containerRuntimeVersion") or "<unknown>"]


_COLUMNS = Columns((
    NAME_COLUMN,
    column("Status", "The status of the node"),
    column("Roles", "The roles of the node"),
    AGE_COLUMN,
    doc_column("Version", NodeSystemInfo, "kubeletVersion"),
    doc_column("Internal-IP", NodeStatus, "addresses", priority=1),
    doc_column("External-IP", NodeStatus, "addresses", priority=1),
    doc_column("OS-Image", NodeSystemInfo, "osImage", priority=1),
    doc_column("Kernel-Version", NodeSystemInfo, "kernelVersion", priority=1),
    doc_column("Container-Runtime", NodeSystemInfo, "containerRuntimeVersion", priority=1),
), _cells)


class NodeStrategy(ClusterStrategy):
    """See the module doc."""

    name_rule = "dns-subdomain"
    allow_create_on_update = False
    subresources = {"status": StatusSubresource()}
    resource_maps = ("status.capacity", "status.allocatable")
    field_labels = ("metadata.name", "spec.unschedulable")
    field_label_error = FIELD_LABEL_NOT_SUPPORTED  # the Node's own conversion (pkg/apis/core/v1)
    columns = _COLUMNS

    def default(self, obj: dict[str, Any]) -> None:
        spec = obj.setdefault("spec", {})
        cidrs = spec.get("podCIDRs")
        if not cidrs and spec.get("podCIDR"):
            spec["podCIDRs"] = [spec["podCIDR"]]
        elif cidrs:
            spec["podCIDR"] = cidrs[0]
        status = obj.get("status")
        if status and status.get("allocatable") is None and status.get("capacity") is not None:
            status["allocatable"] = dict(status["capacity"])

    def selectable_fields(self, obj: dict[str, Any]) -> dict[str, str]:
        return {"metadata.name": obj["metadata"].get("name", ""),
                "spec.unschedulable": json.dumps(bool((obj.get("spec") or {}).get("unschedulable")))}

    def validate_spec(self, obj: dict[str, Any]) -> list[FieldError]:
        spec = obj.get("spec") or {}
        errs = taint_errors(spec.get("taints") or [], "metadata.taints")
        errs += _resource_errors(obj)
        return errs + _pod_cidr_errors(spec.get("podCIDRs") or [])

    def validate_update(self, new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
        # ValidateNodeUpdate checks less than a create: podCIDRs' form is not looked at again.
        spec, old_spec, status = new.get("spec") or {}, old.get("spec") or {}, new.get("status") or {}
        errs = validate_object_meta(new["metadata"], namespaced=False, name_rule=self.name_rule,
                                    kube_finalizers=self.kube_finalizers)
        errs += _resource_errors(new)
        seen: list[Any] = []
        for i, address in enumerate(status.get("addresses") or []):
            if address in seen:
                errs.append(duplicate(f"status.addresses[{i}]", GoText(
                    f"core.NodeAddress{{Type:{go_quote(address.get('type', ''))}, "
                    f"Address:{go_quote(address.get('address', ''))}}}")))
            seen.append(address)
        old_cidrs, cidrs = old_spec.get("podCIDRs") or [], spec.get("podCIDRs") or []
        if old_cidrs:
            if len(old_cidrs) != len(cidrs):
                errs.append(forbidden("spec.podCIDRs", _POD_CIDR_CHANGE))
            else:
                errs += [forbidden("spec.podCIDRs", _POD_CIDR_CHANGE) for a, b in zip(old_cidrs, cidrs) if a != b]
        if old_spec.get("providerID") and old_spec["providerID"] != spec.get("providerID"):
            errs.append(forbidden("spec.providerID", 'node updates may not change providerID except from "" to valid'))
        errs += taint_errors(spec.get("taints") or [], "metadata.taints")
        if spec.get("externalID", "") != old_spec.get("externalID", ""):
            errs.append(forbidden("spec.externalID", "may not be updated"))
        return errs
