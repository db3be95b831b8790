"""ranges: what Services allocate from, as kube-apiserver's `--service-cluster-ip-range` and
`--service-node-port-range` give it.

- `ServiceRanges.parse(cidr, ports)` reads the two flags' values (a CIDR, IPv4 or IPv6, kube's default
  `10.96.0.0/12`; a port range `30000-32767`, or `BASE+SIZE` as Kubernetes' `utilnet.ParsePortRange`) and
  raises ValueError in words a command line can show.
- An IPv4 range never hands out its network and broadcast addresses (Kubernetes' ipallocator); an IPv6 one
  its first. Both ranges are split as Kubernetes' static subranges (`ServiceIPStaticSubrange`,
  `ServiceNodePortStaticSubrange`): a lower band kept for requested values, the rest tried first by a
  random allocation (`ip_band`, `port_band`: the static bands' sizes).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

__all__ = ["ServiceRanges", "DEFAULT_CLUSTER_IP_RANGE", "DEFAULT_NODE_PORT_RANGE"]

DEFAULT_CLUSTER_IP_RANGE = "10.96.0.0/12"
DEFAULT_NODE_PORT_RANGE = "30000-32767"
#: The largest IP range Kubernetes accepts (its bitmap's limit: a /12 of IPv4, a /108 of IPv6 → 2^20).
_MAX_SIZE_BITS = 20


@dataclass(frozen=True)
class ServiceRanges:
    """The service IP range (`network`) and the node port range (`first_port`..`last_port`, inclusive)."""

    network: ipaddress.IPv4Network | ipaddress.IPv6Network
    first_port: int
    last_port: int

    @classmethod
    def parse(cls, cidr: str = DEFAULT_CLUSTER_IP_RANGE, ports: str = DEFAULT_NODE_PORT_RANGE) -> "ServiceRanges":
        """The ranges of the flags' values. Raises ValueError for a bad CIDR, a too large one or a bad port range."""
        try:
            network = ipaddress.ip_network(cidr.strip(), strict=False)
        except ValueError:
            raise ValueError(f"--service-cluster-ip-range: invalid CIDR {cidr!r}") from None
        if network.max_prefixlen - network.prefixlen > _MAX_SIZE_BITS:
            raise ValueError(f"--service-cluster-ip-range: {cidr} is too large (at most /12 for IPv4, /108 for IPv6)")
        if network.num_addresses < (4 if network.version == 4 else 2):
            raise ValueError(f"--service-cluster-ip-range: {cidr} is too small")
        first, last = _port_range(ports)
        return cls(network, first, last)

    @property
    def cidr(self) -> str:
        return str(self.network)

    @property
    def port_range(self) -> str:
        """As Kubernetes prints it in its errors: `30000-32767`."""
        return f"{self.first_port}-{self.last_port}"

    @property
    def ip_family(self) -> str:
        return "IPv4" if self.network.version == 4 else "IPv6"

    def ip_offsets(self) -> tuple[int, int]:
        """The offsets (from the network address) an IP may take: [lo, hi)."""
        if self.network.version == 4:
            return 1, self.network.num_addresses - 1
        return 1, self.network.num_addresses

    def ip_at(self, offset: int) -> str:
        return str(self.network.network_address + offset)

    def contains_ip(self, ip: str) -> bool:
        """Whether `ip` is an address this range hands out."""
        try:
            address = ipaddress.ip_address(ip)
        except ValueError:
            return False
        if address.version != self.network.version or address not in self.network:
            return False
        lo, hi = self.ip_offsets()
        return lo <= int(address) - int(self.network.network_address) < hi

    def contains_port(self, port: int) -> bool:
        return self.first_port <= port <= self.last_port

    def ip_band(self) -> int:
        """The static band's size of the IP range (`min(max(16, size/16), 256)`)."""
        lo, hi = self.ip_offsets()
        return min(max(16, (hi - lo) // 16), 256)

    def port_band(self) -> int:
        """The static band's size of the port range (`min(max(16, size/32), 128)`)."""
        return min(max(16, (self.last_port - self.first_port + 1) // 32), 128)


def _port_range(text: str) -> tuple[int, int]:
    """Kubernetes' ParsePortRange: `A-B`, `A+N` (A to A+N) or a single port."""
    value = text.strip()
    try:
        if "-" in value:
            a, b = value.split("-", 1)
            first, last = int(a), int(b)
        elif "+" in value:
            a, n = value.split("+", 1)
            first = int(a)
            last = first + int(n)
        else:
            first = last = int(value)
    except ValueError:
        raise ValueError(f"--service-node-port-range: unable to parse port range: {text}") from None
    if not (0 <= first <= last <= 65535):
        raise ValueError(f"--service-node-port-range: invalid port range: {text}")
    return first, last
