"""The registry: the one entry point of every request, over HTTP or in-process.

Contract: `Registry(store, scheme, authorizer, ...)` takes its parts as
arguments (authorizer, token authenticator, admission plug-ins, token
signer, watch cache; defaults for in-process use: RBAC from its own index,
kept current from the watch cache), then authorizes, decodes, validates,
admits and persists, asking each kind's strategy (`runtime.server.kinds`) for what differs per kind;
`run()` in a nursery fills the watch cache first. Request options and bodies
are `runtime.machinery.options` types. A request's subresource is resolved
once, by the facade, to the kind's object of it (`runtime.server.kinds.Subresource`:
its name, its verbs, what a write of it keeps), which is what the verb
modules are handed (None: the main resource).

Inside, imports go one way: `answers` (leaf helpers, the storage error
boundary), `read_your_writes` (writes answer once the watch cache holds
them), `admission`, `continuation`, `namespace_gate` <- `primitives`
(state and primitives) <- `view_subresources` <- the verb modules
(`reads`, `listing`, `watching`, `writes`, `patching`, `deletion`,
`reviews`, `action_subresources`) <- `registry` (the facade).
"""

from runtime.server.registry.admission import AdmissionPlugin, AdmissionRequest
from runtime.server.registry.answers import DeleteResult, ListResult, WriteResult
from runtime.server.registry.primitives import watch_cache_for
from runtime.server.registry.registry import Registry
from runtime.server.registry.watching import WatchStream

__all__ = ["Registry", "WriteResult", "DeleteResult", "ListResult", "WatchStream", "AdmissionPlugin",
           "AdmissionRequest", "watch_cache_for"]
