"""A registry stand-in for the policy unit tests: objects in a dict served as the watch cache, an authorizer
that records what it is asked, kube's metrics on a private registry."""

from __future__ import annotations

from typing import Any, Callable

from runtime.machinery.scheme import ResourceType, Scheme
from runtime.machinery.storedobject import StoredObject
from runtime.server.admission.metrics import AdmissionMetrics
from runtime.server.kinds import AdmissionRequest
from runtime.server.rbac import Decision
from runtime.server.rbac.attributes import Attributes
from runtime.server.rbac.user import UserInfo

SCHEME = Scheme("k8s.io")
AR = "admissionregistration.k8s.io/v1"
DEPLOYMENTS = {"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"],
               "resources": ["deployments"]}


class FakeCache:
    def __init__(self, objects: dict[str, StoredObject]) -> None:
        self.objects = objects

    def get(self, key: str) -> StoredObject | None:
        return self.objects.get(key)

    def list(self, prefix: str = "") -> list[StoredObject]:
        return [o for k, o in sorted(self.objects.items()) if k.startswith(prefix)]


class FakeContext:
    """What the policy steps read: scheme, cache, store reads, authorizer, metrics."""

    def __init__(self, *objects: dict[str, Any], allow: Callable[[Attributes], bool] = lambda a: False) -> None:
        self.scheme = SCHEME
        self.store = None
        self.cached: dict[str, StoredObject] = {}
        self.stored_only: dict[str, StoredObject] = {}
        self.asked: list[Attributes] = []
        self.allow = allow
        self.admission_metrics = AdmissionMetrics()
        self.revision = 0
        for obj in objects:
            self.add(obj)

    def key_of(self, obj: dict[str, Any]) -> tuple[ResourceType, str]:
        rt = SCHEME.by_api_version_kind(obj["apiVersion"], obj["kind"])
        assert rt is not None, obj["kind"]
        meta = obj["metadata"]
        return rt, rt.storage_key(meta.get("namespace"), meta["name"])

    def add(self, obj: dict[str, Any], *, cached: bool = True) -> dict[str, Any]:
        self.revision += 1
        obj["metadata"].setdefault("uid", f"uid-{obj['metadata']['name']}")
        obj["metadata"]["resourceVersion"] = str(self.revision)
        _, key = self.key_of(obj)
        (self.cached if cached else self.stored_only)[key] = StoredObject(key, obj, self.revision)
        return obj

    def kind_cache(self, rt: ResourceType) -> FakeCache:
        return FakeCache({k: v for k, v in self.cached.items() if k.startswith(rt.storage_prefix)})

    async def read_current(self, rt: ResourceType, key: str, name: str = "") -> StoredObject | None:
        return self.cached.get(key) or self.stored_only.get(key)

    def decide(self, attrs: Attributes) -> Decision:
        self.asked.append(attrs)
        allowed = self.allow(attrs)
        return Decision(allowed, "allowed by test" if allowed else "")


def namespace(name: str, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": dict(labels)}}


def deployment(name: str = "web", replicas: int = 1, namespace: str = "default", **labels: str) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": namespace, "labels": {"app": name, **labels}},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}


def vap(name: str = "p", **spec: Any) -> dict[str, Any]:
    body = {"failurePolicy": "Fail", "matchConstraints": {"resourceRules": [dict(DEPLOYMENTS)],
                                                          "matchPolicy": "Equivalent"}, **spec}
    return {"apiVersion": AR, "kind": "ValidatingAdmissionPolicy", "metadata": {"name": name}, "spec": body}


def vapb(name: str = "b", policy: str = "p", **spec: Any) -> dict[str, Any]:
    body = {"policyName": policy, "validationActions": ["Deny"], **spec}
    return {"apiVersion": AR, "kind": "ValidatingAdmissionPolicyBinding", "metadata": {"name": name}, "spec": body}


def request(obj: dict[str, Any] | None, *, operation: str = "create", old: dict[str, Any] | None = None,
            user: UserInfo = UserInfo("alice", groups=("dev",))) -> AdmissionRequest:
    source = obj if obj is not None else old
    assert source is not None
    rt = SCHEME.by_api_version_kind(source["apiVersion"], source["kind"])
    assert rt is not None
    return AdmissionRequest(user, rt, operation, obj, old, False)
