"""A policy's params: the kind `spec.paramKind` names, and the objects a binding's `spec.paramRef` selects.

`param_type(scheme, param_kind)` is the served kind of a paramKind (any
kind, custom ones included) or raises `ParamKindError` in kube's words
(`failed to find resource referenced by paramKind: 'example.com/v1,
Kind=ReplicaLimit'`): a policy configuration error.

`await collect_params(context, rt, param_ref, namespace)` is kube's
`generic.CollectParams`: the param objects one binding evaluates its policy
once each with (`[None]` without a paramRef), read from the watch cache (the
store when a named param is not cached yet, as kube falls back to a direct
read), or raises `ParamError`:
- a namespaced param kind reads the paramRef's namespace, else the
  request's; with neither: `cannot use namespaced paramRef in policy binding
  that matches cluster-scoped resources`; a cluster-scoped one refuses a
  namespace (`paramRef.namespace must not be provided for a cluster-scoped
  `paramKind``);
- `name` finds one object, `selector` every matching one (`{}`: all);
- none found and `parameterNotFoundAction: Deny`: `no params found for
  policy binding with `Deny` parameterNotFoundAction`; `Allow`: no
  evaluation at all.
"""

from __future__ import annotations

from typing import Any, Mapping

from runtime.machinery.scheme import ResourceType, Scheme
from runtime.machinery.selectors import SelectorError, label_selector_from_dict
from runtime.server.admission.context import AdmissionContext

__all__ = ["ParamKindError", "ParamError", "param_type", "collect_params"]


class ParamKindError(Exception):
    """The paramKind names no served kind (kube's words)."""


class ParamError(Exception):
    """The binding's params cannot be collected (kube's words)."""


def param_type(scheme: Scheme, param_kind: Mapping[str, Any]) -> ResourceType:
    """The served kind `param_kind` names. Raises ParamKindError."""
    api_version, kind = param_kind.get("apiVersion") or "", param_kind.get("kind") or ""
    group, _, version = api_version.rpartition("/")
    rt = scheme.by_api_version_kind(api_version, kind)
    if rt is None or rt.virtual:
        raise ParamKindError(f"failed to find resource referenced by paramKind: '{group}/{version}, Kind={kind}'")
    return rt


async def collect_params(context: AdmissionContext, rt: ResourceType | None, param_ref: Mapping[str, Any] | None,
                         namespace: str) -> list[dict[str, Any] | None]:
    """The params of one binding (see the module doc). Raises ParamError."""
    if rt is None or param_ref is None:
        return [None]
    ref_namespace = param_ref.get("namespace") or ""
    if rt.namespaced:
        namespace = ref_namespace or namespace
        if not namespace:
            raise ParamError("cannot use namespaced paramRef in policy binding that matches cluster-scoped resources")
    elif ref_namespace:
        raise ParamError("paramRef.namespace must not be provided for a cluster-scoped `paramKind`")
    else:
        namespace = ""
    name, selector = param_ref.get("name") or "", param_ref.get("selector")
    if name:
        if selector is not None:
            raise ParamError("paramRef.name and paramRef.selector are mutually exclusive")
        key = rt.storage_key(namespace, name)
        found = context.kind_cache(rt).get(key)
        if found is None:
            found = await context.read_current(rt, key, name)  # the cache may not hold a param just written
        params = [] if found is None else [found.obj]
    elif selector is not None:
        try:
            parsed = label_selector_from_dict(selector)
        except SelectorError as exc:
            raise ParamError(str(exc)) from None
        objects = context.kind_cache(rt).list(rt.namespace_prefix(namespace))
        params = [o.obj for o in objects if parsed.matches((o.obj.get("metadata") or {}).get("labels") or {})]
    else:
        raise ParamError("one of name or selector must be provided")
    if not params and param_ref.get("parameterNotFoundAction") == "Deny":
        raise ParamError("no params found for policy binding with `Deny` parameterNotFoundAction")
    return params
