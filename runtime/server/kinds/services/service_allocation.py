"""service_allocation: a Service's cluster IPs and node ports taken on create and update (Kubernetes'
pkg/registry/core/service/storage/alloc.go: allocateCreate, allocateUpdate), from the server's ranges.

- ClusterIP, NodePort and LoadBalancer Services get a cluster IP: the requested `clusterIP(s)` (in the
  range and free, else 422 `spec.clusterIPs: Invalid value: []string{"..."}: failed to allocate IP ...:
  provided IP is already allocated`) or a random free one (500 `failed to allocate a serviceIP: range is
  full`). Headless ("None") and ExternalName Services get none; an update keeps the IP (validation refuses a
  change), and one from ExternalName gets one.
- NodePort and LoadBalancer Services (unless `allocateLoadBalancerNodePorts: false`) get a node port per
  port: the requested one (`spec.ports[i].nodePort: Invalid value: 80: provided port is not in the valid
  range. The range of valid ports is 30000-32767`) or a random one; two ports of one number (TCP and UDP)
  share it. A LoadBalancer with `externalTrafficPolicy: Local` gets a `healthCheckNodePort`.
- The linked fields are fixed up first (`service_defaults`: patch_allocated_values, normalize_cluster_ips,
  init_ip_families), also on a dry run, which takes nothing (`Reservations(dry_run=True)`).

What a write took is its `Reservations`, settled by the strategy once the write is (see `service`).
"""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING, Any

import trio

from runtime.machinery import errors
from runtime.machinery.validation import FieldError, invalid_error
from runtime.machinery.validation.fielderrors import invalid
from runtime.server.kinds.services.reservations import (
    AllocationError, Owner, Reservations, held_ips, held_ports, ip_key, port_key,
)
from runtime.server.kinds.services.service_defaults import (
    allocates_node_ports, init_ip_families, is_headless, needs_cluster_ip, needs_health_check_port,
    needs_node_ports, normalize_cluster_ips, patch_allocated_values,
)

if TYPE_CHECKING:
    from runtime.machinery.scheme import ResourceType
    from runtime.server.kinds.base import PolicyContext

__all__ = ["allocate_create", "allocate_update", "reserved_keys"]


def reserved_keys(service: dict[str, Any] | None) -> set[str]:
    """The reservation keys a Service holds (its cluster IPs and node ports)."""
    return {ip_key(ip) for ip in held_ips(service)} | {port_key(p) for p in held_ports(service)}


async def allocate_create(policy: "PolicyContext", services: "ResourceType", obj: dict[str, Any],
                          dry_run: bool) -> Reservations:
    """Fix up and allocate a new Service's IPs and ports (see the module doc). Raises Invalid, InternalError;
    nothing stays taken when it raises."""
    spec = obj["spec"]
    normalize_cluster_ips(spec)
    _raise_invalid(services, obj, init_ip_families(spec, policy.service_ranges.ip_family))
    reservations = Reservations(policy, services, Owner.of(obj), dry_run=dry_run)
    await _allocate(reservations, services, obj, None)
    return reservations


async def allocate_update(policy: "PolicyContext", services: "ResourceType", new: dict[str, Any],
                          old: dict[str, Any], dry_run: bool) -> Reservations:
    """Fix up an updated Service and allocate what it newly needs (see the module doc)."""
    spec, old_spec = new.setdefault("spec", {}), old.get("spec") or {}
    patch_allocated_values(spec, old_spec)
    normalize_cluster_ips(spec, old_spec)
    _raise_invalid(services, new, init_ip_families(spec, policy.service_ranges.ip_family, old_spec))
    reservations = Reservations(policy, services, Owner.of(old), dry_run=dry_run)
    if spec != old_spec:
        await _allocate(reservations, services, new, old_spec)
    return reservations


async def _allocate(reservations: Reservations, services: "ResourceType", obj: dict[str, Any],
                    old_spec: dict[str, Any] | None) -> None:
    try:
        await _allocate_ips(reservations, services, obj, old_spec)
        await _allocate_node_ports(reservations, services, obj)
    except BaseException:
        with trio.CancelScope(shield=True):  # a cancelled request still gives back what it took
            await reservations.release_taken()
        raise


async def _allocate_ips(reservations: Reservations, services: "ResourceType", obj: dict[str, Any],
                        old_spec: dict[str, Any] | None) -> None:
    spec = obj["spec"]
    if not needs_cluster_ip(spec) or is_headless(spec):
        return
    ips = list(spec.get("clusterIPs") or [])
    if old_spec is not None and needs_cluster_ip(old_spec) and ips[:1] != list(old_spec.get("clusterIPs") or [])[:1]:
        return  # a changed primary IP: validation refuses it ("may not change once set")
    if ips:
        ip = ips[0]
        try:
            ipaddress.ip_address(ip)
        except ValueError:
            return  # not an IP: validation says so
        try:
            await reservations.reserve_ip(ip)
        except AllocationError as exc:
            _raise_invalid(services, obj, [invalid("spec.clusterIPs", ips, f"failed to allocate IP {ip}: {exc}")])
        return
    try:
        ip = await reservations.allocate_ip()
    except AllocationError as exc:
        raise errors.InternalError(f"Internal error occurred: failed to allocate a serviceIP: {exc}") from None
    spec["clusterIP"] = ip
    spec["clusterIPs"] = [ip]


async def _allocate_node_ports(reservations: Reservations, services: "ResourceType", obj: dict[str, Any]) -> None:
    spec = obj["spec"]
    ports = [p for p in spec.get("ports") or () if isinstance(p, dict)]
    requested = {p["nodePort"] for p in ports if isinstance(p.get("nodePort"), int) and p["nodePort"] > 0}
    if needs_node_ports(spec):
        by_number: dict[Any, int] = {}
        taken: set[int] = set()
        for i, port in enumerate(ports):
            node_port = port.get("nodePort")
            if isinstance(node_port, int) and node_port > 0:
                if node_port not in taken:
                    await _reserve_port(reservations, services, obj, node_port, f"spec.ports[{i}].nodePort", "")
                    taken.add(node_port)
            elif allocates_node_ports(spec):
                shared = by_number.get(port.get("port"))
                port["nodePort"] = shared if shared is not None else await _next_port(reservations,
                                                                                       requested | taken)
                taken.add(port["nodePort"])
            else:
                continue
            by_number.setdefault(port.get("port"), port["nodePort"])
    if needs_health_check_port(spec):
        health = spec.get("healthCheckNodePort")
        if isinstance(health, int) and health > 0:
            await _reserve_port(reservations, services, obj, health, "spec.healthCheckNodePort",
                                f"failed to allocate requested HealthCheck NodePort {health}: ")
        else:
            spec["healthCheckNodePort"] = await _next_port(reservations, requested | held_ports(obj))


async def _reserve_port(reservations: Reservations, services: "ResourceType", obj: dict[str, Any], port: int,
                        path: str, lead: str) -> None:
    try:
        await reservations.reserve_port(port)
    except AllocationError as exc:
        _raise_invalid(services, obj, [invalid(path, port, f"{lead}{exc}")])


async def _next_port(reservations: Reservations, avoid: set[int]) -> int:
    try:
        return await reservations.allocate_port(avoid)
    except AllocationError as exc:
        raise errors.InternalError(f"Internal error occurred: failed to allocate a nodePort: {exc}") from None


def _raise_invalid(services: "ResourceType", obj: dict[str, Any], errs: list[FieldError]) -> None:
    if errs:
        raise invalid_error(services.kind, services.group_kind, obj["metadata"].get("name", ""), errs)
