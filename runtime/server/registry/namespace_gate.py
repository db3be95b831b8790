"""`NamespaceGate`: creates in a namespace against the delete that closes it.

A create checks that its namespace is open (not terminating) and then
writes; between the two, the namespace may be deleted, its content listed
and removed by the namespace controller, and the namespace finalized: the
create would then land in a namespace that is gone, an orphan. The gate
closes that window in this process (the registry is the only writer):

- `creating(ns)`: held by a create from its namespace check to its store
  write. Many creates hold it at once.
- `closing(ns)`: held by the delete that makes the namespace terminating (or
  removes it). It waits for the creates holding `creating(ns)` to finish, and
  creates arriving meanwhile wait for it.

So every create either wrote before the namespace became terminating (the
controller, which lists after that, deletes it) or checks after, and is
refused. Idle namespaces cost nothing: a namespace's entry exists only while
someone holds or waits for it.

Internal to `runtime.server.registry`: imported by its modules only.
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import AsyncIterator

import trio

__all__ = ["NamespaceGate"]


@dataclass(eq=False)
class _Gate:
    creating: int = 0
    closing: bool = False
    changed: trio.Event = field(default_factory=trio.Event)


class NamespaceGate:
    """Shared passes for creates, an exclusive one for the namespace's closing delete (see the module doc)."""

    def __init__(self) -> None:
        self._gates: dict[str, _Gate] = {}

    def __len__(self) -> int:
        """Namespaces with a create or a closing delete under way."""
        return len(self._gates)

    def _gate(self, namespace: str) -> _Gate:
        gate = self._gates.get(namespace)
        if gate is None:
            gate = self._gates[namespace] = _Gate()
        return gate

    def _changed(self, namespace: str, gate: _Gate) -> None:
        gate.changed.set()
        gate.changed = trio.Event()
        if not gate.creating and not gate.closing and self._gates.get(namespace) is gate:
            del self._gates[namespace]

    @asynccontextmanager
    async def creating(self, namespace: str) -> AsyncIterator[None]:
        """Hold a create's pass: waits while the namespace is being closed."""
        gate = self._gate(namespace)
        while gate.closing:
            await gate.changed.wait()
            gate = self._gate(namespace)
        gate.creating += 1
        try:
            yield
        finally:
            gate.creating -= 1
            self._changed(namespace, gate)

    @asynccontextmanager
    async def closing(self, namespace: str) -> AsyncIterator[None]:
        """Hold the closing pass: waits for creates under way (and for another closer) to finish."""
        gate = self._gate(namespace)
        while gate.closing:
            await gate.changed.wait()
            gate = self._gate(namespace)
        gate.closing = True  # from here on, new creates wait
        try:
            while gate.creating:
                await gate.changed.wait()
            yield
        finally:
            gate.closing = False
            self._changed(namespace, gate)
