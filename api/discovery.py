"""Discovery documents: what `/version`, `/api`, `/apis` and each group-version answer.

Pure builders from a `Scheme` to the JSON dicts Kubernetes serves, in both
forms kubectl understands:

- the legacy documents: `APIVersions` (`/api`), `APIGroupList` (`/apis`),
  `APIGroup` (`/apis/GROUP`) and `APIResourceList` (`/api/v1`,
  `/apis/GROUP/v1`);
- aggregated discovery, `APIGroupDiscoveryList` in `apidiscovery.k8s.io/v2`
  (or `v2beta1`): one document for `/api` (the core group, named "") and one
  for `/apis` (every other group), shaped as k8s.io/api/apidiscovery/v2.

The aggregated form's apiVersion stays `apidiscovery.k8s.io/...` under any
domain: that is the group kubectl names in its Accept header.
Resources are listed in name order, as the Kubernetes API server lists them.
"""

from __future__ import annotations

import base64
import hashlib
import platform
import re
import sys
from typing import Any

from runtime.machinery.scheme import ResourceType, Scheme

__all__ = [
    "KUBERNETES_MAJOR", "KUBERNETES_MINOR", "AGGREGATED_DISCOVERY_GROUP",
    "version_info", "api_versions", "api_group_list", "api_group", "api_resource_list",
    "aggregated_discovery", "storage_version_hash",
]

# kubectl's launcher picks its client release by `minor`; report the release we mimic.
KUBERNETES_MAJOR = "1"
KUBERNETES_MINOR = "32"
AGGREGATED_DISCOVERY_GROUP = "apidiscovery.k8s.io"
_AGGREGATED_VERSIONS = ("v2", "v2beta1")

_MACHINES = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}


def version_info(miniplane_version: str, *, git_commit: str = "",
                 build_date: str = "1970-01-01T00:00:00Z") -> dict[str, Any]:
    """Return the `/version` document: a Kubernetes 1.32 look-alike naming miniplane.

    gitVersion is `v1.32.0-miniplane.<version>`, a valid semantic version
    (characters semver forbids in a pre-release are replaced by `-`).
    """
    suffix = re.sub(r"[^0-9A-Za-z.-]", "-", miniplane_version) or "0"
    machine = platform.machine().lower()
    return {
        "major": KUBERNETES_MAJOR,
        "minor": KUBERNETES_MINOR,
        "gitVersion": f"v{KUBERNETES_MAJOR}.{KUBERNETES_MINOR}.0-miniplane.{suffix}",
        "gitCommit": git_commit,
        "gitTreeState": "clean" if git_commit else "",
        "buildDate": build_date,
        "goVersion": f"python{sys.version_info.major}.{sys.version_info.minor}.{sys.version_info.micro}",
        "compiler": sys.implementation.name,
        "platform": f"{sys.platform}/{_MACHINES.get(machine, machine)}",
    }


def api_versions(server_address: str) -> dict[str, Any]:
    """Return the legacy `/api` document (`APIVersions`): the core group serves v1 only."""
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
    }


def _group_versions(types: list[ResourceType]) -> list[str]:
    seen: list[str] = []
    for t in types:
        if t.version not in seen:
            seen.append(t.version)
    return seen


def _api_group(group: str, types: list[ResourceType]) -> dict[str, Any]:
    versions = [{"groupVersion": f"{group}/{v}", "version": v} for v in _group_versions(types)]
    return {"name": group, "versions": versions, "preferredVersion": versions[0]}


def api_group_list(scheme: Scheme) -> dict[str, Any]:
    """Return the legacy `/apis` document (`APIGroupList`); the core group is not in it."""
    groups = [_api_group(g, types) for g, types in scheme.groups() if g]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def api_group(scheme: Scheme, group: str) -> dict[str, Any] | None:
    """Return the `/apis/GROUP` document (`APIGroup`), or None when the group is not served."""
    for g, types in scheme.groups():
        if g and g == group:
            return {"kind": "APIGroup", "apiVersion": "v1", **_api_group(g, types)}
    return None


def storage_version_hash(group: str, version: str, kind: str) -> str:
    """Return Kubernetes' storageVersionHash: base64 of the first 8 bytes of sha256("group/version/kind")."""
    digest = hashlib.sha256(f"{group}/{version}/{kind}".encode()).digest()
    return base64.b64encode(digest[:8]).decode()


def _types_of(scheme: Scheme, group_version: str) -> list[ResourceType]:
    group, _, version = group_version.rpartition("/")
    return sorted((t for t in scheme.types if t.group == group and t.version == version),
                  key=lambda t: t.plural)


def api_resource_list(scheme: Scheme, group_version: str) -> dict[str, Any] | None:
    """Return the `APIResourceList` of one group-version (`v1` or `GROUP/v1`), or None if not served.

    Subresources follow their resource as `namespaces/status`-style entries
    with an empty singularName, as Kubernetes lists them. Virtual kinds (the
    reviews) are never stored, so they carry no storageVersionHash.
    """
    types = _types_of(scheme, group_version)
    if not types:
        return None
    resources: list[dict[str, Any]] = []
    for t in types:
        entry: dict[str, Any] = {
            "name": t.plural,
            "singularName": t.info.singular,
            "namespaced": t.namespaced,
            "kind": t.kind,
            "verbs": list(t.info.verbs),
        }
        if t.info.short_names:
            entry["shortNames"] = list(t.info.short_names)
        if t.info.categories:
            entry["categories"] = list(t.info.categories)
        if not t.virtual:
            entry["storageVersionHash"] = storage_version_hash(t.group, t.version, t.kind)
        resources.append(entry)
        for sub, verbs in sorted(t.info.subresources):
            entry = {"name": f"{t.plural}/{sub}", "singularName": "", "namespaced": t.namespaced, "kind": t.kind,
                     "verbs": list(verbs)}
            viewed = t.strategy.subresources.get(sub)
            if viewed is not None and viewed.kind is not None:
                # Another kind's (a Scale, an Eviction, a Binding): its group and version are named only when they
                # are not the resource's own, as Kubernetes' APIResource (pods/binding has none, pods/eviction policy/v1)
                group, version, kind = viewed.kind
                if (group, version) != (t.group, t.version):
                    entry.update(group=group, version=version)
                entry["kind"] = kind
            resources.append(entry)
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version,
            "resources": resources}


def _gvk(t: ResourceType, subresource: str = "") -> dict[str, str]:
    viewed = t.strategy.subresources.get(subresource) if subresource else None
    if viewed is not None and viewed.kind is not None:
        return {"group": viewed.kind[0], "version": viewed.kind[1], "kind": viewed.kind[2]}
    return {"group": t.group, "version": t.version, "kind": t.kind}


def _resource_discovery(t: ResourceType) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "resource": t.plural,
        "responseKind": _gvk(t),
        "scope": "Namespaced" if t.namespaced else "Cluster",
        "singularResource": t.info.singular,
        "verbs": list(t.info.verbs),
    }
    if t.info.short_names:
        entry["shortNames"] = list(t.info.short_names)
    if t.info.categories:
        entry["categories"] = list(t.info.categories)
    if t.info.subresources:
        entry["subresources"] = [
            {"subresource": sub, "responseKind": _gvk(t, sub), "verbs": list(verbs)}
            for sub, verbs in sorted(t.info.subresources)
        ]
    return entry


def _group_discovery(group: str, types: list[ResourceType]) -> dict[str, Any]:
    versions = []
    for version in _group_versions(types):
        resources = sorted((t for t in types if t.version == version), key=lambda t: t.plural)
        versions.append({
            "version": version,
            "resources": [_resource_discovery(t) for t in resources],
            "freshness": "Current",
        })
    return {"metadata": {"name": group}, "versions": versions}


def aggregated_discovery(scheme: Scheme, core: bool, version: str = "v2") -> dict[str, Any]:
    """Return the aggregated discovery document (`APIGroupDiscoveryList`).

    core=True gives the `/api` answer (only the core group, named ""),
    core=False the `/apis` answer (every other group, in scheme order).
    version is `v2` or `v2beta1` (same shape, only apiVersion differs);
    raises ValueError for any other.
    """
    if version not in _AGGREGATED_VERSIONS:
        raise ValueError(f"unknown aggregated discovery version {version!r}")
    items = [_group_discovery(g, types) for g, types in scheme.groups() if (g == "") == core]
    return {
        "kind": "APIGroupDiscoveryList",
        "apiVersion": f"{AGGREGATED_DISCOVERY_GROUP}/{version}",
        "metadata": {},
        "items": items,
    }
