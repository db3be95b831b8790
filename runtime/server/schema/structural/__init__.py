"""Structural schemas: an `openAPIV3Schema` parsed once into frozen nodes, and its rules.

Modules: `schema` (`Structural` and its nodes), `invariants` (the
structural-schema invariants a CRD must hold), `rules` (the CRD validation
rules over a schema: forbidden keywords, list and map markers, defaults).
Internal to `runtime.server.schema`, whose `__init__` is the surface.
"""

__all__: list[str] = []
