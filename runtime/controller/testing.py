"""Testing controllers without a cluster: an in-process server and manager for pytest-trio, for any client.

`open_test_env()` starts a `Registry` over a memory store (bootstrapped as
the server is: `runtime.server.bootstrap`) and the built-in controllers `miniplane
serve` runs (namespace lifecycle, ClusterRole aggregation, garbage
collection, CRD establishment, event TTL), and yields a `TestEnv` with an
admin `LocalClient`. Controllers run in a `Manager` on that client, with the
same authorization, validation and admission as the real server. Time is
trio's, so `autojump_clock` makes backoffs, requeues and resyncs instant and
deterministic.

Example::

    async def test_labels_are_copied(autojump_clock):
        async with open_test_env() as env:
            manager = env.manager()
            my_controllers.setup(manager)
            await env.start(manager)
            await env.client.create(role)
            done = await env.wait_for(roles_rt, "r", lambda o: o and o["metadata"].get("labels"))

Over HTTPS, for every client (envtest's use): `open_test_env(https=True)`
also serves the registry on a loopback port (127.0.0.1, port 0) in the
test's own process and trio run (`api.testserver`: the app and listener of
`miniplane serve`), with a fresh CA and serving certificate in a temporary
folder and an admin bearer token; `env.url`, `env.kubeconfig` (a file
kubectl, the official `kubernetes` client, kubernetes_asyncio, lightkube,
kr8s and kopf read), `env.ca_pem`, `env.token`, and `env.http_client()`
(an `HTTPClient` on it). A synchronous client runs in
`trio.to_thread.run_sync`, an asyncio one in a thread with `asyncio.run`::

    async with open_test_env(https=True, crds=["config/crd/bases"]) as env:
        api = kubernetes.config.new_client_from_config(str(env.kubeconfig))
        await trio.to_thread.run_sync(kubernetes.client.CoreV1Api(api).list_namespace)

`crds=[path, ...]` (envtest's `CRDDirectoryPaths`): the
CustomResourceDefinitions of those files and folders
(`runtime.controller.crdfiles`) are created, and the env is yielded once
each is Established (so their kinds are served).

`threaded_test_env()` runs the same env, served over HTTPS, in a trio run of
its own in a background thread, for a synchronous context (a
`scope="session"` fixture: pytest-trio's fixtures live one test); each
test reaches it with `served.http_client()`.

Fixtures: the pytest plugin `runtime.pytest_plugin`, registered by the
package (entry point `pytest11`), gives `miniplane_env`, `miniplane_client`,
`miniplane_kubeconfig`, `miniplane_namespace` and their session-scoped
twins, with options (see its docstring). `miniplane_env` and its options
`miniplane_domain` (default `svc.io`) and `miniplane_controllers` (default
True) are importable from here too; an option is a fixture a suite
overrides (in a conftest, a module, or by `@pytest.mark.parametrize`)::

    @pytest.fixture
    def miniplane_domain():
        return "k8s.io"   # manifests written for apiextensions.k8s.io/v1, rbac.authorization.k8s.io/v1

`env.wait_for(kind, name, condition)` watches one object until
`condition(obj)` holds (`obj` is None while the object does not exist) and
returns it: no polling and no sleeps. Bound it with `trio.fail_after`.

Caveats:
    The built-in controllers (`BUILTIN_CONTROLLERS`) and the HTTPS server
    (`TEST_SERVER`) are found by their module's name, imported when an env
    opens with them: `runtime` imports nothing of `controllers` or `api`
    (the layering rule of docs/design.md), so importing this module loads
    none of them. Over HTTPS, do not use `autojump_clock`: while the test
    waits on a client's network I/O (in a thread) trio sees every task
    blocked and jumps its clock, so timeouts fire at once. The official
    `kubernetes` client reads `KUBECONFIG` when it is imported, not when it
    loads a config: give it the path (`new_client_from_config(path)`), and
    give kopf a login handler that reads the variable when called
    (`kopf.login_with_kubeconfig`, as tests/unit/controller/test_testenv_https.py).
"""

from __future__ import annotations

import concurrent.futures
import importlib
import secrets
import tempfile
import threading
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator, Callable, Iterator, Sequence

import trio

from runtime.server.bootstrap import SYSTEM_USER, bootstrap as bootstrap_registry
from runtime.client.http import HTTPClient
from runtime.client.interface import Client, Kind, ObjectKey, key_of
from runtime.client.kubeconfig import KubeConfig
from runtime.client.local import LocalClient
from runtime.controller.crdfiles import read_crds
from runtime.controller.manager import Manager
from runtime.server.rbac.aggregation import aggregate_rules, same_rules
from runtime.server.rbac.user import UserInfo
from runtime.server.registry import AdmissionPlugin, Registry, watch_cache_for
from runtime.machinery import errors
from runtime.machinery.scheme import DEFAULT_DOMAIN, Scheme
from runtime.server.storage import MemoryStore
from runtime.server.tokens import TokenSigner
from runtime.webhook import Webhook

__all__ = ["ADMIN", "BUILTIN_CONTROLLERS", "TEST_SERVER", "TestEnv", "ServedTestEnv", "open_test_env",
           "threaded_test_env", "wait_for_object", "wait_aggregated", "wait_established", "fresh_namespace",
           "drop_namespace"]

try:  # the fixtures, re-exported where pytest is installed (a test extra: the env itself needs no pytest)
    from runtime.pytest_plugin import miniplane_controllers, miniplane_domain, miniplane_env
except ImportError:  # pragma: no cover - exercised in a child interpreter without pytest
    pass
else:
    __all__ += ["miniplane_env", "miniplane_domain", "miniplane_controllers"]

#: Allowed everything (system:masters), like the server's admin token.
ADMIN = UserInfo("admin", uid="admin", groups=("system:masters", "system:authenticated"))
#: The module whose `builtin_manager(client)` and `FIELD_MANAGER` the server's controllers are (`api.assembly`).
BUILTIN_CONTROLLERS = "controllers.builtin"
#: The module serving an env over HTTPS (`credentials(...)`, `serve(registry, credentials)`).
TEST_SERVER = "api.testserver"
#: How long (trio's clock) opening an env waits for the aggregated ClusterRoles to be filled, or a CRD to be
#: Established.
READY_SECONDS = 30.0
#: How long (wall clock) `threaded_test_env` waits for its env to start, and to stop.
THREAD_SECONDS = 60.0


@dataclass
class TestEnv:
    """A running in-process server: its registry, an admin client, a nursery for managers, the manager of
    the built-in controllers (None when they are off), and, served over HTTPS, where and how to reach it
    (None without `https=True`)."""

    __test__ = False  # not a pytest test class

    registry: Registry
    client: LocalClient
    nursery: trio.Nursery
    controllers: Manager | None = None
    url: str | None = None
    kubeconfig: Path | None = None
    ca_pem: bytes | None = None
    token: str | None = None
    #: The CRDs `crds=` created, as they were once Established.
    crds: list[dict[str, Any]] = field(default_factory=list)

    @property
    def scheme(self) -> Scheme:
        return self.registry.scheme

    def client_as(self, user: UserInfo, *, field_manager: str = "") -> LocalClient:
        """A client acting as `user` (authorized by RBAC like any caller)."""
        return LocalClient(self.registry, user, field_manager=field_manager)

    def manager(self, *, user: UserInfo = ADMIN, field_manager: str = "", **options: Any) -> Manager:
        """A new manager on a client acting as `user` (not started)."""
        return Manager(self.client_as(user, field_manager=field_manager), **options)

    async def start(self, manager: Manager) -> Manager:
        """Run `manager` in the environment's nursery; return once its informers synced."""
        await self.nursery.start(manager.run)
        return manager

    async def wait_for(self, kind: Kind, name: str, condition: Callable[[dict[str, Any] | None], Any], *,
                       namespace: str = "") -> dict[str, Any] | None:
        """`wait_for_object` with the environment's admin client."""
        return await wait_for_object(self.client, kind, name, condition, namespace=namespace)

    def kube_config(self) -> KubeConfig:
        """The admin's connection settings (what `kubeconfig` holds); RuntimeError unless served over HTTPS."""
        if self.url is None:
            raise RuntimeError("this env is not served over HTTPS: open it with open_test_env(https=True)")
        return KubeConfig(self.url, ca_pem=self.ca_pem, token=self.token)

    def http_client(self, *, field_manager: str = "", **options: Any) -> HTTPClient:
        """An admin `HTTPClient` on the env's HTTPS port (close it: `async with env.http_client() as c:`).

        It shares the server's scheme, so it knows the custom kinds the server serves. `options` are
        HTTPClient's (protobuf, user_agent, timeout). RuntimeError unless served over HTTPS.
        """
        return HTTPClient(self.kube_config(), scheme=self.scheme, field_manager=field_manager, **options)


@dataclass(frozen=True)
class ServedTestEnv:
    """A test env served over HTTPS from another thread (`threaded_test_env`): where and how to reach it."""

    url: str
    kubeconfig: Path
    ca_pem: bytes
    token: str
    domain: str
    #: The CRDs `crds=` created, as they were once Established.
    crds: tuple[dict[str, Any], ...] = ()

    def kube_config(self) -> KubeConfig:
        return KubeConfig(self.url, ca_pem=self.ca_pem, token=self.token)

    def http_client(self, *, field_manager: str = "", **options: Any) -> HTTPClient:
        """An admin `HTTPClient` for the calling trio run, its scheme knowing the kinds of `crds`."""
        scheme = Scheme(self.domain)
        if self.crds:  # a server's way of serving them: the CRD kind's strategy registers what they define
            scheme.by_kind("CustomResourceDefinition").strategy.observe_list(list(self.crds))
        return HTTPClient(self.kube_config(), scheme=scheme, field_manager=field_manager, **options)


ObjectsByKey = dict[ObjectKey, dict[str, Any]]


async def _watch_until(client: Client, kind: Kind, condition: Callable[[ObjectsByKey], Any], *,
                       namespace: str = "", field_selector: str = "") -> ObjectsByKey:
    """List, then watch from the list's version, until `condition(objects by key)` holds; return them."""
    rt = client.resource(kind)
    page = await client.list(rt, namespace=namespace, field_selector=field_selector)
    current = {key_of(o): o for o in page.items}
    if condition(current):
        return current
    async with client.watch(rt, namespace=namespace, field_selector=field_selector,
                            resource_version=page.resource_version) as events:
        async for event in events:
            if event.type == "ERROR":
                raise event.error() or RuntimeError("watch failed")
            if event.type not in ("ADDED", "MODIFIED", "DELETED"):
                continue
            if event.type == "DELETED":
                current.pop(key_of(event.object), None)
            else:
                current[key_of(event.object)] = event.object
            if condition(current):
                return current
    raise RuntimeError(f"the watch of {rt.plural} ended before the condition held")


async def wait_for_object(client: Client, kind: Kind, name: str, condition: Callable[[dict[str, Any] | None], Any],
                          *, namespace: str = "") -> dict[str, Any] | None:
    """Return the object once `condition(obj)` is truthy (`obj` is None while absent); any transport.

    Lists, then watches from the list's version: every state is seen, none is
    polled. Raises the watch's error (e.g. 410) or RuntimeError if it ends.
    """
    def the_one(objects: ObjectsByKey) -> dict[str, Any] | None:
        return next(iter(objects.values()), None)  # selected by name (and namespace, when given)
    found = await _watch_until(client, kind, lambda objects: condition(the_one(objects)), namespace=namespace,
                               field_selector=f"metadata.name={name}")
    return the_one(found)


def _aggregated(roles: ObjectsByKey) -> bool:
    """Whether every aggregated ClusterRole holds what its aggregation of the others gives (a fixed point)."""
    everyone = list(roles.values())
    return all(same_rules(r.get("rules") or [], aggregate_rules(r, everyone)) for r in everyone
               if r.get("aggregationRule"))


async def wait_aggregated(client: Client) -> None:
    """Return once every aggregated ClusterRole (admin, edit, view, ...) holds the rules it aggregates.

    Blocks until the aggregation controller has reached its fixed point; raises as `wait_for_object`.
    """
    await _watch_until(client, client.scheme.by_kind("ClusterRole"), _aggregated)


def _established(crd: dict[str, Any] | None) -> bool:
    conditions = ((crd or {}).get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Established" and c.get("status") == "True" for c in conditions)


async def wait_established(client: Client, name: str) -> dict[str, Any]:
    """Return CRD `name` once its `Established` condition is True (its kinds are then served).

    Blocks until then; raises as `wait_for_object`.
    """
    found = await wait_for_object(client, client.scheme.by_kind("CustomResourceDefinition"), name, _established)
    assert found is not None
    return found


async def fresh_namespace(client: Client, prefix: str = "test-") -> str:
    """Create a namespace of a new random name (`test-1a2b3c4d`); return its name."""
    namespaces = client.scheme.namespace_type
    created = await client.create({"apiVersion": namespaces.api_version, "kind": namespaces.kind,
                                   "metadata": {"name": f"{prefix}{secrets.token_hex(4)}"}})
    return created["metadata"]["name"]


async def drop_namespace(client: Client, name: str) -> None:
    """Delete namespace `name` (its objects go with it, once the namespace controller empties it); one
    already gone is no error."""
    try:
        await client.delete(client.scheme.namespace_type, name)
    except errors.NotFound:
        pass


async def _start_builtin_controllers(env: TestEnv) -> Manager:
    """Start the server's built-in controllers in `env`, as `api.assembly` does; return their manager once the
    aggregated roles are filled (trio.TooSlowError after READY_SECONDS)."""
    # By name: runtime never imports controllers (they import runtime; the layering cycle docs/design.md forbids).
    builtin = importlib.import_module(BUILTIN_CONTROLLERS)
    client = LocalClient(env.registry, SYSTEM_USER, field_manager=builtin.FIELD_MANAGER,
                         user_agent=builtin.FIELD_MANAGER)
    # The registry's signer, as the assembly hands the server's: token Secrets get tokens, and, served over
    # HTTPS, the CA that clients trust the env by as their `ca.crt`.
    signing = builtin.TokenSigning(env.registry.tokens, env.ca_pem or b"")
    manager = await env.start(builtin.builtin_manager(client, tokens=signing))
    with trio.fail_after(READY_SECONDS):
        await wait_aggregated(env.client)
    return manager


async def _install_crds(env: TestEnv, crds: list[dict[str, Any]]) -> None:
    """Create `crds`, then wait until each is Established (trio.TooSlowError after READY_SECONDS)."""
    for crd in crds:
        await env.client.create(crd)
    with trio.fail_after(READY_SECONDS):
        env.crds = [await wait_established(env.client, crd["metadata"]["name"]) for crd in crds]


@asynccontextmanager
async def open_test_env(*, domain: str = DEFAULT_DOMAIN, controllers: bool = True, bootstrap: bool = True,
                        history_seconds: float = 300.0, https: bool = False,
                        crds: Sequence[str | Path] = (),
                        admission: Sequence[AdmissionPlugin | Webhook] = ()) -> AsyncIterator[TestEnv]:
    """Start an in-process server (memory store) and its built-in controllers; yield a `TestEnv`; stop on exit.

    `domain` is the API domain (`runtime.machinery.scheme.Scheme`): the default
    `svc.io` serves `rbac.authorization.svc.io/v1`,
    `apiextensions.svc.io/v1`, ...; `domain="k8s.io"` serves Kubernetes'
    names, for manifests written for a real cluster.

    `controllers=True` (the default) runs the built-in controllers `miniplane
    serve` runs (`controllers.builtin_manager`, as `env.controllers`): CRDs
    become Established, deleted namespaces finish deleting, dependents of
    deleted owners are collected, aggregated ClusterRoles are filled, service
    account token Secrets get their tokens (`controllers.tokens`). The env
    is yielded once they run and `admin`, `edit` and `view` hold their rules
    (no sleeps: a watch sees the aggregation's fixed point).
    `controllers=False` runs none (e.g. to test one of them alone): then
    nothing of that happens and aggregated roles have no rules.

    `https=True` also serves the env over HTTPS on a loopback port (see the
    module doc): `env.url`, `env.kubeconfig`, `env.ca_pem`, `env.token`;
    the temporary folder of its CA, keys and kubeconfig is removed on exit.

    `crds`: files and folders of CustomResourceDefinitions to create; the
    env is yielded once each is Established. Raises ValueError, before
    anything starts, for a file that does not parse or holds something else
    (`runtime.controller.crdfiles`), or with `controllers=False` (nothing
    would establish them).

    `admission`: admission plug-ins run after each kind's own, and
    `runtime.webhook.Webhook`s run in process as `miniplane serve
    --admission-module` runs them (mutating ones before validation,
    validating ones after, as webhooks configured last), as
    `api.assembly.open_control_plane(admission=...)`.

    `history_seconds` is the watch history kept: make it small to provoke 410 Gone.
    """
    scheme = Scheme(domain)
    crd_objects = read_crds(crds, scheme) if crds else []
    if crd_objects and not controllers:
        raise ValueError("crds= needs controllers=True: the built-in controllers make CRDs Established")
    with tempfile.TemporaryDirectory(prefix="miniplane-env-") if https else _no_folder() as folder:
        store = MemoryStore()
        cache = watch_cache_for(store, scheme, history_seconds=history_seconds)
        signer = TokenSigner()
        server, creds = None, None
        if https:
            # By name: runtime never imports api (the HTTP layer imports runtime; docs/design.md's layering).
            server = importlib.import_module(TEST_SERVER)
            creds = server.credentials(Path(folder), ADMIN, signer, scheme, cache)
        registry = Registry(store, scheme, cache=cache, tokens=signer, admission=admission,
                            authenticator=creds.authenticator if creds is not None else None)
        async with trio.open_nursery() as nursery:
            await nursery.start(registry.run)
            if bootstrap:
                await bootstrap_registry(registry)
            env = TestEnv(registry, LocalClient(registry, ADMIN, field_manager="test"), nursery)
            if server is not None and creds is not None:
                env.url = await nursery.start(server.serve, registry, creds)
                env.kubeconfig, env.ca_pem, env.token = creds.kubeconfig, creds.ca_pem, creds.token
            if controllers:
                env.controllers = await _start_builtin_controllers(env)
            if crd_objects:
                await _install_crds(env, crd_objects)
            yield env
            nursery.cancel_scope.cancel()


@contextmanager
def _no_folder() -> Iterator[None]:
    yield None


@contextmanager
def threaded_test_env(*, domain: str = DEFAULT_DOMAIN, controllers: bool = True,
                      crds: Sequence[str | Path] = (), **options: Any) -> Iterator[ServedTestEnv]:
    """`open_test_env(https=True, ...)` in a trio run of its own, in a background thread, for the block.

    Blocks until the env serves (its errors, e.g. a bad CRD file, raise
    here) and yields a `ServedTestEnv`; leaving the block stops the env and
    joins the thread (each within THREAD_SECONDS, else RuntimeError). For a
    synchronous context that outlives one trio run: a `scope="session"`
    fixture, whose tests each open `served.http_client()` in their own run.
    """
    handoff: concurrent.futures.Future[tuple[ServedTestEnv, trio.lowlevel.TrioToken, trio.Event]] = \
        concurrent.futures.Future()
    running: concurrent.futures.Future[tuple[trio.lowlevel.TrioToken, trio.CancelScope]] = \
        concurrent.futures.Future()
    failed: list[BaseException] = []

    async def main() -> None:
        with trio.CancelScope() as scope:  # cancelled from outside when the env does not start in time
            running.set_result((trio.lowlevel.current_trio_token(), scope))
            async with open_test_env(domain=domain, controllers=controllers, crds=crds, https=True,
                                     **options) as env:
                assert env.url is not None and env.kubeconfig is not None and env.ca_pem and env.token
                served = ServedTestEnv(env.url, env.kubeconfig, env.ca_pem, env.token, domain, tuple(env.crds))
                stop = trio.Event()
                handoff.set_result((served, trio.lowlevel.current_trio_token(), stop))
                await stop.wait()

    def run() -> None:
        try:
            trio.run(main)
        except BaseException as exc:  # handed to the thread that waits for it: nothing is lost
            if handoff.done():
                failed.append(exc)
            else:
                handoff.set_exception(exc)

    thread = threading.Thread(target=run, name="miniplane-test-env", daemon=True)
    thread.start()
    try:
        served, token, stop = handoff.result(timeout=THREAD_SECONDS)
    except concurrent.futures.TimeoutError:
        _cancel_start(running, thread)
        raise RuntimeError(f"the threaded test env did not start within {THREAD_SECONDS} s") from None
    try:
        yield served
    finally:
        try:
            trio.from_thread.run_sync(stop.set, trio_token=token)
        except trio.RunFinishedError:
            pass  # the env's run ended already (it crashed): its error, in `failed`, is raised below
        thread.join(THREAD_SECONDS)
        if thread.is_alive():
            raise RuntimeError(f"the threaded test env did not stop within {THREAD_SECONDS} s")
        if failed:
            raise failed[0]


def _cancel_start(running: "concurrent.futures.Future[tuple[trio.lowlevel.TrioToken, trio.CancelScope]]",
                  thread: threading.Thread) -> None:
    """Stop an env that did not start in time: cancel its run and join its thread (nothing keeps serving)."""
    try:
        token, scope = running.result(timeout=THREAD_SECONDS)
        trio.from_thread.run_sync(scope.cancel, trio_token=token)
    except (concurrent.futures.TimeoutError, trio.RunFinishedError):
        pass  # the run never began, or has ended already
    thread.join(THREAD_SECONDS)
