"""reservations: a Service's cluster IPs and node ports, each reserved as a store key of its own.

As Kubernetes' IPAddress allocator (an `IPAddress` object named by the IP, created only if absent), every
IP and node port a Service holds is one key, `/service-cluster-ips/<ip>` or `/service-node-ports/<port>`,
created only if absent: several workers or processes sharing one store never hand one out twice, and no
process keeps a counter. The keys have two segments, so the watch cache (which caches
`/<group>/<plural>/<name>`) never takes them for objects.

A reservation names its Service (`namespace/name` and uid). It is `pending` from the create's admission
until the Service is stored (`confirm`); a failed write releases what it reserved at once (`release`).
A confirmed reservation whose Service is gone (deleted, or recreated with another uid) or no longer holds
the value (its type changed) is stale: the next request for that value reclaims it (Kubernetes' repair
controllers, done when it matters). A pending one is never reclaimed: its create is still in flight.

Errors are Kubernetes' allocator words: `provided IP is already allocated`, `the provided IP (x) is not in the
valid range. The range of valid IPs is 10.96.0.0/12`, `provided port is already allocated`, `provided port is
not in the valid range. The range of valid ports is 30000-32767`, `range is full`.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable

from runtime.server.kinds.services.ranges import ServiceRanges
from runtime.server.storage import KeyExists, KeyNotFound, RevisionConflict

if TYPE_CHECKING:
    from runtime.machinery.scheme import ResourceType
    from runtime.server.kinds.base import PolicyContext

__all__ = ["Owner", "Reservations", "AllocationError", "ALREADY_ALLOCATED_IP", "ALREADY_ALLOCATED_PORT",
           "RANGE_FULL", "ip_key", "port_key", "held_ips", "held_ports"]

IP_PREFIX = "/service-cluster-ips/"
PORT_PREFIX = "/service-node-ports/"
ALREADY_ALLOCATED_IP = "provided IP is already allocated"
ALREADY_ALLOCATED_PORT = "provided port is already allocated"
RANGE_FULL = "range is full"
#: Random picks tried in a large range before it is called full (a small one is walked whole).
_RANDOM_TRIES = 128
_WALK_LIMIT = 4096


class AllocationError(Exception):
    """An allocator's refusal, in Kubernetes' words (`str(exc)`)."""


@dataclass(frozen=True)
class Owner:
    """The Service a reservation is for."""

    namespace: str
    name: str
    uid: str

    @classmethod
    def of(cls, service: dict[str, Any]) -> "Owner":
        meta = service["metadata"]
        return cls(meta.get("namespace", ""), meta.get("name", ""), meta.get("uid", ""))


def ip_key(ip: str) -> str:
    return IP_PREFIX + ip


def port_key(port: int) -> str:
    return f"{PORT_PREFIX}{port}"


def held_ips(service: dict[str, Any] | None) -> set[str]:
    """The cluster IPs a stored Service holds ("None" holds none)."""
    spec = (service or {}).get("spec") or {}
    return {ip for ip in spec.get("clusterIPs") or () if ip and ip != "None"}


def held_ports(service: dict[str, Any] | None) -> set[int]:
    """The node ports (and health check node port) a stored Service holds."""
    spec = (service or {}).get("spec") or {}
    ports = {p.get("nodePort") for p in spec.get("ports") or () if isinstance(p, dict)}
    ports.add(spec.get("healthCheckNodePort"))
    return {p for p in ports if isinstance(p, int) and p > 0}


class Reservations:
    """The reservations of one write (an admission's): what it took, to confirm or release once settled."""

    def __init__(self, policy: "PolicyContext", services: "ResourceType", owner: Owner, *,
                 dry_run: bool = False) -> None:
        self.policy = policy
        #: A dry run only looks: a value is answered when it is free, nothing is written.
        self.dry_run = dry_run
        self.services = services
        self.owner = owner
        self.ranges: ServiceRanges = policy.service_ranges
        #: Keys this write created (released if it fails, confirmed if it is stored).
        self.taken: list[str] = []

    # ---- requested values ---------------------------------------------------------------------------

    async def reserve_ip(self, ip: str) -> None:
        """Take `ip` for the owner. Raises AllocationError (out of range, allocated to another Service)."""
        if not self.ranges.contains_ip(ip):
            raise AllocationError(f"the provided IP ({ip}) is not in the valid range. "
                                  f"The range of valid IPs is {self.ranges.cidr}")
        if not await self._take(ip_key(ip)):
            raise AllocationError(ALREADY_ALLOCATED_IP)

    async def reserve_port(self, port: int) -> None:
        """Take node port `port` for the owner. Raises AllocationError."""
        if not self.ranges.contains_port(port):
            raise AllocationError("provided port is not in the valid range. "
                                  f"The range of valid ports is {self.ranges.port_range}")
        if not await self._take(port_key(port)):
            raise AllocationError(ALREADY_ALLOCATED_PORT)

    # ---- random values ------------------------------------------------------------------------------

    async def allocate_ip(self) -> str:
        """A free IP of the range, the upper band first. Raises AllocationError(RANGE_FULL)."""
        lo, hi = self.ranges.ip_offsets()
        for offset in _candidates(lo, hi, self.ranges.ip_band()):
            ip = self.ranges.ip_at(offset)
            if await self._take(ip_key(ip)):
                return ip
        raise AllocationError(RANGE_FULL)

    async def allocate_port(self, avoid: Iterable[int] = ()) -> int:
        """A free node port, the upper band first, none of `avoid`. Raises AllocationError(RANGE_FULL)."""
        skip = set(avoid)
        first, last = self.ranges.first_port, self.ranges.last_port
        for port in _candidates(first, last + 1, self.ranges.port_band()):
            if port not in skip and await self._take(port_key(port)):
                return port
        raise AllocationError(RANGE_FULL)

    # ---- settling -----------------------------------------------------------------------------------

    async def confirm(self) -> None:
        """The write was stored: its reservations are no longer pending."""
        for key in self.taken:
            await self._rewrite(key, pending=False)
        self.taken = []

    async def release_taken(self) -> None:
        """The write failed: release what it took."""
        await self.release(self.taken)
        self.taken = []

    async def release(self, keys: Iterable[str]) -> None:
        """Remove the owner's reservations of `keys` (another Service's are left alone)."""
        store = self.policy.store
        for key in keys:
            entry = await store.get(key)
            if entry is None or _value(entry.value).get("uid") != self.owner.uid:
                continue
            try:
                await store.delete(key, expected_revision=entry.mod_revision)
            except (KeyNotFound, RevisionConflict):
                pass  # taken over meanwhile: no longer ours

    # ---- internals ----------------------------------------------------------------------------------

    async def _take(self, key: str) -> bool:
        """Create `key` for the owner if absent, reclaiming a stale one; True when the owner holds it."""
        store = self.policy.store
        if self.dry_run:
            entry = await store.get(key)
            if entry is None:
                return True
            held = _value(entry.value)
            return held.get("uid") == self.owner.uid or await self._stale(key, held)
        payload = json.dumps({"service": f"{self.owner.namespace}/{self.owner.name}", "uid": self.owner.uid,
                              "pending": True}).encode()
        for _ in range(3):  # a reclaimed key may be taken by another writer in between: look again
            try:
                await store.create(key, lambda _revision: payload)
            except KeyExists:
                entry = await store.get(key)
                if entry is None:
                    continue
                held = _value(entry.value)
                if held.get("uid") == self.owner.uid:
                    return True  # already the owner's (an update keeping its values)
                if not await self._stale(key, held):
                    return False
                try:
                    await store.delete(key, expected_revision=entry.mod_revision)
                except (KeyNotFound, RevisionConflict):
                    pass
                continue
            self.taken.append(key)
            return True
        return False

    async def _stale(self, key: str, held: dict[str, Any]) -> bool:
        """Whether a reservation no Service holds any longer may be reclaimed (never a pending one)."""
        if held.get("pending", False):
            return False
        namespace, _, name = str(held.get("service", "")).partition("/")
        current = await self.policy.read_current(self.services, self.services.storage_key(namespace, name), name)
        if current is None or current.obj["metadata"].get("uid") != held.get("uid"):
            return True
        value = key.rpartition("/")[2]
        if key.startswith(IP_PREFIX):
            return value not in held_ips(current.obj)
        return int(value) not in held_ports(current.obj)

    async def _rewrite(self, key: str, *, pending: bool) -> None:
        store = self.policy.store
        entry = await store.get(key)
        if entry is None:
            return
        held = _value(entry.value)
        if held.get("uid") != self.owner.uid:
            return
        payload = json.dumps({**held, "pending": pending}).encode()
        try:
            await store.update(key, lambda _revision: payload, expected_revision=entry.mod_revision)
        except (KeyNotFound, RevisionConflict):
            pass


def _value(raw: bytes) -> dict[str, Any]:
    try:
        value = json.loads(raw)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _candidates(lo: int, hi: int, band: int) -> Iterable[int]:
    """Offsets in [lo, hi) to try, the upper (dynamic) part above `lo + band` first, then the static band:
    every one, shuffled, in a small range; random picks in a large one."""
    split = min(lo + band, hi)
    upper, lower = (split, hi), (lo, split)
    if hi - lo <= _WALK_LIMIT:
        for start, end in (upper, lower):
            offsets = list(range(start, end))
            random.shuffle(offsets)
            yield from offsets
        return
    for start, end in (upper, lower):
        if end > start:
            for _ in range(_RANDOM_TRIES):
                yield random.randrange(start, end)
