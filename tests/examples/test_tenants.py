"""The Tenant operator (`examples/tenants.py`, CRD `manifests/tenants.example.com.yaml`), in process.

Run as the least-privilege ServiceAccount of manifests/tenants-controller-rbac.yaml:
a Tenant gets its namespace, the admins' RoleBinding and the robot
ServiceAccount, all owned by it (controller references); it reports Ready
with the spec's generation (lastTransitionTime kept while the status
stays); it records events; deleting it deletes the namespace and the
finalizer holds the Tenant until the namespace is gone. Also: Ready is
False while a namespace deleted by hand terminates and True once it is made
again; a reconcile that changes nothing writes nothing; the garbage
collector deletes what a Tenant owns once it is gone; without the rule that
lets it bind ClusterRole admin, the controller is Forbidden.

`check_tenant_lifecycle(client, name)` takes any `runtime.client` client
(in process here, over HTTP in tests/e2e/test_tenants_e2e.py, where kopf's
version passes it too).
"""

from __future__ import annotations

import logging
from typing import Any, AsyncIterator, Callable

import pytest
import trio
import yaml

import examples.tenants as example
from runtime.client.interface import MERGE_PATCH, Client
from runtime.controller.testing import TestEnv, open_test_env, wait_for_object
from runtime.machinery import errors
from runtime.models import Condition, ObjectMeta
from runtime.server.rbac.user import UserInfo
from tests.support.crds import REPO, load_manifest

__all__ = ["CONTROLLER", "DEADLINE", "HOLD", "install_crd", "rbac_objects", "wait_tenant", "ready_condition",
           "wait_events", "check_tenant_lifecycle"]

#: How long the controllers may take to converge on a loaded machine (mock time in process).
DEADLINE = 60
#: A finalizer the test puts on an object in a tenant's namespace, to hold the namespace while it terminates.
HOLD = "example.com/test-hold"
#: The identity manifests/tenants-controller-rbac.yaml grants, as the server authenticates its token.
CONTROLLER = UserInfo("system:serviceaccount:tenants-system:tenant-controller", uid="tenant-controller",
                      groups=("system:serviceaccounts", "system:serviceaccounts:tenants-system",
                              "system:authenticated"))


async def install_crd(client: Client) -> None:
    """Create the Tenant CRD (under the client's API domain) and wait until it is Established."""
    crd = load_manifest("manifests/tenants.example.com.yaml")
    crd["apiVersion"] = f"apiextensions.{client.scheme.domain}/v1"
    await client.create(crd)
    with trio.fail_after(DEADLINE):
        await wait_for_object(client, client.scheme.by_kind("CustomResourceDefinition"), "tenants.example.com",
                              lambda o: o and any(c["type"] == "Established" and c["status"] == "True"
                                                  for c in (o.get("status") or {}).get("conditions", [])))


def rbac_objects(*, drop_rule: Callable[[dict[str, Any]], bool] = lambda rule: False) -> list[dict[str, Any]]:
    """The documents of manifests/tenants-controller-rbac.yaml, the ClusterRole without the rules `drop_rule` picks."""
    docs = list(yaml.safe_load_all((REPO / "manifests" / "tenants-controller-rbac.yaml").read_text()))
    for doc in docs:
        if doc["kind"] == "ClusterRole":
            doc["rules"] = [rule for rule in doc["rules"] if not drop_rule(rule)]
    return docs


def ready_condition(tenant: example.Tenant | None) -> Condition | None:
    return next((c for c in tenant.status.conditions if c.type == "Ready"), None) if tenant else None


async def wait_tenant(client: Client, name: str, condition: Callable[[example.Tenant | None], Any]
                      ) -> example.Tenant | None:
    """The Tenant once `condition(tenant)` holds (None while it does not exist); DEADLINE bounds it."""
    def check(obj: dict | None) -> bool:
        return bool(condition(example.Tenant.model_validate(obj) if obj is not None else None))
    with trio.fail_after(DEADLINE):
        found = await wait_for_object(client, example.TENANTS, name, check)
    return example.Tenant.model_validate(found) if found is not None else None


def is_ready(status: str, reason: str = "") -> Callable[[example.Tenant | None], bool]:
    def check(tenant: example.Tenant | None) -> bool:
        found = ready_condition(tenant)
        return found is not None and found.status == status and (not reason or found.reason == reason)
    return check


async def wait_events(client: Client, name: str, reasons: set[str]) -> set[str]:
    """Return the reasons of the events about object `name` once they include `reasons` (a list, then a watch)."""
    events, selector = client.scheme.by_kind("Event"), f"involvedObject.name={name}"
    with trio.fail_after(DEADLINE):
        page = await client.list(events, field_selector=selector)
        seen = {e["reason"] for e in page.items}
        if reasons <= seen:
            return seen
        async with client.watch(events, field_selector=selector, resource_version=page.resource_version) as stream:
            async for event in stream:
                if event.type in ("ADDED", "MODIFIED"):
                    seen.add(event.object["reason"])
                    if reasons <= seen:
                        return seen
    raise AssertionError(f"the watch of events ended with {seen}")


def owned_by(obj: dict[str, Any], tenant: example.Tenant) -> bool:
    """Whether `tenant` is the controller of `obj`, with blockOwnerDeletion (what the garbage collector reads)."""
    refs = obj["metadata"].get("ownerReferences") or []
    return [(r["kind"], r["name"], r["uid"], r.get("controller"), r.get("blockOwnerDeletion")) for r in refs] == \
        [("Tenant", tenant.metadata.name, tenant.metadata.uid, True, True)]


async def hold_namespace(client: Client, namespace: str) -> dict[str, Any]:
    """A ConfigMap in `namespace` carrying HOLD: the namespace cannot finish deleting while it does."""
    return await client.create({"apiVersion": "v1", "kind": "ConfigMap",
                                "metadata": {"name": "held", "namespace": namespace, "finalizers": [HOLD]}})


async def release_namespace(client: Client, namespace: str) -> None:
    await client.patch(client.scheme.by_kind("ConfigMap"), "held", {"metadata": {"finalizers": None}},
                       patch_type=MERGE_PATCH, namespace=namespace)


async def check_tenant_lifecycle(client: Client, name: str, *, settle: float = 2 * example.WAIT_SECONDS) -> None:
    """A Tenant's whole life, as any client sees it, with a Tenant controller (either example) running.

    `settle`: how long a deleted Tenant is watched staying while its namespace is held (trio's clock: give
    real seconds out of process, at least a requeue's `WAIT_SECONDS`).
    """
    namespaces, bindings = client.scheme.by_kind("Namespace"), client.scheme.by_kind("RoleBinding")
    accounts, rbac = client.scheme.by_kind("ServiceAccount"), client.scheme.rbac_group
    namespace = example.namespace_of(name)
    await client.create(example.Tenant(metadata=ObjectMeta(name=name),
                                       spec=example.TenantSpec(admins=["alice"], description="the web shop")))

    # Ready, for generation 1; what it owns is in place.
    tenant = await wait_tenant(client, name, is_ready("True"))
    first = ready_condition(tenant)
    assert (first.reason, first.observed_generation) == ("Provisioned", 1)
    assert example.FINALIZER in tenant.metadata.finalizers
    made = {"namespace": await client.get(namespaces, namespace),
            "binding": await client.get(bindings, example.ADMINS_BINDING, namespace=namespace),
            "robot": await client.get(accounts, example.ROBOT, namespace=namespace)}
    assert all(owned_by(obj, tenant) for obj in made.values()), made
    assert made["binding"]["roleRef"] == {"apiGroup": rbac, "kind": "ClusterRole", "name": "admin"}
    assert made["binding"]["subjects"] == [{"apiGroup": rbac, "kind": "User", "name": "alice"}]
    assert {"NamespaceCreated", "Ready"} <= await wait_events(client, name, {"NamespaceCreated", "Ready"})

    # A spec change: the condition follows the generation; its status stays True, so its lastTransitionTime stays.
    await client.patch(example.TENANTS, name, {"spec": {"admins": ["alice", "bob"]}}, patch_type=MERGE_PATCH)
    tenant = await wait_tenant(client, name, lambda t: ready_condition(t).observed_generation == 2)
    assert ready_condition(tenant).status == "True"
    assert ready_condition(tenant).last_transition_time == first.last_transition_time
    with trio.fail_after(DEADLINE):
        await wait_for_object(client, bindings, example.ADMINS_BINDING, lambda b: b and len(b["subjects"]) == 2,
                              namespace=namespace)

    # Deleted: the namespace goes first; while it terminates (held here), the finalizer keeps the Tenant, not Ready.
    await hold_namespace(client, namespace)
    await client.delete(example.TENANTS, name)
    waiting = await wait_tenant(client, name, is_ready("False", "Deleting"))
    assert waiting.metadata.deletion_timestamp and example.FINALIZER in waiting.metadata.finalizers
    assert ready_condition(waiting).message == f"waiting for namespace {namespace} to be gone"
    assert "NamespaceDeleting" in await wait_events(client, name, {"NamespaceDeleting"})
    await trio.sleep(settle)  # past a requeue and the namespace's own updates: the Tenant is still held
    held = await client.get(example.Tenant, name)
    assert example.FINALIZER in held.metadata.finalizers and is_ready("False", "Deleting")(held)
    assert (await client.get(namespaces, namespace))["metadata"].get("deletionTimestamp")
    await release_namespace(client, namespace)
    with trio.fail_after(DEADLINE):
        await wait_for_object(client, namespaces, namespace, lambda n: n is None)
    await wait_tenant(client, name, lambda t: t is None)


# ---- in process ----------------------------------------------------------------------------------

@pytest.fixture
async def env(autojump_clock) -> AsyncIterator[TestEnv]:
    """A k8s.io server (built-in controllers on) with the Tenant CRD and the controller's RBAC applied."""
    async with open_test_env(domain="k8s.io") as env:
        await install_crd(env.client)
        yield env


async def start_tenants(env: TestEnv, rbac: list[dict[str, Any]]):
    """Apply `rbac`, then start the Tenant controller as CONTROLLER; return its manager."""
    for doc in rbac:
        await env.client.create(doc)
    manager = env.manager(user=CONTROLLER)
    example.setup(manager)
    return await env.start(manager)


async def test_a_tenant_lives_and_goes_under_the_least_privilege_identity(env):
    await start_tenants(env, rbac_objects())
    await check_tenant_lifecycle(env.client, "shop")


async def test_ready_is_false_while_a_namespace_deleted_by_hand_terminates_and_true_once_made_again(env):
    await start_tenants(env, rbac_objects())
    namespaces, namespace = env.scheme.by_kind("Namespace"), example.namespace_of("blog")
    await env.client.create(example.Tenant(metadata=ObjectMeta(name="blog")))
    first = await wait_tenant(env.client, "blog", is_ready("True"))
    old_uid = (await env.client.get(namespaces, namespace))["metadata"]["uid"]

    await hold_namespace(env.client, namespace)
    await env.client.delete(namespaces, namespace)
    waiting = await wait_tenant(env.client, "blog", is_ready("False", "NamespaceTerminating"))
    assert ready_condition(waiting).last_transition_time >= ready_condition(first).last_transition_time
    await release_namespace(env.client, namespace)
    again = await wait_tenant(env.client, "blog", is_ready("True"))
    assert ready_condition(again).last_transition_time >= ready_condition(waiting).last_transition_time
    made = await env.client.get(namespaces, namespace)
    assert made["metadata"]["uid"] != old_uid and owned_by(made, again)


def busy(queue) -> bool:
    return bool(queue.depth or queue.processing)


async def test_a_reconcile_that_changes_nothing_writes_nothing(env):
    manager = await start_tenants(env, rbac_objects())
    await env.client.create(example.Tenant(metadata=ObjectMeta(name="wiki")))
    ready = await wait_tenant(env.client, "wiki", is_ready("True"))
    controller = manager.controllers["tenants"]
    before = controller.statistics().reconciles

    # An annotation changes the Tenant but not its spec: a reconcile runs and finds everything in place.
    touched = await env.client.patch(example.TENANTS, "wiki", {"metadata": {"annotations": {"touched": "yes"}}},
                                     patch_type=MERGE_PATCH)
    with trio.fail_after(DEADLINE):
        while controller.statistics().reconciles == before or busy(controller.statistics().queue):
            await trio.sleep(0.1)  # trio's clock: autojump_clock makes it instant
    now = await env.client.get(example.Tenant, "wiki")
    assert now.metadata.resource_version == touched["metadata"]["resourceVersion"]  # no status write
    assert ready_condition(now) == ready_condition(ready)


async def test_what_a_tenant_owns_is_collected_once_it_is_gone(env):
    manager = env.manager(user=CONTROLLER)
    for doc in rbac_objects():
        await env.client.create(doc)
    example.setup(manager)
    namespaces, namespace = env.scheme.by_kind("Namespace"), example.namespace_of("lab")
    with trio.CancelScope() as scope:
        async with trio.open_nursery() as nursery:
            await nursery.start(manager.run)
            await env.client.create(example.Tenant(metadata=ObjectMeta(name="lab")))
            await wait_tenant(env.client, "lab", is_ready("True"))
            scope.cancel()  # the controller stops: its finalizer is not released by it

    # The finalizer removed by hand, the Tenant goes at once; the garbage collector deletes its namespace.
    await env.client.patch(example.TENANTS, "lab", {"metadata": {"finalizers": None}}, patch_type=MERGE_PATCH)
    await env.client.delete(example.TENANTS, "lab")
    with trio.fail_after(DEADLINE):
        await wait_for_object(env.client, namespaces, namespace, lambda n: n is None)
    for kind, obj in (("RoleBinding", example.ADMINS_BINDING), ("ServiceAccount", example.ROBOT)):
        with pytest.raises(errors.NotFound):
            await env.client.get(env.scheme.by_kind(kind), obj, namespace=namespace)


async def test_without_the_rule_to_bind_admin_the_controller_is_forbidden(env, caplog):
    caplog.set_level(logging.ERROR, logger="runtime.controller.controller")
    await start_tenants(env, rbac_objects(drop_rule=lambda rule: "bind" in rule["verbs"]))
    await env.client.create(example.Tenant(metadata=ObjectMeta(name="ops")))

    def forbidden() -> list[errors.Forbidden]:
        return [r.exc_info[1] for r in caplog.records if r.exc_info and isinstance(r.exc_info[1], errors.Forbidden)]

    with trio.fail_after(DEADLINE):
        while not forbidden():
            await trio.sleep(0.1)  # trio's clock: autojump_clock makes it instant
    refused = forbidden()[0]
    print("the controller was refused:", str(refused)[:200], "...")
    assert 'rolebindings.rbac.authorization.k8s.io "tenant-admins" is forbidden' in str(refused)
    namespace = example.namespace_of("ops")
    await env.client.get(env.scheme.by_kind("Namespace"), namespace)  # made: it may create namespaces
    with pytest.raises(errors.NotFound):
        await env.client.get(env.scheme.by_kind("RoleBinding"), example.ADMINS_BINDING, namespace=namespace)
    assert ready_condition(await env.client.get(example.Tenant, "ops")) is None
