"""The webhooks of the stored configurations, in kube-apiserver's order, read from the watch cache.

`HookSource(context, info)` reads the ValidatingWebhookConfigurations (or
MutatingWebhookConfigurations) from the context's watch cache, as kube's
configuration manager reads its informer: configurations sorted by name,
each one's webhooks in their order, flattened (`Hook.index` is the position
in that list, what kube's audit annotations name). `hooks()` answers the
same tuple while no configuration changed (the cached objects are compared
by identity) and an empty tuple at the cost of one dictionary lookup when
there is none.

A `Hook` is one webhook with kube's v1 defaults applied (failurePolicy Fail,
matchPolicy Equivalent, timeoutSeconds 10, reinvocationPolicy Never, empty
selectors), its `uid` kube's `<configuration>/<webhook>/<n>` (n counting
webhooks of the same name in the configuration) and its matchConditions
compiled once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from runtime.machinery.kindinfo import KindInfo
from runtime.server.admission.context import AdmissionContext, resource_type
from runtime.server.admission.matching import MatchConditions

__all__ = ["Hook", "HookSource"]

_DEFAULT_TIMEOUT = 10


@dataclass(frozen=True, eq=False)
class Hook:
    """One webhook of a configuration (see the module doc)."""

    configuration: str
    index: int
    uid: str
    spec: dict[str, Any]
    conditions: MatchConditions = field(repr=False)

    @property
    def name(self) -> str:
        return self.spec.get("name") or ""

    @property
    def rules(self) -> list[dict[str, Any]]:
        return self.spec.get("rules") or []

    @property
    def failure_policy(self) -> str:
        return self.spec.get("failurePolicy") or "Fail"

    @property
    def ignores_failures(self) -> bool:
        return self.failure_policy == "Ignore"

    @property
    def match_policy(self) -> str:
        return self.spec.get("matchPolicy") or "Equivalent"

    @property
    def timeout(self) -> float:
        return float(self.spec.get("timeoutSeconds") or _DEFAULT_TIMEOUT)

    @property
    def side_effects(self) -> str | None:
        return self.spec.get("sideEffects")

    @property
    def review_versions(self) -> list[str]:
        return self.spec.get("admissionReviewVersions") or []

    @property
    def client_config(self) -> dict[str, Any]:
        return self.spec.get("clientConfig") or {}

    @property
    def reinvocable(self) -> bool:
        return self.spec.get("reinvocationPolicy") == "IfNeeded"


def _hooks_of(configurations: list[dict[str, Any]]) -> tuple[Hook, ...]:
    hooks: list[Hook] = []
    for configuration in configurations:
        config_name = (configuration.get("metadata") or {}).get("name") or ""
        seen: dict[str, int] = {}
        for spec in configuration.get("webhooks") or []:
            name = spec.get("name") or ""
            n = seen.get(name, 0)
            seen[name] = n + 1
            conditions = MatchConditions(spec.get("matchConditions") or [], spec.get("failurePolicy") or "Fail")
            hooks.append(Hook(config_name, len(hooks), f"{config_name}/{name}/{n}", spec, conditions))
    return tuple(hooks)


class HookSource:
    """The webhooks of one configuration kind, from the watch cache (see the module doc)."""

    def __init__(self, context: AdmissionContext, info: KindInfo) -> None:
        self.context = context
        self.info = info
        self._cache: Any = None
        self._seen: tuple[Any, ...] = ()
        self._hooks: tuple[Hook, ...] = ()

    def _kind_cache(self) -> Any:
        if self._cache is None:
            rt = resource_type(self.context.scheme, self.info)
            if rt is None:
                return None
            self._cache = self.context.kind_cache(rt)
        return self._cache

    def hooks(self) -> tuple[Hook, ...]:
        """Every webhook in kube's order; () when no configuration exists."""
        cache = self._kind_cache()
        if cache is None or not cache.objects:
            return ()
        objects = cache.objects
        if len(objects) != len(self._seen) or any(a is not b for a, b in zip(objects.values(), self._seen)):
            self._seen = tuple(objects.values())
            # Keys are /<group>/<plural>/<name>: sorted keys are configurations sorted by name.
            self._hooks = _hooks_of([objects[key].obj for key in sorted(objects)])
        return self._hooks
