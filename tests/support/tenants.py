"""The Tenant operator's checks, shared by its tests in process, over HTTPS and out of process.

Contract: `check_tenant_lifecycle(client, name)` takes any `runtime.client`
client (in process, over HTTPS, over HTTP to `miniplane serve`; kopf's version
passes it too) and checks a Tenant's whole life: owned namespace, RoleBinding
and ServiceAccount, Ready with the spec's generation, events, and a deletion
held by the finalizer until the namespace is gone. `install_crd` and
`rbac_objects` give the CRD and the least-privilege RBAC of manifests/.
"""

from __future__ import annotations

from typing import Any, Callable

import trio
import yaml

import examples.tenants as example
from runtime.client.interface import MERGE_PATCH, Client
from runtime.controller.testing import wait_for_object
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
