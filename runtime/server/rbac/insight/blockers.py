"""`terminating_namespace(namespace, remaining)`: why a namespace being deleted is not gone yet.

A namespace whose `metadata.deletionTimestamp` is set goes once its content
is deleted and its finalizers are removed: `spec.finalizers` (`kubernetes`,
removed by the namespace controller once the content is gone) and
`metadata.finalizers` (whoever set them). Every object still in it is a
`Blocker`, with the finalizers it holds: one without finalizers is being
removed by the namespace controller; one with finalizers waits for whoever
owns them (the usual reason a namespace hangs in `Terminating`).

`blocker_findings(t)` turns that into lint `Finding`s: one `NamespaceTerminating`
(Info) for the namespace, one `FinalizerBlocksNamespace` (Medium) per object
holding finalizers, and one `NamespaceFinalizerPending` (Medium) for
finalizers left on the namespace once its content is gone.

Pure: the caller reads the namespace and what remains in it; `unchecked`
names the resources it could not (or was not allowed to) look at.

Internal to `runtime.server.rbac.insight`: imported by its modules only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from runtime.models.insight import InsightObjectRef, LintFinding, NamespaceBlocker, Severity, TerminatingNamespace

__all__ = ["terminating_namespace", "blocker_findings",
           "is_terminating"]

_NAMESPACE_KIND = "Namespace"


def is_terminating(namespace: Mapping[str, Any]) -> bool:
    """Return whether the namespace object is being deleted (`deletionTimestamp` set)."""
    return bool((namespace.get("metadata") or {}).get("deletionTimestamp"))


def terminating_namespace(namespace: Mapping[str, Any], remaining: Iterable[Mapping[str, Any]],
                          unchecked: Iterable[str] = ()) -> TerminatingNamespace:
    """Return the `TerminatingNamespace` of `namespace` given the objects still in it (sorted)."""
    meta = namespace.get("metadata") or {}
    blockers = sorted(
        (NamespaceBlocker.of(obj.get("kind") or "", (obj.get("metadata") or {}).get("name") or "",
                          obj.get("apiVersion") or "",
                          tuple((obj.get("metadata") or {}).get("finalizers") or ()),
                          (obj.get("metadata") or {}).get("deletionTimestamp") or "")
         for obj in remaining), key=NamespaceBlocker.sort_key)
    return TerminatingNamespace(meta.get("name") or "", meta.get("deletionTimestamp") or "",
                                tuple((namespace.get("spec") or {}).get("finalizers") or ()),
                                tuple(meta.get("finalizers") or ()), tuple(blockers),
                                tuple(sorted(unchecked)))


def blocker_findings(t: TerminatingNamespace) -> list[LintFinding]:
    """Return the lint findings of one terminating namespace (see the module doc)."""
    ref = InsightObjectRef.of(_NAMESPACE_KIND, t.name)
    held = [b for b in t.blockers if b.finalizers]
    summary = (f"namespace {t.name!r} is terminating (since {t.deletion_timestamp}): "
               f"{len(t.blockers)} object(s) remain, {len(held)} held by finalizers")
    if t.unchecked:
        summary += f"; not checked: {', '.join(t.unchecked)}"
    found = [LintFinding.of(Severity.INFO, "NamespaceTerminating", ref, summary, "metadata.deletionTimestamp")]
    for b in held:
        found.append(LintFinding.of(
            Severity.MEDIUM, "FinalizerBlocksNamespace", InsightObjectRef.of(b.kind, b.name, t.name),
            f"{b.kind} {t.name}/{b.name} holds finalizers {', '.join(b.finalizers)}: namespace "
            f"{t.name!r} cannot finish terminating until they are removed", "metadata.finalizers"))
    if not t.blockers and (t.finalizers or t.metadata_finalizers):
        pending = [*t.finalizers, *t.metadata_finalizers]
        found.append(LintFinding.of(
            Severity.MEDIUM, "NamespaceFinalizerPending", ref,
            f"namespace {t.name!r} is empty but still holds finalizers {', '.join(pending)}",
            "spec.finalizers" if t.finalizers else "metadata.finalizers"))
    return found
