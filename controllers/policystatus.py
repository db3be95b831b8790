"""ValidatingAdmissionPolicy status: the type checking of its expressions (kube's `validatingadmissionpolicy-status`).

For each policy whose `metadata.generation` is newer than its `status.observedGeneration`, the controller type
checks its validations' expressions against the types its resource rules name
(`runtime.machinery.celtypecheck`: built-in kinds by their models, custom ones by their CRD's schema, read
from the CRD cache; `params` as its paramKind) and writes `status.observedGeneration` and
`status.typeChecking` through the `status` subresource, with the policy's resourceVersion (a policy changed meanwhile is a Conflict, retried
with fresh state). As kube, a policy is checked once per generation: a CRD that changes later does not check
it again.
"""

from __future__ import annotations

import copy
from typing import Any, Callable

from runtime.client.interface import Client, ObjectKey, object_meta
from runtime.controller.controller import Result
from runtime.controller.informer import Informer
from runtime.controller.manager import Manager
from runtime.machinery.crds import is_custom
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
        if policy is None or object_meta(policy).get("deletionTimestamp"):
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
        """The kind and shape of a resource: a CRD's (its version's schema), else a built-in kind's model."""
        crd = self._crd(group, lambda names: names.get("plural") == resource)
        if crd is not None:
            return _crd_kind(crd, version)
        rt = self.scheme.by_resource(group, version, resource)
        if rt is None or is_custom(rt) or rt.info.model is None:
            return None
        return rt.kind, model_shape(rt.info.model)

    def params_shape(self, policy: dict[str, Any]) -> Shape | None:
        """The shape of the policy's paramKind (None: none, or not known: dyn)."""
        param_kind = (policy.get("spec") or {}).get("paramKind") or {}
        api_version, kind = param_kind.get("apiVersion") or "", param_kind.get("kind") or ""
        group, _, version = api_version.rpartition("/")
        if not kind or not version:
            return None
        crd = self._crd(group, lambda names: names.get("kind") == kind)
        if crd is not None:
            found = _crd_kind(crd, version)
            return found[1] if found is not None else None
        rt = self.scheme.by_api_version_kind(api_version, kind)
        if rt is None or is_custom(rt) or rt.info.model is None:
            return None
        return model_shape(rt.info.model)

    def _crd(self, group: str, names_match: Callable[[dict[str, Any]], bool]) -> dict[str, Any] | None:
        for crd in self.crds.list():
            spec = crd.get("spec") or {}
            if spec.get("group") == group and names_match(spec.get("names") or {}):
                return crd
        return None


def _crd_kind(crd: dict[str, Any], version: str) -> tuple[str, Shape] | None:
    """The kind and shape of a CRD's `version` (its schema's), or None when it has no such version."""
    spec = crd.get("spec") or {}
    for served in spec.get("versions") or ():
        if served.get("name") == version:
            schema = (served.get("schema") or {}).get("openAPIV3Schema")
            return (spec.get("names") or {}).get("kind") or "", schema_shape(schema)
    return None


def setup(manager: Manager) -> PolicyStatusController:
    """Add the ValidatingAdmissionPolicy status controller to `manager`."""
    rt = manager.scheme.by_kind("ValidatingAdmissionPolicy")
    crds = manager.informers.informer(manager.scheme.by_kind("CustomResourceDefinition"))
    controller = PolicyStatusController(manager.client, manager.informers.informer(rt), crds, manager.scheme)
    manager.controller("validatingadmissionpolicy-status").for_(rt).complete(controller.reconcile)
    return controller
