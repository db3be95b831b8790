"""`load_webhooks(module)`: the webhooks a Python module offers (`miniplane serve --admission-module M`).

A module offers its webhooks as `WEBHOOKS`, a sequence of `Webhook`
descriptors (each name once). `load_webhooks("my.module")` imports it and
returns them; it raises `WebhookModuleError` with a one-line reason when
the module does not import, has no `WEBHOOKS`, offers none, offers
something else, or names a webhook twice.
"""

from __future__ import annotations

import importlib

from runtime.webhook.types import Webhook

__all__ = ["WebhookModuleError", "load_webhooks"]


class WebhookModuleError(ValueError):
    """A module that offers no usable webhooks (the message is one line)."""


def load_webhooks(module: str) -> tuple[Webhook, ...]:
    """The `WEBHOOKS` of `module`, imported (see the module doc)."""
    try:
        loaded = importlib.import_module(module)
    except Exception as exc:  # any error of the author's module is the one reason it cannot be used
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise WebhookModuleError(f"cannot import {module}: {type(exc).__name__}: {reason}") from exc
    offered = getattr(loaded, "WEBHOOKS", None)
    if offered is None:
        raise WebhookModuleError(f"{module} defines no WEBHOOKS")
    if isinstance(offered, Webhook) or not isinstance(offered, (list, tuple)):
        raise WebhookModuleError(f"{module}.WEBHOOKS is not a list of Webhook")
    if not offered:
        raise WebhookModuleError(f"{module}.WEBHOOKS is empty")
    names: set[str] = set()
    for item in offered:
        if not isinstance(item, Webhook):
            raise WebhookModuleError(f"{module}.WEBHOOKS holds a {type(item).__name__}, not a Webhook")
        if item.name in names:
            raise WebhookModuleError(f"{module}.WEBHOOKS names webhook {item.name!r} twice")
        names.add(item.name)
    return tuple(offered)
