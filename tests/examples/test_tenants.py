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

`check_tenant_lifecycle(client, name)` (tests/support/tenants.py) takes any
`runtime.client` client: in process here, over HTTP in
tests/e2e/test_tenants_e2e.py, where kopf's version passes it too.
"""

from __future__ import annotations

import logging
from typing import Any, AsyncIterator

import pytest
import trio

import examples.tenants as example
from runtime.client.interface import MERGE_PATCH
from runtime.controller.testing import TestEnv, open_test_env, wait_for_object
from runtime.machinery import errors
from runtime.models import ObjectMeta
from tests.support.tenants import (CONTROLLER, DEADLINE, check_tenant_lifecycle, hold_namespace, install_crd,
                                   is_ready, owned_by, rbac_objects, ready_condition, release_namespace, wait_tenant)

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
