"""`RBACIndex`: an in-memory `RoleSource`, with bindings indexed by subject.

Kept current from the watch (`upsert` on ADDED/MODIFIED, `remove` on DELETED,
`replace` after a relist). Roles are kept by name; bindings are indexed by
the user names and group names their subjects can match (a ServiceAccount
subject under its user name `system:serviceaccount:<ns>:<name>`, its
namespace defaulted to the RoleBinding's), so a decision visits only the
bindings that may apply to the user, never all of them. Bindings with a
subject that cannot be judged (unknown kind, namespace on a User or Group) sit
in one more bucket, returned for every user, so their error is reported.

Candidates come back sorted by binding name: deterministic "first match".

`generation` grows with every change (`upsert`, `remove`, `replace`): a reader
that keeps what it derived from the index (the authorizer's decisions) drops it
when the generation it saw is no longer the index's.

Roles and ClusterRoles handed over as the watch cache's `StoredObject`s
(`upsert_stored`) are kept as they are and decoded when read: a decision reads
the roles its bindings name, so a server of 100,000 Roles and a few bindings
never decodes the rest. Bindings are filed, so decoded, when they arrive.

Caveats: the index keeps references to the dicts it is given; callers must
not mutate them afterwards (replace them with `upsert`). Not thread-safe;
meant for one trio thread.

Internal to `runtime.server.rbac`: imported by its modules only.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from runtime.machinery.storedobject import StoredObject
from runtime.server.rbac.subjects import subject_index_key, subject_problem
from runtime.server.rbac.user import UserInfo

__all__ = ["RBACIndex", "IndexStatistics", "RBAC_KINDS"]

RBAC_KINDS = ("ClusterRole", "Role", "ClusterRoleBinding", "RoleBinding")


@dataclass(frozen=True)
class IndexStatistics:
    """Counts of what an `RBACIndex` holds; `bindings_visited` (monotonic) counts the bindings reads returned:
    the candidates of a subject's lookups, every binding of a `list_*` scan."""

    cluster_roles: int
    roles: int
    cluster_role_bindings: int
    role_bindings: int
    unjudgeable_bindings: int
    bindings_visited: int = 0
    #: The namespaces with a binding, and the subjects (users, groups) the bindings are filed under.
    binding_namespaces: int = 0
    subjects: int = 0


class _BindingBucket:
    """The bindings of one scope (cluster, or one namespace), indexed by subject."""

    __slots__ = ("objects", "by_user", "by_group", "unjudgeable", "_keys")

    def __init__(self) -> None:
        self.objects: dict[str, dict[str, Any]] = {}
        self.by_user: dict[str, set[str]] = {}
        self.by_group: dict[str, set[str]] = {}
        self.unjudgeable: set[str] = set()
        # name -> the index entries it was filed under, to undo them on update.
        self._keys: dict[str, tuple[tuple[str, str], ...]] = {}

    def put(self, name: str, binding: dict[str, Any], binding_namespace: str) -> None:
        self.drop(name)
        keys: set[tuple[str, str]] = set()
        for subject in binding.get("subjects") or ():
            if subject_problem(subject):
                self.unjudgeable.add(name)
                continue
            key = subject_index_key(subject, binding_namespace)
            if key is not None:
                keys.add(key)
        for kind, value in keys:
            table = self.by_user if kind == "user" else self.by_group
            table.setdefault(value, set()).add(name)
        self.objects[name] = binding
        self._keys[name] = tuple(keys)

    def drop(self, name: str) -> None:
        if self.objects.pop(name, None) is None:
            return
        for kind, value in self._keys.pop(name, ()):
            table = self.by_user if kind == "user" else self.by_group
            names = table.get(value)
            if names is not None:
                names.discard(name)
                if not names:
                    del table[value]
        self.unjudgeable.discard(name)

    def candidates(self, user: UserInfo) -> list[dict[str, Any]]:
        names: set[str] = set(self.unjudgeable)
        found = self.by_user.get(user.name)
        if found:
            names.update(found)
        for group in user.groups:
            found = self.by_group.get(group)
            if found:
                names.update(found)
        objects = self.objects
        return [objects[n] for n in sorted(names)]

    def __len__(self) -> int:
        return len(self.objects)


def _read(held: "dict[str, Any] | StoredObject | None") -> Any:
    """A held role as a dict (a cached object decoded now, if it is not already)."""
    return held.obj if isinstance(held, StoredObject) else held


def _meta(obj: dict[str, Any]) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return meta.get("namespace") or "", meta.get("name") or ""


class RBACIndex:
    """An in-memory `PolicySource` over ClusterRoles, Roles and both kinds of binding.

    `upsert(obj)` adds or replaces, `remove(obj)` forgets (only kind,
    namespace and name are read), `replace(objs)` starts over. Lookups cost
    O(bindings that may apply to the user), whatever the total.
    """

    def __init__(self, objects: Iterable[dict[str, Any]] = ()) -> None:
        self._cluster_roles: dict[str, dict[str, Any] | StoredObject] = {}
        # namespace -> name -> role: no (namespace, name) tuple per role (100,000 Roles: 5 MiB).
        self._roles: dict[str, dict[str, dict[str, Any] | StoredObject]] = {}
        self._cluster_bindings = _BindingBucket()
        self._bindings: dict[str, _BindingBucket] = {}
        self._visited = 0
        #: Grows with every change: what was derived from an older generation is stale.
        self.generation = 0
        self.replace(objects)

    # -- writes ---------------------------------------------------------------

    def upsert(self, obj: dict[str, Any]) -> None:
        """Add or replace `obj` (one of `RBAC_KINDS`); raises ValueError for another kind."""
        kind = obj.get("kind")
        namespace, name = _meta(obj)
        self.generation += 1
        if kind == "ClusterRole":
            self._cluster_roles[name] = obj
        elif kind == "Role":
            self._roles.setdefault(namespace, {})[name] = obj
        elif kind == "ClusterRoleBinding":
            self._cluster_bindings.put(name, obj, "")
        elif kind == "RoleBinding":
            bucket = self._bindings.get(namespace)
            if bucket is None:
                bucket = self._bindings[namespace] = _BindingBucket()
            bucket.put(name, obj, namespace)
        else:
            raise ValueError(f"RBACIndex cannot hold kind {kind!r}")

    def upsert_stored(self, kind: str, stored: StoredObject) -> None:
        """Add or replace the watch cache's object of `kind` (one of `RBAC_KINDS`): a role as it is, read
        (decoded) when a decision asks for it; a binding filed now."""
        if kind == "ClusterRole":
            self.generation += 1
            self._cluster_roles[stored.name] = stored
        elif kind == "Role":
            self.generation += 1
            self._roles.setdefault(sys.intern(stored.namespace), {})[stored.name] = stored
        else:
            self.upsert(stored.obj)

    def remove(self, obj: dict[str, Any]) -> None:
        """Forget `obj` (matched by kind, namespace and name); absent is fine."""
        kind = obj.get("kind")
        namespace, name = _meta(obj)
        self.generation += 1
        if kind == "ClusterRole":
            self._cluster_roles.pop(name, None)
        elif kind == "Role":
            named = self._roles.get(namespace)
            if named is not None:
                named.pop(name, None)
                if not named:
                    del self._roles[namespace]
        elif kind == "ClusterRoleBinding":
            self._cluster_bindings.drop(name)
        elif kind == "RoleBinding":
            bucket = self._bindings.get(namespace)
            if bucket is not None:
                bucket.drop(name)
                if not bucket:
                    del self._bindings[namespace]
        else:
            raise ValueError(f"RBACIndex cannot hold kind {kind!r}")

    def replace(self, objects: Iterable[dict[str, Any]] = (),
                stored: Iterable[tuple[str, StoredObject]] = ()) -> None:
        """Drop everything and hold exactly `objects` and the `(kind, object)` pairs of `stored`
        (`upsert_stored`), after a relist."""
        self.generation += 1
        self._cluster_roles = {}
        self._roles = {}
        self._cluster_bindings = _BindingBucket()
        self._bindings = {}
        for obj in objects:
            self.upsert(obj)
        for kind, one in stored:
            self.upsert_stored(kind, one)

    # -- RoleSource -----------------------------------------------------------

    def get_cluster_role(self, name: str) -> dict[str, Any] | None:
        """Return the ClusterRole `name`, or None."""
        return _read(self._cluster_roles.get(name))

    def get_role(self, namespace: str, name: str) -> dict[str, Any] | None:
        """Return the Role `namespace/name`, or None."""
        return _read(self._roles.get(namespace, {}).get(name))

    def cluster_role_bindings_for(self, user: UserInfo) -> list[dict[str, Any]]:
        """Return the ClusterRoleBindings that may apply to `user`, sorted by name."""
        found = self._cluster_bindings.candidates(user)
        self._visited += len(found)
        return found

    def role_bindings_for(self, namespace: str, user: UserInfo) -> list[dict[str, Any]]:
        """Return the RoleBindings of `namespace` that may apply to `user`, sorted by name."""
        bucket = self._bindings.get(namespace)
        if bucket is None:
            return []
        found = bucket.candidates(user)
        self._visited += len(found)
        return found

    # -- PolicySource ---------------------------------------------------------

    def list_cluster_roles(self) -> list[dict[str, Any]]:
        """Return every ClusterRole, sorted by name."""
        return [_read(self._cluster_roles[n]) for n in sorted(self._cluster_roles)]

    def list_roles(self) -> list[dict[str, Any]]:
        """Return every Role, sorted by (namespace, name)."""
        return [_read(named[n]) for ns in sorted(self._roles) for named in (self._roles[ns],) for n in sorted(named)]

    def list_cluster_role_bindings(self) -> list[dict[str, Any]]:
        """Return every ClusterRoleBinding, sorted by name."""
        objects = self._cluster_bindings.objects
        self._visited += len(objects)
        return [objects[n] for n in sorted(objects)]

    def list_role_bindings(self) -> list[dict[str, Any]]:
        """Return every RoleBinding, sorted by (namespace, name)."""
        found = [bucket.objects[n] for ns in sorted(self._bindings)
                 for bucket in (self._bindings[ns],) for n in sorted(bucket.objects)]
        self._visited += len(found)
        return found

    # -- introspection --------------------------------------------------------

    def statistics(self) -> IndexStatistics:
        """Return counts of held objects."""
        return IndexStatistics(
            cluster_roles=len(self._cluster_roles),
            roles=sum(map(len, self._roles.values())),
            cluster_role_bindings=len(self._cluster_bindings),
            role_bindings=sum(len(b) for b in self._bindings.values()),
            unjudgeable_bindings=len(self._cluster_bindings.unjudgeable)
            + sum(len(b.unjudgeable) for b in self._bindings.values()),
            bindings_visited=self._visited,
            binding_namespaces=len(self._bindings),
            subjects=sum(len(b.by_user) + len(b.by_group) for b in (self._cluster_bindings, *self._bindings.values())),
        )
