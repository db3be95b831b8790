"""The built-in controllers, assembled on one manager.

`setup(manager)` adds every built-in controller to any manager, in process
or over HTTP (`controllers.cli`); `builtin_manager(client)` is a manager
running them on `client`. The server (`api.assembly`) runs one in-process,
on a `LocalClient` acting as its own identity with field manager
`FIELD_MANAGER`; so does the test env (`runtime.controller.testing.open_test_env`),
which finds this module by its name.

Built in: namespace lifecycle (`controllers.namespace`), ClusterRole
aggregation (`controllers.aggregation`), the garbage collector
(`controllers.gc`, following custom kinds as they come and go with
`controllers.gckinds`), the CustomResourceDefinition controller (`controllers.crd`),
the event time to live (`controllers.eventttl`), the quotas' status
(`controllers.resourcequota`), the ValidatingAdmissionPolicies'
status (`controllers.policystatus`) and, given the server's
signer (`tokens=`: in process only, as kube-controller-manager needs the
private key), the service account token Secrets (`controllers.tokens`).
"""

from __future__ import annotations

from runtime.client.interface import Client
from runtime.controller.leaderelection import LeaderElectionConfig
from runtime.controller.manager import Manager
from runtime.controller.metrics import ControllerMetrics

from controllers import aggregation, crd, gc, gckinds, namespace
from controllers import eventttl, policystatus, resourcequota, tokens as token_secrets
from controllers.tokens import TokenSigning
from runtime.controller.transforms import ownership_metadata

__all__ = ["FIELD_MANAGER", "SHARED_VIEW", "TokenSigning", "setup", "builtin_manager"]

#: The field manager of writes the built-in controllers make without naming their own.
FIELD_MANAGER = "miniplane-controller-manager"

#: What the built-in controllers' informers cache of every object of every kind (the garbage collector's,
#: the namespace controller's and the quota counts'): a server running them in process has its watch cache
#: keep this view of each object it checks (`runtime.machinery.storedobject.DecodeBudget.view`).
SHARED_VIEW = ownership_metadata


def setup(manager: Manager, *, tokens: TokenSigning | None = None) -> None:
    """Add every built-in controller to `manager`; the token controller only with `tokens`."""
    # Those caching objects whole (or without managed fields) first: the namespace controller and the garbage
    # collector, which read only ownership metadata, then share their informers (`informer_keeping`) rather
    # than watch those kinds again.
    aggregation.setup(manager)
    crd.setup(manager)
    eventttl.setup(manager)
    policystatus.setup(manager)
    token_secrets.setup(manager, tokens)
    resourcequota.setup(manager)
    namespace.setup(manager)
    gckinds.setup(manager, gc.setup(manager))


def builtin_manager(client: Client, *, leader_election: LeaderElectionConfig | None = None,
                    metrics: ControllerMetrics | None = None, tokens: TokenSigning | None = None) -> Manager:
    """A manager running the built-in controllers on `client` (not started), while leading if elected,
    recording into `metrics` (default: a registry of its own), signing token Secrets with `tokens`."""
    manager = Manager(client, name=FIELD_MANAGER, leader_election=leader_election, metrics=metrics)
    setup(manager, tokens=tokens)
    return manager
