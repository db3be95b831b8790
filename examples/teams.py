"""Example controller over a custom kind: a `Team` gets a namespace, and each member a RoleBinding in it.

The kind is `teams.example.com` (CRD: manifests/teams.example.com.yaml),
cluster-scoped, worked on through typed pydantic models bound to it
(`runtime.client.typed`). For each Team the controller keeps:

- a namespace `team-<name>`, owned by the Team (so deleting the Team
  deletes it, and everything in it, through garbage collection and namespace
  deletion);
- in it, a RoleBinding `member-<member>` per member, to the ClusterRole of
  the member's role (view, edit or admin), also owned by the Team; a member
  removed loses it, a role changed replaces it (roleRef is immutable);
- `status`: the namespace, the members bound, `observedGeneration` and a
  `Ready` condition (True once everything is in place; False while the
  namespace is being deleted, retried until it is gone and made anew),
  kept by `set_status_condition` (its lastTransitionTime moves only when
  its status does);
- events about the Team: `NamespaceCreated`, `MemberBound`, `MemberUnbound`.

The same `setup` runs in a test (`runtime.controller.testing`) or against any server:

    kubectl apply -f manifests/teams.example.com.yaml
    miniplane controllers --kubeconfig admin.kubeconfig --module examples.teams --builtin false
"""

from __future__ import annotations

import re
from typing import Literal

from runtime.client.interface import APPLY_PATCH, ObjectKey, ignore_not_found
from runtime.controller import Manager, Result, set_controller_reference, set_status_condition
from runtime.models import Condition
from runtime.client.typed import CustomResource, KubeModel, TypedCache, bind_kind

__all__ = ["Member", "TeamSpec", "TeamStatus", "Team", "TEAMS", "FIELD_MANAGER", "TEAM_LABEL",
           "namespace_of", "binding_name", "setup"]

FIELD_MANAGER = "team-controller"
#: Every RoleBinding the controller makes carries its team's name here.
TEAM_LABEL = "example.com/team"


class Member(KubeModel):
    name: str
    kind: Literal["User", "Group"] = "User"
    role: Literal["view", "edit", "admin"] = "view"


class TeamSpec(KubeModel):
    members: list[Member] = []


class TeamStatus(KubeModel):
    namespace: str | None = None
    members: int | None = None
    observed_generation: int | None = None
    conditions: list[Condition] = []


class Team(CustomResource):
    spec: TeamSpec = TeamSpec()
    status: TeamStatus = TeamStatus()


TEAMS = bind_kind(Team, "example.com/v1", "teams", namespaced=False)


def namespace_of(team: str) -> str:
    return f"team-{team}"


def binding_name(member: str) -> str:
    """`member-<member>`, lower case, with what a name may not hold (`@`, `_`, ...) as `-`."""
    return "member-" + re.sub(r"[^a-z0-9.-]", "-", member.lower())


def setup(manager: Manager) -> None:
    """Add the Team controller to `manager` (the `miniplane controllers --module` convention)."""
    client, scheme = manager.client, manager.scheme
    namespaces, bindings = scheme.by_kind("Namespace"), scheme.by_kind("RoleBinding")
    teams = TypedCache(manager.informers.informer(TEAMS), Team)
    namespace_cache = manager.informers.informer(namespaces)
    binding_cache = manager.informers.informer(bindings)
    binding_cache.add_indexer(TEAM_LABEL, lambda b: [v] if (v := (b["metadata"].get("labels") or {}).get(
        TEAM_LABEL)) else [])
    recorder = manager.event_recorder(FIELD_MANAGER)

    def wanted_binding(team: Team, member: Member) -> dict:
        binding = {"apiVersion": bindings.api_version, "kind": "RoleBinding",
                   "metadata": {"name": binding_name(member.name), "namespace": namespace_of(team.metadata.name),
                                "labels": {TEAM_LABEL: team.metadata.name}},
                   "roleRef": {"apiGroup": scheme.rbac_group, "kind": "ClusterRole", "name": member.role},
                   "subjects": [{"apiGroup": scheme.rbac_group, "kind": member.kind, "name": member.name}]}
        set_controller_reference(team, binding, scheme)
        return binding

    async def bind(team: Team, member: Member) -> None:
        wanted = wanted_binding(team, member)
        current = binding_cache.get(ObjectKey(namespace_of(team.metadata.name), binding_name(member.name)))
        if current is not None and current["roleRef"] == wanted["roleRef"] and \
                current["subjects"] == wanted["subjects"]:
            return
        if current is not None and current["roleRef"] != wanted["roleRef"]:  # roleRef is immutable
            with ignore_not_found():
                await client.delete(bindings, current["metadata"]["name"], namespace=namespace_of(team.metadata.name))
        await client.patch(bindings, wanted["metadata"]["name"], wanted, patch_type=APPLY_PATCH,
                           namespace=namespace_of(team.metadata.name), field_manager=FIELD_MANAGER, force=True)
        recorder.event(team, "Normal", "MemberBound", f"{member.kind} {member.name} is bound to ClusterRole "
                                                      f"{member.role} in namespace {namespace_of(team.metadata.name)}")

    async def report(team: Team, bound: int, ready: str, reason: str, message: str) -> None:
        status = TeamStatus(namespace=namespace_of(team.metadata.name), members=bound,
                            observed_generation=team.metadata.generation,
                            conditions=[c.model_copy() for c in team.status.conditions])
        set_status_condition(status.conditions, Condition(type="Ready", status=ready, reason=reason, message=message,
                                                           observed_generation=team.metadata.generation))
        if status == team.status:
            return
        team.status = status
        await client.update(team, subresource="status")  # conditional on the resourceVersion read: else retried

    async def reconcile(key: ObjectKey) -> Result | None:
        team = teams.get(key)
        if team is None or team.metadata.deletion_timestamp:
            return None  # what it owns goes with it (garbage collection)
        name = namespace_of(key.name)
        namespace = namespace_cache.get(ObjectKey("", name))
        if namespace is not None and namespace["metadata"].get("deletionTimestamp"):
            await report(team, 0, "False", "NamespaceTerminating",
                         f"namespace {name} is being deleted; it will be made again")
            return Result(requeue_after=5.0)
        if namespace is None:
            wanted = {"apiVersion": "v1", "kind": "Namespace",
                      "metadata": {"name": name, "labels": {TEAM_LABEL: key.name}}}
            set_controller_reference(team, wanted, scheme)
            await client.patch(namespaces, name, wanted, patch_type=APPLY_PATCH, field_manager=FIELD_MANAGER,
                               force=True)
            recorder.event(team, "Normal", "NamespaceCreated", f"created namespace {name}")
        for member in team.spec.members:
            await bind(team, member)
        members = {binding_name(m.name) for m in team.spec.members}
        for binding in binding_cache.by_index(TEAM_LABEL, key.name):
            meta = binding["metadata"]
            if meta.get("namespace") == name and meta["name"] not in members:
                with ignore_not_found():
                    await client.delete(bindings, meta["name"], namespace=name)
                recorder.event(team, "Normal", "MemberUnbound", f"removed RoleBinding {meta['name']} from {name}")
        await report(team, len(members), "True", "Reconciled",
                     f"namespace {name} and {len(members)} RoleBindings are in place")
        return None

    manager.controller("teams").for_(TEAMS).owns(namespaces).owns(bindings).complete(reconcile)
