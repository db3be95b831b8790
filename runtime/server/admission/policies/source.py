"""The policies and bindings in force, read from the watch cache, each policy compiled once per version.

`PolicySource(context, policy_kind, binding_kind, compile)` answers
`hooks()`: one `Hook` per policy that some binding names (kube's
`policySource.calculatePolicyData`: a binding whose policy does not exist is
skipped), in policy-name order, with its bindings in name order and its
compiled form. `compile(policy)` runs once per (policy uid,
resourceVersion): nothing compiles per request (kube's `compilePolicyLocked`,
keyed the same way); forms of policies gone are dropped.

A scheme that does not serve the kinds has no hooks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from runtime.machinery.kindinfo import KindInfo
from runtime.server.admission.context import AdmissionContext, resource_type

__all__ = ["Hook", "PolicySource"]

C = TypeVar("C")


@dataclass(frozen=True)
class Hook(Generic[C]):
    """A policy, its compiled form and the bindings that name it."""

    policy: dict[str, Any]
    compiled: C
    bindings: tuple[dict[str, Any], ...]

    @property
    def name(self) -> str:
        return self.policy["metadata"]["name"]


class PolicySource(Generic[C]):
    """The hooks of one policy kind (see the module doc)."""

    def __init__(self, context: AdmissionContext, policy_kind: KindInfo, binding_kind: KindInfo,
                 compile: Callable[[dict[str, Any]], C]) -> None:
        self.context = context
        self.policies = resource_type(context.scheme, policy_kind)
        self.bindings = resource_type(context.scheme, binding_kind)
        self.compile = compile
        self._compiled: dict[str, tuple[str, C]] = {}

    def hooks(self) -> list[Hook[C]]:
        """The policies some binding names, with their bindings (sync: reads the cache)."""
        if self.policies is None or self.bindings is None:
            return []
        by_policy: dict[str, list[dict[str, Any]]] = {}
        for binding in self.context.kind_cache(self.bindings).list(self.bindings.storage_prefix):
            name = (binding.obj.get("spec") or {}).get("policyName") or ""
            by_policy.setdefault(name, []).append(binding.obj)
        if not by_policy:
            return []
        cache = self.context.kind_cache(self.policies)
        hooks, seen = [], set()
        for name in sorted(by_policy):
            found = cache.get(self.policies.storage_key(None, name))
            if found is None:
                continue
            policy = found.obj
            seen.add(policy["metadata"].get("uid", name))
            hooks.append(Hook(policy, self._compile(policy), tuple(by_policy[name])))
        if len(self._compiled) > len(seen):
            self._compiled = {uid: entry for uid, entry in self._compiled.items() if uid in seen}
        return hooks

    def _compile(self, policy: dict[str, Any]) -> C:
        meta = policy["metadata"]
        uid, version = meta.get("uid", meta["name"]), meta.get("resourceVersion", "")
        entry = self._compiled.get(uid)
        if entry is None or entry[0] != version:
            entry = self._compiled[uid] = (version, self.compile(policy))
        return entry[1]
