"""Writing controllers: client-go's tools and controller-runtime's shape, in trio.

Modules: `controller` (reconcilers, `Controller`, `Result`), `informer`
(shared informers and their caches), `indexers`, `workqueue` and
`ratelimit`, `manager` (informers and controllers in one nursery),
`leaderelection`, `recorder` and `eventcorrelation` (core/v1 Events),
`finalizers`, `metrics` (work-queue and reconcile metrics),
`customkinds` (an in-process client's scheme following the server's CRDs),
`testing` (an in-process server and manager for pytest-trio).

Contract: imports no `runtime.server` module but `testing`, which starts an
in-process server (checked); controllers reach the API through a
`runtime.client` client only.
"""

__all__: list[str] = []
