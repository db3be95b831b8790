"""The Tenant operator of examples/tenants.py written for kopf, to compare the two (and to run kopf on miniplane).

Same kind (manifests/tenants.example.com.yaml), same identity
(manifests/tenants-controller-rbac.yaml), same outcome: a namespace
`tenant-<name>` adopted by the Tenant (`kopf.adopt`), in it the RoleBinding
`tenant-admins` (ClusterRole admin) and the ServiceAccount `tenant-robot`;
kopf's finalizer, named `example.com/tenant-namespace`, holds a deleted
Tenant until its namespace is gone (the delete handler retries with
`kopf.TemporaryError`); the `Ready` condition is written through
`patch.status`, its lastTransitionTime kept by hand; events by `kopf.info`.
The objects are made with the official `kubernetes` client, as kopf's
documentation does.

Unlike examples/tenants.py it does not watch what it made: an object edited
or deleted by hand comes back only at the Tenant's next change or the
operator's restart (kopf would need an event handler per child kind).

Against a server (under `--api-domain k8s.io`)::

    kubectl apply -f manifests/tenants.example.com.yaml -f manifests/tenants-controller-rbac.yaml
    kopf run --standalone --all-namespaces examples/tenants_kopf.py
"""

from __future__ import annotations

import datetime
from typing import Any, Callable

import kopf
import kubernetes
from kubernetes.client.rest import ApiException

__all__ = ["FINALIZER", "ADMINS_BINDING", "ROBOT", "WAIT_SECONDS", "namespace_of", "configure", "provision",
           "release"]

FINALIZER = "example.com/tenant-namespace"
ADMINS_BINDING, ROBOT = "tenant-admins", "tenant-robot"
WAIT_SECONDS = 5.0
RBAC = "rbac.authorization.k8s.io"


def namespace_of(tenant: str) -> str:
    return f"tenant-{tenant}"


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
    settings.persistence.finalizer = FINALIZER
    settings.scanning.disabled = True  # the Tenant kind is known at start: no need to list CRDs (not granted)
    kubernetes.config.load_kube_config()


def set_ready(body: kopf.Body, patch: kopf.Patch, ready: bool, reason: str, message: str) -> None:
    """Put the Ready condition in `patch.status`; its lastTransitionTime moves only when its status does."""
    conditions = list(body.status.get("conditions") or [])
    current = next((c for c in conditions if c["type"] == "Ready"), None)
    transition = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    if current is not None and current["status"] == str(ready):
        transition = current["lastTransitionTime"]
    elif ready:
        kopf.info(body, reason="Ready", message=message)
    condition = {"type": "Ready", "status": str(ready), "reason": reason, "message": message,
                 "lastTransitionTime": transition, "observedGeneration": body.metadata["generation"]}
    patch.status["conditions"] = [c for c in conditions if c["type"] != "Ready"] + [condition]


def create_or_replace(create: Callable[..., Any], replace: Callable[..., Any], *args: Any, body: dict) -> bool:
    """Create `body`, or replace the object of its name; return whether it was created."""
    try:
        create(*args, body)
        return True
    except ApiException as exc:
        if exc.status != 409:
            raise
    replace(body["metadata"]["name"], *args, body)
    return False


@kopf.on.resume("example.com", "v1", "tenants")
@kopf.on.create("example.com", "v1", "tenants")
@kopf.on.update("example.com", "v1", "tenants")
def provision(name: str, body: kopf.Body, spec: kopf.Spec, patch: kopf.Patch, **_: Any) -> None:
    core, rbac = kubernetes.client.CoreV1Api(), kubernetes.client.RbacAuthorizationV1Api()
    namespace = namespace_of(name)
    try:
        current = core.read_namespace(namespace)
    except ApiException as exc:
        if exc.status != 404:
            raise
        current = None
    if current is not None and current.metadata.deletion_timestamp:
        set_ready(body, patch, False, "NamespaceTerminating", f"namespace {namespace} is being deleted")
        raise kopf.TemporaryError(f"namespace {namespace} is being deleted", delay=WAIT_SECONDS)
    wanted = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
    kopf.adopt(wanted, owner=body)
    if create_or_replace(core.create_namespace, core.replace_namespace, body=wanted):
        kopf.info(body, reason="NamespaceCreated", message=f"created namespace {namespace}")
    binding = {"apiVersion": f"{RBAC}/v1", "kind": "RoleBinding",
               "metadata": {"name": ADMINS_BINDING, "namespace": namespace},
               "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "admin"},
               "subjects": [{"apiGroup": RBAC, "kind": "User", "name": admin} for admin in spec.get("admins", [])]}
    robot = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": ROBOT, "namespace": namespace}}
    kopf.adopt([binding, robot], owner=body)
    create_or_replace(rbac.create_namespaced_role_binding, rbac.replace_namespaced_role_binding, namespace,
                      body=binding)
    create_or_replace(core.create_namespaced_service_account, core.replace_namespaced_service_account, namespace,
                      body=robot)
    set_ready(body, patch, True, "Provisioned", f"namespace {namespace} with its admins and robot is in place")


@kopf.on.delete("example.com", "v1", "tenants")
def release(name: str, body: kopf.Body, patch: kopf.Patch, **_: Any) -> None:
    core, namespace = kubernetes.client.CoreV1Api(), namespace_of(name)
    try:
        current = core.read_namespace(namespace)
    except ApiException as exc:
        if exc.status == 404:
            return  # gone: kopf removes its finalizer
        raise
    if not current.metadata.deletion_timestamp:
        core.delete_namespace(namespace)
        kopf.info(body, reason="NamespaceDeleting", message=f"deleting namespace {namespace}")
    set_ready(body, patch, False, "Deleting", f"waiting for namespace {namespace} to be gone")
    raise kopf.TemporaryError(f"waiting for namespace {namespace} to be gone", delay=WAIT_SECONDS)
