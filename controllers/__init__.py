"""Built-in controllers: ClusterRole aggregation, namespace lifecycle, finalizers, garbage collection.

Contract: each controller module has `setup(manager)`, as every user
controller does (the one way to add controllers: a builder from
`manager.controller()`); `controllers.builtin.setup` adds them all and
`builtin_manager(registry, user)` is the in-process manager the server runs.
They talk to the server only through the client (in-process or HTTP), never
through the store, and are level-based: a restart finishes what was started.
Controllers import neither `api` nor storage nor registry internals.

The package's names (`controllers.setup`, ...) are `controllers.builtin`'s, loaded when first read: importing
`controllers.cli` to parse a command line (`miniplane controllers --help`) loads no controller.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["FIELD_MANAGER", "SHARED_VIEW", "builtin_manager", "setup"]


def __getattr__(name: str) -> Any:
    """`controllers.builtin`'s `name`, imported on first use (PEP 562): the command line starts fast."""
    if name in __all__:
        return getattr(importlib.import_module("controllers.builtin"), name)
    raise AttributeError(f"module 'controllers' has no attribute {name!r}")
