"""The pod spec's defaulting and validation, which a Pod and every pod template (Deployments, Jobs, ...) share.

The functions other kinds call (their signatures are the contract):

- `default_pod_spec(spec)`: Kubernetes' `SetDefaults_PodSpec` and its parts' defaults (containers, volumes,
  probes, ports...), in place (`podspec_defaults` lists them);
- `default_pod_template(template)`: a pod template's (`template.spec` as above);
- `default_pod(pod)`: a Pod's whole defaulting (`SetObjectDefaults_Pod`): the Pod-only `SetDefaults_Pod`
  (requests copied from limits, `enableServiceLinks: true`, host network ports), then the spec's;
- `validate_pod_spec(spec, path)`: `ValidatePodSpec`, field paths under `path` (`spec`,
  `spec.template.spec`); `is_pod=True` adds what is checked only of a Pod's own spec (a host network port's
  `hostPort` must equal its `containerPort`, where a template may leave it 0);
- `validate_pod_template_spec(template, path)`: `ValidatePodTemplateSpec` under `path` (`spec.template`): its
  labels and annotations (at `spec.template.labels`, without `metadata`, as Kubernetes writes them), the
  annotations Kubernetes reads (`podspec_annotations.pod_annotation_errors`, which a Pod's validation calls
  too), its spec, and no ephemeral containers.

- `pod_spec_warnings(spec, meta, prefix)` and `pod_template_warnings(template, path)`: the `Warning:`s a pod
  spec earns (`GetWarningsForPod`, `GetWarningsForPodTemplate`; `podspec_warnings` lists them), for the
  kinds' `warnings` hooks.

What `ValidatePodSpec` checks, in its order: `terminationGracePeriodSeconds` required; volumes
(`podspec_volumes`); containers, init and ephemeral containers (`podspec_containers`); host network ports;
`restartPolicy` (`Always`, `OnFailure`, `Never`) and `dnsPolicy` (`ClusterFirstWithHostNet`, `ClusterFirst`,
`Default`, `None`) required and supported; `nodeSelector` labels; the pod security context, affinity,
`dnsConfig`, readiness and scheduling gates, topology spread constraints (`podspec_scheduling`);
`serviceAccountName`, `nodeName` and `priorityClassName` DNS subdomains; `activeDeadlineSeconds` 1 to 2^31-1;
`hostname` and `subdomain` DNS labels; tolerations; host aliases; `runtimeClassName`; `preemptionPolicy`
(`PreemptLowerPriority`, `Never`); `overhead`'s quantities; `os.name` (`linux`, `windows`) and what that OS's
pods may not set (`podspec_os`).

A Pod's own rules (no ephemeral containers on create, an image without surrounding whitespace, updates,
status) are the pod strategy's.
"""

from __future__ import annotations

from typing import Any

from runtime.machinery.validation import FieldError
from runtime.machinery.validation.fielderrors import forbidden, invalid, not_supported, required
from runtime.server.kinds.pods.podspec_annotations import pod_annotation_errors
from runtime.server.kinds.pods.podspec_common import (
    MAX_INT32, annotation_map, dns_label, dns_subdomain, inclusive_range, label_map,
)
from runtime.server.kinds.pods.podspec_containers import (
    validate_containers, validate_ephemeral_containers, validate_init_containers,
)
from runtime.server.kinds.pods.podspec_defaults import default_pod_only, default_spec
from runtime.server.kinds.pods.podspec_os import os_errors
from runtime.server.kinds.pods.podspec_resources import validate_resources
from runtime.server.kinds.pods.podspec_scheduling import (
    validate_affinity, validate_dns_config, validate_host_aliases, validate_pod_security_context,
    validate_readiness_gates, validate_scheduling_gates, validate_tolerations, validate_topology_spread,
)
from runtime.server.kinds.pods.podspec_volumes import validate_volumes
from runtime.server.kinds.pods.podspec_warnings import pod_name_warnings, pod_spec_warnings, pod_template_warnings

__all__ = ["default_pod_spec", "default_pod_template", "default_pod", "validate_pod_spec",
           "validate_pod_template_spec", "pod_name_warnings", "pod_spec_warnings", "pod_template_warnings"]

_RESTART_POLICIES = ["Always", "OnFailure", "Never"]
_DNS_POLICIES = ["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"]
_PREEMPTION_POLICIES = ["PreemptLowerPriority", "Never"]


def default_pod_spec(spec: dict[str, Any]) -> None:
    """Kubernetes' pod spec defaults, in place."""
    default_spec(spec)


def default_pod_template(template: dict[str, Any]) -> None:
    """A pod template's defaults, in place."""
    spec = template.get("spec")
    if isinstance(spec, dict):
        default_pod_spec(spec)


def default_pod(pod: dict[str, Any]) -> None:
    """A Pod's defaults, in place: SetDefaults_Pod, then the spec's (as Kubernetes' generated defaulter)."""
    spec = pod.get("spec")
    if isinstance(spec, dict):
        default_pod_only(spec)
        default_pod_spec(spec)


def _choice(value: str, path: str, supported: list[str]) -> list[FieldError]:
    """A required enumeration: `Required value` when empty, `Unsupported value` when unknown."""
    if not value:
        return [required(path)]
    return [] if value in supported else [not_supported(path, value, supported)]


def _host_network_ports(spec: dict[str, Any], path: str, is_pod: bool) -> list[FieldError]:
    """validatePodHostNetworkDeps: with hostNetwork, a hostPort (a Pod's always, a template's when set) is the
    containerPort."""
    if not spec.get("hostNetwork"):
        return []
    errs: list[FieldError] = []
    for i, container in enumerate(spec.get("containers") or []):
        for j, port in enumerate(container.get("ports") or []):
            host, container_port = port.get("hostPort") or 0, port.get("containerPort") or 0
            if (is_pod or host) and host != container_port:
                errs.append(invalid(f"{path}.containers[{i}].ports[{j}].hostPort", host,
                                    "must match `containerPort` when `hostNetwork` is true"))
    return errs


def _names(spec: dict[str, Any], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for key in ("serviceAccountName", "nodeName", "priorityClassName"):
        if spec.get(key):
            errs += dns_subdomain(spec[key], f"{path}.{key}")
    for key in ("hostname", "subdomain"):
        if spec.get(key):
            errs += dns_label(spec[key], f"{path}.{key}")
    if spec.get("runtimeClassName") is not None:
        errs += dns_subdomain(spec["runtimeClassName"], f"{path}.runtimeClassName")
    return errs


def validate_pod_spec(spec: dict[str, Any], path: str, *, is_pod: bool = False) -> list[FieldError]:
    """`ValidatePodSpec`'s errors, field paths under `path` (see the module doc)."""
    errs: list[FieldError] = []
    if spec.get("terminationGracePeriodSeconds") is None:
        errs.append(required(f"{path}.terminationGracePeriodSeconds"))
    volumes, volume_errors = validate_volumes(spec.get("volumes") or [], f"{path}.volumes")
    errs += volume_errors
    containers = spec.get("containers") or []
    errs += validate_containers(containers, volumes, f"{path}.containers")
    init = spec.get("initContainers") or []
    errs += validate_init_containers(init, containers, volumes, f"{path}.initContainers")
    errs += validate_ephemeral_containers(spec.get("ephemeralContainers") or [], containers, init, volumes,
                                          f"{path}.ephemeralContainers")
    errs += _host_network_ports(spec, path, is_pod)
    errs += _choice(spec.get("restartPolicy") or "", f"{path}.restartPolicy", _RESTART_POLICIES)
    errs += _choice(spec.get("dnsPolicy") or "", f"{path}.dnsPolicy", _DNS_POLICIES)
    errs += label_map(spec.get("nodeSelector"), f"{path}.nodeSelector")
    errs += validate_pod_security_context(spec.get("securityContext"), spec, f"{path}.securityContext")
    errs += validate_affinity(spec.get("affinity"), f"{path}.affinity")
    errs += validate_dns_config(spec.get("dnsConfig"), spec.get("dnsPolicy") or "", f"{path}.dnsConfig")
    errs += validate_readiness_gates(spec.get("readinessGates") or [], f"{path}.readinessGates")
    errs += validate_scheduling_gates(spec.get("schedulingGates") or [], f"{path}.schedulingGates")
    errs += validate_topology_spread(spec.get("topologySpreadConstraints") or [],
                                     f"{path}.topologySpreadConstraints")
    errs += _names(spec, path)
    if (deadline := spec.get("activeDeadlineSeconds")) is not None and not 1 <= deadline <= MAX_INT32:
        errs.append(invalid(f"{path}.activeDeadlineSeconds", deadline, inclusive_range(1, MAX_INT32)))
    errs += validate_tolerations(spec.get("tolerations") or [], f"{path}.tolerations")
    errs += validate_host_aliases(spec.get("hostAliases") or [], f"{path}.hostAliases")
    if spec.get("preemptionPolicy") is not None:
        errs += _choice(spec["preemptionPolicy"], f"{path}.preemptionPolicy", _PREEMPTION_POLICIES)
    if spec.get("overhead") is not None:
        errs += validate_resources({"limits": spec["overhead"]}, f"{path}.overhead")
    if (os := spec.get("os")) is not None:
        name = os.get("name") or ""
        if not name:
            errs.append(required(f"{path}.os.name"))
        elif name not in ("linux", "windows"):
            errs.append(not_supported(f"{path}.os", name, ["linux", "windows"]))
        else:
            errs += os_errors(spec, path)
    return errs


def validate_pod_template_spec(template: dict[str, Any], path: str) -> list[FieldError]:
    """`ValidatePodTemplateSpec`'s errors, field paths under `path` (see the module doc)."""
    meta = template.get("metadata") or {}
    errs = label_map(meta.get("labels"), f"{path}.labels")
    errs += annotation_map(meta.get("annotations"), f"{path}.annotations")
    spec = template.get("spec") or {}
    errs += pod_annotation_errors(meta.get("annotations"), spec, f"{path}.annotations")
    errs += validate_pod_spec(spec, f"{path}.spec")
    if spec.get("ephemeralContainers"):
        errs.append(forbidden(f"{path}.spec.ephemeralContainers", "ephemeral containers not allowed in pod template"))
    return errs
