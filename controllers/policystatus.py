"""ValidatingAdmissionPolicy status: the type checking of its expressions (kube's `validatingadmissionpolicy-status`).

For each policy whose `metadata.generation` is newer than its `status.observedGeneration`, the controller type
checks its validations' expressions against the types its resource rules name
(`runtime.machinery.celtypecheck`: built-in kinds by their models, custom ones by their CRD's schema, read
from the CRD cache; `params` as its paramKind) and writes `status.observedGeneration` and
`status.typeChecking` through the `status` subresource, with the policy's resourceVersion (a policy
changed meanwhile is a Conflict, retried with fresh state). As kube, a policy is checked once per generation: a CRD that changes later does not check
it again.
"""

from __future__ import annotations

import copy
from typing import Any, Callable

from runtime.client.interface import Client, ObjectKey, object_meta
from runtime.controller.controller import Result
from runtime.controller.informer import Informer
from runtime.controller.manager import Manager
from runtime.machinery.crds import is_custom, kinds_of
from runtime.machinery.kindinfo import KindInfo
from runtime.machinery.scheme import Scheme
from runtime.machinery.celtypecheck import Shape, expression_warnings, model_shape, schema_shape

__all__ = ["PolicyStatusController", "setup"]


class PolicyStatusController:
    """The reconciler of ValidatingAdmissionPolicies' status, reading the policy and CRD caches."""

    def __init__(self, client: Client, policies: Informer, crds: Informer, scheme: Scheme) -> None:
        self.client = client
        self.policies = policies
        self.crds = crds
        self.scheme = scheme

    async def reconcile(self, key: ObjectKey) -> Result | None:
        policy = self.policies.get(key)
        if policy is None:
            return None
        generation = object_meta(policy).get("generation") or 0
        status = policy.get("status") or {}
        if generation <= (status.get("observedGeneration") or 0):
            return None
        warnings = expression_warnings(policy, self.resolve, self.params_shape(policy))
        updated = copy.deepcopy(policy)
        updated["status"] = {**status, "observedGeneration": generation,
                             "typeChecking": {"expressionWarnings": warnings} if warnings else {}}
        await self.client.update(updated, subresource="status")
        return None

    def resolve(self, group: str, version: str, resource: str) -> tuple[str, Shape] | None:
        """The kind and shape of a resource: a CRD's (its served version's schema), else a built-in kind's model."""
        custom = self._custom(lambda info: (info.group, info.version, info.plural) == (group, version, resource))
        if custom is not None:
            return custom
        rt = self.scheme.by_resource(group, version, resource)
        return (rt.kind, model_shape(rt.info.model)) if rt is not None and not is_custom(rt) else None

    def params_shape(self, policy: dict[str, Any]) -> Shape | None:
        """The shape of the policy's paramKind (None: none, or not known: dyn)."""
        param_kind = (policy.get("spec") or {}).get("paramKind") or {}
        api_version, kind = param_kind.get("apiVersion") or "", param_kind.get("kind") or ""
        group, _, version = api_version.rpartition("/")
        custom = self._custom(lambda info: (info.group, info.version, info.kind) == (group, version, kind))
        if custom is not None:
            return custom[1]
        rt = self.scheme.by_api_version_kind(api_version, kind)
        return model_shape(rt.info.model) if rt is not None and not is_custom(rt) else None

    def _custom(self, matches: Callable[[KindInfo], bool]) -> tuple[str, Shape | None] | None:
        """The kind and schema shape of the first CRD's served version that `matches`."""
        for crd in self.crds.list():
            for info, version in kinds_of(crd):
                if matches(info):
                    return info.kind, schema_shape((version.get("schema") or {}).get("openAPIV3Schema"))
        return None


def setup(manager: Manager) -> PolicyStatusController:
    """Add the ValidatingAdmissionPolicy status controller to `manager`."""
    rt = manager.scheme.by_kind("ValidatingAdmissionPolicy")
    crds = manager.informers.informer(manager.scheme.by_kind("CustomResourceDefinition"))
    controller = PolicyStatusController(manager.client, manager.informers.informer(rt), crds, manager.scheme)
    manager.controller("validatingadmissionpolicy-status").for_(rt).complete(controller.reconcile)
    return controller
