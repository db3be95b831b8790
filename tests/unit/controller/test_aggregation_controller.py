"""ClusterRole aggregation: selected roles' rules flow into view, edit and admin, and out again."""

from __future__ import annotations

import trio

from controllers.aggregation import FIELD_MANAGER, aggregate_rules, same_rules
from controllers.builtin import FIELD_MANAGER as BUILTIN_MANAGER, builtin_manager
from runtime.controller.testing import ADMIN, open_test_env

RBAC = "rbac.authorization.svc.io/v1"
WIDGETS = {"apiGroups": ["widgets.example.com"], "resources": ["widgets"], "verbs": ["get", "list"]}


def cluster_role(name: str, labels: dict | None = None, rules: list | None = None,
                 selectors: list | None = None) -> dict:
    obj: dict = {"apiVersion": RBAC, "kind": "ClusterRole", "metadata": {"name": name, "labels": labels or {}},
                 "rules": rules or []}
    if selectors is not None:
        obj["aggregationRule"] = {"clusterRoleSelectors": selectors}
    return obj


def has(rule: dict):
    return lambda role: role is not None and any(same_rules([r], [rule]) for r in role.get("rules") or [])


def lacks(rule: dict):
    return lambda role: role is not None and not has(rule)(role)


async def view_labels(env) -> dict:
    """The labels view selects, read from its aggregationRule (never assumed)."""
    view = await env.client.get(env.scheme.by_kind("ClusterRole"), "view")
    return dict(view["aggregationRule"]["clusterRoleSelectors"][0]["matchLabels"])


async def test_labelled_role_rules_appear_in_view_edit_and_admin_and_go_when_unlabelled(autojump_clock):
    async with open_test_env(controllers=False) as env:
        roles = env.scheme.by_kind("ClusterRole")
        await env.start(builtin_manager(env.client_as(ADMIN, field_manager=BUILTIN_MANAGER)))
        labels = await view_labels(env)
        await env.client.create(cluster_role("widget-viewer", labels, [WIDGETS]))
        with trio.fail_after(60):
            for name in ("view", "edit", "admin"):
                await env.wait_for(roles, name, has(WIDGETS))
        await env.client.patch(roles, "widget-viewer", {"metadata": {"labels": None}})
        with trio.fail_after(60):
            for name in ("view", "edit", "admin"):
                await env.wait_for(roles, name, lacks(WIDGETS))


async def test_deleting_a_selected_role_removes_its_rules(autojump_clock):
    async with open_test_env(controllers=False) as env:
        roles = env.scheme.by_kind("ClusterRole")
        await env.start(builtin_manager(env.client_as(ADMIN, field_manager=BUILTIN_MANAGER)))
        await env.client.create(cluster_role("widget-viewer", await view_labels(env), [WIDGETS]))
        with trio.fail_after(60):
            await env.wait_for(roles, "admin", has(WIDGETS))
        await env.client.delete(roles, "widget-viewer")
        with trio.fail_after(60):
            await env.wait_for(roles, "admin", lacks(WIDGETS))


async def test_aggregated_rules_are_written_by_server_side_apply_of_the_controller(autojump_clock):
    async with open_test_env(controllers=False) as env:
        roles = env.scheme.by_kind("ClusterRole")
        await env.start(builtin_manager(env.client_as(ADMIN, field_manager=BUILTIN_MANAGER)))
        await env.client.create(cluster_role("widget-viewer", await view_labels(env), [WIDGETS]))
        with trio.fail_after(60):
            view = await env.wait_for(roles, "view", has(WIDGETS))
        managers = {(m["manager"], m["operation"]) for m in view["metadata"]["managedFields"]}
        assert (FIELD_MANAGER, "Apply") in managers


async def test_rules_are_rewritten_only_when_they_differ(autojump_clock):
    async with open_test_env(controllers=False) as env:
        roles = env.scheme.by_kind("ClusterRole")
        await env.start(builtin_manager(env.client_as(ADMIN, field_manager=BUILTIN_MANAGER)))
        await env.client.create(cluster_role("widget-viewer", await view_labels(env), [WIDGETS]))
        with trio.fail_after(60):
            admin = await env.wait_for(roles, "admin", has(WIDGETS))
        await trio.sleep(60)
        settled = {n: (await env.client.get(roles, n))["metadata"]["resourceVersion"] for n in ("view", "edit", "admin")}
        await env.client.patch(roles, "widget-viewer", {"metadata": {"annotations": {"touched": "yes"}}})
        await trio.sleep(60)
        after = {n: (await env.client.get(roles, n))["metadata"]["resourceVersion"] for n in ("view", "edit", "admin")}
        assert after == settled and admin


async def test_a_rule_edited_into_an_aggregated_role_is_overwritten(autojump_clock):
    async with open_test_env(controllers=False) as env:
        roles = env.scheme.by_kind("ClusterRole")
        await env.start(builtin_manager(env.client_as(ADMIN, field_manager=BUILTIN_MANAGER)))
        await env.client.create(cluster_role("mine", selectors=[{"matchLabels": {"pick": "me"}}]))
        await env.client.create(cluster_role("source", {"pick": "me"}, [WIDGETS]))
        with trio.fail_after(60):
            mine = await env.wait_for(roles, "mine", has(WIDGETS))
        mine["rules"] = [{"apiGroups": [""], "resources": ["namespaces"], "verbs": ["delete"]}]
        await env.client.update(mine)
        with trio.fail_after(60):
            final = await env.wait_for(roles, "mine", lambda o: o and same_rules(o["rules"], [WIDGETS]))
        assert final["rules"] == [WIDGETS]


def test_rules_follow_selector_order_then_role_name_without_duplicates():
    get = {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get"]}
    watch = {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["watch"]}
    agg = cluster_role("agg", {"a": "1"}, selectors=[{"matchLabels": {"b": "1"}}, {"matchLabels": {"a": "1"}}])
    roles = [
        agg,
        cluster_role("zeta", {"a": "1"}, [get, WIDGETS]),
        cluster_role("alpha", {"a": "1"}, [WIDGETS]),
        cluster_role("beta", {"b": "1"}, [watch, dict(get, resourceNames=[])]),
        cluster_role("unrelated", {"c": "1"}, [{"apiGroups": ["x"], "resources": ["y"], "verbs": ["*"]}]),
    ]
    assert aggregate_rules(agg, roles) == [watch, dict(get, resourceNames=[]), WIDGETS]
