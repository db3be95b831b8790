"""The scheme: every kind served, with its group, version, resource, scope and strategy.

Group names derive from one domain (`--api-domain`, default `svc.io`):
`rbac.authorization.<domain>`, `authorization.<domain>`,
`authentication.<domain>`, `coordination.<domain>` (`Lease`); core
(`Namespace`) is the group "". With `k8s.io` every name is the Kubernetes one.
A kind may also name an absolute group (custom kinds).

A `Scheme` starts with the built-in kinds (`runtime.models.catalog.BUILTIN_KINDS`);
`register` adds a kind (a `KindInfo` and its `Strategy` class, or a factory of
one) and returns its `ResourceType`, the kind as served under this scheme,
which carries the bound strategy (`rt.strategy`). A built-in kind's strategy
(`runtime.server.kinds.STRATEGIES`) is bound when it is first asked for: a
client, which looks kinds up but never asks, loads no strategy, CEL, JWT or
RE2 module; a server's registry binds every kind's when it is built.
Kinds may come and go while the server runs (custom kinds):
`unregister` removes one, and `generation` counts the changes so that what is
derived from the scheme (discovery, OpenAPI) is rebuilt when it moves;
`wait_changed(generation)` blocks until it does (controllers that follow
every kind, such as the garbage collector).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable, Iterable

import trio
from pydantic import BaseModel

from runtime.machinery.kindinfo import KindInfo, model_ref_of
from runtime.models.base import K8sModel
from runtime.models.catalog import BUILTIN_KINDS

__all__ = ["ResourceType", "Scheme", "DEFAULT_DOMAIN"]

DEFAULT_DOMAIN = "svc.io"

#: Makes a kind's strategy for the scheme serving it: a `Strategy` class, or a factory of one.
StrategyFactory = Callable[["Scheme", "ResourceType"], Any]


@dataclass(frozen=True)
class ResourceType:
    """A kind as served under one domain, with its strategy (bound by `Scheme.register`)."""

    info: KindInfo
    group: str
    version: str = "v1"
    #: Binds the strategy when it is first asked for (`Scheme.register`); None: a kind a client names, unserved.
    bind: Callable[[], Any] | None = field(default=None, compare=False, hash=False, repr=False)

    @cached_property
    def strategy(self) -> Any:
        """The kind's strategy (a `runtime.server.kinds` Strategy), bound on first use; None when unserved.

        Typed Any: machinery names no server type (runtime/__init__.py). Once bound, reading it costs what
        reading a plain attribute does (the instance's dict answers).
        """
        return self.bind() if self.bind is not None else None

    @classmethod
    def of(cls, api_version: str, kind: str, plural: str, *, namespaced: bool = True,
           model: type[BaseModel] = K8sModel) -> "ResourceType":
        """A kind a client addresses by its facts (a custom kind it knows), unregistered.

        `client.get(ResourceType.of("example.com/v1", "Team", "teams"), "a", namespace="n")`: the
        in-process client finds the served kind by group, version and plural; over HTTP the facts
        make the path. `model` is the model of its objects (see `runtime.client.typed.bind_kind`).
        """
        group, _, version = api_version.rpartition("/")
        info = KindInfo("", kind, plural, kind.lower(), namespaced, model, group=group, version=version)
        return cls(info, group, version)

    @property
    def kind(self) -> str:
        return self.info.kind

    @property
    def list_kind(self) -> str:
        return self.info.kind + "List"

    @property
    def plural(self) -> str:
        return self.info.plural

    @property
    def namespaced(self) -> bool:
        return self.info.namespaced

    @property
    def model(self) -> type[BaseModel]:
        return self.info.model

    @property
    def virtual(self) -> bool:
        return self.info.virtual

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def group_resource(self) -> str:
        """`clusterroles.rbac.authorization.svc.io` / `namespaces`, as Kubernetes names it in messages."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def group_kind(self) -> str:
        """`ClusterRole.rbac.authorization.k8s.io`: how Kubernetes names the kind in a 422 (GroupKind.String)."""
        return f"{self.kind}.{self.group}" if self.group else self.kind

    @property
    def storage_prefix(self) -> str:
        """Key prefix of every object of this kind: `/<group>/<plural>/` (the group without the domain)."""
        group = self.info.group if self.info.group is not None else (self.info.group_prefix or "core")
        return f"/{group}/{self.plural}/"

    def storage_key(self, namespace: str | None, name: str) -> str:
        if self.namespaced:
            return f"{self.storage_prefix}{namespace}/{name}"
        return f"{self.storage_prefix}{name}"

    def namespace_prefix(self, namespace: str | None) -> str:
        """Prefix for a list: one namespace, or all when namespace is empty."""
        if self.namespaced and namespace:
            return f"{self.storage_prefix}{namespace}/"
        return self.storage_prefix


class Scheme:
    """Kinds under one domain, looked up by resource, kind or apiVersion."""

    def __init__(self, domain: str = DEFAULT_DOMAIN,
                 kinds: Iterable[tuple[KindInfo, StrategyFactory]] | None = None) -> None:
        """Serve `kinds` (each with its strategy, bound now, as `register` does); by default the built-in
        kinds, each bound to its strategy when that is first asked for (`_builtin_strategy`)."""
        self.domain = domain
        self.types: tuple[ResourceType, ...] = ()
        self._by_resource: dict[tuple[str, str, str], ResourceType] = {}
        self._by_kind: dict[tuple[str, str], ResourceType] = {}
        self._by_bare_kind: dict[str, ResourceType] = {}
        self._by_gvk: dict[tuple[str, str, str], ResourceType] = {}
        #: Bumped by every register/unregister.
        self.generation = 0
        self._changed = trio.Event()
        if kinds is None:
            for info in BUILTIN_KINDS:
                self._serve(self._resource_type(info, _builtin_strategy))
        else:
            for info, strategy in kinds:
                self.register(info, strategy)

    def register(self, info: KindInfo, strategy: StrategyFactory) -> ResourceType:
        """Serve `info` with `strategy` (a Strategy class or a factory taking (scheme, rt)), bound now.

        Returns its ResourceType. ValueError if the resource is already served; what making the strategy
        raises, with nothing served.
        """
        rt = self._resource_type(info, strategy)
        rt.strategy  # bound before the kind is served
        return self._serve(rt)

    def bind_strategies(self) -> None:
        """Bind every served kind's strategy now: a server does when its registry is built, so that no
        request pays a first use (a client never does, and never loads the server's kinds)."""
        for rt in self.types:
            rt.strategy

    def _resource_type(self, info: KindInfo, strategy: StrategyFactory) -> ResourceType:
        """`info` as served under this domain, its strategy made by `strategy` when first asked for."""
        group = info.group if info.group is not None else self.group_name(info.group_prefix)
        rt = ResourceType(info, group, info.version, bind=lambda: strategy(self, rt))
        if (rt.group, rt.version, rt.plural) in self._by_resource:
            raise ValueError(f"{rt.plural}.{rt.group}/{rt.version} is already served")
        return rt

    def _serve(self, rt: ResourceType) -> ResourceType:
        self.types += (rt,)
        self._index()
        return rt

    def unregister(self, rt: ResourceType) -> None:
        """Stop serving `rt` (a custom kind whose definition went away); nothing if not served."""
        if rt in self.types:
            self.types = tuple(t for t in self.types if t is not rt)
            self._index()

    async def wait_changed(self, generation: int) -> int:
        """Block until `generation` is no longer the current one (a kind came or went); return the new one."""
        while self.generation == generation:
            await self._changed.wait()
        return self.generation

    def _index(self) -> None:
        self.generation += 1
        self._changed.set()
        self._changed = trio.Event()
        self._by_resource = {(t.group, t.version, t.plural): t for t in self.types}
        self._by_kind, self._by_bare_kind, self._by_gvk = {}, {}, {}
        for t in self.types:
            self._by_kind.setdefault((t.group, t.kind), t)
            self._by_bare_kind.setdefault(t.kind, t)
            self._by_gvk.setdefault((t.group, t.version, t.kind), t)

    def group_name(self, prefix: str) -> str:
        return f"{prefix}.{self.domain}" if prefix else ""

    @property
    def rbac_group(self) -> str:
        return self.group_name("rbac.authorization")

    @property
    def authz_group(self) -> str:
        return self.group_name("authorization")

    @property
    def authn_group(self) -> str:
        return self.group_name("authentication")

    @property
    def coordination_group(self) -> str:
        return self.group_name("coordination")

    @property
    def meta_group(self) -> str:
        return self.group_name("meta")

    def groups(self) -> list[tuple[str, list[ResourceType]]]:
        """Served groups in discovery order (core first), with their types."""
        out: dict[str, list[ResourceType]] = {}
        for t in self.types:
            out.setdefault(t.group, []).append(t)
        return list(out.items())

    def by_resource(self, group: str, version: str, plural: str) -> ResourceType | None:
        return self._by_resource.get((group, version, plural))

    def by_kind(self, kind: str, group: str | None = None) -> ResourceType | None:
        if group is None:
            return self._by_bare_kind.get(kind)
        return self._by_kind.get((group, kind))

    def by_api_version_kind(self, api_version: str, kind: str) -> ResourceType | None:
        group, _, version = api_version.rpartition("/")
        return self._by_gvk.get((group, version, kind))

    def by_model(self, model: type[BaseModel]) -> ResourceType | None:
        """The kind a model class is bound to (the first served version)."""
        ref = model_ref_of(model)  # once, not per kind
        return next((t for t in self.types if t.info.names_model(model, ref)), None)

    def stored_types(self) -> list[ResourceType]:
        """Every stored kind, one per storage: of the versions served from one storage (a CRD's, or the
        HorizontalPodAutoscaler's v2 and v1) the first registered."""
        seen: set[str] = set()
        out = []
        for t in self.types:
            if not t.virtual and t.storage_prefix not in seen:
                seen.add(t.storage_prefix)
                out.append(t)
        return out

    def namespaced_types(self) -> list[ResourceType]:
        """Every stored namespaced kind, one per storage (namespace deletion discovers them here)."""
        return [t for t in self.stored_types() if t.namespaced]

    @property
    def namespace_type(self) -> ResourceType:
        """The kind whose objects are namespaces (`Strategy.namespace_kind`)."""
        return next(t for t in self.types if t.strategy.namespace_kind)


def _builtin_strategy(scheme: Scheme, rt: ResourceType) -> Any:
    """The strategy `runtime.server.kinds.STRATEGIES` names for built-in kind `rt`, bound to it.

    The one import of a server module by machinery (runtime/__init__.py), made when a built-in kind's
    strategy is first asked for (on a server: every kind's when its registry is built, `bind_strategies`),
    never at import time: tests/unit/test_layout.py allows exactly this one, and counts
    what importing a client loads.
    """
    # A cycle between layers: the server's kinds build on this module; imported here, late, so that a
    # client, which never asks for a strategy, never loads them.
    from runtime.server.kinds import STRATEGIES
    return STRATEGIES[rt.info](scheme, rt)
