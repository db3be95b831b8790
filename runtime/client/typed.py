"""Typed objects: your pydantic models bound to kinds (custom ones above all), as controller-runtime's typed API.

A controller may work on plain dicts (a kind's `ResourceType`) or on model
instances. For a custom kind, write its model and bind it once, at import::

    class TeamSpec(KubeModel):
        members: list[Member] = []

    class Team(CustomResource):
        spec: TeamSpec = TeamSpec()
        status: TeamStatus = TeamStatus()

    TEAMS = bind_kind(Team, "example.com/v1", "teams", namespaced=False)

`bind_kind` returns the kind's `ResourceType` (its `model` is `Team`), so
that every kind-taking call works with it: `manager.controller().for_(TEAMS)`,
`.owns(TEAMS)`, `manager.informers.informer(TEAMS)`, `client.get(TEAMS, name)`
(a dict). The model class itself names the kind too, and then objects are
models: `await client.get(Team, "a")` returns a `Team`, `client.update(team,
subresource="status")` sends one, `client.list(Team)` lists `Team`s.
`TypedCache(informer, Team)` reads an informer's cache as `Team`s.

The binding holds only what the client needs to reach the kind (group,
version, kind, plural, scope): nothing asks the server, so a controller may
start before its CRD exists (its informer lists again until the kind is
served). The CRD (a manifest) stays the one source of the schema: the
server validates, prunes and defaults; the model only reads and writes.

The built-in kinds' generated models (`runtime.models.k8s`: `from
runtime.models.k8s.apps_v1 import Deployment`) need no binding: `bound_kind`
finds their facts in the generated `KINDS` table (`await
client.get(Deployment, "web", namespace="a")` reaches apps/v1 `deployments`),
and `bound_kind_of` a dict's kind there too, importing its model's module
only then. `bind_kind` on such a model replaces its kind, as on any other.

`KubeModel` is the base of a model's parts: camelCase JSON names
(`replicaCount` for `replica_count`), unknown fields ignored, values coerced
where JSON allows (lax, unlike the strict decoding of the built-in kinds:
what a model reads has passed the server's schema already).

Caveats:
    A model drops fields it does not declare: writing back a model read from a
    newer schema loses the newer fields (as Go's typed clients do). Use a dict
    kind, or a merge patch of just your fields, where that matters.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from runtime.models.base import K8sModel
from runtime.models.k8s import KINDS
from runtime.models.meta import ObjectMeta
from runtime.machinery.scheme import ResourceType, Scheme
from runtime.machinery.storedobject import copy_json

if TYPE_CHECKING:
    from runtime.client.interface import ObjectKey
    from runtime.controller.informer import Informer

__all__ = ["KubeModel", "CustomResource", "bind_kind", "bound_kind", "bound_kind_of", "kind_of_model", "TypedCache"]

M = TypeVar("M", bound=BaseModel)


class KubeModel(K8sModel):
    """Base of a typed object's parts: the built-in models' base (camelCase names, unknown fields ignored),
    with lax types (see the module doc)."""

    model_config = ConfigDict(strict=False)


class CustomResource(KubeModel):
    """Base of a custom kind's model: `apiVersion`, `kind` and `metadata` typed; add `spec` and `status`."""

    api_version: str | None = None
    kind: str | None = None
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)


_BOUND: dict[type[BaseModel], ResourceType] = {}
#: The generated models' package; its modules load only when a model of theirs is asked for.
_GENERATED = "runtime.models.k8s"
#: (apiVersion, kind) -> `module.Class` of the generated models (a few dozen entries, no model loaded).
_GENERATED_BY_KIND = {(facts.api_version, facts.kind): name for name, facts in KINDS.items()}
#: The generated kinds asked for so far, by model, each resolved once (so that a kind's ResourceType is one value).
_GENERATED_KINDS: dict[type[BaseModel], ResourceType] = {}


def bind_kind(model: type[BaseModel], api_version: str, plural: str, *, kind: str = "",
              namespaced: bool = True) -> ResourceType:
    """Bind `model` to the kind `api_version`/`kind` (default: the model's class name) served as `plural`.

    Returns the kind's `ResourceType` (dict calls); the model class names it
    in typed calls from now on. Binding a model again replaces its kind.
    """
    rt = ResourceType.of(api_version, kind or model.__name__, plural, namespaced=namespaced, model=model)
    _BOUND[model] = rt
    return rt


def bound_kind(model: type[BaseModel]) -> ResourceType | None:
    """The kind `model` was bound to by `bind_kind`, else a generated built-in model's kind (None if neither)."""
    return _BOUND.get(model) or _generated_kind(model)


def kind_of_model(model: type[BaseModel], scheme: Scheme) -> ResourceType | None:
    """The kind a model class names for a client of `scheme`: its `bind_kind` binding, else the scheme's kind
    of that model (a served built-in: its group under the scheme's domain, its storage key), else a generated
    model's Kubernetes facts (a kind this scheme does not serve); None if none. Raises TypeError for what is
    not a class (a kind's name: `scheme.by_kind(name)` gives a served kind's ResourceType)."""
    if not isinstance(model, type):
        raise TypeError(f"a kind is a ResourceType or a model class, not {type(model).__name__} {model!r} "
                        f"(scheme.by_kind({model!r}) gives a served kind's ResourceType)")
    return _BOUND.get(model) or scheme.by_model(model) or _generated_kind(model)


def bound_kind_of(api_version: str, kind: str) -> ResourceType | None:
    """The bound kind of that apiVersion and kind (a dict object of a custom kind the scheme does not serve),
    else the generated built-in kind of that name (its model's module is imported then)."""
    found = next((rt for rt in _BOUND.values() if rt.api_version == api_version and rt.kind == kind), None)
    name = _GENERATED_BY_KIND.get((api_version, kind))
    if found is not None or name is None:
        return found
    module, _, cls = name.partition(".")
    return _generated_kind(getattr(importlib.import_module(f"{_GENERATED}.{module}"), cls))


def _generated_kind(model: type[BaseModel]) -> ResourceType | None:
    """The kind of a generated model with a resource of its own (`KINDS`), None for any other class."""
    if model in _GENERATED_KINDS:
        return _GENERATED_KINDS[model]
    package, _, module = getattr(model, "__module__", "").rpartition(".")
    facts = KINDS.get(f"{module}.{model.__name__}") if package == _GENERATED else None
    if facts is None:
        return None
    rt = ResourceType.of(facts.api_version, facts.kind, facts.plural, namespaced=facts.namespaced, model=model)
    _GENERATED_KINDS[model] = rt
    return rt


class TypedCache(Generic[M]):
    """An informer's cache read as `model` instances (each read validates a fresh instance: change it freely)."""

    def __init__(self, informer: "Informer", model: type[M]) -> None:
        self.informer = informer
        self.model = model

    def get(self, key: "ObjectKey | str") -> M | None:
        """The cached object of `key` as a model, None if absent."""
        obj = self.informer.get(key)
        return None if obj is None else self.model.model_validate(copy_json(obj))

    def list(self, namespace: str | None = None) -> list[M]:
        """The cached objects (of `namespace` when given) as models, in no particular order."""
        return [self.model.model_validate(copy_json(o)) for o in self.informer.list(namespace)]

    def by_index(self, index: str, value: str) -> list[M]:
        """`Informer.by_index` as models."""
        return [self.model.model_validate(copy_json(o)) for o in self.informer.by_index(index, value)]

    def __repr__(self) -> str:
        return f"<TypedCache {self.model.__name__} of {self.informer!r}>"
