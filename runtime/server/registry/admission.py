"""Admission plug-ins added by users: run after the kind's own admission (its strategy's `admit`).

A plug-in is `AdmissionPlugin(name, fn, side_effects)`; `fn(request)` may
change `request.obj` or raise a `StatusError`. Dry run: a plug-in declared
with side effects (outside the object) makes a dry-run request fail, before
any plug-in runs, with 400 `admission plugin "name" does not support dry run`
(Kubernetes' words for a webhook without `sideEffects: None`); one without
runs as usual and sees `request.dry_run` true. None is built in.

Internal to `runtime.server.registry`: imported by its modules only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Awaitable, Callable, Sequence

from runtime.machinery import errors
from runtime.server.kinds import AdmissionRequest

__all__ = ["AdmissionRequest", "AdmissionPlugin", "run_plugins"]


@dataclass(frozen=True)
class AdmissionPlugin:
    """A user-added admission step; `side_effects` True: it acts outside the object (no dry run)."""

    name: str
    fn: Callable[[AdmissionRequest], Awaitable[None] | None]
    side_effects: bool = False


async def run_plugins(plugins: Sequence[object], request: AdmissionRequest) -> None:
    """Run the `AdmissionPlugin`s of `plugins` in order on `request` (see the module doc for dry run); the
    `runtime.webhook.Webhook`s beside them run as steps of the admission chain instead
    (`runtime.server.admission.python`)."""
    plugins = [p for p in plugins if isinstance(p, AdmissionPlugin)]
    if request.dry_run:
        # Refuse before anything runs: a dry run must have no effect at all.
        for plugin in plugins:
            if plugin.side_effects:
                raise errors.BadRequest(f'admission plugin "{plugin.name}" does not support dry run')
    for plugin in plugins:
        result = plugin.fn(request)
        if result is not None:
            await result
