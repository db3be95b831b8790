"""Garbage collection over random owner graphs: an owner is named by its whole reference, not its uid.

Each example builds a few ClusterRole owners (some deleted once their dependents exist) and a few Role
dependents, each with one to three references: the right one to an owner, that owner's uid under a wrong
name or a wrong kind, or a made-up uid. The real collector runs (on trio's mock clock) until each
dependent is settled, then:

- a dependent with a right reference to an owner still there is never deleted, and keeps exactly those
  references (every dangling one dropped, however its uid matches a live owner's);
- a dependent whose owners are all gone is deleted.
"""

from __future__ import annotations

from dataclasses import dataclass

import trio
import trio.testing
from hypothesis import HealthCheck, given, settings, strategies as st

from controllers import gc
from runtime.controller.testing import open_test_env

RBAC = "rbac.authorization.svc.io/v1"
RULES = [{"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get"]}]
OWNERS = 3


@dataclass(frozen=True)
class Ref:
    """A reference to owner `owner`: `right`, its uid under a `wrong-name` or `wrong-kind`, or `made-up`."""

    shape: str
    owner: int


refs = st.builds(Ref, st.sampled_from(["right", "wrong-name", "wrong-kind", "made-up"]),
                 st.integers(0, OWNERS - 1))
graphs = st.tuples(
    st.lists(st.booleans(), min_size=OWNERS, max_size=OWNERS),  # which owners stay
    st.lists(st.lists(refs, min_size=1, max_size=3, unique=True), min_size=1, max_size=4),
)


def reference(r: Ref, owners: list[dict]) -> dict:
    meta = owners[r.owner]["metadata"]
    named = {"apiVersion": RBAC, "kind": "ClusterRole", "name": meta["name"], "uid": meta["uid"]}
    if r.shape == "wrong-name":
        return dict(named, name=f"no-such-{r.owner}")
    if r.shape == "wrong-kind":
        return dict(named, kind="ClusterRoleBinding")
    if r.shape == "made-up":
        return dict(named, uid=f"made-up-{r.owner}")
    return named


async def settle(stays: list[bool], dependents: list[list[Ref]]) -> None:
    async with open_test_env(controllers=False) as env:
        manager = env.manager()
        gc.setup(manager)
        await env.start(manager)
        cluster_roles, roles = env.scheme.by_kind("ClusterRole"), env.scheme.by_kind("Role")
        owners = [await env.client.create({"apiVersion": RBAC, "kind": "ClusterRole",
                                           "metadata": {"name": f"owner-{i}"}, "rules": RULES})
                  for i in range(OWNERS)]
        for i, shapes in enumerate(dependents):
            await env.client.create({"apiVersion": RBAC, "kind": "Role", "rules": RULES, "metadata": {
                "name": f"d{i}", "namespace": "default",
                "ownerReferences": [reference(r, owners) for r in shapes]}})
        for i, stay in enumerate(stays):
            if not stay:
                await env.client.delete(cluster_roles, f"owner-{i}")
        for i, shapes in enumerate(dependents):
            kept = [reference(r, owners) for r in shapes if r.shape == "right" and stays[r.owner]]
            with trio.fail_after(60):
                settled = await env.wait_for(
                    roles, f"d{i}", lambda o: o is None or o["metadata"].get("ownerReferences") == kept,
                    namespace="default")
            if kept:
                assert settled is not None, f"d{i} was deleted though it names a live owner: {shapes}"
            else:
                assert settled is None
        await trio.sleep(60)  # late work (a stale absent owner) would show now
        for i, shapes in enumerate(dependents):
            if any(r.shape == "right" and stays[r.owner] for r in shapes):
                assert (await env.client.get(roles, f"d{i}", namespace="default"))["metadata"]["name"] == f"d{i}"


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs)
def test_a_dependent_with_a_live_owner_stays_and_one_whose_owners_are_all_gone_is_collected(graph):
    stays, dependents = graph
    trio.run(settle, stays, dependents, clock=trio.testing.MockClock(autojump_threshold=0))
