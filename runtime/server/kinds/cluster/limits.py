"""limits: its kinds' strategies (to be filled in by Kubernetes' rules)."""

from __future__ import annotations

from runtime.server.kinds.base import Strategy
from runtime.server.kinds.subresources import StatusSubresource

__all__ = ["LimitRangeStrategy", "ResourceQuotaStrategy"]


class LimitRangeStrategy(Strategy):
    """See the module doc."""


class ResourceQuotaStrategy(Strategy):
    """See the module doc."""

    subresources = {"status": StatusSubresource()}
