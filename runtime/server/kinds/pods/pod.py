"""Core `v1` Pod (Kubernetes' `pkg/registry/core/pod`), served as kube-apiserver serves it with no scheduler
and no kubelet behind it.

- Defaults: `podspec.default_pod` (SetDefaults_Pod, then the pod spec's),
  on create and on update (Kubernetes' decoder defaults both bodies).
- Create (PrepareForCreate): the status is reset to `phase: Pending` and
  the `qosClass` Kubernetes computes (`qos`); a Pod with scheduling gates
  gets the condition PodScheduled False, reason SchedulingGated.
  Validation (ValidatePodCreate): names are DNS subdomains, the annotations
  Kubernetes checks (`podannotations`), the spec is the
  pod spec's rules (`podspec.validate_pod_spec` under `spec`), no
  `spec.ephemeralContainers` (`cannot be set on create`), no `nodeName` with
  scheduling gates.
- Update (ValidatePodUpdate, `podupdate`): the spec is immutable but for its
  images, activeDeadlineSeconds, added tolerations, removed scheduling
  gates and a negative terminationGracePeriodSeconds made 1. A write of the
  Pod keeps the stored status; a write of `status` keeps the spec and the
  metadata (the stored qosClass when it sends none; `podIP` and `podIPs`
  kept in step, as v1's conversion does) and follows
  ValidatePodStatusUpdate; a write of `ephemeralcontainers` changes only
  `spec.ephemeralContainers` (additions only). A PUT of a missing Pod is
  404. Pods keep `metadata.generation` as sent (Kubernetes 1.28 counts none).
- Delete (CheckGracefulDelete): a Pod on a node goes gracefully: it gets
  `deletionTimestamp` and `deletionGracePeriodSeconds` (the delete's
  gracePeriodSeconds, else its terminationGracePeriodSeconds) and stays,
  as with no kubelet to finish it; a Pod on no node, or Succeeded or
  Failed, goes at once, as does a grace period of 0. A delete answers the
  Pod.
- Subresources: `status`, `ephemeralcontainers`, `binding` (`binding`),
  `eviction` (`eviction`).
- Field selectors: metadata.name, metadata.namespace, spec.nodeName (and
  its old name spec.host), spec.restartPolicy, spec.schedulerName,
  spec.serviceAccountName, spec.hostNetwork, status.phase, status.podIP,
  status.podIPs, status.nominatedNodeName; another is
  `field label not supported: <label>` (the Pod's own label conversion).
- Warnings: the pod spec's (`podspec.pod_spec_warnings`, GetWarningsForPod).
- `kubectl get` columns: `podprinter`.
"""

from __future__ import annotations

import copy
from typing import Any

from runtime.machinery.validation import FieldError, invalid_error, validate_object_meta
from runtime.machinery.validation.fielderrors import forbidden
from runtime.server.kinds.base import Strategy
from runtime.server.kinds.parts import FIELD_LABEL_NOT_SUPPORTED
from runtime.server.kinds.pods.binding import BindingSubresource
from runtime.server.kinds.pods.podannotations import annotation_errors, annotation_update_errors
from runtime.server.kinds.pods.eviction import EvictionSubresource
from runtime.server.kinds.pods.podprinter import POD_COLUMNS
from runtime.server.kinds.pods.podspec import default_pod, pod_spec_warnings, validate_pod_spec
from runtime.server.kinds.pods.podupdate import (
    IMMUTABLE_SPEC_MSG, ephemeral_update_errors, spec_diff, spec_update_errors, status_update_errors,
)
from runtime.server.kinds.pods.qos import pod_qos_class
from runtime.server.kinds.subresources import ObjectSubresource, StatusSubresource, Subresource

__all__ = ["PodStrategy", "PodStatusSubresource", "EphemeralContainersSubresource", "sync_ips"]

_FIELD_LABELS = ("metadata.name", "metadata.namespace", "spec.nodeName", "spec.host", "spec.restartPolicy",
                 "spec.schedulerName", "spec.serviceAccountName", "spec.hostNetwork", "status.phase", "status.podIP",
                 "status.podIPs", "status.nominatedNodeName")
_TERMINAL = ("Succeeded", "Failed")
#: Kubernetes' default terminationGracePeriodSeconds (a spec without one, before defaulting).
_DEFAULT_GRACE = 30


def sync_ips(status: dict[str, Any], single: str, plural: str) -> None:
    """v1's PodStatus conversion: `podIP` and `podIPs` say the same; where they differ
    the single one wins (older kubelets write only it), and the single one is the list's first."""
    ip, ips = status.get(single), status.get(plural)
    if ip and (not ips or ips[0].get("ip") != ip):
        status[plural] = [{"ip": ip}]
    elif ips and ips[0].get("ip"):
        status[single] = ips[0]["ip"]


class PodStatusSubresource(StatusSubresource):
    """`pods/status`: the status only; a status without qosClass keeps the stored one (old kubelets drop it);
    the pod and host IPs are kept in step (`sync_ips`)."""

    def keep(self, new: dict[str, Any], old: dict[str, Any]) -> None:
        super().keep(new, old)
        status = new.setdefault("status", {})
        qos = (old.get("status") or {}).get("qosClass")
        if qos and not status.get("qosClass"):
            status["qosClass"] = qos
        sync_ips(status, "podIP", "podIPs")


class EphemeralContainersSubresource(ObjectSubresource):
    """`pods/ephemeralcontainers`: a write changes only `spec.ephemeralContainers` (dropNonEphemeralContainerUpdates)."""

    name = "ephemeralcontainers"

    def keep(self, new: dict[str, Any], old: dict[str, Any]) -> None:
        containers = (new.get("spec") or {}).get("ephemeralContainers")
        new.clear()
        new.update(copy.deepcopy(old))
        if containers:
            new.setdefault("spec", {})["ephemeralContainers"] = containers
        else:
            new.get("spec", {}).pop("ephemeralContainers", None)


class PodStrategy(Strategy):
    """See the module doc."""

    name_rule = "dns-subdomain"
    allow_create_on_update = False
    returns_deleted_object = True
    field_labels = _FIELD_LABELS
    field_label_error = FIELD_LABEL_NOT_SUPPORTED  # the Pod's own conversion (pkg/apis/core/v1)
    columns = POD_COLUMNS

    def __init__(self, scheme: Any, rt: Any) -> None:
        super().__init__(scheme, rt)
        self.subresources = {
            "status": PodStatusSubresource(),
            "ephemeralcontainers": EphemeralContainersSubresource(),
            "binding": BindingSubresource(rt),
            "eviction": EvictionSubresource(rt, scheme.by_kind("PodDisruptionBudget", "policy")),
        }

    def default(self, obj: dict[str, Any]) -> None:
        default_pod(obj)

    def prepare_for_create(self, obj: dict[str, Any]) -> None:
        super().prepare_for_create(obj)
        spec = obj.setdefault("spec", {})
        obj["status"] = {"phase": "Pending", "qosClass": pod_qos_class(spec)}
        if spec.get("schedulingGates"):
            obj["status"]["conditions"] = [{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated",
                                            "message": "Scheduling is blocked due to non-empty scheduling gates"}]

    def prepare_for_update(self, new: dict[str, Any], old: dict[str, Any],
                           subresource: Subresource | None = None) -> None:
        super().prepare_for_update(new, old, subresource)

    def keep_to_main(self, new: dict[str, Any], old: dict[str, Any]) -> None:
        """The stored status stays; ephemeral containers change only through their subresource (422)."""
        super().keep_to_main(new, old)
        before = (old.get("spec") or {}).get("ephemeralContainers")
        after = (new.get("spec") or {}).get("ephemeralContainers")
        if before != after:
            diff = spec_diff({"ephemeralContainers": before} if before else {},
                             {"ephemeralContainers": after} if after else {}, "core.PodSpec")
            raise invalid_error(self.rt.kind, self.rt.group_kind, new["metadata"].get("name", ""),
                                [forbidden("spec", f"{IMMUTABLE_SPEC_MSG}\n{diff}")])

    def validate_spec(self, obj: dict[str, Any]) -> list[FieldError]:
        """ValidatePodCreate beyond ObjectMeta."""
        spec = obj.get("spec") or {}
        errs = annotation_errors(obj) + validate_pod_spec(spec, "spec", is_pod=True)
        if spec.get("ephemeralContainers"):
            errs.append(forbidden("spec.ephemeralContainers", "cannot be set on create"))
        if spec.get("nodeName") and spec.get("schedulingGates"):
            errs.append(forbidden("spec.nodeName", "cannot be set until all schedulingGates have been cleared"))
        return errs

    def validate_update(self, new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
        """ValidatePodUpdate, ValidatePodStatusUpdate and ValidatePodEphemeralContainersUpdate: each holds
        trivially for the parts a write keeps (the status of a Pod write, the spec of a status write)."""
        errs = validate_object_meta(new.get("metadata") or {}, namespaced=True, name_rule=self.name_rule,
                                    kube_finalizers=self.kube_finalizers)
        errs += annotation_update_errors(new, old)
        if new.get("spec") != old.get("spec"):  # a status write (the stored spec) is not the spec's to check again
            errs += validate_pod_spec(new.get("spec") or {}, "spec", is_pod=True) + spec_update_errors(new, old)
        return errs + status_update_errors(new, old) + ephemeral_update_errors(new, old)

    def warnings(self, old: dict[str, Any] | None, new: dict[str, Any], manager: str) -> list[str]:
        """GetWarningsForPod, on every write (Kubernetes' status strategies inherit the Pod's)."""
        return pod_spec_warnings(new.get("spec") or {}, new.get("metadata"), "")

    def grace_period(self, obj: dict[str, Any], asked: int | None) -> int | None:
        """CheckGracefulDelete: the asked period, else the Pod's terminationGracePeriodSeconds; 0 for a Pod
        on no node or one that has finished; a negative one is 1."""
        spec, phase = obj.get("spec") or {}, (obj.get("status") or {}).get("phase")
        period = asked if asked is not None else spec.get("terminationGracePeriodSeconds", _DEFAULT_GRACE)
        if not spec.get("nodeName") or phase in _TERMINAL:
            period = 0
        return 1 if period is not None and period < 0 else int(period or 0)

    def selectable_fields(self, obj: dict[str, Any]) -> dict[str, str]:
        """PodToSelectableFields (status.podIPs is accepted but has no value: it matches as empty, as there)."""
        spec, status = obj.get("spec") or {}, obj.get("status") or {}
        ips = status.get("podIPs") or []
        return {**super().selectable_fields(obj),
                "spec.nodeName": spec.get("nodeName") or "", "spec.host": spec.get("nodeName") or "",
                "spec.restartPolicy": spec.get("restartPolicy") or "",
                "spec.schedulerName": spec.get("schedulerName") or "",
                "spec.serviceAccountName": spec.get("serviceAccountName") or "",
                "spec.hostNetwork": "true" if spec.get("hostNetwork") else "false",
                "status.phase": status.get("phase") or "",
                "status.podIP": (ips[0].get("ip") if ips else "") or "",
                "status.nominatedNodeName": status.get("nominatedNodeName") or ""}
