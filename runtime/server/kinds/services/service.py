"""Core `v1` Service, as kube-apiserver serves it with no controller behind it
(pkg/registry/core/service/strategy.go and storage/).

- Defaults (`service_defaults.default_service`, SetDefaults_Service): type ClusterIP, sessionAffinity
  None, ports' protocol TCP and targetPort = port, traffic policies Cluster, allocateLoadBalancerNodePorts.
- Names are DNS-1035 labels. Validation: `service_validation` (ValidateService, ValidateServiceUpdate).
- Cluster IPs and node ports are allocated from `--service-cluster-ip-range` and
  `--service-node-port-range` in the kind's admission, before validation (as the service storage's
  BeginCreate/BeginUpdate): `service_allocation`. Each is a store key of its own (`reservations`), so
  several servers over one store never share one. Once the write has settled (`AdmissionRequest.finish`)
  a stored create confirms what it took, a failed write releases it, and a stored update releases what
  the Service no longer holds (a type change to ClusterIP drops its node ports, to ExternalName its IPs).
  A deleted Service's values are released when its delete settles, and in any case reclaimed when next asked
  for (see `reservations`). A dry run takes nothing.
- Create resets `status` to `{"loadBalancer": {}}` (Go's empty ServiceStatus, as kube-apiserver answers it,
  so that `status.loadBalancer.ingress` reads as empty, not missing); the main resource keeps the stored
  status, `status` (loadBalancer ingress, conditions) keeps the spec; neither counts `generation`
  (Kubernetes' service strategy does not).
- Warnings (GetWarningsForService): externalIPs on an ExternalName, externalName on another type, IPv6
  addresses not in RFC 5952's canonical form.
- A DELETE answers the deleted Service, not a Status (the service storage's ReturnDeletedObject).
- `kubectl get` prints NAME TYPE CLUSTER-IP EXTERNAL-IP PORT(S) AGE, and SELECTOR with `-o wide`
  (printService): `<none>`, `<pending>` for a LoadBalancer without ingress, `80:30080/TCP` with a node port.
"""

from __future__ import annotations

import ipaddress
from typing import Any, Awaitable, Callable

from runtime.machinery.validation import FieldError
from runtime.machinery.validation.gofmt import go_quote
from runtime.models.k8s.core_v1 import ServiceSpec
from runtime.server.kinds.base import AdmissionRequest, PolicyContext, Strategy
from runtime.server.kinds.columns import doc_column
from runtime.server.kinds.columns import AGE_COLUMN, NAME_COLUMN, Columns, age
from runtime.server.kinds.services.reservations import Owner, Reservations
from runtime.server.kinds.services.service_allocation import allocate_create, allocate_update, reserved_keys
from runtime.server.kinds.services.service_defaults import default_service, drop_type_dependent_fields
from runtime.server.kinds.services.service_validation import (
    validate_service, validate_service_status, validate_service_update,
)
from runtime.server.kinds.subresources import StatusSubresource, Subresource

__all__ = ["ServiceStrategy", "external_ip_cell", "port_cell", "service_warnings"]


def port_cell(ports: list[dict[str, Any]]) -> str:
    """makePortString: `80/TCP`, `80:30080/TCP` with a node port, comma-joined."""
    pieces = []
    for port in ports:
        node = port.get("nodePort") or 0
        number, protocol = port.get("port", 0), port.get("protocol", "")
        pieces.append(f"{number}:{node}/{protocol}" if node > 0 else f"{number}/{protocol}")
    return ",".join(pieces)


def external_ip_cell(obj: dict[str, Any]) -> str:
    """getServiceExternalIP (wide, as a server prints): external IPs, a LoadBalancer's ingress, an
    ExternalName's name."""
    spec = obj.get("spec") or {}
    external = list(spec.get("externalIPs") or [])
    kind = spec.get("type")
    if kind in ("ClusterIP", "NodePort"):
        return ",".join(external) if external else "<none>"
    if kind == "LoadBalancer":
        ingress = ((obj.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
        balanced = [i.get("ip") or i.get("hostname") for i in ingress if i.get("ip") or i.get("hostname")]
        shown = balanced + external
        return ",".join(shown) if shown else "<pending>"
    if kind == "ExternalName":
        return spec.get("externalName") or ""
    return "<unknown>"


def _ip_warnings(path: str, address: str) -> list[str]:
    """getWarningsForIP: an IPv6 address not in RFC 5952's canonical form."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return []  # validation refuses it
    if ip.version == 6 and str(ip) != address:
        return [f"{path}: IPv6 address {go_quote(address)} is not in RFC 5952 canonical format "
                f"({go_quote(str(ip))}), which may cause controller apply-loops"]
    return []


def service_warnings(obj: dict[str, Any]) -> list[str]:
    """GetWarningsForService: fields the type ignores, IPv6 addresses not written canonically."""
    spec = obj.get("spec") or {}
    kind = spec.get("type")
    found = []
    if kind == "ExternalName" and spec.get("externalIPs"):
        found.append('spec.externalIPs is ignored when spec.type is "ExternalName"')
    if kind != "ExternalName" and spec.get("externalName"):
        found.append('spec.externalName is ignored when spec.type is not "ExternalName"')
    for i, ip in enumerate(spec.get("clusterIPs") or ()):
        if ip and ip != "None":
            found += _ip_warnings(f"spec.clusterIPs[{i}]", ip)
    for i, ip in enumerate(spec.get("externalIPs") or ()):
        found += _ip_warnings(f"spec.externalIPs[{i}]", ip)
    if spec.get("loadBalancerIP"):
        found += _ip_warnings("spec.loadBalancerIP", spec["loadBalancerIP"])
    return found


def _selector_cell(selector: dict[str, str] | None) -> str:
    """labels.FormatLabels: `k=v,...` sorted by key, `<none>` when empty."""
    return ",".join(f"{k}={v}" for k, v in sorted((selector or {}).items())) or "<none>"


def _cells(obj: dict[str, Any]) -> list[Any]:
    meta, spec = obj["metadata"], obj.get("spec") or {}
    ips = spec.get("clusterIPs") or []
    return [meta.get("name", ""), spec.get("type", ""), ips[0] if ips else "<none>", external_ip_cell(obj),
            port_cell(spec.get("ports") or []) or "<none>", age(meta.get("creationTimestamp")),
            _selector_cell(spec.get("selector"))]


SERVICE_COLUMNS = Columns((
    NAME_COLUMN,
    doc_column("Type", ServiceSpec, "type"),
    doc_column("Cluster-IP", ServiceSpec, "clusterIP"),
    doc_column("External-IP", ServiceSpec, "externalIPs"),
    doc_column("Port(s)", ServiceSpec, "ports"),
    AGE_COLUMN,
    doc_column("Selector", ServiceSpec, "selector", priority=1),
), _cells)


class ServiceStrategy(Strategy):
    """See the module doc."""

    name_rule = "dns-1035-label"
    returns_deleted_object = True  # the service storage's ReturnDeletedObject: a DELETE answers the Service
    subresources = {"status": StatusSubresource()}
    columns = SERVICE_COLUMNS

    def default(self, obj: dict[str, Any]) -> None:
        default_service(obj)

    def prepare_for_create(self, obj: dict[str, Any]) -> None:
        super().prepare_for_create(obj)
        obj["status"] = {"loadBalancer": {}}  # reset, and written as Go writes an empty ServiceStatus

    def prepare_for_update(self, new: dict[str, Any], old: dict[str, Any],
                           subresource: Subresource | None = None) -> None:
        super().prepare_for_update(new, old, subresource)
        drop_type_dependent_fields(new.setdefault("spec", {}), old.get("spec") or {})
        status = new.setdefault("status", {})
        if isinstance(status, dict):
            status.setdefault("loadBalancer", {})  # Go's ServiceStatus has no empty form but this

    def validate_spec(self, obj: dict[str, Any]) -> list[FieldError]:
        return validate_service(obj) + validate_service_status(obj)

    def validate_update(self, new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
        return validate_service_update(new, old) + self.validate(new)

    def warnings(self, old: dict[str, Any] | None, new: dict[str, Any], manager: str) -> list[str]:
        return service_warnings(new)

    async def admit(self, policy: PolicyContext, request: AdmissionRequest) -> None:
        """Allocate the IPs and ports the write needs (see the module doc); settle them once it has."""
        if request.operation == "create":
            reservations = await allocate_create(policy, self.rt, request.obj, request.dry_run)
        elif request.operation == "update" and request.old is not None:
            reservations = await allocate_update(policy, self.rt, request.obj, request.old, request.dry_run)
        elif request.operation == "delete" and request.old is not None and not request.dry_run:
            request.on_finish.append(self._release_when_gone(policy, request.old))
            return
        else:
            return
        old, new = request.old, request.obj

        async def settle(committed: bool) -> None:
            if not committed or request.dry_run:
                await reservations.release_taken()
                return
            await reservations.confirm()
            if old is not None:
                kept = set() if self.should_delete_on_update(new) else reserved_keys(new)
                await reservations.release(reserved_keys(old) - kept)

        request.on_finish.append(settle)

    def _release_when_gone(self, policy: PolicyContext, service: dict[str, Any]) -> Callable[[bool], Awaitable[None]]:
        """A delete's settling: once the Service is gone (not kept by finalizers), its values are free at once
        (without it, the next request for one reclaims it: `reservations`)."""
        async def settle(committed: bool) -> None:
            if not committed:
                return
            meta = service["metadata"]
            name = meta.get("name", "")
            current = await policy.read_current(self.rt, self.rt.storage_key(meta.get("namespace"), name), name)
            if current is None or current.obj["metadata"].get("uid") != meta.get("uid"):
                await Reservations(policy, self.rt, Owner.of(service)).release(reserved_keys(service))
        return settle
