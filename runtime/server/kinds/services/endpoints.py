"""Core `v1` Endpoints, stored as kube-apiserver stores them with no endpoints controller behind it
(pkg/registry/core/endpoint, pkg/apis/core/validation ValidateEndpoints).

- Defaults (SetDefaults_Endpoints): each subset port's `protocol: TCP`.
- Names are DNS subdomains. Each subset has `addresses` or `notReadyAddresses`
  (`subsets[0]: Required value: must specify `addresses` or `notReadyAddresses``); each address's `ip`
  is an IP and not a special one (unspecified, loopback, link-local, link-local multicast), its
  `hostname` a DNS-1123 label, its `nodeName` a DNS subdomain; each port has a name (a DNS-1123 label,
  required when there are several), a port number, TCP, UDP or SCTP, an `appProtocol` that is a qualified
  name. An update is checked as a create (ValidateEndpointsUpdate).
- `kubectl get` prints NAME ENDPOINTS AGE (printEndpoints): `ip:port` for each address and port, the
  first three, then `+ N more...`; a subset without ports shows its IPs; `<none>` without subsets.
"""

from __future__ import annotations

from typing import Any

from runtime.machinery.validation import FieldError
from runtime.machinery.validation.fielderrors import required
from runtime.models.k8s.core_v1 import Endpoints
from runtime.server.kinds.base import Strategy
from runtime.server.kinds.columns import AGE_COLUMN, NAME_COLUMN, Columns, age
from runtime.server.kinds.pods.podspec_common import (
    dns_label, dns_subdomain, ip_address, port_number, protocol_errors,
)
from runtime.server.kinds.columns import doc_column
from runtime.server.kinds.services.service_validation import app_protocol_errors, named_port_errors, special_ip_errors

__all__ = ["EndpointsStrategy", "endpoints_cell"]

_SHOWN = 3


def _host_port(ip: str, port: Any) -> str:
    """net.JoinHostPort: an IPv6 address in brackets."""
    return f"[{ip}]:{port}" if ":" in ip else f"{ip}:{port}"


def endpoints_cell(obj: dict[str, Any]) -> str:
    """formatEndpoints (see the module doc)."""
    subsets = obj.get("subsets") or []
    if not subsets:
        return "<none>"
    shown: list[str] = []
    count, more = 0, False
    for subset in subsets:
        addresses = [a.get("ip", "") for a in subset.get("addresses") or ()]
        ports = subset.get("ports") or []
        if not ports:
            count += len(addresses)
            for ip in addresses:
                if len(shown) == _SHOWN:
                    more = True
                    break
                shown.append(ip)
            continue
        for port in ports:
            count += len(addresses)
            for ip in addresses:
                if len(shown) == _SHOWN:
                    more = True
                    break
                shown.append(_host_port(ip, port.get("port", 0)))
    text = ",".join(shown)
    return f"{text} + {count - _SHOWN} more..." if more else text


def _cells(obj: dict[str, Any]) -> list[Any]:
    meta = obj["metadata"]
    return [meta.get("name", ""), endpoints_cell(obj), age(meta.get("creationTimestamp"))]


def _address_errors(address: dict[str, Any], path: str) -> list[FieldError]:
    """validateEndpointAddress."""
    ip = address.get("ip") or ""
    errs = ip_address(ip, f"{path}.ip")
    if address.get("hostname"):
        errs += dns_label(address["hostname"], f"{path}.hostname")
    if address.get("nodeName") is not None:
        errs += dns_subdomain(address["nodeName"], f"{path}.nodeName")
    return errs + special_ip_errors(ip, f"{path}.ip")


def _port_errors(port: dict[str, Any], require_name: bool, path: str) -> list[FieldError]:
    """validateEndpointPort."""
    errs = named_port_errors(port.get("name") or "", require_name, f"{path}.name")
    errs += port_number(port.get("port") or 0, f"{path}.port")
    errs += protocol_errors(port.get("protocol"), f"{path}.protocol")
    return errs + app_protocol_errors(port, f"{path}.appProtocol")


class EndpointsStrategy(Strategy):
    """See the module doc."""

    name_rule = "dns-subdomain"
    columns = Columns((NAME_COLUMN, doc_column("Endpoints", Endpoints, "subsets"), AGE_COLUMN), _cells)

    def default(self, obj: dict[str, Any]) -> None:
        for subset in obj.get("subsets") or ():
            for port in (subset.get("ports") or ()) if isinstance(subset, dict) else ():
                if isinstance(port, dict) and not port.get("protocol"):
                    port["protocol"] = "TCP"

    def validate_spec(self, obj: dict[str, Any]) -> list[FieldError]:
        errs: list[FieldError] = []
        for i, subset in enumerate(obj.get("subsets") or ()):
            path = f"subsets[{i}]"
            if not subset.get("addresses") and not subset.get("notReadyAddresses"):
                errs.append(required(path, "must specify `addresses` or `notReadyAddresses`"))
            for field in ("addresses", "notReadyAddresses"):
                for j, address in enumerate(subset.get(field) or ()):
                    errs += _address_errors(address, f"{path}.{field}[{j}]")
            ports = subset.get("ports") or []
            for j, port in enumerate(ports):
                errs += _port_errors(port, len(ports) > 1, f"{path}.ports[{j}]")
        return errs
