"""Garbage collection: propagation policies, collection of dependents whose owners are gone, scope rules."""

from __future__ import annotations

import trio

from controllers import gc
from runtime.controller.finalizers import remove_finalizer
from runtime.machinery.options import ParsedDeleteOptions
from runtime.server.kinds import FOREGROUND_FINALIZER, ORPHAN_FINALIZER
from runtime.machinery.scheme import Scheme
from runtime.controller.testing import ADMIN, open_test_env

GROUP = "rbac.authorization.svc.io"
RBAC = f"{GROUP}/v1"
HOLD = "example.com/hold"
RULES = [{"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get"]}]


def ref(owner: dict, *, block: bool = False) -> dict:
    return {"apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": owner["metadata"]["name"],
            "uid": owner["metadata"]["uid"], "blockOwnerDeletion": block}


def cluster_role(name: str, owners: list[dict] | None = None, finalizers: list[str] | None = None) -> dict:
    meta: dict = {"name": name}
    if owners:
        meta["ownerReferences"] = owners
    if finalizers:
        meta["finalizers"] = finalizers
    return {"apiVersion": RBAC, "kind": "ClusterRole", "metadata": meta, "rules": RULES}


def role(name: str, ns: str = "default", owners: list[dict] | None = None,
         finalizers: list[str] | None = None) -> dict:
    obj = cluster_role(name, owners, finalizers)
    obj["kind"] = "Role"
    obj["metadata"]["namespace"] = ns
    return obj


async def start_gc(env) -> None:
    manager = env.manager()
    gc.setup(manager)
    await env.start(manager)


async def gone(env, kind: str, name: str, ns: str = "") -> None:
    with trio.fail_after(60):
        await env.wait_for(env.scheme.by_kind(kind), name, lambda o: o is None, namespace=ns)


async def current(env, kind: str, name: str, ns: str = "") -> dict:
    return await env.client.get(env.scheme.by_kind(kind), name, namespace=ns)


# ---- the registry's side: which finalizer a delete sets ------------------------------------------

SCHEME = Scheme()


def deletion_finalizers(kind: str, finalizers: list[str], options: ParsedDeleteOptions) -> list[str]:
    """What a first delete leaves, as the kind's strategy decides."""
    return SCHEME.by_kind(kind).strategy.deletion_finalizers(finalizers, options)


def test_the_default_policy_of_every_kind_is_background_so_no_finalizer_is_added():
    for kind in ("Namespace", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "Lease"):
        assert deletion_finalizers(kind, [HOLD], ParsedDeleteOptions()) == [HOLD]


def test_foreground_adds_foreground_deletion_and_orphan_adds_orphan():
    assert deletion_finalizers("Role", [HOLD], ParsedDeleteOptions(propagation_policy="Foreground")) == \
        [HOLD, FOREGROUND_FINALIZER]
    assert deletion_finalizers("Role", [], ParsedDeleteOptions(propagation_policy="Orphan")) == [ORPHAN_FINALIZER]
    assert deletion_finalizers("Role", [], ParsedDeleteOptions(orphan_dependents=True)) == [ORPHAN_FINALIZER]


def test_an_explicit_option_replaces_a_gc_finalizer_already_there():
    assert deletion_finalizers("Role", [ORPHAN_FINALIZER, HOLD], ParsedDeleteOptions(propagation_policy="Background")) \
        == [HOLD]
    assert deletion_finalizers("Role", [ORPHAN_FINALIZER], ParsedDeleteOptions(propagation_policy="Foreground")) == \
        [FOREGROUND_FINALIZER]
    assert deletion_finalizers("Role", [FOREGROUND_FINALIZER], ParsedDeleteOptions(orphan_dependents=False)) == []


def test_without_options_a_gc_finalizer_already_there_is_kept():
    assert deletion_finalizers("Role", [FOREGROUND_FINALIZER], ParsedDeleteOptions()) == [FOREGROUND_FINALIZER]
    assert deletion_finalizers("Namespace", [ORPHAN_FINALIZER], ParsedDeleteOptions()) == [ORPHAN_FINALIZER]


def test_orphan_dependents_false_on_a_namespace_means_foreground():
    assert deletion_finalizers("Namespace", [], ParsedDeleteOptions(orphan_dependents=False)) == [FOREGROUND_FINALIZER]
    assert deletion_finalizers("Role", [], ParsedDeleteOptions(orphan_dependents=False)) == []


# ---- pure rules of the collector -----------------------------------------------------------------

def test_an_owner_present_with_another_uid_is_dangling():
    from runtime.machinery.scheme import Scheme
    scheme = Scheme()
    dependent = role("d", owners=[{"apiVersion": RBAC, "kind": "ClusterRole", "name": "o", "uid": "u1"}])
    refs = [gc.resolve_owner(scheme, dependent, r) for r in gc.owner_references(dependent)]
    place = refs[0].identity
    assert gc.classify(refs, {place: {"metadata": {"name": "o", "uid": "u2"}}}) == \
        gc.Classification(dangling=tuple(refs))
    assert gc.classify(refs, {place: {"metadata": {"name": "o", "uid": "u1"}}}) == gc.Classification(solid=tuple(refs))


def test_two_references_with_one_uid_and_different_names_are_classified_apart():
    scheme = Scheme()
    dependent = role("d", owners=[{"apiVersion": RBAC, "kind": "ClusterRole", "name": "o", "uid": "u1"},
                                  {"apiVersion": RBAC, "kind": "ClusterRole", "name": "wrong", "uid": "u1"}])
    right, wrong = [gc.resolve_owner(scheme, dependent, r) for r in gc.owner_references(dependent)]
    owners = {right.identity: {"metadata": {"name": "o", "uid": "u1"}}, wrong.identity: None}
    assert gc.classify([right, wrong], owners) == gc.Classification(solid=(right,), dangling=(wrong,))


def test_a_collected_object_is_deleted_as_its_own_gc_finalizer_asks():
    assert gc.propagation_for(role("r")) == "Background"
    assert gc.propagation_for(role("r", finalizers=[FOREGROUND_FINALIZER])) == "Foreground"
    assert gc.propagation_for(role("r", finalizers=[ORPHAN_FINALIZER])) == "Orphan"


# ---- background ----------------------------------------------------------------------------------

async def test_background_removes_the_owner_at_once_and_its_dependents_after_it(autojump_clock):
    async with open_test_env(controllers=False) as env:
        await start_gc(env)
        owner = await env.client.create(cluster_role("owner"))
        await env.client.create(role("d1", owners=[ref(owner)]))
        await env.client.create(cluster_role("d2", owners=[ref(owner)]))
        await env.client.create(role("bystander"))
        answer = await env.client.delete(env.scheme.by_kind("ClusterRole"), "owner", propagation_policy="Background")
        assert answer["kind"] == "Status" and answer["status"] == "Success"
        await gone(env, "Role", "d1", "default")
        await gone(env, "ClusterRole", "d2")
        assert (await current(env, "Role", "bystander", "default"))["metadata"]["name"] == "bystander"


async def test_a_dependent_whose_owner_never_existed_is_collected(autojump_clock):
    async with open_test_env(controllers=False) as env:
        await start_gc(env)
        await env.client.create(role("orphaned", owners=[
            {"apiVersion": RBAC, "kind": "ClusterRole", "name": "ghost", "uid": "no-such-uid"}]))
        await gone(env, "Role", "orphaned", "default")


async def test_an_owner_recreated_with_another_uid_counts_as_gone(autojump_clock):
    async with open_test_env(controllers=False) as env:
        roles = env.scheme.by_kind("ClusterRole")
        owner = await env.client.create(cluster_role("owner"))
        await env.client.create(role("dependent", owners=[ref(owner)]))
        await env.client.delete(roles, "owner")  # no collector runs yet
        again = await env.client.create(cluster_role("owner"))
        await start_gc(env)
        await gone(env, "Role", "dependent", "default")
        assert (await current(env, "ClusterRole", "owner"))["metadata"]["uid"] == again["metadata"]["uid"]


async def test_a_dependent_with_a_live_owner_stays_and_loses_only_its_gone_owners(autojump_clock):
    async with open_test_env(controllers=False) as env:
        await start_gc(env)
        live = await env.client.create(cluster_role("live"))
        ghost = {"apiVersion": RBAC, "kind": "ClusterRole", "name": "ghost", "uid": "no-such-uid"}
        await env.client.create(role("shared", owners=[ref(live), ghost]))
        with trio.fail_after(60):
            kept = await env.wait_for(env.scheme.by_kind("Role"), "shared",
                                      lambda o: o and len(o["metadata"].get("ownerReferences") or []) == 1,
                                      namespace="default")
        assert kept["metadata"]["ownerReferences"] == [ref(live)]


# ---- scope rules ---------------------------------------------------------------------------------

async def test_a_namespaced_owner_is_looked_up_in_its_dependents_namespace(autojump_clock):
    async with open_test_env(controllers=False) as env:
        for ns in ("a", "b"):
            await env.client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        await start_gc(env)
        owner = await env.client.create(role("owner", "a"))
        await env.client.create(role("same-namespace", "a", owners=[ref(owner)]))
        await env.client.create(role("other-namespace", "b", owners=[ref(owner)]))
        await gone(env, "Role", "other-namespace", "b")
        assert (await current(env, "Role", "same-namespace", "a"))["metadata"]["ownerReferences"] == [ref(owner)]


async def test_a_cluster_scoped_owner_owns_dependents_in_any_namespace(autojump_clock):
    async with open_test_env(controllers=False) as env:
        await env.client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}})
        await start_gc(env)
        owner = await env.client.create(cluster_role("owner"))
        await env.client.create(role("in-a", "a", owners=[ref(owner)]))
        await trio.sleep(30)
        assert (await current(env, "Role", "in-a", "a"))["metadata"]["name"] == "in-a"
        await env.client.delete(env.scheme.by_kind("ClusterRole"), "owner")
        await gone(env, "Role", "in-a", "a")


async def test_a_cluster_scoped_dependent_of_a_namespaced_owner_is_never_collected(autojump_clock):
    async with open_test_env(controllers=False) as env:
        await start_gc(env)
        owner = await env.client.create(role("owner"))
        await env.client.create(cluster_role("invalid", owners=[ref(owner)]))
        await env.client.delete(env.scheme.by_kind("Role"), "owner", namespace="default")
        await trio.sleep(60)
        assert (await current(env, "ClusterRole", "invalid"))["metadata"]["ownerReferences"] == [ref(owner)]


async def test_a_reference_to_a_kind_the_server_does_not_serve_keeps_the_dependent(autojump_clock):
    async with open_test_env(controllers=False) as env:
        await start_gc(env)
        await env.client.create(role("kept", owners=[
            {"apiVersion": "widgets.example.com/v1", "kind": "Widget", "name": "w", "uid": "w1"}]))
        await trio.sleep(60)
        assert (await current(env, "Role", "kept", "default"))["metadata"]["name"] == "kept"


# ---- foreground ----------------------------------------------------------------------------------

async def test_foreground_holds_the_owner_until_its_blocking_dependents_are_gone(autojump_clock):
    async with open_test_env(controllers=False) as env:
        await start_gc(env)
        roles = env.scheme.by_kind("Role")
        owner = await env.client.create(cluster_role("owner"))
        await env.client.create(role("blocker", owners=[ref(owner, block=True)], finalizers=[HOLD]))
        await env.client.create(role("free", owners=[ref(owner)]))
        answer = await env.client.delete(env.scheme.by_kind("ClusterRole"), "owner", propagation_policy="Foreground")
        assert answer["metadata"]["finalizers"] == [FOREGROUND_FINALIZER]
        assert answer["metadata"]["deletionTimestamp"]
        await gone(env, "Role", "free", "default")
        with trio.fail_after(60):
            blocker = await env.wait_for(roles, "blocker", lambda o: o and o["metadata"].get("deletionTimestamp"),
                                         namespace="default")
        await trio.sleep(30)
        held = await current(env, "ClusterRole", "owner")
        assert held["metadata"]["finalizers"] == [FOREGROUND_FINALIZER]
        await remove_finalizer(env.client, blocker, HOLD)
        await gone(env, "ClusterRole", "owner")


async def test_foreground_does_not_wait_for_dependents_that_do_not_block(autojump_clock):
    async with open_test_env(controllers=False) as env:
        await start_gc(env)
        owner = await env.client.create(cluster_role("owner"))
        await env.client.create(role("slow", owners=[ref(owner)], finalizers=[HOLD]))
        await env.client.delete(env.scheme.by_kind("ClusterRole"), "owner", propagation_policy="Foreground")
        await gone(env, "ClusterRole", "owner")
        assert (await current(env, "Role", "slow", "default"))["metadata"]["deletionTimestamp"]


async def test_foreground_deletes_a_dependent_with_dependents_of_its_own_in_foreground(autojump_clock):
    async with open_test_env(controllers=False) as env:
        await start_gc(env)
        cluster_roles = env.scheme.by_kind("ClusterRole")
        top = await env.client.create(cluster_role("top"))
        middle = await env.client.create(cluster_role("middle", owners=[ref(top, block=True)]))
        await env.client.create(cluster_role("bottom", owners=[ref(middle, block=True)], finalizers=[HOLD]))
        await env.client.delete(cluster_roles, "top", propagation_policy="Foreground")
        with trio.fail_after(60):
            bottom = await env.wait_for(cluster_roles, "bottom", lambda o: o and o["metadata"].get("deletionTimestamp"))
        await trio.sleep(30)
        assert (await current(env, "ClusterRole", "middle"))["metadata"]["finalizers"] == [FOREGROUND_FINALIZER]
        assert (await current(env, "ClusterRole", "top"))["metadata"]["finalizers"] == [FOREGROUND_FINALIZER]
        await remove_finalizer(env.client, bottom, HOLD)
        await gone(env, "ClusterRole", "top")
        await gone(env, "ClusterRole", "middle")


async def test_a_dependent_of_a_foreground_owner_with_another_live_owner_only_loses_that_reference(autojump_clock):
    async with open_test_env(controllers=False) as env:
        await start_gc(env)
        doomed = await env.client.create(cluster_role("doomed"))
        live = await env.client.create(cluster_role("live"))
        await env.client.create(role("shared", owners=[ref(doomed, block=True), ref(live)]))
        await env.client.delete(env.scheme.by_kind("ClusterRole"), "doomed", propagation_policy="Foreground")
        await gone(env, "ClusterRole", "doomed")
        assert (await current(env, "Role", "shared", "default"))["metadata"]["ownerReferences"] == [ref(live)]


async def test_a_foreground_deletion_begun_while_no_collector_ran_is_finished_when_one_starts(autojump_clock):
    async with open_test_env(controllers=False) as env:
        owner = await env.client.create(cluster_role("owner"))
        await env.client.create(role("d", owners=[ref(owner, block=True)]))
        await env.client.delete(env.scheme.by_kind("ClusterRole"), "owner", propagation_policy="Foreground")
        await trio.sleep(30)
        assert (await current(env, "Role", "d", "default"))["metadata"]["name"] == "d"
        await start_gc(env)
        await gone(env, "Role", "d", "default")
        await gone(env, "ClusterRole", "owner")


# ---- orphan --------------------------------------------------------------------------------------

async def test_orphan_strips_the_owner_from_its_dependents_which_stay(autojump_clock):
    async with open_test_env(controllers=False) as env:
        await start_gc(env)
        owner = await env.client.create(cluster_role("owner"))
        other = await env.client.create(cluster_role("other"))
        await env.client.create(role("only", owners=[ref(owner, block=True)]))
        await env.client.create(role("both", owners=[ref(owner), ref(other)]))
        answer = await env.client.delete(env.scheme.by_kind("ClusterRole"), "owner", propagation_policy="Orphan")
        assert answer["metadata"]["finalizers"] == [ORPHAN_FINALIZER]
        await gone(env, "ClusterRole", "owner")
        await trio.sleep(30)
        assert "ownerReferences" not in (await current(env, "Role", "only", "default"))["metadata"]
        assert (await current(env, "Role", "both", "default"))["metadata"]["ownerReferences"] == [ref(other)]


async def test_orphan_dependents_true_orphans_too(autojump_clock):
    async with open_test_env(controllers=False) as env:
        await start_gc(env)
        owner = await env.client.create(cluster_role("owner"))
        await env.client.create(role("kept", owners=[ref(owner)]))
        await env.registry.delete(ADMIN, env.scheme.by_kind("ClusterRole"), "", "owner",
                                  ParsedDeleteOptions(orphan_dependents=True))
        await gone(env, "ClusterRole", "owner")
        await trio.sleep(30)
        assert "ownerReferences" not in (await current(env, "Role", "kept", "default"))["metadata"]


# ---- owner identity: the whole reference, not its uid alone ----------------------------------------

def namespace_ref(name: str, uid: str) -> dict:
    return {"apiVersion": "v1", "kind": "Namespace", "name": name, "uid": uid}


def service_account(name: str, owners: list[dict]) -> dict:
    return {"apiVersion": "v1", "kind": "ServiceAccount",
            "metadata": {"name": name, "namespace": "default", "ownerReferences": owners}}


async def test_a_dangling_reference_with_a_live_uid_does_not_make_that_owner_absent(autojump_clock):
    # Kubernetes keys its absent-owner cache by the whole reference: a real uid under a wrong name is
    # gone there, and the owner it belongs to stays present for every reference that names it rightly.
    async with open_test_env(controllers=False) as env:
        await start_gc(env)
        accounts, namespaces = env.scheme.by_kind("ServiceAccount"), env.scheme.by_kind("Namespace")
        default = (await env.client.get(namespaces, "default"))["metadata"]["uid"]
        public = (await env.client.get(namespaces, "kube-public"))["metadata"]["uid"]
        await env.client.create(service_account("x", [namespace_ref("default", default),
                                                      namespace_ref("no-such", public)]))
        with trio.fail_after(60):
            x = await env.wait_for(accounts, "x", lambda o: o and len(o["metadata"]["ownerReferences"]) == 1,
                                   namespace="default")
        assert x["metadata"]["ownerReferences"] == [namespace_ref("default", default)]
        await env.client.create(service_account("y", [namespace_ref("kube-public", public)]))
        await trio.sleep(60)
        y = await current(env, "ServiceAccount", "y", "default")
        assert y["metadata"]["ownerReferences"] == [namespace_ref("kube-public", public)]


async def test_dropping_a_dangling_reference_keeps_the_live_one_with_its_uid(autojump_clock):
    # The live owner's uid under a wrong name is a dangling reference of its own: it goes, in either order,
    # and the reference that names the owner rightly stays (nor is the dependent deleted).
    async with open_test_env(controllers=False) as env:
        await start_gc(env)
        live = await env.client.create(cluster_role("live"))
        wrong = dict(ref(live), name="wrong")
        await env.client.create(role("live-first", owners=[ref(live), wrong]))
        await env.client.create(role("wrong-first", owners=[wrong, ref(live)]))
        for name in ("live-first", "wrong-first"):
            with trio.fail_after(60):
                kept = await env.wait_for(env.scheme.by_kind("Role"), name,
                                          lambda o: o is None or len(o["metadata"].get("ownerReferences") or []) != 2,
                                          namespace="default")
            assert kept is not None and kept["metadata"]["ownerReferences"] == [ref(live)]

