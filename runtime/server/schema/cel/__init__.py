"""CEL of custom resources (`x-kubernetes-validations`), evaluated by cel-python.

Modules: `program` (a compiled rule, metered per parse-tree node; `CELLimits`),
`rules` (a schema node's rules run over a value, `oldSelf` on update),
`library` (Kubernetes' CEL library functions miniplane has). Internal to
`runtime.server.schema`.
"""

__all__: list[str] = []
