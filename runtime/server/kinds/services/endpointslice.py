"""`discovery.k8s.io/v1` EndpointSlice, stored as kube-apiserver stores it with no controller behind it
(pkg/registry/discovery/endpointslice, pkg/apis/discovery/validation).

- Defaults (SetDefaults_EndpointPort): each port's `name: ""` and `protocol: TCP`.
- Names are DNS subdomains. `addressType` is required, IPv4, IPv6 or FQDN, and immutable
  (`addressType: Invalid value: "IPv6": field is immutable`).
- endpoints: at most 1000, each with 1 to 100 `addresses` of the slice's type (`must be a valid IPv4
  address`, not a special IP; an FQDN's domain rules), a `nodeName` that is a DNS subdomain, at most 16
  `deprecatedTopology` labels, a `hostname` that is a DNS-1123 label, at most 8 zone hints.
- ports: at most 20000, names DNS-1123 labels and unique (the empty name once), `protocol` TCP, UDP or
  SCTP, `appProtocol` a qualified name.
- A PUT of a missing EndpointSlice is 404 (no create on update).
- A FQDN slice warns `spec.addressType: FQDN endpoints are deprecated` (warnOnDeprecatedAddressType).
- `generation` counts every change but metadata (the strategy's PrepareForUpdate).
- `kubectl get` prints NAME ADDRESSTYPE PORTS ENDPOINTS AGE (printEndpointSlice): the first three ports
  (`*` for a port without number or name) and addresses, then `+ N more...`, `<unset>` for none.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from runtime.machinery.validation import FieldError
from runtime.machinery.validation.fielderrors import duplicate, invalid, not_supported, required, too_many
from runtime.models.k8s.discovery_v1 import EndpointSlice
from runtime.server.kinds.base import Strategy
from runtime.server.kinds.columns import AGE_COLUMN, NAME_COLUMN, Columns, age
from runtime.machinery.validation.names import dns1123_label_errors
from runtime.server.kinds.pods.podspec_common import (
    dns_label, dns_subdomain, label_map, protocol_errors, subdomain_errors,
)
from runtime.server.kinds.columns import doc_column
from runtime.server.kinds.services.service_validation import app_protocol_errors, special_ip_errors

__all__ = ["EndpointSliceStrategy", "ports_cell", "addresses_cell"]

_ADDRESS_TYPES = ["FQDN", "IPv4", "IPv6"]
_MAX_ENDPOINTS, _MAX_ADDRESSES, _MAX_PORTS, _MAX_TOPOLOGY, _MAX_ZONE_HINTS = 1000, 100, 20000, 16, 8
_SHOWN = 3


def _with_more(shown: list[str], count: int) -> str:
    """listWithMoreString."""
    text = ",".join(shown[:_SHOWN])
    if count > _SHOWN:
        return f"{text} + {count - _SHOWN} more..."
    return text or "<unset>"


def ports_cell(obj: dict[str, Any]) -> str:
    """formatDiscoveryPorts."""
    ports = obj.get("ports") or []
    shown = [str(p["port"]) if p.get("port") is not None else (p["name"] if p.get("name") is not None else "*")
             for p in ports[:_SHOWN]]
    return _with_more(shown, len(ports))


def addresses_cell(obj: dict[str, Any]) -> str:
    """formatDiscoveryEndpoints."""
    addresses = [a for e in obj.get("endpoints") or () for a in e.get("addresses") or ()]
    return _with_more(addresses[:_SHOWN], len(addresses))


def _cells(obj: dict[str, Any]) -> list[Any]:
    meta = obj["metadata"]
    return [meta.get("name", ""), obj.get("addressType", ""), ports_cell(obj), addresses_cell(obj),
            age(meta.get("creationTimestamp"))]


def _address_errors(address: str, address_type: str, path: str) -> list[FieldError]:
    """An address by the slice's type (unknown types are not checked, as Kubernetes')."""
    if address_type in ("IPv4", "IPv6"):
        version = 4 if address_type == "IPv4" else 6
        try:
            valid = ipaddress.ip_address(address).version == version
        except ValueError:
            valid = False
        errs = [] if valid else [invalid(path, address, f"must be a valid {address_type} address")]
        return errs + special_ip_errors(address, path)
    if address_type == "FQDN":
        return _fqdn_errors(address, path)
    return []


def _fqdn_errors(name: str, path: str) -> list[FieldError]:
    """IsFullyQualifiedDomainName."""
    if not name:
        return [required(path)]
    name = name.removesuffix(".")
    problems = subdomain_errors(name)
    if problems:
        return [invalid(path, name, ",".join(problems))]
    labels = name.split(".")
    if len(labels) < 2:
        return [invalid(path, name, "should be a domain with at least two segments separated by dots")]
    for label in labels:
        problems = dns1123_label_errors(label)
        if problems:
            return [invalid(path, label, ",".join(problems))]
    return []


def _endpoint_errors(endpoints: list[Any], address_type: str) -> list[FieldError]:
    if len(endpoints) > _MAX_ENDPOINTS:
        return [too_many("endpoints", len(endpoints), _MAX_ENDPOINTS)]
    errs: list[FieldError] = []
    for i, endpoint in enumerate(endpoints):
        path = f"endpoints[{i}]"
        addresses = endpoint.get("addresses") or []
        if not addresses:
            errs.append(required(f"{path}.addresses", "must contain at least 1 address"))
        elif len(addresses) > _MAX_ADDRESSES:
            errs.append(too_many(f"{path}.addresses", len(addresses), _MAX_ADDRESSES))
        for j, address in enumerate(addresses):
            errs += _address_errors(address, address_type, f"{path}.addresses[{j}]")
        if endpoint.get("nodeName") is not None:
            errs += dns_subdomain(endpoint["nodeName"], f"{path}.nodeName")
        topology = endpoint.get("deprecatedTopology") or {}
        if len(topology) > _MAX_TOPOLOGY:
            errs.append(too_many(f"{path}.deprecatedTopology", len(topology), _MAX_TOPOLOGY))
        errs += label_map(topology, f"{path}.deprecatedTopology")
        if endpoint.get("hostname") is not None:
            errs += dns_label(endpoint["hostname"], f"{path}.hostname")
        zones = ((endpoint.get("hints") or {}).get("forZones")) or []
        if len(zones) > _MAX_ZONE_HINTS:
            errs.append(too_many(f"{path}.hints.forZones", len(zones), _MAX_ZONE_HINTS))
    return errs


def _port_errors(ports: list[Any]) -> list[FieldError]:
    if len(ports) > _MAX_PORTS:
        return [too_many("ports", len(ports), _MAX_PORTS)]
    errs: list[FieldError] = []
    names: set[str] = set()
    for i, port in enumerate(ports):
        path = f"ports[{i}]"
        name = port.get("name") or ""
        if name:
            errs += dns_label(name, f"{path}.name")
        if name in names:
            errs.append(duplicate(f"{path}.name", name))
        names.add(name)
        errs += protocol_errors(port.get("protocol"), f"{path}.protocol", empty_is_unset=False)
        errs += app_protocol_errors(port, f"{path}.appProtocol")
    return errs


class EndpointSliceStrategy(Strategy):
    """See the module doc."""

    name_rule = "dns-subdomain"
    counts_generation = True
    allow_create_on_update = False  # the strategy's AllowCreateOnUpdate: a PUT of a missing one is 404
    columns = Columns((NAME_COLUMN, doc_column("AddressType", EndpointSlice, "addressType"),
                       doc_column("Ports", EndpointSlice, "ports"), doc_column("Endpoints", EndpointSlice, "endpoints"),
                       AGE_COLUMN), _cells)

    def default(self, obj: dict[str, Any]) -> None:
        for port in obj.get("ports") or ():
            if isinstance(port, dict):
                port.setdefault("name", "")
                if port.get("protocol") is None:
                    port["protocol"] = "TCP"

    def warnings(self, old: dict[str, Any] | None, new: dict[str, Any], manager: str) -> list[str]:
        """warnOnDeprecatedAddressType."""
        return ["spec.addressType: FQDN endpoints are deprecated"] if new.get("addressType") == "FQDN" else []

    def validate_spec(self, obj: dict[str, Any]) -> list[FieldError]:
        address_type = obj.get("addressType") or ""
        errs: list[FieldError] = []
        if not address_type:
            errs.append(required("addressType"))
        elif address_type not in _ADDRESS_TYPES:
            errs.append(not_supported("addressType", address_type, _ADDRESS_TYPES))
        return errs + _endpoint_errors(obj.get("endpoints") or [], address_type) + _port_errors(obj.get("ports") or [])

    def validate_update(self, new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
        errs = self.validate(new)
        if new.get("addressType") != old.get("addressType"):
            errs.append(invalid("addressType", new.get("addressType"), "field is immutable"))
        return errs
