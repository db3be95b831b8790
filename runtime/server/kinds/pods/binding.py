"""A Pod's `binding` subresource: POST a core `v1` Binding to assign the Pod to a node, as a scheduler does
(Kubernetes' BindingREST, `pkg/registry/core/pod/storage`).

- The Binding's name is the Pod's (400 `name in URL does not match name in
  Binding object`); `target.kind` is `Node` or empty, `target.name` is
  required (ValidatePodBinding; 422 here, see below).
- The Pod (by the Binding's uid and resourceVersion when given, 409 when
  they differ) gets `spec.nodeName`, the Binding's annotations, and the
  condition PodScheduled True; a Pod being deleted, already assigned, or
  still gated is refused with a Conflict on `pods/binding` in Kubernetes'
  words (`pod X is already assigned to node "Y"`).
- The answer is a success Status (201).

Departure: Kubernetes answers an invalid Binding with a 500 (an aggregate
error, not an API status); here it is 422 Invalid with the same causes.
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable

from runtime.machinery import errors
from runtime.machinery.options import Body
from runtime.machinery.scheme import ResourceType
from runtime.machinery.validation import FieldError, invalid_error
from runtime.machinery.validation.fielderrors import not_supported, required
from runtime.models.k8s import core_v1
from runtime.server.kinds.decoding import decode_object
from runtime.server.kinds.pods.podconditions import set_pod_condition
from runtime.server.kinds.pods.podstore import PodServer, rewrite
from runtime.server.kinds.subresources import ActionSubresource
from runtime.server.rbac.user import UserInfo

__all__ = ["BindingSubresource", "binding_errors"]

_BINDING = ResourceType.of("v1", "Binding", "bindings", model=core_v1.Binding)


def binding_errors(binding: dict[str, Any]) -> list[FieldError]:
    """ValidatePodBinding: the target is a Node, named."""
    target = binding.get("target") or {}
    errs: list[FieldError] = []
    if target.get("kind") and target["kind"] != "Node":
        errs.append(not_supported("target.kind", target["kind"], ["Node", "<empty>"]))
    if not target.get("name"):
        errs.append(required("target.name"))
    return errs


class BindingSubresource(ActionSubresource):
    """`pods/binding` (see the module doc)."""

    name = "binding"
    kind = ("", "v1", "Binding")
    model = core_v1.Binding

    def __init__(self, pods: ResourceType) -> None:
        self.pods = pods

    def decode(self, body: Body, field_validation: str) -> tuple[dict[str, Any], list[str]]:
        return decode_object(_BINDING, body, field_validation=field_validation)

    async def create(self, policy: Any, user: UserInfo, namespace: str, name: str, request: dict[str, Any],
                     load: Callable[[], Awaitable[dict[str, Any]]]) -> tuple[dict[str, Any], list[str]]:
        meta = request["metadata"]
        if meta.get("name", "") != name:
            raise errors.BadRequest("name in URL does not match name in Binding object")
        errs = binding_errors(request)
        if errs:
            raise invalid_error("Binding", "Binding", name, errs)
        node = request["target"]["name"]
        annotations = meta.get("annotations") or {}

        def bind(pod: dict[str, Any]) -> None:
            spec = pod.setdefault("spec", {})
            problem = ""
            if pod["metadata"].get("deletionTimestamp"):
                problem = f"pod {name} is being deleted, cannot be assigned to a host"
            elif spec.get("nodeName"):
                problem = f'pod {name} is already assigned to node "{spec["nodeName"]}"'
            elif spec.get("schedulingGates"):
                problem = f"pod {name} has non-empty .spec.schedulingGates"
            if problem:
                raise errors.Conflict(f'Operation cannot be fulfilled on pods/binding "{name}": {problem}',
                                      name=name, kind="pods/binding")
            spec["nodeName"] = node
            if annotations:
                pod["metadata"]["annotations"] = {**(pod["metadata"].get("annotations") or {}), **annotations}
            set_pod_condition(pod, {"type": "PodScheduled", "status": "True"})

        server: PodServer = policy
        await rewrite(server, self.pods, namespace, name, bind, uid=meta.get("uid", ""),
                      resource_version=meta.get("resourceVersion", ""))
        return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}, []
