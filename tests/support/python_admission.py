"""The example admission functions every Python-admission test runs, in each of the three places.

`WEBHOOKS` (so that `miniplane serve --admission-module tests.support.python_admission` loads them):
- `deny-labelled.example.com`, validating, ConfigMaps (CREATE, UPDATE): a
  ConfigMap labelled `deny` is refused with 403 and its label's value as the
  message (`Denied(..., code=403)`); one with a `warn` data key is allowed
  with a warning;
- `stamp.example.com`, mutating, ConfigMaps (CREATE): sets the label
  `stamped-by: python` on the typed object and answers `Patch(object=...)`;
  a ConfigMap with data key `explode` makes it raise (answered 500).
`DENIED_CODE`, `DENY_MESSAGE`, `WARNING`, `STAMP` name what the tests check.
`ALWAYS_PATCH` answers a JSON patch by operations (a unit test's). `configmap_review(obj)` is the
AdmissionReview kube-apiserver sends for a ConfigMap (tests that post reviews themselves).
"""

from __future__ import annotations

from typing import Any

from runtime.models.core import ConfigMap
from runtime.models.meta import ObjectMeta
from runtime.webhook import Allowed, Denied, Patch, Request, Rule, Webhook

__all__ = ["WEBHOOKS", "DENY_LABELLED", "STAMP_WEBHOOK", "ALWAYS_PATCH", "DENIED_CODE", "DENY_MESSAGE", "WARNING",
           "STAMP", "CONFIGMAPS", "configmap_review", "configmap"]

DENIED_CODE = 403
DENY_MESSAGE = "ConfigMaps labelled deny are refused: {}"
WARNING = "the warn key is deprecated"
STAMP = ("stamped-by", "python")
CONFIGMAPS = Rule(["configmaps"], operations=["CREATE", "UPDATE"], api_groups=[""], api_versions=["v1"])


async def deny_labelled(request: Request) -> Allowed | Denied:
    config: ConfigMap = request.object
    labels = (config.metadata.labels if config.metadata else None) or {}
    if "deny" in labels:
        return Denied(DENY_MESSAGE.format(labels["deny"]), code=DENIED_CODE)
    if "warn" in (config.data or {}):
        return Allowed(warnings=[WARNING])
    return Allowed()


async def stamp(request: Request) -> Patch:
    config: ConfigMap = request.object
    if "explode" in (config.data or {}):
        raise RuntimeError("the stamp broke")
    config.metadata = config.metadata or ObjectMeta()
    config.metadata.labels = {**(config.metadata.labels or {}), STAMP[0]: STAMP[1]}
    return Patch(object=config)


async def always_patch(request: Request) -> Patch:
    return Patch(operations=[{"op": "add", "path": "/metadata/annotations", "value": {"patched": "yes"}}])


DENY_LABELLED = Webhook("deny-labelled.example.com", deny_labelled, rules=[CONFIGMAPS])
STAMP_WEBHOOK = Webhook("stamp.example.com", stamp, mutating=True,
                        rules=[Rule(["configmaps"], operations=["CREATE"], api_groups=[""], api_versions=["v1"])])
ALWAYS_PATCH = Webhook("always-patch.example.com", always_patch, mutating=True, rules=[CONFIGMAPS])

WEBHOOKS = [DENY_LABELLED, STAMP_WEBHOOK]


def configmap(name: str = "c", *, labels: dict[str, str] | None = None, data: dict[str, str] | None = None,
              namespace: str = "default") -> dict[str, Any]:
    """A ConfigMap to create."""
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if labels:
        meta["labels"] = labels
    obj: dict[str, Any] = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta}
    if data:
        obj["data"] = data
    return obj


def configmap_review(obj: dict[str, Any] | None, *, old: dict[str, Any] | None = None, operation: str = "CREATE",
                     version: str = "admission.k8s.io/v1", uid: str = "705ab4f5-6393-11e8-b7cc-42010a800002",
                     dry_run: bool = False) -> dict[str, Any]:
    """The AdmissionReview kube-apiserver sends for a write of the ConfigMap `obj` (`old`: its old object)."""
    meta = (obj or old or {}).get("metadata") or {}
    request: dict[str, Any] = {
        "uid": uid, "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
        "resource": {"group": "", "version": "v1", "resource": "configmaps"},
        "requestKind": {"group": "", "version": "v1", "kind": "ConfigMap"},
        "requestResource": {"group": "", "version": "v1", "resource": "configmaps"},
        "name": meta.get("name", ""), "namespace": meta.get("namespace", ""), "operation": operation,
        "userInfo": {"username": "alice", "uid": "u-1", "groups": ["dev", "system:authenticated"],
                     "extra": {"scopes": ["a"]}},
        "object": obj, "oldObject": old, "dryRun": dry_run,
        "options": {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1"},
    }
    return {"apiVersion": version, "kind": "AdmissionReview", "request": request}
