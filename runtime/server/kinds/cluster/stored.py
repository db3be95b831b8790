"""The base of the cluster kinds' strategies: what kube-apiserver's decoding does for each of them alike.

- Quantities of the kind's resource maps (`resource_maps`) are decoded as
  `resource.Quantity`: canonical text, a bad one the decoder's 400.
- Scheme defaulting runs on every decoded body, creates and updates alike (the registry
  calls `default` on each: a PUT without a defaulted field is defaulted again, not refused as a
  change of an immutable field); `default` is idempotent.
- `initial_status`: a kind whose create resets the status (`PrepareForCreate`
  of kinds with a status subresource: `obj.Status = {}`) starts with this one.
"""

from __future__ import annotations

from typing import Any

from runtime.machinery.options import Body
from runtime.server.kinds.base import Strategy
from runtime.server.kinds.cluster.resources import canonical_resources

__all__ = ["ClusterStrategy"]


class ClusterStrategy(Strategy):
    """A stored kind with the decoding described in the module doc."""

    #: Dotted paths of the resource maps (`spec.capacity`; `[]` for each item of a list).
    resource_maps: tuple[str, ...] = ()
    #: The create resets the status to this (None: the create keeps what it was sent).
    initial_status: dict[str, Any] | None = None

    def decode(self, body: Body, field_validation: str,
               extra_problems: tuple[str, ...] = ()) -> tuple[dict[str, Any], list[str]]:
        obj, warnings = super().decode(body, field_validation, extra_problems)
        rt = self.rt
        canonical_resources(obj, self.resource_maps,
                            f'{rt.kind} in version "{rt.version}" cannot be handled as a {rt.kind}')
        return obj, warnings

    def prepare_for_create(self, obj: dict[str, Any]) -> None:
        super().prepare_for_create(obj)
        if self.initial_status is not None:
            obj.pop("status", None)
            if self.initial_status:
                obj["status"] = dict(self.initial_status)
