"""`RegistryCore`: the registry's state and the primitives every verb is built from.

State: the store, the scheme, the watch cache (filled by `run()`), the RBAC
index the authorizer reads (kept current from the cache), continue tokens,
the namespace gate, the feature gates. Its parts come from the assembly as
constructor arguments (defaults for a registry served in process): the
authorizer, the token authenticator TokenReview asks, the admission
plug-ins, the token signer; nothing is set on it afterwards.

Primitives, public and used by the verb modules (`reads`, `listing`,
`watching`, `writes`, `patching`, `deletion`, `reviews`), which import this
module at the top and are imported by nothing but the facade:

- policy: `decide`, `authorize` (403 unless allowed), `authorize_request`
  (scope from the kind's strategy), `check_verb` (405 for a verb the kind,
  or the subresource, does not offer). A subresource is the kind's object
  of it (`runtime.server.kinds.Subresource`, None: the main resource),
  resolved once by the facade; nothing here takes its name. Every verb module authorizes the
  request's own verb before it reads anything (kube-apiserver's filter
  chain), so a 403 never tells whether an object exists; an update or apply
  that creates also needs `create`, asked inside `create_object`;
- reads: `kind_cache`, `read_current` (the store, consistent),
  `wait_for_version`, `selection` (selectors parsed once per request);
- writes: `admit` (the kind's admission, then plug-ins; the built-in ones,
  `runtime.server.admission`, around validation), `create_object`
  (a decoded new object: defaults, validation, managed fields, admission,
  store), `guaranteed_update` (read-modify-write retried on conflict, as
  Kubernetes' GuaranteedUpdate).

Internal to `runtime.server.registry`: imported by its modules only.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import trio

from runtime.machinery import errors
from runtime.server.featuregates import DEFAULT_GATES
from runtime.server.admission import AdmissionChain, AdmissionMetrics, CacheServiceResolver, WebhookClient
from runtime.server.admission.steps import admission_steps
from runtime.server.kinds import AdmissionRequest, SchemeObserver, Subresource
from runtime.server.kinds.services import ServiceRanges
from runtime.machinery.storedobject import ObjectEncoder, StoredObject, decode_stored
from runtime.machinery.patch import manager_from_user_agent, update_managed_fields
from runtime.server.rbac import Decision, RBACAuthorizer, RBACIndex
from runtime.server.rbac.attributes import Attributes, resource_attributes
from runtime.server.rbac.user import UserInfo
from runtime.server.registry.admission import AdmissionPlugin, run_plugins
from runtime.webhook.types import Webhook
from runtime.server.registry.answers import (
    WriteResult, claim_namespace, conflict, create_forbidden, forbidden, invalid_object, method_not_allowed, not_found,
    now_rfc3339, parse_resource_version, random_suffix, store_errors, too_large,
)
from runtime.server.registry.continuation import ContinueTokens
from runtime.server.registry.namespace_gate import NamespaceGate
from runtime.server.registry.read_your_writes import ReadYourWritesStore
from runtime.machinery.options import ListOptions, WriteOptions
from runtime.machinery.scheme import ResourceType, Scheme
from runtime.machinery.selectors import (
    FieldSelector, ParsedLabelSelector, SelectorError, parse_field_selector, parse_label_selector,
)
from runtime.server.storage import Entry, RevisionConflict, Store
from runtime.server.storage.encryption import is_stale
from runtime.server.tokenauth import SignedTokenAuthenticator, TokenAuthenticator
from runtime.server.tokens import TokenSigner
from runtime.machinery.validation import invalid_error
from runtime.machinery.validation.names import validate_object_meta_update
from runtime.server.watchcache import KindCache, WatchCache

__all__ = ["RegistryCore", "Selection", "field_manager", "watch_cache_for"]

#: Seconds a read waits for the cache to reach a version (Kubernetes' blockTimeout).
READ_WAIT = 3.0


def watch_cache_for(store: Store, scheme: Scheme, *, history_seconds: float = 300.0,
                    decode_view: Callable[[dict[str, Any]], dict[str, Any]] | None = None) -> WatchCache:
    """The watch cache a registry of `scheme` over `store` reads (built apart so that the assembly can hand
    it to the token authenticator before the registry exists); start it with the registry's `run()`.
    `decode_view`: what in-process informers keep of every object (`WatchCache`'s)."""
    return WatchCache(store, [t.storage_prefix for t in scheme.stored_types()], history_seconds=history_seconds,
                      decode_view=decode_view)


def field_manager(opts: WriteOptions) -> str:
    """The manager a write is recorded under: `fieldManager`, else the User-Agent up to its first `/`."""
    return opts.field_manager or manager_from_user_agent(opts.user_agent) or "unknown"


@dataclass(frozen=True)
class Selection:
    """A list's or watch's filter, parsed once: namespace, label and field selectors.

    `pinned_name` is the name `fieldSelector=metadata.name=x` pins (authorized
    for that name, so rules with resourceNames can allow the request).
    """

    namespace: str
    labels: ParsedLabelSelector
    fields: FieldSelector
    selectable: Callable[[dict[str, Any]], dict[str, str]]

    @property
    def selective(self) -> bool:
        """Whether label or field selectors restrict the result."""
        return not (self.labels.empty and self.fields.empty)

    @property
    def pinned_name(self) -> str:
        return self.fields.exact_match("metadata.name") or ""

    def __call__(self, o: StoredObject) -> bool:
        # Namespace and labels without a decode of a cached object (its key; its labels, kept once read).
        if self.namespace and o.namespace != self.namespace:
            return False
        if not self.labels.empty and not self.labels.matches(o.labels):
            return False
        return self.fields.empty or self.fields.matches(self.selectable(o.obj))


class RegistryCore:
    """The registry's state and primitives (see the module doc). Start `run()` in a nursery first."""

    def __init__(self, store: Store, scheme: Scheme, authorizer: Any = None, *,
                 rbac: RBACIndex | None = None, cache: WatchCache | None = None,
                 authenticator: TokenAuthenticator | None = None, admission: Sequence[AdmissionPlugin | Webhook] = (),
                 tokens: TokenSigner | None = None, feature_gates: dict[str, bool] | None = None,
                 history_seconds: float = 300.0, continue_ttl: float = 300.0, continue_secret: bytes | None = None,
                 token_clock: Callable[[], float] | None = None, service_ranges: ServiceRanges | None = None,
                 admission_metrics: AdmissionMetrics | None = None) -> None:
        self.scheme = scheme
        scheme.bind_strategies()
        #: Roles and bindings as the watch cache sees them, indexed by subject (what the authorizer reads).
        self.rbac = rbac if rbac is not None else RBACIndex()
        #: `authorize(attrs) -> Decision`; by default RBAC over `rbac`.
        self.authorizer = authorizer if authorizer is not None else RBACAuthorizer(self.rbac)
        self.feature_gates = {**DEFAULT_GATES, **(feature_gates or {})}
        #: What Services allocate cluster IPs and node ports from (`--service-cluster-ip-range`,
        #: `--service-node-port-range`; Kubernetes' defaults unless given).
        self.service_ranges = service_ranges if service_ranges is not None else ServiceRanges.parse()
        #: The watch cache of `store` (`watch_cache_for`; `history_seconds` only when it is not given).
        self.cache = cache if cache is not None else watch_cache_for(store, scheme, history_seconds=history_seconds)
        #: The store; its writes answer once the cache holds them (`ReadYourWritesStore`).
        self.store: Store = ReadYourWritesStore(store, self.cache, READ_WAIT)  # type: ignore[assignment]
        # A secret and a wall clock kept across restarts keep continue tokens valid (or properly expired).
        self.continue_tokens = ContinueTokens(continue_ttl, continue_secret, token_clock)
        #: Signs service account tokens (a key of its own unless the assembly gives one).
        self.tokens = tokens if tokens is not None else (
            TokenSigner(clock=token_clock) if token_clock is not None else TokenSigner())
        #: The server's whole bearer-token authentication, as TokenReview asks it (the assembly's;
        #: by default only the tokens `tokens` signs).
        self.authenticator: TokenAuthenticator = authenticator if authenticator is not None else (
            SignedTokenAuthenticator(self.tokens, scheme, self.cache))
        #: Admission plug-ins, run in order after the kind's own admission, and Python `Webhook`s, run as the
        #: chain's Python admission steps (`runtime.server.admission.python`); fixed at construction.
        self.admission: tuple[AdmissionPlugin | Webhook, ...] = tuple(admission)
        #: Kubernetes' admission metrics (the server's `/metrics` registry when the assembly gives one).
        self.admission_metrics = admission_metrics if admission_metrics is not None else AdmissionMetrics()
        #: Calls admission and conversion webhooks; a `service` resolves through the watch cache.
        self.webhook_client = WebhookClient(CacheServiceResolver(self))
        #: Kubernetes' default-on plug-ins for every kind: LimitRanger and the mutating steps before
        #: validation; the validating steps, then ResourceQuota, after it.
        mutating, validating = admission_steps(self)
        self.admission_chain = AdmissionChain(self, mutating=mutating, validating=validating)
        #: Creates in a namespace against the delete that closes it (see `namespace_gate`).
        self.namespace_gate = NamespaceGate()
        self.namespaces = scheme.namespace_type
        #: The kinds the authorizer reads (their storage prefixes, and the kind each names).
        self._policy_kinds = {t.storage_prefix: t.kind for t in scheme.stored_types() if t.strategy.feeds_authorizer}
        self._policy_prefixes = tuple(self._policy_kinds)
        #: Kinds whose strategy follows their objects (CRDs: every server serves what they define).
        self._observers = {t.storage_prefix: t.strategy for t in scheme.stored_types()
                           if isinstance(t.strategy, SchemeObserver)}
        self._listed_at = -1
        self.cache.add_handler(self._follow_cache)

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Fill and follow the watch cache; started() once the first list is in."""
        try:
            await self.cache.run(task_status=task_status)
        finally:
            with trio.CancelScope(shield=True):
                await self.webhook_client.aclose()

    def gate(self, name: str) -> bool:
        """Whether feature gate `name` is on (the spec's defaults unless the server set it)."""
        return self.feature_gates.get(name, False)

    def _follow_cache(self, event: Any) -> None:
        """Keep the RBAC index and the observing strategies current with the cache."""
        if event.revision <= self.cache.revision:
            # A (re)list replays what the cache now holds (a live event is newer than the cache):
            # rebuild from it once, so that objects deleted while the cache was behind are forgotten.
            if self._listed_at != self.cache.revision:
                self._listed_at = self.cache.revision
                self.rbac.replace(stored=((kind, o) for prefix, kind in self._policy_kinds.items()
                                          for o in self.cache.kind(prefix).list()))
                for prefix, strategy in self._observers.items():
                    strategy.observe_list([o.obj for o in self.cache.kind(prefix).list()])
            return
        key = event.obj.key
        if key.startswith(self._policy_prefixes):
            if event.type == "DELETED":
                self.rbac.remove(event.obj.obj)
            else:
                kind = next(k for prefix, k in self._policy_kinds.items() if key.startswith(prefix))
                self.rbac.upsert_stored(kind, event.obj)
        for prefix, strategy in self._observers.items():
            if key.startswith(prefix):
                strategy.observe(event.type, event.obj.obj)

    # ---- policy ------------------------------------------------------------------------------------

    def decide(self, attrs: Attributes) -> Decision:
        """The authorizer's decision on `attrs` (never raises)."""
        return self.authorizer.authorize(attrs)

    def authorize(self, attrs: Attributes, refuse: Callable[[Attributes, str], errors.Forbidden] = forbidden) -> None:
        """Raise Forbidden (`refuse(attrs, reason)`) unless the authorizer allows `attrs`."""
        decision = self.decide(attrs)
        if not decision.allowed:
            raise refuse(attrs, decision.reason)

    def authorize_request(self, user: UserInfo, verb: str, rt: ResourceType, namespace: str, name: str = "",
                          subresource: Subresource | None = None) -> None:
        """Authorize `verb` on `rt` (or its `subresource`) in the scope its strategy gives the request."""
        self.authorize(_request_attributes(user, verb, rt, namespace, name, subresource))

    def authorize_create_on_update(self, user: UserInfo, rt: ResourceType, namespace: str, name: str) -> None:
        """The `create` an update or apply that creates needs besides its own verb (Kubernetes'
        withAuthorization, asked once, where admission validates). Raises Forbidden in its words."""
        self.authorize(_request_attributes(user, "create", rt, namespace, name), create_forbidden)

    def check_verb(self, rt: ResourceType, verb: str, subresource: Subresource | None = None) -> None:
        """405 MethodNotAllowed unless the kind (or its `subresource`) offers `verb`."""
        verbs = subresource.verbs if subresource is not None else rt.info.verbs
        if verb not in verbs:
            raise method_not_allowed()

    # ---- reads -------------------------------------------------------------------------------------

    def kind_cache(self, rt: ResourceType) -> KindCache:
        return self.cache.kind(rt.storage_prefix)

    async def read_current(self, rt: ResourceType, key: str, name: str = "") -> StoredObject | None:
        """The stored object, read from the store (None if missing). Raises CorruptObject (500)."""
        with store_errors(rt, name):
            entry = await self.store.get(key)
        return None if entry is None else decode_stored(key, entry.value, entry.mod_revision)

    async def wait_fresh(self, timeout: float = READ_WAIT) -> bool:
        """Wait until the cache holds the store's current revision (a consistent read may use it).

        Returns False when it did not catch up within `timeout`. Raises
        ServiceUnavailable (503) when the store cannot say its revision.
        """
        with store_errors(self.namespaces):  # only StoreUnavailable can come out of asking the revision
            return await self.cache.wait_fresh(timeout)

    async def wait_for_version(self, resource_version: str | None, timeout: float = READ_WAIT) -> bool:
        """Wait until the cache may answer a read at `resource_version`.

        Returns False when a consistent read (version unset) must go to the
        store because the cache did not catch up within `timeout`. Raises
        BadRequest (malformed), ResourceVersionTooLarge (504, Retry-After 1),
        ServiceUnavailable (503: the store cannot be reached).
        """
        if resource_version in (None, ""):
            return await self.wait_fresh(timeout)
        if resource_version != "0":
            wanted = parse_resource_version(resource_version)
            if self.cache.revision < wanted and not await self.cache.wait_for(wanted, timeout=timeout):
                raise too_large(wanted, self.cache.revision)
        return True

    def selection(self, rt: ResourceType, namespace: str, opts: ListOptions) -> Selection:
        """The request's filter, parsed once (400 for a malformed selector)."""
        try:
            labels = parse_label_selector(opts.label_selector)
            fields = parse_field_selector(opts.field_selector, rt.strategy.field_labels, rt.strategy.field_label_error)
        except SelectorError as exc:
            raise errors.BadRequest(str(exc)) from None
        return Selection(namespace if rt.namespaced else "", labels, fields, rt.strategy.selectable_fields)

    def authorized_selection(self, user: UserInfo, verb: str, rt: ResourceType, namespace: str,
                             opts: ListOptions) -> Selection:
        """Authorize a collection request and parse its filter.

        A list or watch is authorized for the name a field selector pins (as
        Kubernetes' RequestInfo does), so rules with resourceNames can allow
        it. Authorization comes first, as in Kubernetes' filter chain: a caller
        not allowed to list learns nothing about its malformed selector (403,
        not 400).
        """
        def authorize(name: str) -> None:
            # A collection is authorized in the path's namespace, whatever the kind (no item scope).
            self.authorize(resource_attributes(user, verb, rt.plural, api_group=rt.group, api_version=rt.version,
                                               namespace=namespace if rt.namespaced else "", name=name))
        try:
            selection = self.selection(rt, namespace, opts)
        except errors.BadRequest:
            authorize("")
            raise
        authorize(selection.pinned_name if verb in ("list", "watch") else "")
        self.check_verb(rt, verb)
        return selection

    # ---- writes ------------------------------------------------------------------------------------

    async def admit(self, user: UserInfo, rt: ResourceType, operation: str, obj: dict[str, Any],
                    old: dict[str, Any] | None, dry_run: bool, *, options: Any = None) -> AdmissionRequest:
        """A delete's admission: the kind's own (e.g. RBAC escalation), the admission chain's both phases, then
        the user's plug-ins in order; returns the request, whose `finish` a delete awaits once the object is
        removed (and whose `warnings` the answer carries)."""
        request = AdmissionRequest(user, rt, operation, obj, old, dry_run, options=options)
        await rt.strategy.admit(self, request)
        await self.admission_chain.mutate(request)
        await self.admission_chain.validate(request)
        await run_plugins(self.admission, request)
        return request

    async def create_object(self, user: UserInfo, rt: ResourceType, namespace: str, obj: dict[str, Any],
                            opts: WriteOptions, warnings: list[str], *, operation: str = "Update",
                            on_update: bool = False) -> WriteResult:
        """Create the decoded `obj` (201); `operation` "Apply": apply already set its managedFields.

        `on_update`: a PUT or apply that creates, authorized for its own verb
        only; `create` is asked after validation, before the admission
        plug-ins (where Kubernetes' createValidation runs).

        Namespaced objects are created only in an open namespace (404 for a
        missing one, 403 for one being terminated). Raises AlreadyExists,
        Invalid, Forbidden. Dry run answers the object that would be stored.
        """
        meta = obj["metadata"]
        claim_namespace(rt, meta, namespace)
        if meta.get("resourceVersion"):
            # Kubernetes' storage answers this with a 500; a client's mistake is a 400 here (no 5xx for a
            # request the client can fix: docs/kubernetes-differences.md).
            raise errors.BadRequest("resourceVersion should not be set on objects to be created")
        if not rt.namespaced:
            return await self._create_in_open_scope(user, rt, namespace, obj, opts, warnings, operation, on_update)
        # From the namespace check to the write, a delete cannot close the namespace (no orphans).
        async with self.namespace_gate.creating(namespace):
            await self._check_namespace_open(rt, namespace, meta.get("name", ""))
            return await self._create_in_open_scope(user, rt, namespace, obj, opts, warnings, operation, on_update)

    async def _create_in_open_scope(self, user: UserInfo, rt: ResourceType, namespace: str, obj: dict[str, Any],
                                    opts: WriteOptions, warnings: list[str], operation: str,
                                    on_update: bool) -> WriteResult:
        # Kubernetes' order: scheme defaulting and the field manager on the object as sent, then the
        # kind's storage (RBAC escalation), then BeforeCreate (server fields, PrepareForCreate,
        # validation), then the `create` check of a PUT or apply that creates, then validating admission.
        meta = obj["metadata"]
        strategy = rt.strategy
        strategy.default(obj)
        generated = not meta.get("name") and bool(meta.get("generateName"))
        if generated:
            meta["name"] = meta["generateName"] + random_suffix()
        if operation == "Update":
            _track_managers(rt, None, obj, opts, now_rfc3339())
            meta = obj["metadata"]  # a new dict
        request = AdmissionRequest(user, rt, "create", obj, None, opts.dry_run, options=opts,
                                   generated_name=generated)
        # The uid first, as Kubernetes' Store.Create fills the system fields before BeginCreate: what a
        # kind's admission reserves beside the object names it (a Service's IPs and node ports).
        meta["uid"] = str(uuid.uuid4())
        await strategy.admit(self, request)
        committed = False
        try:
            await self.admission_chain.mutate(request)
            obj = request.obj  # a mutating step may answer a new object
            meta = obj["metadata"]
            meta["creationTimestamp"] = now_rfc3339()
            if strategy.counts_generation:
                meta["generation"] = 1
            for server_set in ("deletionTimestamp", "deletionGracePeriodSeconds", "selfLink"):
                meta.pop(server_set, None)
            strategy.prepare_for_create(obj)
            errs = strategy.validate(obj)
            if errs:
                raise invalid_error(rt.kind, rt.group_kind, meta.get("name", ""), errs)
            warnings = warnings + strategy.warnings(None, obj, opts.field_manager)
            if on_update:
                self.authorize_create_on_update(user, rt, namespace, meta.get("name", ""))
            await run_plugins(self.admission, request)
            await self.admission_chain.validate(request)
            warnings = warnings + [w for w in request.warnings if w not in warnings]
            name = meta["name"]
            key = rt.storage_key(namespace if rt.namespaced else None, name)
            with store_errors(rt, name):
                if opts.dry_run:
                    # Kubernetes' dry-run storage still answers 409 for a taken name.
                    if await self.store.get(key) is not None:
                        raise errors.AlreadyExists(f'{rt.group_resource} "{name}" already exists', name=name,
                                                   group=rt.group, kind=rt.plural)
                    return WriteResult(StoredObject(key, obj, 0), True, warnings)
                encoder = ObjectEncoder(obj)
                entry = await self.store.create(key, encoder)
            committed = True
            return WriteResult(_written(encoder, entry), True, warnings)
        finally:
            await _settle(request, committed)

    async def _check_namespace_open(self, rt: ResourceType, namespace: str, name: str) -> None:
        namespaces = self.namespaces
        key = namespaces.storage_key(None, namespace)
        if await self.wait_fresh():
            ns = self.kind_cache(namespaces).get(key)
        else:
            ns = await self.read_current(namespaces, key, namespace)  # the cache lags: it may not be terminating yet
        if ns is None:
            raise not_found(namespaces, namespace)
        if ns.obj["metadata"].get("deletionTimestamp"):
            raise errors.Forbidden(
                f'{rt.group_resource} "{name}" is forbidden: unable to create new content in namespace '
                f"{namespace} because it is being terminated", name=name, group=rt.group, kind=rt.plural,
                causes=[errors.Cause("NamespaceTerminating",
                                     f"namespace {namespace} is being terminated", "metadata.namespace")])

    async def guaranteed_update(self, user: UserInfo, rt: ResourceType, key: str, name: str,
                                transform: Callable[[StoredObject], dict[str, Any]], opts: WriteOptions,
                                warnings: list[str], *, precondition_rv: str | None = None,
                                precondition_uid: str | None = None, subresource: Subresource | None = None,
                                first: StoredObject | None = None, operation: str = "Update") -> WriteResult:
        """Read-modify-write with retries on conflict (Kubernetes' GuaranteedUpdate).

        `transform(old)` returns the new object, a write of `subresource` (None: the main resource)
        restricted to what it keeps (the strategy's `prepare_for_update`); a precondition resourceVersion
        that differs from the stored one is a 409 Conflict, never retried.
        `operation` "Apply": the transform (server-side apply) tracked the
        managers itself. Dry run stops right before the store write and
        answers the new object at the stored resourceVersion. An update that
        removes a terminating object's last finalizer deletes it.
        """
        current = first
        # Retried until it applies: a conflict means another write to this key committed, so some
        # writer always progresses. A fixed cap would turn heavy contention (50 writers on one
        # object, one winner per group commit) into 409s for unconditional writes.
        while True:
            if current is None:
                current = await self.read_current(rt, key, name)
                if current is None:
                    raise not_found(rt, name)
            stored_uid = current.obj["metadata"].get("uid", "")
            if precondition_uid and precondition_uid != stored_uid:
                raise conflict(rt, name, invalid_object(key, f"Precondition failed: UID in precondition: "
                                                             f"{precondition_uid}, UID in object meta: {stored_uid}"))
            if precondition_rv and precondition_rv != current.obj["metadata"].get("resourceVersion"):
                raise conflict(rt, name)
            # The transform (a patch, an apply) works on the object as the request's version shows it.
            new = transform(rt.strategy.present(current) if rt.strategy.converts else current)
            old = current.obj
            strategy = rt.strategy
            # Scheme defaulting of every write's body (an update's, a patch's or apply's result), as
            # Kubernetes' decoder defaults what it decodes: before the field manager, which owns what it sets.
            strategy.default(new)
            # What the body says of managedFields, before the strategy drops an empty list (`[]` resets).
            sent_managed = new["metadata"].get("managedFields")
            sent_uid = new["metadata"].get("uid")
            strategy.prepare_for_update(new, old, subresource)
            request = AdmissionRequest(user, rt, "update", new, old, opts.dry_run, options=opts,
                                       subresource=subresource.name if subresource is not None else "")
            await strategy.admit(self, request)  # before validation, as Kubernetes' RBAC storage
            committed = False
            try:
                await self.admission_chain.mutate(request)
                new = request.obj  # a mutating step may answer a new object
                errs = strategy.validate_update(new, old) + validate_object_meta_update(
                    new["metadata"], old["metadata"], sent_uid=sent_uid)
                if errs:
                    raise invalid_error(rt.kind, rt.group_kind, name, errs)
                if operation == "Update":
                    if sent_managed is not None and subresource is None:
                        new["metadata"]["managedFields"] = sent_managed
                    _track_managers(rt, old, new, opts, now_rfc3339(), subresource)
                result_warnings = warnings + strategy.warnings(old, new, opts.field_manager)
                await run_plugins(self.admission, request)
                await self.admission_chain.validate(request)
                result_warnings += [w for w in request.warnings if w not in result_warnings]
                # Unchanged, but sealed with an old key (a rotation's rewrite): written anyway, as kube's stale value.
                if _same_object(new, old) and not await is_stale(self.store, key):
                    return WriteResult(current, False, result_warnings)
                if opts.dry_run:
                    new["metadata"]["resourceVersion"] = old["metadata"].get("resourceVersion", str(current.revision))
                    return WriteResult(StoredObject(key, new, current.revision), False, result_warnings)
                with store_errors(rt, name):
                    try:
                        if strategy.should_delete_on_update(new):
                            revision, _ = await self.store.delete(key, expected_revision=current.revision)
                            committed = True
                            return WriteResult(StoredObject(key, new, revision), False, result_warnings)
                        encoder = ObjectEncoder(new)
                        entry = await self.store.update(key, encoder, expected_revision=current.revision)
                        committed = True
                    except RevisionConflict as exc:
                        if precondition_rv:
                            raise conflict(rt, name) from None
                        # The state that won, carried by the store's conflict: no second read.
                        current = decode_stored(key, exc.current.value, exc.current.mod_revision)
                        continue
                return WriteResult(_written(encoder, entry), False, result_warnings)
            finally:
                await _settle(request, committed)


async def _settle(request: AdmissionRequest, committed: bool) -> None:
    """Settle what the kind's admission reserved for an admitted write (`AdmissionRequest.finish`), whatever
    ended the write: shielded, so that a cancelled request still releases it."""
    if request.on_finish:
        with trio.CancelScope(shield=True):
            await request.finish(committed)


def _track_managers(rt: ResourceType, old: dict[str, Any] | None, new: dict[str, Any], opts: WriteOptions,
                    now: str, subresource: Subresource | None = None) -> None:
    """Record a non-apply write (create, update, non-apply patch) in metadata.managedFields.

    The fields this write adds or changes become the writer's (an `Update`
    entry; see `runtime.machinery.patch.update_managed_fields`). As apiserver's field
    manager: managed fields sent in the body that decode replace the stored
    ones, `[]` or `[{}]` resets them (the object is then untracked), anything
    else keeps the stored ones; a subresource write always keeps them.
    """
    if rt.strategy.converts:
        # A kind stored in another version (autoscaling/v1 HPAs): the writer owns its own version's fields.
        shown_old = None if old is None else rt.strategy.present(StoredObject("", old, 0)).obj
        tracked = update_managed_fields(shown_old, rt.strategy.present(StoredObject("", new, 0)).obj,
                                        manager=field_manager(opts), operation="Update", model=rt.model,
                                        api_version=rt.api_version, now=now,
                                        subresource=subresource.name if subresource is not None else "")
        new["metadata"] = {k: v for k, v in new["metadata"].items() if k != "managedFields"}
        if "managedFields" in tracked["metadata"]:
            new["metadata"]["managedFields"] = tracked["metadata"]["managedFields"]
        return
    tracked = update_managed_fields(old, new, manager=field_manager(opts), operation="Update", model=rt.model,
                                    api_version=rt.api_version, now=now,
                                    subresource=subresource.name if subresource is not None else "")
    new["metadata"] = tracked["metadata"]


def _written(encoder: ObjectEncoder, entry: Entry) -> StoredObject:
    """The object a write stored: the encoder's (the one the watch cache takes too), or rebuilt from the entry."""
    return encoder.stored(entry.key, entry.mod_revision) or StoredObject(entry.key, encoder.obj, entry.mod_revision,
                                                                         entry.value)


def _same_object(new: dict[str, Any], old: dict[str, Any]) -> bool:
    """An update that changes nothing is not written (Kubernetes skips no-op updates)."""
    a = dict(new, metadata={k: v for k, v in new["metadata"].items() if k != "resourceVersion"})
    b = dict(old, metadata={k: v for k, v in old["metadata"].items() if k != "resourceVersion"})
    return a == b


def _request_attributes(user: UserInfo, verb: str, rt: ResourceType, namespace: str, name: str = "",
                        subresource: Subresource | None = None) -> Attributes:
    """A request's attributes on `rt` (or its `subresource`), in the scope its strategy gives the request."""
    return resource_attributes(user, verb, rt.plural, api_group=rt.group, api_version=rt.version,
                               namespace=rt.strategy.authorization_namespace(namespace, name), name=name,
                               subresource=subresource.name if subresource is not None else "")
