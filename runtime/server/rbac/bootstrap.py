"""The bootstrap RBAC policy and its reconciliation (`kubectl auth reconcile` semantics).

`manifests/bootstrap-policy.yaml` (at the repo top level, beside `runtime/`)
holds Kubernetes' default ClusterRoles and ClusterRoleBindings, trimmed to what
miniplane serves, with `${DOMAIN}` in place of the API domain.
`load_bootstrap_policy(domain)` reads it and substitutes the domain.

At start-up the server reconciles each object with what is stored:
`reconcile_role` / `reconcile_binding` return the object to write, or None
when nothing needs to change. As Kubernetes' `computeReconciledRole` /
`computeReconciledRoleBinding` in union mode:

- labels and annotations: the union, the stored value winning on conflict;
- rules: rules the stored role lacks (as `covers` judges) are appended,
  broken down; nothing is removed;
- aggregationRule: missing selectors are appended; a stored aggregationRule on
  a role that should not aggregate is removed (the one removal Kubernetes
  makes: aggregation would otherwise overwrite the bootstrap rules);
- binding subjects: missing subjects are appended; none removed;
- a binding whose roleRef differs cannot be updated (roleRef is immutable):
  `reconcile_binding` returns the binding to re-create (wanted's roleRef, the
  stored subjects plus the missing ones, merged labels and annotations, no
  server-set metadata) and the caller deletes and re-creates it (test
  `result["roleRef"] != existing["roleRef"]`);
- an object annotated `rbac.authorization.kubernetes.io/autoupdate: "false"`
  is left alone (None).

Internal to `runtime.server.rbac`: imported by its modules only.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from runtime.server.rbac.escalation import covers

__all__ = [
    "AUTOUPDATE_ANNOTATION", "BOOTSTRAPPING_LABEL", "DOMAIN_PLACEHOLDER",
    "default_policy_path", "parse_bootstrap_policy", "load_bootstrap_policy",
    "reconcile_role", "reconcile_binding", "reconcile",
]

AUTOUPDATE_ANNOTATION = "rbac.authorization.kubernetes.io/autoupdate"
BOOTSTRAPPING_LABEL = "kubernetes.io/bootstrapping"
DOMAIN_PLACEHOLDER = "${DOMAIN}"


def default_policy_path() -> Path:
    """Return the path of `manifests/bootstrap-policy.yaml` in this source tree."""
    return Path(__file__).resolve().parents[3] / "manifests" / "bootstrap-policy.yaml"


def parse_bootstrap_policy(text: str, domain: str) -> list[dict[str, Any]]:
    """Return the objects of a multi-document policy YAML with `${DOMAIN}` replaced by `domain`.

    Raises ValueError for an empty domain or a document that is not a mapping,
    and yaml.YAMLError for bad YAML.
    """
    if not domain:
        raise ValueError("domain must not be empty")
    objects: list[dict[str, Any]] = []
    for doc in yaml.safe_load_all(text.replace(DOMAIN_PLACEHOLDER, domain)):
        if doc is None:
            continue
        if not isinstance(doc, dict):
            raise ValueError(f"bootstrap policy document is not a mapping: {doc!r}")
        objects.append(doc)
    return objects


def load_bootstrap_policy(domain: str, path: str | Path | None = None) -> list[dict[str, Any]]:
    """Return the bootstrap ClusterRoles and ClusterRoleBindings for `domain`.

    Reads `path`, by default `default_policy_path()`. Raises OSError when the
    file cannot be read, ValueError/yaml.YAMLError as `parse_bootstrap_policy`.
    """
    source = Path(path) if path is not None else default_policy_path()
    return copy.deepcopy(_parsed(source.read_text(encoding="utf-8"), domain))


@functools.lru_cache(maxsize=8)
def _parsed(text: str, domain: str) -> list[dict[str, Any]]:
    # Parsed once per text and domain: every server and test env start reads the same policy, and PyYAML
    # takes tens of milliseconds over it. Callers get a copy.
    return parse_bootstrap_policy(text, domain)


def _protected(obj: Mapping[str, Any]) -> bool:
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    return annotations.get(AUTOUPDATE_ANNOTATION) == "false"


def _merge_metadata(result: dict[str, Any], existing: Mapping[str, Any],
                    wanted: Mapping[str, Any]) -> bool:
    have_meta = existing.get("metadata") or {}
    want_meta = wanted.get("metadata") or {}
    changed = False
    for field in ("labels", "annotations"):
        have = have_meta.get(field) or {}
        merged = {**(want_meta.get(field) or {}), **have}
        if merged != have:
            result.setdefault("metadata", {})[field] = merged
            changed = True
    return changed


def _merged_metadata(existing: Mapping[str, Any], wanted: Mapping[str, Any]) -> tuple[dict[str, Any], bool]:
    """A copy of `existing` with `wanted`'s labels and annotations merged in, and whether that changed it."""
    result = copy.deepcopy(dict(existing))
    return result, _merge_metadata(result, existing, wanted)


def reconcile_role(existing: Mapping[str, Any] | None,
                   wanted: Mapping[str, Any]) -> dict[str, Any] | None:
    """Return the (Cluster)Role to write so `existing` holds `wanted`, or None if nothing changes.

    `existing=None` returns a copy of `wanted` (to create). See the module
    docstring for the rules.
    """
    if existing is None:
        return copy.deepcopy(dict(wanted))
    if _protected(existing):
        return None
    result, changed = _merged_metadata(existing, wanted)

    _, missing = covers(existing.get("rules") or (), wanted.get("rules") or ())
    if missing:
        result["rules"] = [*(result.get("rules") or []), *missing]
        changed = True

    want_agg = wanted.get("aggregationRule")
    have_agg = existing.get("aggregationRule")
    if want_agg is None:
        if have_agg is not None:
            del result["aggregationRule"]
            changed = True
    else:
        have_selectors = (have_agg or {}).get("clusterRoleSelectors") or []
        missing_selectors = [s for s in want_agg.get("clusterRoleSelectors") or []
                             if s not in have_selectors]
        if missing_selectors:
            agg = result.get("aggregationRule") or {}
            agg["clusterRoleSelectors"] = [*(agg.get("clusterRoleSelectors") or []),
                                           *copy.deepcopy(missing_selectors)]
            result["aggregationRule"] = agg
            changed = True
    return result if changed else None


def _subject_key(subject: Mapping[str, Any]) -> tuple[str, str, str, str]:
    return (subject.get("kind") or "", subject.get("apiGroup") or "",
            subject.get("name") or "", subject.get("namespace") or "")


def reconcile_binding(existing: Mapping[str, Any] | None,
                      wanted: Mapping[str, Any]) -> dict[str, Any] | None:
    """Return the (Cluster)RoleBinding to write so `existing` holds `wanted`, or None.

    `existing=None` returns a copy of `wanted` (to create). A different roleRef
    returns the binding to delete and re-create (see the module docstring).
    """
    if existing is None:
        return copy.deepcopy(dict(wanted))
    if _protected(existing):
        return None
    result, changed = _merged_metadata(existing, wanted)
    if (existing.get("roleRef") or {}) != (wanted.get("roleRef") or {}):
        result["roleRef"] = copy.deepcopy(wanted.get("roleRef"))
        meta = result.get("metadata") or {}
        # A new object: only what a client may set survives.
        result["metadata"] = {k: v for k, v in meta.items() if k in ("name", "namespace", "labels", "annotations")}
        changed = True
    have = {_subject_key(s) for s in existing.get("subjects") or []}
    missing = [s for s in wanted.get("subjects") or [] if _subject_key(s) not in have]
    if missing:
        result["subjects"] = [*(result.get("subjects") or []), *copy.deepcopy(missing)]
        changed = True
    return result if changed else None


def reconcile(existing: Mapping[str, Any] | None, wanted: Mapping[str, Any]) -> dict[str, Any] | None:
    """`reconcile_binding` for a binding (it has a roleRef), else `reconcile_role`."""
    return (reconcile_binding if "roleRef" in wanted else reconcile_role)(existing, wanted)
