"""service_validation: Kubernetes' `ValidateService`, `ValidateServiceUpdate` and `ValidateServiceStatusUpdate`
(pkg/apis/core/validation), in its words and field paths.

- ports: required unless headless or ExternalName; each `port` and `targetPort` a port number (or a
  targetPort name), `protocol` TCP, UDP or SCTP, names DNS-1123 labels, required when there are several,
  unique; no two ports alike in (protocol, port) or (protocol, nodePort); `appProtocol` a qualified name;
  a ClusterIP Service has no nodePort.
- type: ClusterIP, NodePort, LoadBalancer or ExternalName; NodePort and LoadBalancer are never headless;
  ExternalName has `externalName` (a DNS subdomain, a trailing dot allowed) and no clusterIPs, ipFamilies
  or ipFamilyPolicy.
- selector: label keys and values; sessionAffinity None or ClientIP, `sessionAffinityConfig` only with
  ClientIP and its `timeoutSeconds` in (0, 86400].
- cluster IPs (ValidateServiceClusterIPsRelatedFields): `clusterIPs[0]` matches `clusterIP`, IPs are IPs,
  "None" only alone, at most two, one per family, each of the family its `ipFamilies` entry says;
  ipFamilies IPv4/IPv6 without duplicates, ipFamilyPolicy SingleStack, PreferDualStack, RequireDualStack.
- externalIPs valid and not special (unspecified, loopback, link-local, link-local multicast).
- LoadBalancer only: `LoadBalancerSourceRanges` (Kubernetes' capital L) CIDRs, `allocateLoadBalancerNodePorts`
  (required there), `loadBalancerClass` (a qualified name; immutable on a LoadBalancer).
- traffic policies: externalTrafficPolicy Cluster or Local only for an externally accessible Service,
  `healthCheckNodePort` only (and required) for a LoadBalancer with policy Local; internalTrafficPolicy
  Cluster or Local.
- update: the primary cluster IP and IP family may not change (except to or from ExternalName).
- status: each `loadBalancer.ingress[i]` has a valid `ip`, and a `hostname` that is a DNS subdomain and no IP.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from runtime.machinery.validation import FieldError
from runtime.machinery.validation.fielderrors import duplicate, forbidden, invalid, not_supported, required
from runtime.machinery.validation.gofmt import GoText, go_quote
from runtime.server.kinds.pods.podspec_common import (
    dns_label, dns_subdomain, ip_address, label_map, port_num_or_name, port_number, protocol_errors, qualified_name,
)
from runtime.server.kinds.services.service_defaults import externally_accessible, is_headless, \
    needs_health_check_port

__all__ = ["validate_service", "validate_service_update", "validate_service_status", "special_ip_errors",
           "named_port_errors", "app_protocol_errors"]

_TYPES = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"]
_AFFINITIES = ["ClientIP", "None"]
_FAMILIES = ["IPv4", "IPv6"]
_POLICIES = ["PreferDualStack", "RequireDualStack", "SingleStack"]
_TRAFFIC_POLICIES = ["Cluster", "Local"]
_MAX_AFFINITY_SECONDS = 86400
_LOAD_BALANCER_ONLY = "may only be used when `type` is 'LoadBalancer'"


def validate_service(obj: dict[str, Any]) -> list[FieldError]:
    """ValidateService's spec rules (ObjectMeta apart)."""
    spec = obj.get("spec") or {}
    kind = spec.get("type")
    ports = [p if isinstance(p, dict) else {} for p in spec.get("ports") or ()]
    errs: list[FieldError] = []
    if not ports and not is_headless(spec) and kind != "ExternalName":
        errs.append(required("spec.ports"))
    ips = list(spec.get("clusterIPs") or [])
    if kind in ("LoadBalancer", "NodePort") and is_headless(spec):
        errs.append(invalid("spec.clusterIPs[0]", ips[0] if ips else "None",
                            f"may not be set to 'None' for {kind} services"))
    if kind == "ExternalName":
        if ips:
            errs.append(forbidden("spec.clusterIPs", "may not be set for ExternalName services"))
        if spec.get("ipFamilies"):
            errs.append(forbidden("spec.ipFamilies", "may not be set for ExternalName services"))
        if spec.get("ipFamilyPolicy") is not None:
            errs.append(forbidden("spec.ipFamilyPolicy", "may not be set for ExternalName services"))
        cname = (spec.get("externalName") or "").removesuffix(".")
        errs += dns_subdomain(cname, "spec.externalName") if cname else [required("spec.externalName")]
    names: set[str] = set()
    for i, port in enumerate(ports):
        errs += _port_errors(port, len(ports) > 1, names, f"spec.ports[{i}]")
    errs += label_map(spec.get("selector"), "spec.selector")
    errs += _affinity_errors(spec)
    errs += _cluster_ip_errors(spec)
    for i, ip in enumerate(spec.get("externalIPs") or ()):
        path = f"spec.externalIPs[{i}]"
        errs += ip_address(ip, path) + special_ip_errors(ip, path)
    if not kind:
        errs.append(required("spec.type"))
    elif kind not in _TYPES:
        errs.append(not_supported("spec.type", kind, _TYPES))
    if kind == "ClusterIP":
        errs += [forbidden(f"spec.ports[{i}].nodePort", "may not be used when `type` is 'ClusterIP'")
                 for i, port in enumerate(ports) if port.get("nodePort")]
    errs += _duplicate_port_errors(ports)
    errs += _load_balancer_errors(spec)
    errs += _traffic_policy_errors(spec)
    return errs


def _port_errors(port: dict[str, Any], require_name: bool, names: set[str], path: str) -> list[FieldError]:
    """validateServicePort."""
    name = port.get("name") or ""
    errs = named_port_errors(name, require_name, f"{path}.name")
    if name:
        if name in names:
            errs.append(duplicate(f"{path}.name", name))
        names.add(name)
    errs += port_number(port.get("port") or 0, f"{path}.port")
    errs += protocol_errors(port.get("protocol"), f"{path}.protocol")
    errs += port_num_or_name(port.get("targetPort"), f"{path}.targetPort")
    return errs + app_protocol_errors(port, f"{path}.appProtocol")


def named_port_errors(name: str, require_name: bool, path: str) -> list[FieldError]:
    """A Service's or an Endpoints subset's port `name` (validateServicePort, validateEndpointPort): required
    when the list has several ports, else a DNS-1123 label when set."""
    if require_name and not name:
        return [required(path)]
    return dns_label(name, path) if name else []


def app_protocol_errors(port: dict[str, Any], path: str) -> list[FieldError]:
    """A port's `appProtocol` (a Service's, an Endpoints' or an EndpointSlice's), when set: a qualified name."""
    return [] if port.get("appProtocol") is None else qualified_name(port["appProtocol"], path)


def _service_port_key(protocol: str, port: int = 0, node_port: int = 0) -> GoText:
    """The `core.ServicePort` key Kubernetes reports a duplicate with, as Go's %#v prints it."""
    return GoText(f'core.ServicePort{{Name:"", Protocol:{go_quote(protocol)}, AppProtocol:(*string)(nil), '
                  f'Port:{port}, TargetPort:intstr.IntOrString{{Type:0, IntVal:0, StrVal:""}}, NodePort:{node_port}}}')


def _duplicate_port_errors(ports: list[dict[str, Any]]) -> list[FieldError]:
    errs: list[FieldError] = []
    node_ports: set[tuple[Any, Any]] = set()
    for i, port in enumerate(ports):
        if not port.get("nodePort"):
            continue
        key = (port.get("protocol"), port["nodePort"])
        if key in node_ports:
            errs.append(duplicate(f"spec.ports[{i}].nodePort", port["nodePort"]))
        node_ports.add(key)
    seen: set[tuple[Any, Any]] = set()
    for i, port in enumerate(ports):
        key = (port.get("protocol"), port.get("port"))
        if key in seen:
            errs.append(duplicate(f"spec.ports[{i}]", _service_port_key(str(key[0] or ""), int(key[1] or 0))))
        seen.add(key)
    return errs


def _affinity_errors(spec: dict[str, Any]) -> list[FieldError]:
    affinity = spec.get("sessionAffinity")
    if not affinity:
        return [required("spec.sessionAffinity")]
    if affinity not in _AFFINITIES:
        return [not_supported("spec.sessionAffinity", affinity, _AFFINITIES)]
    config = spec.get("sessionAffinityConfig")
    if affinity == "None":
        return [forbidden("spec.sessionAffinityConfig", "must not be set when session affinity is None")] \
            if config is not None else []
    if config is None:
        return [required("spec.sessionAffinityConfig", "when session affinity type is ClientIP")]
    client_ip = config.get("clientIP")
    if client_ip is None:
        return [required("spec.sessionAffinityConfig.clientIP", "when session affinity type is ClientIP")]
    timeout = client_ip.get("timeoutSeconds")
    if timeout is None:
        return [required("spec.sessionAffinityConfig.clientIP.timeoutSeconds",
                         "when session affinity type is ClientIP")]
    if not 0 < timeout <= _MAX_AFFINITY_SECONDS:
        return [invalid("spec.sessionAffinityConfig.clientIP.timeoutSeconds", timeout,
                        f"must be greater than 0 and less than {_MAX_AFFINITY_SECONDS}")]
    return []


def _version(ip: str) -> int | None:
    try:
        return ipaddress.ip_address(ip).version
    except ValueError:
        return None


def _cluster_ip_errors(spec: dict[str, Any]) -> list[FieldError]:
    """ValidateServiceClusterIPsRelatedFields."""
    if spec.get("type") == "ExternalName":
        return []
    errs: list[FieldError] = []
    ip, ips = spec.get("clusterIP") or "", list(spec.get("clusterIPs") or [])
    if ip:
        if not ips:
            errs.append(required("spec.clusterIPs"))
        elif ips[0] != ip:
            errs.append(invalid("spec.clusterIPs", ips, "first value must match `clusterIP`"))
    elif ips:
        errs.append(invalid("spec.clusterIPs", ips, "must be empty when `clusterIP` is not specified"))
    families = list(spec.get("ipFamilies") or [])
    for i, family in enumerate(families):
        if family not in _FAMILIES:
            errs.append(not_supported(f"spec.ipFamilies[{i}]", family, _FAMILIES))
        if family in families[:i]:
            errs.append(duplicate(f"spec.ipFamilies[{i}]", family))
    policy = spec.get("ipFamilyPolicy")
    if policy is not None and policy not in _POLICIES:
        errs.append(not_supported("spec.ipFamilyPolicy", policy, _POLICIES))
    bad_ips = False
    for i, value in enumerate(ips):
        if i == 0 and value == "None":
            if len(ips) > 1:
                bad_ips = True
                errs.append(invalid("spec.clusterIPs", ips, "'None' must be the first and only value"))
            continue
        if _version(value) is None:
            bad_ips = True
            errs.append(invalid(f"spec.clusterIPs[{i}]", value,
                                "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"))
    if len(ips) > 2:
        errs.append(invalid("spec.clusterIPs", ips, "may only hold up to 2 values"))
    if bad_ips:
        return errs
    if len(ips) > 1 and len({_version(v) for v in ips}) != len(ips):
        errs.append(invalid("spec.clusterIPs", ips, "may specify no more than one IP for each IP family"))
    if not is_headless(spec):
        for i, (value, family) in enumerate(zip(ips, families)):
            if family == "IPv4" and _version(value) == 6:
                errs.append(invalid(f"spec.clusterIPs[{i}]", value,
                                    f"expected an IPv4 value as indicated by `ipFamilies[{i}]`"))
            if family == "IPv6" and _version(value) != 6:
                errs.append(invalid(f"spec.clusterIPs[{i}]", value,
                                    f"expected an IPv6 value as indicated by `ipFamilies[{i}]`"))
    return errs


def special_ip_errors(ip: str, path: str) -> list[FieldError]:
    """ValidateNonSpecialIP: a valid IP, no unspecified, loopback, link-local or link-local multicast address."""
    try:
        address = ipaddress.ip_address(ip)
    except ValueError:
        return [invalid(path, ip, "must be a valid IP address")]
    if address.is_unspecified:
        return [invalid(path, ip, f"may not be unspecified ({ip})")]
    if address.is_loopback:
        return [invalid(path, ip, "may not be in the loopback range (127.0.0.0/8, ::1/128)")]
    if address.is_link_local:
        return [invalid(path, ip, "may not be in the link-local range (169.254.0.0/16, fe80::/10)")]
    # Go's IsLinkLocalMulticast: 224.0.0.0/24 and ff02::/16 (the message says ff02::/10, as Kubernetes').
    multicast = ipaddress.ip_network("224.0.0.0/24" if address.version == 4 else "ff02::/16")
    if address in multicast:
        return [invalid(path, ip, "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)")]
    return []


def _load_balancer_errors(spec: dict[str, Any]) -> list[FieldError]:
    errs: list[FieldError] = []
    is_lb = spec.get("type") == "LoadBalancer"
    ranges = spec.get("loadBalancerSourceRanges") or []
    if ranges:
        if not is_lb:
            errs.append(forbidden("spec.LoadBalancerSourceRanges", _LOAD_BALANCER_ONLY))
        for i, value in enumerate(ranges):
            value = value.strip()  # a historical accident: the values may be space-padded
            try:
                ipaddress.ip_network(value, strict=False)
                if "/" not in value:
                    raise ValueError(value)
            except ValueError:
                errs.append(invalid(f"spec.LoadBalancerSourceRanges[{i}]", value, "must be a CIDR"))
    allocate = spec.get("allocateLoadBalancerNodePorts")
    if allocate is not None and not is_lb:
        errs.append(forbidden("spec.allocateLoadBalancerNodePorts", _LOAD_BALANCER_ONLY))
    if is_lb and allocate is None:
        errs.append(required("spec.allocateLoadBalancerNodePorts"))
    lb_class = spec.get("loadBalancerClass")
    if lb_class is not None:
        errs += qualified_name(lb_class, "spec.loadBalancerClass") if is_lb else \
            [forbidden("spec.loadBalancerClass", _LOAD_BALANCER_ONLY)]
    return errs


def _traffic_policy_errors(spec: dict[str, Any]) -> list[FieldError]:
    """validateServiceExternalTrafficPolicy and validateServiceInternalTrafficFieldsValue."""
    errs: list[FieldError] = []
    policy = spec.get("externalTrafficPolicy")
    if not externally_accessible(spec):
        if policy:
            errs.append(invalid("spec.externalTrafficPolicy", policy,
                                "may only be set for externally-accessible services"))
    elif not policy:
        errs.append(required("spec.externalTrafficPolicy"))
    elif policy not in _TRAFFIC_POLICIES:
        errs.append(not_supported("spec.externalTrafficPolicy", policy, _TRAFFIC_POLICIES))
    health = spec.get("healthCheckNodePort") or 0
    if not needs_health_check_port(spec):
        if health:
            errs.append(invalid("spec.healthCheckNodePort", health,
                                "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'"))
    elif not health:
        errs.append(required("spec.healthCheckNodePort"))
    else:
        errs += port_number(health, "spec.healthCheckNodePort")
    internal = spec.get("internalTrafficPolicy")
    if internal is None:
        if spec.get("type") in ("ClusterIP", "NodePort", "LoadBalancer"):
            errs.append(required("spec.internalTrafficPolicy"))
    elif internal not in _TRAFFIC_POLICIES:
        errs.append(not_supported("spec.internalTrafficPolicy", internal, _TRAFFIC_POLICIES))
    return errs


def validate_service_update(new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
    """ValidateServiceUpdate's own rules: validateUpgradeDowngradeClusterIPs and IPFamilies (the primary cluster
    IP and family stay, except to or from ExternalName) and a LoadBalancer's class stays."""
    spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
    errs: list[FieldError] = []
    if "ExternalName" not in (spec.get("type"), old_spec.get("type")):
        errs += _cluster_ips_update_errors(spec, old_spec) + _families_update_errors(spec, old_spec)
    if (spec.get("type") == "LoadBalancer" == old_spec.get("type")
            and spec.get("loadBalancerClass") != old_spec.get("loadBalancerClass")):
        errs.append(invalid("spec.loadBalancerClass", spec.get("loadBalancerClass"), "may not change once set"))
    return errs


_UNCHANGEABLE = "may not change once set"


def _cluster_ips_update_errors(spec: dict[str, Any], old_spec: dict[str, Any]) -> list[FieldError]:
    if is_headless(spec) and is_headless(old_spec):
        return []
    ips, old_ips = list(spec.get("clusterIPs") or []), list(old_spec.get("clusterIPs") or [])
    if len(ips) == len(old_ips):
        return [invalid(f"spec.clusterIPs[{i}]", ips, _UNCHANGEABLE) for i, ip in enumerate(old_ips) if ip != ips[i]]
    errs: list[FieldError] = []
    if len(old_ips) > len(ips):
        if not ips:
            errs.append(invalid("spec.clusterIPs[0]", GoText("[]string(nil)"), "primary clusterIP can not be unset"))
        elif ips[0] != old_ips[0]:
            errs.append(invalid("spec.clusterIPs[0]", ips, _UNCHANGEABLE))
        if len(ips) == 1 and spec.get("ipFamilyPolicy") != "SingleStack":
            errs.append(invalid("spec.ipFamilyPolicy", spec.get("ipFamilyPolicy"),
                                "must be set to 'SingleStack' when releasing the secondary clusterIP"))
    elif old_ips and ips[0] != old_ips[0]:
        errs.append(invalid("spec.clusterIPs[0]", ips, _UNCHANGEABLE))
    return errs


def _families(families: list[str]) -> GoText:
    """A `[]core.IPFamily` as Go's %#v prints it."""
    return GoText("[]core.IPFamily{" + ", ".join(go_quote(f) for f in families) + "}")


def _families_update_errors(spec: dict[str, Any], old_spec: dict[str, Any]) -> list[FieldError]:
    if is_headless(spec) or is_headless(old_spec):
        return []  # to, from or between headless Services the families may change
    families, old_families = list(spec.get("ipFamilies") or []), list(old_spec.get("ipFamilies") or [])
    if len(families) == len(old_families):
        return [invalid("spec.ipFamilies[0]", _families(families), _UNCHANGEABLE)
                for i, family in enumerate(old_families) if family != families[i]]
    errs: list[FieldError] = []
    ips = list(spec.get("clusterIPs") or [])
    if len(old_families) > len(families):
        if not ips:
            errs.append(invalid("spec.ipFamilies[0]", _families(families), "primary ipFamily can not be unset"))
        if families and families[0] != old_families[0]:
            errs.append(invalid("spec.ipFamilies[0]", ips, _UNCHANGEABLE))
        if len(families) == 1 and spec.get("ipFamilyPolicy") != "SingleStack":
            errs.append(invalid("spec.ipFamilyPolicy", spec.get("ipFamilyPolicy"),
                                "must be set to 'SingleStack' when releasing the secondary ipFamily"))
    elif old_families and families and families[0] != old_families[0]:
        errs.append(invalid("spec.ipFamilies[0]", ips, _UNCHANGEABLE))
    return errs


def validate_service_status(obj: dict[str, Any]) -> list[FieldError]:
    """ValidateLoadBalancerStatus of `status.loadBalancer`."""
    errs: list[FieldError] = []
    ingress = ((obj.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
    for i, entry in enumerate(ingress):
        path = f"status.loadBalancer.ingress[{i}]"
        if entry.get("ip") and _version(entry["ip"]) is None:
            errs.append(invalid(f"{path}.ip", entry["ip"], "must be a valid IP address"))
        hostname = entry.get("hostname")
        if hostname:
            errs += dns_subdomain(hostname, f"{path}.hostname")
            if _version(hostname) is not None:
                errs.append(invalid(f"{path}.hostname", hostname, "must be a DNS name, not an IP address"))
    return errs
