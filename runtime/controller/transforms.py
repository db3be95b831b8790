"""Transforms: what an informer caches of each object (client-go's `SharedInformer.SetTransform`).

A transform returns a new object and never changes its input (an in-process
read hands out the server's own dicts); the values it keeps are shared with
the input, so they are never mutated either. Each keeps less than the last:

- `without_managed_fields`: the object without `metadata.managedFields`
  (controller-runtime's `cache.TransformStripManagedFields`): about a third of
  a small object's memory, which no controller reads;
- `partial_metadata`: apiVersion, kind and the metadata without managedFields
  (a metadata-only informer: Kubernetes' PartialObjectMetadata);
- `ownership_metadata`: apiVersion, kind and only the metadata that ownership
  and deletion turn on (`OWNERSHIP_FIELDS`): what the garbage collector, the
  namespace controller and the quota controller's counts read of every object
  of every kind, so the server's own controllers hold a few hundred bytes per
  stored object.

`keeps_at_least(have, want)` says whether an informer caching `have`'s objects
(None: whole objects) holds everything `want`'s would: true of `want` itself
and of any transform above it in that list (None above all); a transform not
in the list keeps only what it keeps.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

__all__ = ["METADATA_TRANSFORMS", "OWNERSHIP_FIELDS", "Transform", "keeps_at_least", "ownership_metadata",
           "partial_metadata", "without_managed_fields"]

#: What an informer caches of an object: a new object, its input left untouched.
Transform = Callable[[dict[str, Any]], dict[str, Any]]

#: The metadata `ownership_metadata` keeps: identity, version, owners, finalizers, deletion.
OWNERSHIP_FIELDS = frozenset({"name", "namespace", "uid", "resourceVersion", "generation", "ownerReferences",
                              "finalizers", "deletionTimestamp", "deletionGracePeriodSeconds"})


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def without_managed_fields(obj: Mapping[str, Any]) -> dict[str, Any]:
    """`obj` without `metadata.managedFields` (the rest shared with it)."""
    out = dict(obj)
    out["metadata"] = {k: v for k, v in _meta(obj).items() if k != "managedFields"}
    return out


def partial_metadata(obj: Mapping[str, Any]) -> dict[str, Any]:
    """A metadata-only copy of `obj`: apiVersion, kind, and a shallow copy of its metadata without
    managedFields (PartialObjectMetadata; controller-runtime's TransformStripManagedFields)."""
    return {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind"),
            "metadata": {k: v for k, v in _meta(obj).items() if k != "managedFields"}}


def ownership_metadata(obj: Mapping[str, Any]) -> dict[str, Any]:
    """apiVersion, kind and the `OWNERSHIP_FIELDS` of `obj`'s metadata (no labels, annotations, times)."""
    return {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind"),
            "metadata": {k: v for k, v in _meta(obj).items() if k in OWNERSHIP_FIELDS}}


#: The transforms whose objects are only apiVersion, kind and metadata (a metadata-only informer's).
METADATA_TRANSFORMS = frozenset({partial_metadata, ownership_metadata})


#: The transforms above, each keeping less than the one before it (None: the whole object).
_KEEPING_LESS: tuple[Transform | None, ...] = (None, without_managed_fields, partial_metadata, ownership_metadata)


def keeps_at_least(have: Transform | None, want: Transform | None) -> bool:
    """Whether `have`'s objects hold all that `want`'s would (see the module doc)."""
    if have is want:
        return True
    if have not in _KEEPING_LESS or want not in _KEEPING_LESS:
        return False
    return _KEEPING_LESS.index(have) < _KEEPING_LESS.index(want)
