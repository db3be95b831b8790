"""job: its kinds' strategies (to be filled in by Kubernetes' rules)."""

from __future__ import annotations

from runtime.server.kinds.base import Strategy
from runtime.server.kinds.subresources import StatusSubresource

__all__ = ["JobStrategy"]


class JobStrategy(Strategy):
    """See the module doc."""

    subresources = {"status": StatusSubresource()}
