"""How the insight commands reach a server: a kubeconfig, discovery, and a few JSON requests.

`Connection.open(kubeconfig, context, transport=None)` reads a kubeconfig
(`--kubeconfig`, else the first file of `$KUBECONFIG`, else
`~/.kube/config`) as kubectl does: its server, CA, bearer token or client
certificate, and the context's namespace (`default` when none). Requests
are httpx over anyio (run under trio); a `transport` replaces the network
(tests serve the app in process).

`discover()` reads aggregated discovery (`/api` and `/apis`, two requests)
into `APIResource`s; `resolve(text)` finds the resource a user typed, as
kubectl does (plural, singular, short name or kind, optionally
`.group` or a prefix of it; `/sub` for a subresource); `insight(kind, spec)`
creates an insight kind and returns the answered object; `dry_run_apply`
and `dry_run_delete` send a server-side dry run. A non-2xx answer raises
the `runtime.machinery.errors` class of its Status.

Internal to `api.insightcli`: imported by its modules only.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import yaml

from runtime.machinery import errors
from runtime.client.kubeconfig import KubeConfig, KubeConfigError, load_kubeconfig

__all__ = ["APIResource", "Resolved", "Connection", "kubeconfig_path", "FIELD_MANAGER"]

#: The field manager of the dry runs.
FIELD_MANAGER = "miniplane-rbac-diff"
_DISCOVERY = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
_APPLY = "application/apply-patch+yaml"


def kubeconfig_path(explicit: str | None) -> Path:
    """Return the kubeconfig to read: `explicit`, else `$KUBECONFIG`'s first file, else `~/.kube/config`."""
    if explicit:
        return Path(explicit)
    env = os.environ.get("KUBECONFIG", "")
    first = next((p for p in env.split(os.pathsep) if p), "")
    return Path(first) if first else Path.home() / ".kube" / "config"


def _context_namespace(path: Path, context: str | None) -> str:
    config = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    name = context or config.get("current-context")
    for entry in config.get("contexts") or ():
        if isinstance(entry, dict) and entry.get("name") == name:
            return (entry.get("context") or {}).get("namespace") or "default"
    return "default"


@dataclass(frozen=True)
class APIResource:
    """A served resource, as discovery lists it."""

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    singular: str = ""
    short_names: tuple[str, ...] = ()
    subresources: tuple[str, ...] = ()

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def path(self, namespace: str, name: str = "") -> str:
        """The URL path of the collection (or of one object)."""
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace:
            base += f"/namespaces/{namespace}"
        return f"{base}/{self.plural}" + (f"/{name}" if name else "")


@dataclass(frozen=True)
class Resolved:
    """What a user typed, resolved: group, resource, subresource, and the served resource if any."""

    group: str
    resource: str
    subresource: str = ""
    served: APIResource | None = None

    @property
    def qualified(self) -> str:
        name = f"{self.resource}/{self.subresource}" if self.subresource else self.resource
        return f"{name}.{self.group}" if self.group else name


class Connection:
    """An open connection to one server as one user (see the module doc); `aclose()` when done."""

    def __init__(self, config: KubeConfig, namespace: str, transport: httpx.AsyncBaseTransport | None = None,
                 timeout: float = 30.0) -> None:
        # late import: the HTTP client (and the scheme under it) only once a command connects, so that
        # `miniplane --help`, which lists these commands, starts fast
        from runtime.client.http import http_client

        self.http = http_client(config, "miniplane-insight/0.1", timeout, transport,
                                headers={"Accept": "application/json"})
        self.namespace = namespace
        self._resources: list[APIResource] | None = None

    @classmethod
    def open(cls, kubeconfig: str | None, context: str | None,
             transport: httpx.AsyncBaseTransport | None = None) -> Connection:
        """Read the kubeconfig; raises KubeConfigError or OSError."""
        path = kubeconfig_path(kubeconfig)
        if not path.exists():
            raise KubeConfigError(f"no kubeconfig at {path} (use --kubeconfig or $KUBECONFIG)")
        return cls(load_kubeconfig(path, context), _context_namespace(path, context), transport)

    async def aclose(self) -> None:
        await self.http.aclose()

    async def request(self, method: str, path: str, *, body: Any = None, content_type: str = "application/json",
                      accept: str = "application/json", params: dict[str, str] | None = None) -> dict[str, Any]:
        """Send one request; return the JSON answer, or raise the Status error."""
        content = json.dumps(body).encode() if body is not None else None
        headers = {"Accept": accept}
        if content is not None:
            headers["Content-Type"] = content_type
        response = await self.http.request(method, path, content=content, headers=headers, params=params)
        try:
            doc = response.json()
        except ValueError:
            doc = None
        if response.status_code >= 400:
            if isinstance(doc, dict) and doc.get("kind") == "Status":
                raise errors.status_from_dict(doc)
            raise errors.status_from_dict({"code": response.status_code,
                                           "reason": errors.reason_for_code(response.status_code),
                                           "message": response.text.strip()})
        if not isinstance(doc, dict):
            raise errors.InternalError(f"{method} {path}: the answer is not a JSON object")
        return doc

    async def discover(self) -> list[APIResource]:
        """Every served resource (aggregated discovery of `/api` and `/apis`), core first."""
        if self._resources is None:
            found: list[APIResource] = []
            for root in ("/api", "/apis"):
                doc = await self.request("GET", root, accept=_DISCOVERY)
                for group in doc.get("items") or ():
                    name = (group.get("metadata") or {}).get("name") or ""
                    versions = group.get("versions") or [{}]
                    version = versions[0]
                    for r in version.get("resources") or ():
                        found.append(APIResource(
                            name, version.get("version") or "v1", r.get("resource") or "",
                            (r.get("responseKind") or {}).get("kind") or "", r.get("scope") == "Namespaced",
                            r.get("singularResource") or "", tuple(r.get("shortNames") or ()),
                            tuple(s.get("subresource") or "" for s in r.get("subresources") or ())))
            self._resources = found
        return self._resources

    async def domain(self) -> str:
        """The API domain (the group `rbac.authorization.<domain>` served)."""
        for r in await self.discover():
            if r.group.startswith("rbac.authorization."):
                return r.group[len("rbac.authorization."):]
        raise errors.NotFound("the server serves no rbac.authorization group")

    async def by_kind(self, api_version: str, kind: str) -> APIResource | None:
        """The served resource of `apiVersion` and `kind`, or None."""
        group, _, version = api_version.rpartition("/")
        return next((r for r in await self.discover()
                     if (r.group, r.version, r.kind) == (group, version, kind)), None)

    async def resolve(self, text: str, subresource: str = "") -> Resolved:
        """Resolve `resource[.group][/subresource]` as kubectl does; unknown names are taken as written."""
        head, _, sub = text.partition("/")
        sub = sub or subresource
        name, _, group = head.partition(".")
        name = name.lower()
        candidates = []
        for r in await self.discover():
            names = {r.plural, r.singular, r.kind.lower(), *r.short_names}
            if name in names and (not group or r.group == group or r.group.startswith(group + ".")):
                candidates.append(r)
        if candidates:
            chosen = sorted(candidates, key=lambda r: (r.group != "", len(r.group)))[0]
            return Resolved(chosen.group, chosen.plural, sub, chosen)
        return Resolved(group, name, sub)

    async def insight(self, kind: str, plural: str, spec: dict[str, Any]) -> dict[str, Any]:
        """Create the insight kind with `spec`; return the answered object."""
        group_version = f"insight.{await self.domain()}/v1"
        return await self.request("POST", f"/apis/{group_version}/{plural}",
                                  body={"apiVersion": group_version, "kind": kind, "spec": spec})

    async def dry_run_apply(self, resource: APIResource, obj: dict[str, Any]) -> dict[str, Any]:
        """Server-side apply `obj` with dryRun=All (force: a dry run takes every field); return the result."""
        meta = obj.get("metadata") or {}
        return await self.request("PATCH", resource.path(meta.get("namespace") or "", meta.get("name") or ""),
                                  body=obj, content_type=_APPLY,
                                  params={"dryRun": "All", "fieldManager": FIELD_MANAGER, "force": "true"})

    async def dry_run_delete(self, resource: APIResource, obj: dict[str, Any]) -> dict[str, Any]:
        """Delete `obj` with dryRun=All; return what the server answers (the object as it is stored)."""
        meta = obj.get("metadata") or {}
        return await self.request("DELETE", resource.path(meta.get("namespace") or "", meta.get("name") or ""),
                                  params={"dryRun": "All"})
