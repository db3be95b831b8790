"""Deletion propagation: the garbage collector's finalizers a delete puts on an object (pure).

A delete asks how dependents (objects whose `ownerReferences` name the
deleted one) are treated; the registry records the answer as a finalizer the
garbage collector (`controllers.gc`) acts on and then removes:

- `Background`: no finalizer; the object goes at once and the collector
  deletes its dependents afterwards.
- `Foreground`: `foregroundDeletion`; the object stays (with
  `deletionTimestamp`) until its dependents with `blockOwnerDeletion` are gone.
- `Orphan` (or `orphanDependents: true`): `orphan`; the object stays until
  the collector has removed it from its dependents' `ownerReferences`.

`deletion_finalizers` is Kubernetes' `deletionFinalizersForGarbageCollection`
(generic registry store): an explicit option wins, then a GC finalizer
already on the object, then the kind's default policy, which is Background
for every kind served here (none of them keeps the legacy Orphan default).
`namespace_deletion_finalizers` is the namespace REST storage's variant:
`orphanDependents: false` there means Foreground, and without options the
finalizers stay as they are. A kind's strategy picks one.

It is applied only by the first delete: once an object is terminating a
delete changes nothing (Kubernetes: "finalizers cannot be updated via
DeleteOptions if a deletion is already pending").
"""

from __future__ import annotations

from typing import Iterable

from runtime.machinery.options import ParsedDeleteOptions
from runtime.machinery.wellknown import FOREGROUND_FINALIZER, ORPHAN_FINALIZER

__all__ = ["ORPHAN_FINALIZER", "FOREGROUND_FINALIZER", "GC_FINALIZERS", "deletion_finalizers",
           "namespace_deletion_finalizers"]

GC_FINALIZERS = (ORPHAN_FINALIZER, FOREGROUND_FINALIZER)


def _first_gc_finalizer(finalizers: list[str]) -> str | None:
    return next((f for f in finalizers if f in GC_FINALIZERS), None)


def _should_orphan(options: ParsedDeleteOptions, finalizers: list[str]) -> bool:
    if options.orphan_dependents is not None:
        return options.orphan_dependents
    if options.propagation_policy is not None:
        return options.propagation_policy == "Orphan"
    return _first_gc_finalizer(finalizers) == ORPHAN_FINALIZER  # else the default: Background


def _should_delete_dependents(options: ParsedDeleteOptions, finalizers: list[str]) -> bool:
    if options.orphan_dependents is not None:
        return False
    if options.propagation_policy is not None:
        return options.propagation_policy == "Foreground"
    return _first_gc_finalizer(finalizers) == FOREGROUND_FINALIZER


def _namespace_should(options: ParsedDeleteOptions, finalizer: str, have: bool) -> bool:
    # Kubernetes' shouldHaveOrphanFinalizer / shouldHaveDeleteDependentsFinalizer (namespace storage).
    orphan = finalizer == ORPHAN_FINALIZER
    if options.orphan_dependents is not None:
        return options.orphan_dependents == orphan
    if options.propagation_policy is not None:
        return options.propagation_policy == ("Orphan" if orphan else "Foreground")
    return have


def _finalizers(current: list[str], orphan: bool, foreground: bool) -> list[str]:
    """`current` with the GC finalizers set as asked: other finalizers keep their order; a GC
    finalizer that stays keeps its place, one added goes last."""
    wanted = {ORPHAN_FINALIZER: orphan, FOREGROUND_FINALIZER: foreground}
    result = [f for f in current if f not in GC_FINALIZERS or wanted[f]]
    result += [f for f in GC_FINALIZERS if wanted[f] and f not in result]
    return result


def deletion_finalizers(finalizers: Iterable[str], options: ParsedDeleteOptions) -> list[str]:
    """The `metadata.finalizers` an object gets from a first delete with `options` (generic store).

    Returns the input list (as a new list) when nothing changes. Validation of
    the options is the caller's.
    """
    current = list(finalizers)
    return _finalizers(current, _should_orphan(options, current), _should_delete_dependents(options, current))


def namespace_deletion_finalizers(finalizers: Iterable[str], options: ParsedDeleteOptions) -> list[str]:
    """`deletion_finalizers` as the namespace REST storage decides them."""
    current = list(finalizers)
    return _finalizers(current, _namespace_should(options, ORPHAN_FINALIZER, ORPHAN_FINALIZER in current),
                       _namespace_should(options, FOREGROUND_FINALIZER, FOREGROUND_FINALIZER in current))
