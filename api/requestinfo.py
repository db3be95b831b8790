"""Request info: what a request is, from its method, path and query (Kubernetes' RequestInfoFactory).

Resource paths: `/api/v1/...`, `/apis/GROUP/VERSION/...`, with
`namespaces/NS/` before the resource for namespaced kinds. A path that stops
at `namespaces/NAME` (or its `status`/`finalize`) names a namespace object:
its namespace is then empty (the object is authorized in its own scope, as
its kind's strategy says). Everything else
(`/healthz`, `/version`, `/apis`, `/api/v1` itself) is a non-resource
request whose verb is the lower-cased HTTP method.

The record is `runtime.server.rbac.RequestInfo`, the one the authorization
`Attributes` extend.
"""

from __future__ import annotations

from typing import Mapping

from runtime.server.rbac import RequestInfo

__all__ = ["request_info"]

_NAMESPACE_SUBRESOURCES = ("status", "finalize")
_VERBS = {"POST": "create", "PUT": "update", "PATCH": "patch"}


def _truthy(value: str | None) -> bool:
    return value is not None and value.lower() in ("1", "true", "")


def request_info(method: str, path: str, query: Mapping[str, str]) -> RequestInfo:
    """Classify a request. Verbs: get/list/watch/create/update/patch/delete/deletecollection."""
    parts = [p for p in path.strip("/").split("/")] if path.strip("/") else []
    non_resource = RequestInfo(method.lower(), path=path)
    if not parts or parts[0] not in ("api", "apis"):
        return non_resource
    if parts[0] == "api":
        if len(parts) < 3:
            return non_resource
        group, version, rest = "", parts[1], parts[2:]
    else:
        if len(parts) < 4:
            return non_resource
        group, version, rest = parts[1], parts[2], parts[3:]
    namespace = ""
    if rest[0] == "namespaces" and len(rest) > 2 and rest[2] not in _NAMESPACE_SUBRESOURCES:
        namespace, rest = rest[1], rest[2:]
    resource = rest[0]
    name = rest[1] if len(rest) > 1 else ""
    subresource = rest[2] if len(rest) > 2 else ""
    if method in ("GET", "HEAD"):
        verb = "get" if name else "list"
        if "watch" in query and _truthy(query.get("watch")):
            verb = "watch"
    elif method == "DELETE":
        verb = "delete" if name else "deletecollection"
    else:
        verb = _VERBS.get(method, method.lower())
    return RequestInfo(verb, namespace, group, version, resource, subresource, name, resource_request=True, path=path)
