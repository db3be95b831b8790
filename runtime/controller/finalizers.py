"""Finalizers: add and remove one safely, and run cleanup before an object may go.

An object with `metadata.finalizers` is not removed by a delete: it gets a
`deletionTimestamp` and stays until the last finalizer is removed. A
controller owning a finalizer adds it while the object lives, and when the
object is terminating does its cleanup, then removes the finalizer.

Both writes are merge patches carrying `metadata.resourceVersion`: the
server applies them only to the version the caller saw (else 409 Conflict),
so a finalizer list changed meanwhile by someone else is never clobbered.
A reconciler simply lets the Conflict propagate and is retried with fresh
state.

Objects are dicts or typed model instances (a model with `metadata`, as
`runtime.client` returns for a model class); a write returns the same form.

A cleanup that must wait (a dependent still going) returns a `Result`: the
finalizer stays and `handle_finalizer` returns that Result for the reconcile
to return, so the key comes back (`Result(requeue_after=5)`: in 5 s; also on
the next event of a watched kind).

Example (inside a reconcile)::

    async def cleanup(obj) -> Result | None:
        if await dependents_remain(obj):
            return Result(requeue_after=5)   # not done yet: keep the finalizer, come back
        return None                          # done: release the object

    obj = await client.get(rt, key.name, namespace=key.namespace)
    outcome = await handle_finalizer(client, obj, "example.com/cleanup", cleanup)
    if isinstance(outcome, Result) and (outcome.requeue or outcome.requeue_after is not None):
        return outcome      # cleanup waits
    if outcome is None or is_terminating(outcome):
        return None         # released (or another finalizer's business)
    obj = outcome           # live, with the finalizer: reconcile it
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable, Mapping

from pydantic import BaseModel

from runtime.client.interface import MERGE_PATCH, Client, Kind, object_meta
from runtime.controller.controller import Result

__all__ = ["has_finalizer", "is_terminating", "ensure_finalizer", "remove_finalizer", "handle_finalizer"]


def _meta(obj: Any) -> Mapping[str, Any]:
    """The metadata fields these helpers read, of a dict or a model instance."""
    if isinstance(obj, BaseModel):
        meta = obj.metadata
        return {"name": meta.name, "namespace": meta.namespace, "resourceVersion": meta.resource_version,
                "finalizers": meta.finalizers, "deletionTimestamp": meta.deletion_timestamp}
    return object_meta(obj)


def has_finalizer(obj: Any, name: str) -> bool:
    """Whether `name` is in the object's `metadata.finalizers`."""
    return name in (_meta(obj).get("finalizers") or [])


def is_terminating(obj: Any) -> bool:
    """Whether a delete was requested (`metadata.deletionTimestamp` is set)."""
    return bool(_meta(obj).get("deletionTimestamp"))


def _kind(client: Client, obj: Any) -> Kind:
    if isinstance(obj, BaseModel):
        return type(obj)  # the client answers with the same model
    kind = client.scheme.by_api_version_kind(obj.get("apiVersion") or "", obj.get("kind") or "")
    if kind is None:
        raise ValueError(f"no stored kind {obj.get('kind')!r} in {obj.get('apiVersion')!r}")
    return kind


async def _write_finalizers(client: Client, obj: Any, finalizers: list[str]) -> Any:
    meta = _meta(obj)
    kind = _kind(client, obj)
    patch = {"metadata": {"resourceVersion": meta.get("resourceVersion"), "finalizers": finalizers or None}}
    return await client.patch(kind, meta.get("name") or "", patch, patch_type=MERGE_PATCH,
                              namespace=meta.get("namespace") or "")


async def ensure_finalizer(client: Client, obj: Any, name: str) -> Any:
    """Add `name` to the object's finalizers unless present; return the object as now stored (or `obj`).

    Raises Conflict when the object changed since `obj` was read, NotFound
    when it is gone.
    """
    if has_finalizer(obj, name):
        return obj
    finalizers = list(_meta(obj).get("finalizers") or []) + [name]
    return await _write_finalizers(client, obj, finalizers)


async def remove_finalizer(client: Client, obj: Any, name: str) -> Any:
    """Remove `name` from the object's finalizers if present; return the object as written (or `obj`).

    When it was the last finalizer of a terminating object, the server
    removes the object; the returned object is its final state. Raises Conflict
    when the object changed since `obj` was read, NotFound when it is gone.
    """
    if not has_finalizer(obj, name):
        return obj
    finalizers = [f for f in _meta(obj).get("finalizers") or [] if f != name]
    return await _write_finalizers(client, obj, finalizers)


async def handle_finalizer(client: Client, obj: Any, name: str,
                           cleanup: Callable[[Any], Awaitable[Result | None]]) -> Any | Result | None:
    """Own finalizer `name` on `obj`: ensure it while the object lives; cleanup, then release on delete.

    Returns, by the object's state and what `cleanup` returned:

    - live object: the object as now stored, with the finalizer (added if
      missing); `cleanup` is not called;
    - terminating, carrying `name`: awaits `cleanup(obj)` (which must be
      idempotent: it may run again after a crash or a requeue);
      - `cleanup` returned None (done): removes the finalizer and returns the
        object as written (the server removes it once no finalizer is left);
      - `cleanup` returned a `Result` that asks for another run (not done
        yet: `requeue_after` or `requeue`): the finalizer stays and that
        Result is returned, for the reconcile to return
        (`Result(requeue_after=s)`: come back in `s` seconds); an empty
        `Result()` is done, as None (a reconcile's "nothing more");
    - terminating without `name`: None (nothing of ours to do).

    An exception from `cleanup` propagates and the finalizer stays (the
    reconcile is retried with backoff), so the object is never removed
    before its cleanup. Raises Conflict when the object changed since `obj`
    was read, NotFound when it is gone.
    """
    if not is_terminating(obj):
        return await ensure_finalizer(client, obj, name)
    if not has_finalizer(obj, name):
        return None
    outcome = await cleanup(obj)
    if isinstance(outcome, Result) and (outcome.requeue or outcome.requeue_after is not None):
        return outcome
    return await remove_finalizer(client, obj, name)
