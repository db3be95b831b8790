"""kopf's `KopfRunner` with a registry of its own, so that tests in one process do not share handlers.

Contract: `kopf_runner(path)` is `KopfRunner(["run", "--standalone",
"--all-namespaces", "--verbose", path])` on a fresh `OperatorRegistry` that
holds only kopf's login through the official client (`login_via_client`, as
kopf's default registry has it) and what `path` registers. kopf's decorators
register into the default registry, which `kopf run` loads the file into:
without a fresh one, a runner also ran the handlers of every operator file an
earlier test of the same process had run.
"""

from __future__ import annotations

import kopf
from kopf.testing import KopfRunner

__all__ = ["kopf_runner"]


def kopf_runner(path: str) -> KopfRunner:
    """A KopfRunner running the operator file `path` alone (see the module docs)."""
    registry = kopf.OperatorRegistry()
    kopf.on.login(registry=registry)(kopf.login_via_client)
    return KopfRunner(["run", "--standalone", "--all-namespaces", "--verbose", path], registry=registry)
