"""Writing controllers: client-go's tools and controller-runtime's shape, in trio.

Modules: `controller` (reconcilers, `Controller`, `Result`), `informer`
(shared informers and their caches), `transforms` (what a cache keeps of
each object), `pager` (a list read in pages), `indexers`, `workqueue` and
`ratelimit`, `manager` (informers and controllers in one nursery),
`leaderelection`, `recorder` and `eventcorrelation` (core/v1 Events),
`finalizers`, `controllerutil` (create-or-update, owner references),
`conditions` (status conditions), `metrics` (work-queue and reconcile metrics),
`cachedclient` (the manager's client: reads from the caches), `probes`
(`/healthz` and `/readyz`),
`customkinds` (an in-process client's scheme following the server's CRDs),
`testing` (an in-process server and manager for pytest-trio).

The names a controller's author needs are exported here, as
controller-runtime's `ctrl` package (`from runtime.controller import
Manager, Result, ObjectKey, NotFound`): the manager and its probes, keys,
results, the client's errors and `ignore_not_found` / `ignore_conflict`,
kinds (`ResourceType`), predicates, handlers (`enqueue_object`,
`enqueue_owner`, any `MapFunc`) and the helpers; `__all__` is that surface.
`testing` (it starts a server) and `customkinds` are imported by their own
names.

Contract: imports no `runtime.server` module but `testing`, which starts an
in-process server (checked); controllers reach the API through a
`runtime.client` client only.
"""

from runtime.client.interface import (
    Client, ClientError, ObjectKey, ObjectList, Reader, Writer, ignore_conflict, ignore_not_found, key_of,
)
from runtime.controller.cachedclient import CachedClient
from runtime.controller.conditions import (
    find_status_condition, is_status_condition_false, is_status_condition_true, remove_status_condition,
    set_status_condition,
)
from runtime.controller.controller import (
    Builder, Controller, MapFunc, Predicate, Reconciler, Result, Source, TerminalError, all_of, annotations_changed,
    any_of, enqueue_object, enqueue_owner, generation_changed, labels_changed, resource_version_changed,
)
from runtime.controller.controllerutil import (
    AlreadyOwnedError, OperationResult, create_or_patch, create_or_update, set_controller_reference,
    set_owner_reference,
)
from runtime.controller.finalizers import ensure_finalizer, handle_finalizer, has_finalizer, is_terminating, \
    remove_finalizer
from runtime.controller.indexers import LABEL_INDEX, by_label_selector
from runtime.controller.informer import NAMESPACE_INDEX, Informer, ObjectEvent
from runtime.controller.informerfactory import InformerFactory
from runtime.controller.leaderelection import LeaderElectionConfig
from runtime.controller.manager import Manager, Runnable
from runtime.controller.probes import HealthChecks, probes_app, serve_probes
from runtime.controller.ratelimit import RateLimiter, default_controller_rate_limiter
from runtime.controller.recorder import EventRecorder
from runtime.controller.workqueue import WorkQueue
from runtime.machinery.errors import (
    AlreadyExists, BadRequest, Conflict, Forbidden, Gone, Invalid, NotFound, StatusError, TooManyRequests,
    Unauthorized,
)
from runtime.machinery.scheme import ResourceType
from runtime.models.meta import Condition

__all__ = [
    # the manager, its client and probes
    "Manager", "Runnable", "LeaderElectionConfig", "CachedClient", "HealthChecks", "probes_app", "serve_probes",
    # controllers, keys and results
    "Controller", "Builder", "Source", "Reconciler", "Result", "TerminalError", "ObjectKey", "key_of",
    # kinds and the client
    "ResourceType", "Client", "Reader", "Writer", "ObjectList",
    # errors
    "StatusError", "NotFound", "Conflict", "AlreadyExists", "Invalid", "Forbidden", "Unauthorized", "BadRequest",
    "Gone", "TooManyRequests", "ClientError", "ignore_not_found", "ignore_conflict",
    # predicates and handlers
    "Predicate", "generation_changed", "labels_changed", "annotations_changed", "resource_version_changed",
    "all_of", "any_of", "MapFunc", "enqueue_object", "enqueue_owner",
    # informers and queues
    "Informer", "InformerFactory", "ObjectEvent", "NAMESPACE_INDEX", "LABEL_INDEX", "by_label_selector",
    "WorkQueue", "RateLimiter", "default_controller_rate_limiter", "EventRecorder",
    # helpers
    "has_finalizer", "is_terminating", "ensure_finalizer", "remove_finalizer", "handle_finalizer",
    "create_or_update", "create_or_patch", "OperationResult", "set_controller_reference", "set_owner_reference",
    "AlreadyOwnedError", "Condition", "set_status_condition", "remove_status_condition", "find_status_condition",
    "is_status_condition_true", "is_status_condition_false",
]
