"""The registry: the one entry point of every request, over HTTP or in-process.

`Registry(store, scheme)` authorizes (RBAC from its own index, kept current
from the watch cache), decodes, validates, admits and persists; `run()` in a
nursery fills the watch cache first.
"""

from runtime.registry.decode import Body
from runtime.registry.options import DeleteOptions, ListOptions, WriteOptions
from runtime.registry.registry import DeleteResult, ListResult, Registry, WriteResult

__all__ = ["Body", "DeleteOptions", "ListOptions", "WriteOptions", "DeleteResult", "ListResult", "Registry",
           "WriteResult"]
