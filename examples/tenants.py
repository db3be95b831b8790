"""Example operator: a `Tenant` gets a namespace, its admins a RoleBinding there, and a robot ServiceAccount.

The kind is `tenants.example.com` (CRD: manifests/tenants.example.com.yaml),
cluster-scoped, worked on through typed models: the Tenant's bound to the
kind (`runtime.client.typed`), the built-in kinds' from `runtime.models`.
For each Tenant the controller keeps:

- a namespace `tenant-<name>`, owned by the Tenant (`set_controller_reference`);
- in it a RoleBinding `tenant-admins` of `spec.admins` to ClusterRole
  `admin`, and a ServiceAccount `tenant-robot`, both owned by the Tenant and
  brought back when changed or deleted (`create_or_update`);
- a finalizer `example.com/tenant-namespace` (`handle_finalizer`): a deleted
  Tenant deletes its namespace and stays until the namespace is gone (the
  namespace controller empties it first): the cleanup returns
  `Result(requeue_after=WAIT_SECONDS)` until then, and runs whenever the
  namespace changes; then the finalizer goes and so does the Tenant;
- a `Ready` condition (`set_status_condition`: its lastTransitionTime moves
  only when its status does; its observedGeneration is the spec's
  generation): True once everything is in place, False while the
  namespace is being deleted (the Tenant's, or one deleted by hand, which is
  then made again);
- events about the Tenant: `NamespaceCreated`, `Ready`, `NamespaceDeleting`.

It needs only the rules of manifests/tenants-controller-rbac.yaml. Against
a server (under `--api-domain k8s.io`)::

    kubectl apply -f manifests/tenants.example.com.yaml -f manifests/tenants-controller-rbac.yaml
    miniplane controllers --kubeconfig tenant-controller.kubeconfig --module examples.tenants --builtin false

or in a test, on `runtime.controller.testing.open_test_env()` (tests/examples/test_tenants.py).
The same operator written for kopf is examples/tenants_kopf.py.
"""

from __future__ import annotations

from runtime.client.typed import CustomResource, KubeModel, bind_kind
from runtime.controller import (
    Manager, ObjectKey, OperationResult, Result, create_or_update, ensure_finalizer, handle_finalizer,
    ignore_not_found, is_status_condition_true, is_terminating, set_controller_reference, set_status_condition,
)
from runtime.models import Condition, Namespace, ObjectMeta, RoleBinding, RoleRef, ServiceAccount, Subject

__all__ = ["TenantSpec", "TenantStatus", "Tenant", "TENANTS", "FIELD_MANAGER", "FINALIZER", "ADMINS_BINDING",
           "ROBOT", "WAIT_SECONDS", "namespace_of", "setup"]

FIELD_MANAGER = "tenant-controller"
FINALIZER = "example.com/tenant-namespace"
ADMINS_BINDING, ROBOT = "tenant-admins", "tenant-robot"
#: How often a Tenant waiting for its namespace to go looks again (the namespace's own events wake it sooner).
WAIT_SECONDS = 5.0


class TenantSpec(KubeModel):
    admins: list[str] = []
    description: str | None = None


class TenantStatus(KubeModel):
    conditions: list[Condition] = []


class Tenant(CustomResource):
    spec: TenantSpec = TenantSpec()
    status: TenantStatus = TenantStatus()


TENANTS = bind_kind(Tenant, "example.com/v1", "tenants", namespaced=False)


def namespace_of(tenant: str) -> str:
    return f"tenant-{tenant}"


def setup(manager: Manager) -> None:
    """Add the Tenant controller to `manager` (the `miniplane controllers --module` convention)."""
    client, scheme, rbac = manager.client, manager.scheme, manager.scheme.rbac_group
    tenants = manager.informers.typed(Tenant)
    recorder = manager.event_recorder(FIELD_MANAGER)

    async def report(tenant: Tenant, ready: bool, reason: str, message: str) -> None:
        was_ready = is_status_condition_true(tenant.status.conditions, "Ready")
        if set_status_condition(tenant.status.conditions, Condition(
                type="Ready", status=str(ready), reason=reason, message=message,
                observed_generation=tenant.metadata.generation)):
            await client.update(tenant, subresource="status")  # conditional on the version read: else retried
            if ready and not was_ready:
                recorder.event(tenant, "Normal", "Ready", message)

    async def finalize(tenant: Tenant) -> Result | None:
        """The finalizer's cleanup: delete the namespace; not done (a Result: come back) until it is gone."""
        name = namespace_of(tenant.metadata.name)
        with ignore_not_found():  # a namespace gone skips the block: done, the finalizer goes
            namespace = await client.get(Namespace, name)
            if not is_terminating(namespace):
                await client.delete(Namespace, name)
                recorder.event(tenant, "Normal", "NamespaceDeleting", f"deleting namespace {name}")
            await report(tenant, False, "Deleting", f"waiting for namespace {name} to be gone")
            return Result(requeue_after=WAIT_SECONDS)
        return None

    async def reconcile(key: ObjectKey) -> Result | None:
        tenant, name = tenants.get(key), namespace_of(key.name)
        if tenant is None or is_terminating(tenant):  # gone, or deleted: cleanup, then release the finalizer
            waiting = await handle_finalizer(client, tenant, FINALIZER, finalize) if tenant else None
            return waiting if isinstance(waiting, Result) else None
        tenant = await ensure_finalizer(client, tenant, FINALIZER)

        def owned(obj: Namespace | ServiceAccount) -> None:
            set_controller_reference(tenant, obj, scheme)

        def bind_admins(binding: RoleBinding) -> None:
            binding.role_ref = RoleRef(api_group=rbac, kind="ClusterRole", name="admin")
            binding.subjects = [Subject(api_group=rbac, kind="User", name=admin) for admin in tenant.spec.admins]
            owned(binding)

        namespace = Namespace(metadata=ObjectMeta(name=name))
        if await create_or_update(client, namespace, owned) is OperationResult.CREATED:
            recorder.event(tenant, "Normal", "NamespaceCreated", f"created namespace {name}")
        if is_terminating(namespace):  # deleted by hand: made again once gone
            await report(tenant, False, "NamespaceTerminating", f"namespace {name} is being deleted")
            return Result(requeue_after=WAIT_SECONDS)
        await create_or_update(client, RoleBinding(metadata=ObjectMeta(name=ADMINS_BINDING, namespace=name)),
                               bind_admins)
        await create_or_update(client, ServiceAccount(metadata=ObjectMeta(name=ROBOT, namespace=name)), owned)
        await report(tenant, True, "Provisioned", f"namespace {name} with its admins and robot is in place")
        return None

    manager.controller("tenants").for_(Tenant).owns(Namespace).owns(RoleBinding).owns(ServiceAccount) \
        .complete(reconcile)
