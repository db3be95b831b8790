"""The warnings a pod spec earns (Kubernetes' `pkg/api/pod/warnings.go`, `GetWarningsForPod` and
`GetWarningsForPodTemplate`): what is accepted but likely a mistake, as `Warning:` headers.

- deprecated node labels in `nodeSelector`, node affinity terms and
  topology spread keys (`beta.kubernetes.io/arch`, ...);
- deprecated annotations (`scheduler.alpha.kubernetes.io/critical-pod`, the
  sysctl ones) and the seccomp annotations without their field;
- removed volume plugins (`gitRepo`, `scaleIO`, `flocker`, `storageos`,
  `quobyte`, `glusterfs`, `cephfs`, `rbd`);
- duplicate host alias IPs, duplicate or empty image pull secret names;
- fractional byte values of memory and ephemeral storage;
- an env var that hides an earlier one of its name (but `X=$(X)`);
- ports: a hostIP without hostPort, duplicate, overlapping or ambiguous
  definitions of one containerPort/protocol;
- a negative `terminationGracePeriodSeconds`.

`pod_name_warnings(name)` is what a workload whose name is no DNS label earns on create (its pods and
hostnames are named after it: Deployments, ReplicaSets, Jobs, CronJobs).

`pod_spec_warnings(spec, meta, prefix)` writes paths under `prefix` (`""` for
a Pod: `spec.containers[0]...`; `spec.template` for a template:
`spec.template.spec...`, `spec.template.metadata.annotations[...]`).
"""

from __future__ import annotations

from typing import Any

from runtime.machinery.quantity import QuantityError
from runtime.machinery.validation.gofmt import go_quote
from runtime.machinery.validation.names import dns1123_label_errors
from runtime.server.kinds.pods.podspec_common import cached_quantity

__all__ = ["pod_name_warnings", "pod_spec_warnings", "pod_template_warnings"]

_DEPRECATED_NODE_LABELS = {
    "beta.kubernetes.io/arch": 'deprecated since v1.14; use "kubernetes.io/arch" instead',
    "beta.kubernetes.io/os": 'deprecated since v1.14; use "kubernetes.io/os" instead',
    "failure-domain.beta.kubernetes.io/region": 'deprecated since v1.17; use "topology.kubernetes.io/region" instead',
    "failure-domain.beta.kubernetes.io/zone": 'deprecated since v1.17; use "topology.kubernetes.io/zone" instead',
    "beta.kubernetes.io/instance-type": 'deprecated since v1.17; use "node.kubernetes.io/instance-type" instead',
}
_DEPRECATED_ANNOTATIONS = {
    "scheduler.alpha.kubernetes.io/critical-pod": 'non-functional in v1.16+; use the "priorityClassName" field '
                                                  "instead",
    "security.alpha.kubernetes.io/sysctls": 'non-functional in v1.11+; use the "sysctls" field instead',
    "security.alpha.kubernetes.io/unsafe-sysctls": 'non-functional in v1.11+; use the "sysctls" field instead',
}
_REMOVED_PLUGINS = (
    ("gitRepo", "deprecated in v1.11"), ("scaleIO", "deprecated in v1.16, non-functional in v1.22+"),
    ("flocker", "deprecated in v1.22, non-functional in v1.25+"),
    ("storageos", "deprecated in v1.22, non-functional in v1.25+"),
    ("quobyte", "deprecated in v1.22, non-functional in v1.25+"),
    ("glusterfs", "deprecated in v1.25, non-functional in v1.26+"),
    ("cephfs", "deprecated in v1.28, non-functional in v1.31+"),
    ("rbd", "deprecated in v1.28, non-functional in v1.31+"),
)
_SECCOMP_POD = "seccomp.security.alpha.kubernetes.io/pod"
_SECCOMP_CONTAINER = "container.seccomp.security.alpha.kubernetes.io/"
_SECCOMP_MSG = 'non-functional in v1.27+; use the "seccompProfile" field instead'


def pod_name_warnings(name: str) -> list[str]:
    """A workload strategy's WarningsOnCreate of a name that is not a DNS label (`IsDNS1123Label`'s words)."""
    msgs = dns1123_label_errors(name)
    if not msgs:
        return []
    return ["metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; "
            f"a DNS label is recommended: [{' '.join(msgs)}]"]


def _join(prefix: str, rest: str) -> str:
    return f"{prefix}.{rest}" if prefix else rest


def _containers(spec: dict[str, Any], at: str) -> list[tuple[dict[str, Any], str]]:
    """VisitContainersWithPath's order: init, regular, ephemeral containers."""
    return [(c, f"{at}.{key}[{i}]") for key in ("initContainers", "containers", "ephemeralContainers")
            for i, c in enumerate(spec.get(key) or [])]


def _fractional_bytes(resources: dict[str, Any] | None, at: str) -> list[str]:
    """Memory and ephemeral storage that are no whole number of bytes, in `resources`' limits, requests (or, for
    the pod's overhead, `overhead`)."""
    out = []
    for kind in ("limits", "requests", "overhead"):
        for name in ("memory", "ephemeral-storage"):
            value = ((resources or {}).get(kind) or {}).get(name)
            if value is None:
                continue
            try:
                quantity = cached_quantity(value if isinstance(value, str) else repr(value))
            except QuantityError:
                continue
            if quantity.milli() % 1000:
                out.append(f"{at}.{kind}[{name}]: fractional byte value {go_quote(str(quantity))} is invalid, must "
                           "be an integer")
    return out


def _node_label_warnings(spec: dict[str, Any], at: str) -> list[str]:
    out = [f"{at}.nodeSelector[{key}]: {_DEPRECATED_NODE_LABELS[key]}"
           for key in spec.get("nodeSelector") or {} if key in _DEPRECATED_NODE_LABELS]
    node = (spec.get("affinity") or {}).get("nodeAffinity") or {}
    affinity_at = f"{at}.affinity.nodeAffinity"
    terms = ((node.get("requiredDuringSchedulingIgnoredDuringExecution") or {}).get("nodeSelectorTerms") or [])
    for i, term in enumerate(terms):
        term_at = f"{affinity_at}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[{i}]"
        out += [f"{term_at}.matchExpressions[{j}].key: {_DEPRECATED_NODE_LABELS[e.get('key')]}"
                for j, e in enumerate(term.get("matchExpressions") or []) if e.get("key") in _DEPRECATED_NODE_LABELS]
    for i, preferred in enumerate(node.get("preferredDuringSchedulingIgnoredDuringExecution") or []):
        term_at = f"{affinity_at}.preferredDuringSchedulingIgnoredDuringExecution[{i}].preference"
        out += [f"{term_at}.matchExpressions[{j}].key: {_DEPRECATED_NODE_LABELS[e.get('key')]}"
                for j, e in enumerate((preferred.get("preference") or {}).get("matchExpressions") or [])
                if e.get("key") in _DEPRECATED_NODE_LABELS]
    out += [f"{at}.topologySpreadConstraints[{i}].topologyKey: {_DEPRECATED_NODE_LABELS[c.get('topologyKey')]}"
            for i, c in enumerate(spec.get("topologySpreadConstraints") or [])
            if c.get("topologyKey") in _DEPRECATED_NODE_LABELS]
    return out


def _annotation_warnings(spec: dict[str, Any], annotations: dict[str, str], at: str) -> list[str]:
    out = [f"{at}[{key}]: {message}" for key, message in _DEPRECATED_ANNOTATIONS.items() if key in annotations]
    if _SECCOMP_POD in annotations and not (spec.get("securityContext") or {}).get("seccompProfile"):
        out.append(f"{at}[{_SECCOMP_POD}]: {_SECCOMP_MSG}")
    return out


def _env_warnings(container: dict[str, Any], at: str) -> list[str]:
    out: list[str] = []
    seen: set[str] = set()
    for i, var in enumerate(container.get("env") or []):
        name = var.get("name") or ""
        if name not in seen:
            seen.add(name)
        elif var.get("valueFrom") is not None or var.get("value") != f"$({name})":
            out.append(f"{at}.env[{i}]: hides previous definition of {go_quote(name)}")
    return out


def _go_port(port: dict[str, Any]) -> str:
    """`%+v` of a core.ContainerPort."""
    return (f"{{Name:{port.get('name') or ''} HostPort:{port.get('hostPort') or 0} "
            f"ContainerPort:{port.get('containerPort') or 0} Protocol:{port.get('protocol') or ''} "
            f"HostIP:{port.get('hostIP') or ''}}}")


def _port_warnings(containers: list[tuple[dict[str, Any], str]]) -> list[str]:
    out: list[str] = []
    seen: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for container, at in containers:
        for i, port in enumerate(container.get("ports") or []):
            here = f"{at}.ports[{i}]"
            host_ip, host_port = port.get("hostIP") or "", port.get("hostPort") or 0
            if host_ip and not host_port:
                out.append(f"{here}: hostIP set without hostPort: {_go_port(port)}")
            key = f"{port.get('containerPort') or 0}/{port.get('protocol') or ''}"
            for other_at, other in seen.get(key, []):
                other_ip, other_port = other.get("hostIP") or "", other.get("hostPort") or 0
                if host_ip == other_ip and host_port == other_port:
                    out.append(f"{here}: duplicate port definition with {other_at}")
                elif not host_port or not other_port:
                    out.append(f"{here}: overlapping port definition with {other_at}")
                elif host_port == other_port and (not host_ip) != (not other_ip):
                    out.append(f"{here}: dangerously ambiguous port definition with {other_at}")
            seen.setdefault(key, []).append((here, port))
    return out


def pod_spec_warnings(spec: dict[str, Any], meta: dict[str, Any] | None, prefix: str) -> list[str]:
    """warningsForPodSpecAndMeta: the warnings of `spec` (and its object's or template's `meta`), see the
    module doc."""
    at = _join(prefix, "spec")
    annotations_at = _join(prefix, "metadata.annotations")
    annotations = (meta or {}).get("annotations") or {}
    out = _node_label_warnings(spec, at) + _annotation_warnings(spec, annotations, annotations_at)
    for i, volume in enumerate(spec.get("volumes") or []):
        out += [f"{at}.volumes[{i}].{kind}: {message}" for kind, message in _REMOVED_PLUGINS
                if volume.get(kind) is not None]
    ips: set[str] = set()
    for i, alias in enumerate(spec.get("hostAliases") or []):
        if (ip := alias.get("ip") or "") in ips:
            out.append(f"{at}.hostAliases[{i}].ip: duplicate ip {go_quote(ip)}")
        ips.add(ip)
    names: set[str] = set()
    for i, secret in enumerate(spec.get("imagePullSecrets") or []):
        if (name := secret.get("name") or "") in names:
            out.append(f"{at}.imagePullSecrets[{i}].name: duplicate name {go_quote(name)}")
        names.add(name)
    out += [f"{at}.imagePullSecrets[{i}].name: invalid empty name \"\""
            for i, secret in enumerate(spec.get("imagePullSecrets") or []) if not secret.get("name")]
    out += _fractional_bytes({"overhead": spec.get("overhead")}, at)
    containers = _containers(spec, at)
    for container, container_at in containers:
        name = container.get("name") or ""
        if (_SECCOMP_CONTAINER + name) in annotations and not (container.get("securityContext") or {}).get(
                "seccompProfile"):
            out.append(f"{annotations_at}[{_SECCOMP_CONTAINER}{name}]: {_SECCOMP_MSG}")
        out += _fractional_bytes(container.get("resources"), f"{container_at}.resources")
        out += _env_warnings(container, container_at)
    out += _port_warnings(containers)
    if (grace := spec.get("terminationGracePeriodSeconds")) is not None and grace < 0:
        out.append(f"{at}.terminationGracePeriodSeconds: must be >= 0; negative values are invalid and will be "
                   "treated as 1")
    return out


def pod_template_warnings(template: dict[str, Any], path: str) -> list[str]:
    """GetWarningsForPodTemplate: a template's warnings under `path` (`spec.template`)."""
    return pod_spec_warnings(template.get("spec") or {}, template.get("metadata"), path)
