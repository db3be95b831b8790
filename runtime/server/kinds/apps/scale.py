"""`scale`: a Deployment's, StatefulSet's or ReplicaSet's autoscaling/v1 Scale, as Kubernetes' ScaleREST.

- GET answers a Scale of the object: its name, namespace, uid,
  resourceVersion and creationTimestamp; `spec.replicas` (left out at 0, as
  Go's `omitempty`); `status.replicas` (the object's `status.replicas`, 0 when
  none) and `status.selector`, the object's selector in its string form
  (`app=web,tier in (a,b)`), left out when it selects everything.
- PUT, and the merge patch `kubectl scale` sends, write a new Scale: only its
  `spec.replicas` reaches the object, whose update is then validated and
  counted as any (the generation goes up); a Scale's own rule is
  `spec.replicas` >= 0 (`Scale.autoscaling "web" is invalid: spec.replicas:
  Invalid value: -1: must be greater than or equal to 0`). A resourceVersion
  in the Scale is a precondition (409 when stale), and so is a uid (409
  `Operation cannot be fulfilled on deployments/scale.apps "web":
  Precondition failed: UID in precondition: ..., UID in object meta: ...`).

Internal to `runtime.server.kinds.apps`: imported by its modules only.
"""

from __future__ import annotations

from typing import Any

from runtime.machinery import errors
from runtime.machinery.validation.gofmt import go_value
from runtime.machinery.validation.fielderrors import NONNEGATIVE
from runtime.server.kinds.apps.rules import as_selector
from runtime.server.kinds.subresources import ViewSubresource

__all__ = ["ReplicasScale"]

_SCALE_META = ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")


class ReplicasScale(ViewSubresource):
    """The `scale` subresource of a kind with `spec.replicas` and `spec.selector` (see the module doc)."""

    name = "scale"
    kind = ("autoscaling", "v1", "Scale")

    def __init__(self, resource: str, group: str = "apps") -> None:
        #: The scaled kind's resource and group, as a conflict names them (`deployments/scale.apps`).
        self.resource, self.group = resource, group

    def view(self, obj: dict[str, Any]) -> dict[str, Any]:
        meta, spec = obj["metadata"], obj.get("spec") or {}
        scale: dict[str, Any] = {"kind": "Scale", "apiVersion": "autoscaling/v1",
                                 "metadata": {k: meta[k] for k in _SCALE_META if k in meta},
                                 "spec": {}, "status": {"replicas": (obj.get("status") or {}).get("replicas") or 0}}
        if spec.get("replicas"):
            scale["spec"]["replicas"] = spec["replicas"]
        selector = as_selector(spec.get("selector"))
        if selector is not None and str(selector):
            scale["status"]["selector"] = str(selector)
        return scale

    def from_view(self, view: dict[str, Any], current: dict[str, Any]) -> dict[str, Any]:
        replicas = (view.get("spec") or {}).get("replicas", 0)
        if replicas is None:
            replicas = 0
        if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
            name = current["metadata"].get("name", "")
            raise errors.Invalid(f'Scale.autoscaling "{name}" is invalid: spec.replicas: Invalid value: '
                                 f"{go_value(replicas, decoded=True)}: {NONNEGATIVE}",
                                 name=name, group="autoscaling", kind="Scale",
                                 causes=[errors.Cause("FieldValueInvalid",
                                                      f"Invalid value: {go_value(replicas, decoded=True)}: "
                                                      f"{NONNEGATIVE}", "spec.replicas")])
        uid, stored_uid = (view.get("metadata") or {}).get("uid"), current["metadata"].get("uid", "")
        if uid and uid != stored_uid:
            name = current["metadata"].get("name", "")
            raise errors.Conflict(f'Operation cannot be fulfilled on {self.resource}/scale.{self.group} "{name}": '
                                  f"Precondition failed: UID in precondition: {uid}, UID in object meta: {stored_uid}",
                                  name=name, group=self.group, kind=f"{self.resource}/scale")
        current.setdefault("spec", {})["replicas"] = replicas
        return current
