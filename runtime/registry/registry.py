"""The registry: the one entry point of every request, over HTTP or in-process.

Each call carries the caller's `UserInfo`; the registry authorizes it (RBAC),
decodes and validates the body, runs the kind's strategy, and reads from the
watch cache or writes to the store. Dry run stops right before persisting.
"""

from __future__ import annotations

import secrets
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable

import trio

from runtime import errors
from runtime.objects import StoredObject, dumps_json
from runtime.rbac import RBACAuthorizer, RBACIndex, forbidden_status_message
from runtime.rbac.attributes import Attributes, resource_attributes
from runtime.rbac.user import UserInfo
from runtime.registry.decode import Body, CorruptObject, decode_object, decode_stored
from runtime.registry.namespace_gate import NamespaceGate
from runtime.registry.options import DeleteOptions, ListOptions, WriteOptions
from runtime.registry import strategy
from runtime.scheme import ResourceType, Scheme
from runtime.selectors import SelectorError, parse_field_selector, parse_label_selector
from runtime.storage import KeyExists, KeyNotFound, RevisionConflict, Store
from runtime.validation import invalid_error, validate_object, validate_update
from runtime.watchcache import WatchCache

__all__ = ["Registry", "WriteResult", "DeleteResult", "ListResult", "now_rfc3339"]


def now_rfc3339() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class WriteResult:
    """A written (or dry-run) object; `created` picks 201 over 200."""

    obj: StoredObject
    created: bool = False
    warnings: list[str] = field(default_factory=list)


@dataclass
class DeleteResult:
    """A delete's answer: the object (when it stays, or for kinds that return it) or a Status."""

    code: int
    body: dict[str, Any] | StoredObject
    warnings: list[str] = field(default_factory=list)


@dataclass
class ListResult:
    items: list[StoredObject]
    resource_version: int
    continue_token: str = ""
    remaining: int | None = None


class Registry:
    """Serves every kind of `scheme` from `store`, authorized by `authorizer`.

    `authorizer.authorize(attrs)` returns a decision with `.allowed` and `.reason`.
    Start `run()` in a nursery before serving: it fills the watch cache.
    """

    def __init__(self, store: Store, scheme: Scheme, authorizer: Any = None, *,
                 feature_gates: dict[str, bool] | None = None, history_seconds: float = 300.0,
                 continue_ttl: float = 300.0, continue_secret: bytes | None = None,
                 token_clock: Callable[[], float] | None = None) -> None:
        self.store = store
        self.scheme = scheme
        # Roles and bindings as the watch cache sees them, indexed by subject.
        self.rbac = RBACIndex()
        self.authorizer = authorizer if authorizer is not None else RBACAuthorizer(self.rbac)
        self.feature_gates = dict(feature_gates or {})
        self.cache = WatchCache(store, [t.storage_prefix for t in scheme.stored_types()],
                                history_seconds=history_seconds)
        self.namespaces = scheme.by_kind("Namespace")
        from runtime.registry.listing import ContinueTokens
        # A secret and a wall clock kept across restarts keep continue tokens valid (or properly
        # expired) after one.
        self.continue_tokens = ContinueTokens(continue_ttl, continue_secret, token_clock)
        # Admission plug-ins added by users (`runtime.registry.admission.AdmissionPlugin`), run in order.
        self.admission: list[Any] = []
        self._rbac_listed_at = -1
        self.cache.add_handler(self._feed_rbac_index)
        #: Creates in a namespace against the delete that closes it (see `namespace_gate`).
        self.namespace_gate = NamespaceGate()

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Fill and follow the watch cache; started() once the first list is in."""
        await self.cache.run(task_status=task_status)

    def _feed_rbac_index(self, event: Any) -> None:
        if event.revision <= self.cache.revision:
            # A (re)list replays what the cache now holds (a live event is newer than the cache):
            # rebuild the index, so that bindings deleted while the cache was behind stop granting.
            if self._rbac_listed_at != self.cache.revision:
                self._rbac_listed_at = self.cache.revision
                self.rbac.replace(o.obj for rt in self.scheme.stored_types() if rt.group == self.scheme.rbac_group
                                  for o in self.kind_cache(rt).list())
            return
        if not event.obj.key.startswith("/rbac.authorization/"):
            return
        if event.type == "DELETED":
            self.rbac.remove(event.obj.obj)
        else:
            self.rbac.upsert(event.obj.obj)

    # ---- authorization -------------------------------------------------------------------------

    def authorize(self, attrs: Attributes) -> None:
        """Raise Forbidden unless the authorizer allows `attrs`."""
        decision = self.authorizer.authorize(attrs)
        if not decision.allowed:
            raise forbidden(attrs, decision.reason)

    def _authorize(self, user: UserInfo, verb: str, rt: ResourceType, namespace: str, name: str = "",
                   subresource: str = "") -> None:
        if not rt.namespaced:
            # A namespace is authorized in its own scope (Kubernetes' RequestInfo), so a RoleBinding
            # in namespace "a" can grant reading namespace "a" itself.
            namespace = name if rt.kind == "Namespace" else ""
        self.authorize(resource_attributes(
            user, verb, rt.plural, api_group=rt.group, api_version=rt.version,
            namespace=namespace, name=name, subresource=subresource))

    def _authorize_collection(self, user: UserInfo, verb: str, rt: ResourceType, namespace: str,
                              opts: ListOptions) -> None:
        # A list or watch pinned to one name by `fieldSelector=metadata.name=x` is authorized for that
        # name, so rules with resourceNames can allow it (Kubernetes' RequestInfo does the same).
        try:
            name = parse_field_selector(opts.field_selector).exact_match("metadata.name") or ""
        except SelectorError:
            name = ""  # the list itself answers 400
        self.authorize(resource_attributes(user, verb, rt.plural, api_group=rt.group, api_version=rt.version,
                                           namespace=namespace if rt.namespaced else "", name=name))

    # ---- reads ---------------------------------------------------------------------------------

    def kind_cache(self, rt: ResourceType):
        return self.cache.kind(rt.storage_prefix)

    async def get(self, user: UserInfo, rt: ResourceType, namespace: str, name: str, *,
                  resource_version: str | None = None, subresource: str = "") -> StoredObject:
        """One object. resourceVersion unset: most recent (the cache once it caught up with
        the store, else the store); "0": any (the cache as is); other: not older than it.

        Raises NotFound, BadRequest (malformed version), ResourceVersionTooLarge (504).
        """
        self._authorize(user, "get", rt, namespace, name, subresource)
        key = rt.storage_key(namespace, name)
        if await self._wait_for_version(resource_version):
            cache = self.kind_cache(rt)
            obj = cache.get(key)
            if obj is None and key in cache.corrupt:
                # Stored but undecodable: a 500 "corrupt object", as Kubernetes answers.
                raise CorruptObject(key, cache.corrupt[key])
        else:
            obj = await self._current(key)  # the cache lags: a consistent read from the store
        if obj is None:
            raise not_found(rt, name)
        return obj

    async def _wait_for_version(self, resource_version: str | None, timeout: float = 3.0) -> bool:
        """Wait until the cache may answer a read at `resource_version`.

        Returns False when a consistent read (version unset) must go to the
        store because the cache did not catch up within `timeout`. Raises
        BadRequest (malformed), ResourceVersionTooLarge (504, Retry-After 1).
        """
        if resource_version in (None, ""):
            return await self.cache.wait_fresh(timeout)
        if resource_version != "0":
            wanted = parse_resource_version(resource_version)
            if self.cache.revision < wanted and not await self.cache.wait_for(wanted, timeout=timeout):
                from runtime.registry.listing import too_large
                raise too_large(wanted, self.cache.revision)
        return True

    def matcher(self, rt: ResourceType, namespace: str, opts: ListOptions) -> Callable[[StoredObject], bool]:
        """The filter of a list or watch: namespace, label and field selectors (400 if malformed)."""
        try:
            labels = parse_label_selector(opts.label_selector)
            fields = parse_field_selector(opts.field_selector, KIND_FIELD_LABELS.get(rt.kind, FIELD_LABELS))
        except SelectorError as exc:
            raise errors.BadRequest(str(exc)) from None
        ns = namespace if rt.namespaced else ""
        if labels.empty and fields.empty and not ns:
            return lambda o: True

        def match(o: StoredObject) -> bool:
            meta = o.obj["metadata"]
            if ns and meta.get("namespace") != ns:
                return False
            if not labels.empty and not labels.matches(meta.get("labels") or {}):
                return False
            if not fields.empty and not fields.matches(selectable_fields(rt, o.obj)):
                return False
            return True
        return match

    async def list(self, user: UserInfo, rt: ResourceType, namespace: str, opts: ListOptions) -> ListResult:
        """A collection (the paging and resourceVersion rules live in `runtime.registry.listing`)."""
        self._authorize_collection(user, "list", rt, namespace, opts)
        from runtime.registry.listing import list_objects
        return await list_objects(self, rt, namespace, opts)

    async def open_watch(self, user: UserInfo, rt: ResourceType, namespace: str, opts: ListOptions):
        """A watch stream (see `runtime.registry.watching`)."""
        self._authorize_collection(user, "watch", rt, namespace, opts)
        from runtime.registry.watching import open_watch
        return await open_watch(self, rt, namespace, opts)

    # ---- writes --------------------------------------------------------------------------------

    async def create(self, user: UserInfo, rt: ResourceType, namespace: str, body: Body,
                     opts: WriteOptions = WriteOptions()) -> WriteResult:
        """POST: a new object (201). 409 AlreadyExists if the name is taken.

        With `opts.dry_run` every stage runs (defaulting, validation,
        admission, the name check) and the answer is the object that would
        have been stored, without a resourceVersion; nothing is written.
        """
        self._check_writable(rt)
        self._authorize(user, "create", rt, namespace)
        obj, warnings = decode_object(rt, body, field_validation=opts.field_validation)
        return await self._create(user, rt, namespace, obj, opts, warnings)

    async def _create(self, user: UserInfo, rt: ResourceType, namespace: str, obj: dict[str, Any],
                      opts: WriteOptions, warnings: list[str], *, operation: str = "Update") -> WriteResult:
        """Create `obj` (decoded). `operation` "Apply": its managedFields were set by apply, keep them."""
        meta = obj["metadata"]
        self._check_namespace_field(rt, namespace, meta)
        if meta.get("resourceVersion"):
            raise errors.InternalError("resourceVersion should not be set on objects to be created")
        if rt.namespaced:
            # From the namespace check to the write, a delete cannot close the namespace (no orphans).
            async with self.namespace_gate.creating(namespace):
                await self._check_namespace_open(rt, namespace, meta.get("name", ""))
                return await self._create_in_open_scope(user, rt, namespace, obj, opts, warnings, operation)
        return await self._create_in_open_scope(user, rt, namespace, obj, opts, warnings, operation)

    async def _create_in_open_scope(self, user: UserInfo, rt: ResourceType, namespace: str, obj: dict[str, Any],
                                    opts: WriteOptions, warnings: list[str], operation: str) -> WriteResult:
        """The rest of `_create`, once the namespace (if any) is known to be open."""
        meta = obj["metadata"]
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = meta["generateName"] + _random_suffix()
        meta["uid"] = str(uuid.uuid4())
        meta["creationTimestamp"] = now_rfc3339()
        meta["generation"] = 1
        for server_set in ("deletionTimestamp", "deletionGracePeriodSeconds", "selfLink"):
            meta.pop(server_set, None)
        strategy.prepare_for_create(self.scheme, rt, obj)
        errs = validate_object(rt.kind, obj, namespaced=rt.namespaced, rbac_group=self.scheme.rbac_group)
        if errs:
            raise invalid_error(rt.kind, _group_kind(rt), meta.get("name", ""), errs)
        if operation == "Update":
            strategy.track_managers(self.scheme, rt, None, obj, opts, "Update", now_rfc3339())
        warnings = warnings + strategy.write_warnings(self.scheme, rt, None, obj, opts.field_manager)
        await self._admit(user, rt, "create", obj, None, opts)
        key = rt.storage_key(namespace if rt.namespaced else None, meta["name"])
        if opts.dry_run:
            # Kubernetes' dry-run storage still answers 409 for a taken name.
            if await self.store.get(key) is not None:
                raise errors.AlreadyExists(f'{rt.group_resource} "{meta["name"]}" already exists',
                                           name=meta["name"], group=rt.group, kind=rt.plural)
            return WriteResult(StoredObject(key, obj, 0), True, warnings)
        try:
            entry = await self.store.create(key, _encoder(obj))
        except KeyExists:
            raise errors.AlreadyExists(f'{rt.group_resource} "{meta["name"]}" already exists',
                                       name=meta["name"], group=rt.group, kind=rt.plural) from None
        return WriteResult(StoredObject(key, obj, entry.mod_revision, entry.value), True, warnings)

    async def update(self, user: UserInfo, rt: ResourceType, namespace: str, name: str, body: Body,
                     opts: WriteOptions = WriteOptions(), *, subresource: str = "") -> WriteResult:
        """PUT: replace an object (200), or create it when missing (201).

        With metadata.resourceVersion set, a stale version is 409 Conflict;
        without, the update is unconditional (allowed for these kinds). With
        `opts.dry_run` the answer is the object that would have been stored,
        at the stored resourceVersion; nothing is written.
        """
        self._check_writable(rt)
        key = rt.storage_key(namespace if rt.namespaced else None, name)
        current = await self._current(key)
        if current is None and not subresource:
            self._authorize(user, "create", rt, namespace, name)
        else:
            self._authorize(user, "update", rt, namespace, name, subresource)
        obj, warnings = decode_object(rt, body, field_validation=opts.field_validation)
        meta = obj["metadata"]
        if meta.get("name") and meta["name"] != name:
            raise errors.BadRequest(f"the name of the object ({meta['name']}) does not match the name "
                                    f"on the URL ({name})")
        meta["name"] = name
        if current is None:
            if subresource:
                raise not_found(rt, name)
            meta.pop("resourceVersion", None)
            return await self._create(user, rt, namespace, obj, opts, warnings)
        wanted_rv = meta.get("resourceVersion")
        return await self._update_with(user, rt, key, name, lambda _old: obj, opts, warnings,
                                       precondition_rv=wanted_rv, subresource=subresource,
                                       first=current)

    async def _current(self, key: str) -> StoredObject | None:
        """The stored object (None if missing). Raises CorruptObject (500) when it does not decode."""
        entry = await self.store.get(key)
        return None if entry is None else decode_stored(key, entry.value, entry.mod_revision)

    async def _update_with(self, user: UserInfo, rt: ResourceType, key: str, name: str,
                           transform: Callable[[StoredObject], dict[str, Any]], opts: WriteOptions,
                           warnings: list[str], *, precondition_rv: str | None = None,
                           subresource: str = "", first: StoredObject | None = None,
                           operation: str = "Update") -> WriteResult:
        """Read-modify-write with retries on conflict (Kubernetes' GuaranteedUpdate).

        `transform(old)` returns the new object; a precondition resourceVersion
        that differs from the stored one is a 409 Conflict, never retried.
        `operation` "Apply": the transform (server-side apply) tracked the
        managers itself. Dry run stops right before the store write and
        answers the new object at the stored resourceVersion.
        """
        current = first
        # Retried until it applies, as Kubernetes' GuaranteedUpdate: a conflict means another write to
        # this key committed, so some writer always progresses. A fixed cap would turn heavy contention
        # (50 writers on one object, one winner per group commit) into 409s for unconditional writes.
        while True:
            if current is None:
                current = await self._current(key)
                if current is None:
                    raise not_found(rt, name)
            if precondition_rv and precondition_rv != current.obj["metadata"].get("resourceVersion"):
                raise conflict(rt, name)
            new = transform(current)
            old = current.obj
            strategy.prepare_for_update(self.scheme, rt, new, old, subresource)
            errs = validate_update(rt.kind, new, old, namespaced=rt.namespaced,
                                   rbac_group=self.scheme.rbac_group)
            if errs:
                raise invalid_error(rt.kind, _group_kind(rt), name, errs)
            if operation == "Update":
                strategy.track_managers(self.scheme, rt, old, new, opts, "Update", now_rfc3339(), subresource)
            result_warnings = warnings + strategy.write_warnings(self.scheme, rt, old, new, opts.field_manager)
            await self._admit(user, rt, "update", new, old, opts)
            if _same_object(new, old):
                return WriteResult(current, False, result_warnings)
            if opts.dry_run:
                new["metadata"]["resourceVersion"] = old["metadata"].get("resourceVersion", str(current.revision))
            if strategy.should_delete_on_update(rt, new):
                if opts.dry_run:
                    return WriteResult(StoredObject(key, new, current.revision), False, result_warnings)
                try:
                    revision, _ = await self.store.delete(key, expected_revision=current.revision)
                except RevisionConflict as exc:
                    current = _conflict_state(key, exc)
                    continue
                return WriteResult(StoredObject(key, new, revision), False, result_warnings)
            if opts.dry_run:
                return WriteResult(StoredObject(key, new, current.revision), False, result_warnings)
            try:
                entry = await self.store.update(key, _encoder(new), expected_revision=current.revision)
            except RevisionConflict as exc:
                if precondition_rv:
                    raise conflict(rt, name) from None
                current = _conflict_state(key, exc)  # the state that won: no second read
                continue
            except KeyNotFound:
                raise not_found(rt, name) from None
            return WriteResult(StoredObject(key, new, entry.mod_revision, entry.value), False, result_warnings)

    async def patch(self, user: UserInfo, rt: ResourceType, namespace: str, name: str, patch_type: str,
                    patch: Body, opts: WriteOptions = WriteOptions(), *, subresource: str = "") -> WriteResult:
        """PATCH in one of the four types (see `runtime.registry.patching`)."""
        self._check_writable(rt)
        from runtime.registry.patching import patch_object
        return await patch_object(self, user, rt, namespace, name, patch_type, patch, opts, subresource)

    async def delete(self, user: UserInfo, rt: ResourceType, namespace: str, name: str,
                     options: DeleteOptions = DeleteOptions()) -> DeleteResult:
        """DELETE: two-phase when the object has finalizers (see `runtime.registry.deletion`)."""
        self._check_writable(rt)
        self._authorize(user, "delete", rt, namespace, name)
        from runtime.registry.deletion import delete_object
        return await delete_object(self, user, rt, namespace, name, options)

    async def delete_collection(self, user: UserInfo, rt: ResourceType, namespace: str,
                                list_opts: ListOptions, options: DeleteOptions) -> dict[str, Any]:
        """DELETE on a collection: every matching object, as single deletes; a success Status."""
        self._check_writable(rt)
        self._authorize(user, "deletecollection", rt, namespace)
        from runtime.registry.deletion import delete_collection
        return await delete_collection(self, user, rt, namespace, list_opts, options)

    async def review(self, user: UserInfo, rt: ResourceType, namespace: str, body: Body,
                     opts: WriteOptions = WriteOptions()) -> WriteResult:
        """POST of a virtual kind (the access reviews, SelfSubjectReview): evaluated, never stored."""
        from runtime.registry.reviews import authorize_review, evaluate_review
        authorize_review(self, user, rt, namespace)
        obj, warnings = decode_object(rt, body, field_validation=opts.field_validation)
        if rt.namespaced:
            self._check_namespace_field(rt, namespace, obj["metadata"])
        result = evaluate_review(self, user, rt, namespace, obj)
        return WriteResult(StoredObject("", result, 0), True, warnings)

    # ---- helpers -------------------------------------------------------------------------------

    def _check_writable(self, rt: ResourceType) -> None:
        if rt.virtual:
            raise errors.MethodNotAllowed("the server does not allow this method on the requested resource")

    def _check_namespace_field(self, rt: ResourceType, namespace: str, meta: dict[str, Any]) -> None:
        if not rt.namespaced:
            return
        if meta.get("namespace") and meta["namespace"] != namespace:
            raise errors.BadRequest("the namespace of the provided object does not match the namespace "
                                    "sent on the request")
        meta["namespace"] = namespace

    async def _check_namespace_open(self, rt: ResourceType, namespace: str, name: str) -> None:
        key = self.namespaces.storage_key(None, namespace)
        if await self.cache.wait_fresh():
            ns = self.kind_cache(self.namespaces).get(key)
        else:
            ns = await self._current(key)  # the cache lags: a terminating state may not be in it yet
        if ns is None:
            raise errors.NotFound(f'namespaces "{namespace}" not found', name=namespace, kind="namespaces")
        if ns.obj["metadata"].get("deletionTimestamp"):
            raise errors.Forbidden(
                f'{rt.group_resource} "{name}" is forbidden: unable to create new content in namespace '
                f"{namespace} because it is being terminated", name=name, group=rt.group, kind=rt.plural,
                causes=[errors.Cause("NamespaceTerminating",
                                     f"namespace {namespace} is being terminated", "metadata.namespace")])

    async def _admit(self, user: UserInfo, rt: ResourceType, operation: str, obj: dict[str, Any],
                     old: dict[str, Any] | None, opts: WriteOptions) -> None:
        from runtime.registry.admission import admit
        await admit(self, user, rt, operation, obj, old, opts)


#: The fields every kind can be selected by (Kubernetes' DefaultClusterScopedAttr / DefaultNamespaceScopedAttr).
FIELD_LABELS = ("metadata.name", "metadata.namespace")
# Kinds with their own field labels (Kubernetes' per-kind field label conversion): a Namespace
# is selectable by `status.phase`, not by `metadata.namespace`.
KIND_FIELD_LABELS: dict[str, tuple[str, ...]] = {"Namespace": ("metadata.name", "status.phase")}


def selectable_fields(rt: ResourceType, obj: dict[str, Any]) -> dict[str, str]:
    """The values a field selector matches `obj` on (Kubernetes' `<Kind>ToSelectableFields`)."""
    meta = obj["metadata"]
    if rt.kind == "Namespace":
        return {"metadata.name": meta.get("name", ""), "status.phase": (obj.get("status") or {}).get("phase", "")}
    return {"metadata.name": meta.get("name", ""), "metadata.namespace": meta.get("namespace", "")}


def parse_resource_version(value: str) -> int:
    """A resourceVersion as this server writes them (decimal); 400 for anything else."""
    if not value.isdigit():
        raise errors.BadRequest(f'invalid resource version "{value}"' if value else "invalid resource version")
    return int(value)


def _encoder(obj: dict[str, Any]) -> Callable[[int], bytes]:
    def encode(revision: int) -> bytes:
        obj["metadata"]["resourceVersion"] = str(revision)
        return dumps_json(obj)
    return encode


def _conflict_state(key: str, exc: RevisionConflict) -> StoredObject:
    """The stored object a conditional write lost to (carried by the conflict). Raises CorruptObject."""
    return decode_stored(key, exc.current.value, exc.current.mod_revision)


def _same_object(new: dict[str, Any], old: dict[str, Any]) -> bool:
    """An update that changes nothing is not written (Kubernetes skips no-op updates)."""
    a = dict(new, metadata={k: v for k, v in new["metadata"].items() if k != "resourceVersion"})
    b = dict(old, metadata={k: v for k, v in old["metadata"].items() if k != "resourceVersion"})
    return a == b


def _group_kind(rt: ResourceType) -> str:
    """`ClusterRole.rbac.authorization.k8s.io`: how Kubernetes names the kind in a 422 (GroupKind.String)."""
    return f"{rt.kind}.{rt.group}" if rt.group else rt.kind


def _random_suffix(n: int = 5) -> str:
    # Kubernetes' utilrand.String alphabet: no vowels or confusable characters.
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    return "".join(secrets.choice(alphabet) for _ in range(n))


def not_found(rt: ResourceType, name: str) -> errors.NotFound:
    return errors.NotFound(f'{rt.group_resource} "{name}" not found', name=name, group=rt.group, kind=rt.plural)


def conflict(rt: ResourceType, name: str) -> errors.Conflict:
    return errors.Conflict(
        f'Operation cannot be fulfilled on {rt.group_resource} "{name}": the object has been modified; '
        "please apply your changes to the latest version and try again",
        name=name, group=rt.group, kind=rt.plural)


def forbidden(attrs: Attributes, reason: str = "") -> errors.Forbidden:
    """Kubernetes' 403: `clusterroles.rbac... "x" is forbidden: User "u" cannot get resource ...`."""
    message = forbidden_status_message(attrs, reason)
    return errors.Forbidden(message, name=attrs.name, group=attrs.api_group, kind=attrs.resource)
