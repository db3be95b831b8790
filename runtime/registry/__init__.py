"""The registry: the one entry point of every request, over HTTP or in-process.

Contract: `Registry(store, scheme, authorizer, ...)` takes its parts as
arguments (authorizer, token authenticator, admission plug-ins, token
signer, watch cache; defaults for in-process use: RBAC from its own index,
kept current from the watch cache), then authorizes, decodes, validates,
admits and persists, asking each kind's strategy (`runtime.kinds`) for what differs per kind;
`run()` in a nursery fills the watch cache first. Request options and bodies
are `runtime.requests` types.

Inside, imports go one way: `common` (leaf helpers, the storage error
boundary) and `settling` (writes answer once the watch cache holds them)
<- `core` (state and primitives) <- the verb modules (`reads`,
`listing`, `watching`, `writes`, `patching`, `deletion`, `reviews`) <-
`registry` (the facade).
"""

from runtime.registry.admission import AdmissionPlugin, AdmissionRequest
from runtime.registry.common import DeleteResult, ListResult, WriteResult
from runtime.registry.core import watch_cache_for
from runtime.registry.registry import Registry
from runtime.registry.watching import WatchStream

__all__ = ["Registry", "WriteResult", "DeleteResult", "ListResult", "WatchStream", "AdmissionPlugin",
           "AdmissionRequest", "watch_cache_for"]
