"""service_defaults: a Service's defaults and the registry's fix-ups of its linked fields, all pure.

- `default_service`: Kubernetes' `SetDefaults_Service` (pkg/apis/core/v1/defaults.go): `type: ClusterIP`,
  `sessionAffinity: None` (its config dropped; `ClientIP` gets `timeoutSeconds: 10800`), each port's
  `protocol: TCP` and `targetPort` = `port`, `externalTrafficPolicy: Cluster` for an externally accessible
  Service (NodePort, LoadBalancer, or ClusterIP with externalIPs), `internalTrafficPolicy: Cluster` (not for
  ExternalName), `allocateLoadBalancerNodePorts: true` for a LoadBalancer.
- `normalize_cluster_ips`: `clusterIP` and `clusterIPs` kept in step (the service storage's
  normalizeClusterIPs): either one set fills the other; on update, a changed `clusterIP` beside unchanged
  `clusterIPs` wins, a cleared one clears both.
- `init_ip_families`: `ipFamilies` and `ipFamilyPolicy` of a single-stack cluster (alloc.go's
  initIPFamilyFields): `[<the range's family>]` and `SingleStack`; a headless Service without selector gets
  `RequireDualStack`; ExternalName none. Families the cluster does not serve, and `RequireDualStack`, are
  refused in Kubernetes' words.
- `patch_allocated_values`: an update that leaves out the allocated `clusterIP(s)`, node ports or
  health check node port keeps them (storage.go's patchAllocatedValues: a resent manifest succeeds).
- `drop_type_dependent_fields`: a type change clears what the new type does not use and the user left as it
  was (strategy.go's dropTypeDependentFields).
"""

from __future__ import annotations

import ipaddress
from typing import Any

from runtime.machinery.validation import FieldError
from runtime.machinery.validation.fielderrors import invalid

__all__ = ["default_service", "normalize_cluster_ips", "init_ip_families", "patch_allocated_values",
           "drop_type_dependent_fields", "needs_cluster_ip", "needs_node_ports", "allocates_node_ports",
           "needs_health_check_port", "externally_accessible", "is_headless", "DEFAULT_AFFINITY_SECONDS"]

DEFAULT_AFFINITY_SECONDS = 10800


def externally_accessible(spec: dict[str, Any]) -> bool:
    """Kubernetes' ExternallyAccessible: NodePort, LoadBalancer, or ClusterIP with external IPs."""
    kind = spec.get("type")
    return kind in ("LoadBalancer", "NodePort") or (kind == "ClusterIP" and bool(spec.get("externalIPs")))


def needs_cluster_ip(spec: dict[str, Any]) -> bool:
    return spec.get("type") != "ExternalName"


def needs_node_ports(spec: dict[str, Any]) -> bool:
    return spec.get("type") in ("NodePort", "LoadBalancer")


def allocates_node_ports(spec: dict[str, Any]) -> bool:
    """Unset node ports are allocated: NodePort, and LoadBalancer unless allocateLoadBalancerNodePorts is false."""
    kind = spec.get("type")
    return kind == "NodePort" or (kind == "LoadBalancer" and spec.get("allocateLoadBalancerNodePorts") is not False)


def needs_health_check_port(spec: dict[str, Any]) -> bool:
    """Kubernetes' NeedsHealthCheck: a LoadBalancer with `externalTrafficPolicy: Local`."""
    return spec.get("type") == "LoadBalancer" and spec.get("externalTrafficPolicy") == "Local"


def is_headless(spec: dict[str, Any]) -> bool:
    return spec.get("clusterIP") == "None"


def default_service(obj: dict[str, Any]) -> None:
    """SetDefaults_Service (see the module doc)."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        spec = obj["spec"] = {}
    if not spec.get("sessionAffinity"):
        spec["sessionAffinity"] = "None"
    if spec["sessionAffinity"] == "None":
        spec.pop("sessionAffinityConfig", None)
    elif spec["sessionAffinity"] == "ClientIP":
        client_ip = (spec.get("sessionAffinityConfig") or {}).get("clientIP") or {}
        if client_ip.get("timeoutSeconds") is None:
            spec["sessionAffinityConfig"] = {"clientIP": {"timeoutSeconds": DEFAULT_AFFINITY_SECONDS}}
    if not spec.get("type"):
        spec["type"] = "ClusterIP"
    for port in spec.get("ports") or ():
        if not isinstance(port, dict):
            continue
        if not port.get("protocol"):
            port["protocol"] = "TCP"
        if port.get("targetPort") in (None, 0, ""):
            port["targetPort"] = port.get("port", 0)
    if externally_accessible(spec) and not spec.get("externalTrafficPolicy"):
        spec["externalTrafficPolicy"] = "Cluster"
    if spec.get("internalTrafficPolicy") is None and spec["type"] in ("ClusterIP", "NodePort", "LoadBalancer"):
        spec["internalTrafficPolicy"] = "Cluster"
    if spec["type"] == "LoadBalancer" and spec.get("allocateLoadBalancerNodePorts") is None:
        spec["allocateLoadBalancerNodePorts"] = True


def normalize_cluster_ips(spec: dict[str, Any], old_spec: dict[str, Any] | None = None) -> None:
    """normalizeClusterIPs (see the module doc)."""
    ip, ips = spec.get("clusterIP") or "", list(spec.get("clusterIPs") or [])
    if old_spec is not None:
        old_ip, old_ips = old_spec.get("clusterIP") or "", list(old_spec.get("clusterIPs") or [])
        if ip != old_ip and ips == old_ips:
            if not ip:
                spec.pop("clusterIPs", None)
            elif ips:
                spec["clusterIPs"] = [ip, *ips[1:]]
            else:
                spec["clusterIPs"] = [ip]
            return
        if ips != old_ips and ip == old_ip and not ips:
            spec.pop("clusterIP", None)
            return
    if not ip and not ips:
        return
    if not ips:
        spec["clusterIPs"] = [ip]
    elif not ip:
        spec["clusterIP"] = ips[0]


def _family_of(ip: str) -> str | None:
    try:
        return "IPv4" if ipaddress.ip_address(ip).version == 4 else "IPv6"
    except ValueError:
        return None


def init_ip_families(spec: dict[str, Any], cluster_family: str,
                     old_spec: dict[str, Any] | None = None) -> list[FieldError]:
    """initIPFamilyFields of a single-stack cluster serving `cluster_family` (see the module doc); the errors
    of families or a policy this cluster cannot give."""
    if not needs_cluster_ip(spec):
        return []
    if old_spec is not None and needs_cluster_ip(old_spec):
        # An update keeps what the stored Service has when the body leaves it out.
        for name in ("ipFamilies", "ipFamilyPolicy"):
            if spec.get(name) is None and old_spec.get(name) is not None:
                spec[name] = old_spec[name]
    errs: list[FieldError] = []
    families = list(spec.get("ipFamilies") or [])
    policy = spec.get("ipFamilyPolicy")
    if is_headless(spec) and not spec.get("selector"):
        spec.setdefault("ipFamilyPolicy", "RequireDualStack")
        if not families:
            spec["ipFamilies"] = [cluster_family]
        return errs
    if not families:
        families = [f for f in (_family_of(ip) for ip in spec.get("clusterIPs") or () if ip != "None") if f]
    if policy is None and len(families) > 1:
        errs.append(invalid("spec.ipFamilyPolicy", None, "must be 'RequireDualStack' or 'PreferDualStack' when "
                                                         "multiple IP families are specified"))
    if policy == "RequireDualStack":
        errs.append(invalid("spec.ipFamilyPolicy", policy, "this cluster is not configured for dual-stack services"))
    for i, family in enumerate(families):
        if family in ("IPv4", "IPv6") and family != cluster_family:
            errs.append(invalid(f"spec.ipFamilies[{i}]", family, "not configured on this cluster"))
    if errs:
        return errs
    spec["ipFamilies"] = families or [cluster_family]
    if policy is None:
        spec["ipFamilyPolicy"] = "SingleStack"
    return errs


def patch_allocated_values(spec: dict[str, Any], old_spec: dict[str, Any]) -> None:
    """patchAllocatedValues (see the module doc)."""
    if needs_cluster_ip(old_spec) and needs_cluster_ip(spec):
        if not spec.get("clusterIP") and old_spec.get("clusterIP"):
            spec["clusterIP"] = old_spec["clusterIP"]
        if not spec.get("clusterIPs") and old_spec.get("clusterIPs"):
            spec["clusterIPs"] = list(old_spec["clusterIPs"])
    if needs_node_ports(old_spec) and needs_node_ports(spec):
        ports = [p for p in spec.get("ports") or () if isinstance(p, dict)]
        old_ports = [p for p in old_spec.get("ports") or () if isinstance(p, dict)]
        used = {p.get("nodePort") for p in ports if p.get("nodePort")}
        by_port = {(p.get("port"), p.get("protocol")): p.get("nodePort") for p in old_ports if p.get("nodePort")}
        for port in ports:
            if not port.get("nodePort"):
                known = by_port.get((port.get("port"), port.get("protocol")))
                if known and known not in used:
                    port["nodePort"] = known
                    used.add(known)
    if needs_health_check_port(old_spec) and needs_health_check_port(spec):
        if not spec.get("healthCheckNodePort") and old_spec.get("healthCheckNodePort"):
            spec["healthCheckNodePort"] = old_spec["healthCheckNodePort"]


def drop_type_dependent_fields(spec: dict[str, Any], old_spec: dict[str, Any]) -> None:
    """dropTypeDependentFields (see the module doc)."""
    if needs_cluster_ip(old_spec) and not needs_cluster_ip(spec):
        if _same(spec, old_spec, "clusterIP") and _same(spec, old_spec, "clusterIPs"):
            spec.pop("clusterIP", None)
            spec.pop("clusterIPs", None)
        if _same(spec, old_spec, "ipFamilies"):
            spec.pop("ipFamilies", None)
        if _same(spec, old_spec, "ipFamilyPolicy"):
            spec.pop("ipFamilyPolicy", None)
    node_ports = [p.get("nodePort") for p in spec.get("ports") or () if isinstance(p, dict)]
    old_node_ports = [p.get("nodePort") for p in old_spec.get("ports") or () if isinstance(p, dict)]
    if needs_node_ports(old_spec) and not needs_node_ports(spec) and node_ports == old_node_ports:
        for port in spec.get("ports") or ():
            if isinstance(port, dict):
                port.pop("nodePort", None)
    if (needs_health_check_port(old_spec) and not needs_health_check_port(spec)
            and _same(spec, old_spec, "healthCheckNodePort")):
        spec.pop("healthCheckNodePort", None)
    if spec.get("type") != "LoadBalancer":
        for name in ("allocateLoadBalancerNodePorts", "loadBalancerClass"):
            if _same(spec, old_spec, name):
                spec.pop(name, None)
    if not externally_accessible(spec) and _same(spec, old_spec, "externalTrafficPolicy"):
        spec.pop("externalTrafficPolicy", None)


def _same(spec: dict[str, Any], old_spec: dict[str, Any], name: str) -> bool:
    return spec.get(name) == old_spec.get(name)
