"""The registry: the one entry point of every request, over HTTP or in-process.

Contract: `Registry(store, scheme, authorizer, ...)` takes its parts as
arguments (authorizer, token authenticator, admission plug-ins, token
signer, watch cache; defaults for in-process use: RBAC from its own index,
kept current from the watch cache), then authorizes, decodes, validates,
admits and persists, asking each kind's strategy (`runtime.server.kinds`) for what differs per kind;
`run()` in a nursery fills the watch cache first. Request options and bodies
are `runtime.machinery.options` types.

Inside, imports go one way: `common` (leaf helpers, the storage error
boundary) and `settling` (writes answer once the watch cache holds them)
<- `core` (state and primitives) <- the verb modules (`reads`,
`listing`, `watching`, `writes`, `patching`, `deletion`, `reviews`) <-
`registry` (the facade).
"""

from runtime.server.registry.admission import AdmissionPlugin, AdmissionRequest
from runtime.server.registry.answers import DeleteResult, ListResult, WriteResult
from runtime.server.registry.primitives import watch_cache_for
from runtime.server.registry.registry import Registry
from runtime.server.registry.watching import WatchStream

__all__ = ["Registry", "WriteResult", "DeleteResult", "ListResult", "WatchStream", "AdmissionPlugin",
           "AdmissionRequest", "watch_cache_for"]
