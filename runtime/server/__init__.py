"""The API server's library: everything behind a request once the HTTP layer has parsed it.

Packages: `registry` (the one entry point of every request), `kinds`
(each kind's strategy: defaults, validation, admission, subresources),
`storage` (the `Store` protocol; memory, SQLite and etcd), `watchcache`,
`rbac` (authorization, and the RBAC insight in `rbac.insight`), `schema`
(the structural schemas of custom resources, CEL), `admission` (the built-in
admission plug-ins: LimitRanger, ResourceQuota). Modules: `bootstrap`
(the default policy and system namespaces), `tokens` (service account JWTs),
`tokenauth` (the server's own token authentication), `featuregates`.

Contract: imports nothing of `runtime.client` or `runtime.controller`
(checked). Built by `api.assembly`; in-process users reach it through
`runtime.client.local.LocalClient` or `runtime.controller.testing`.
"""

__all__: list[str] = []
