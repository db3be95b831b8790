"""RBAC insight benchmark: what each insight answer costs, against one authorization decision.

Run: `python bench/bench_insight.py [--quick]`. Prints figures; asserts nothing.

Policy: the bootstrap policy (aggregated), 50 ClusterRoles, RoleBindings
spread over 100 namespaces (one user each) and ClusterRoleBindings (one user
and one group each), at 100 + 10 and at 10,000 + 1,000 bindings. Timed
in process, each over about a second (or a tenth with --quick):

- baseline: one authorization decision (`RBACAuthorizer.authorize`), as every
  request and SubjectAccessReview makes;
- the served kinds' answers (their strategies' `evaluate`, as the server runs
  them): WhoCan of `list roles` in a namespace, AccessExplanation of a denied
  request (near misses read the whole policy), a user's AccessMatrix in a
  namespace (its default rows: every served and rule-named resource, 8 verbs),
  RBACLint (without namespaces' content), RBACDiff of one new RoleBinding.

Each figure is printed with its ratio to the decision measured in the same run.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from runtime.server.rbac import RBACAuthorizer, RBACIndex, load_bootstrap_policy, resource_attributes  # noqa: E402
from runtime.server.rbac.insight import aggregate  # noqa: E402
from runtime.server.rbac.user import UserInfo  # noqa: E402
from runtime.machinery.scheme import Scheme  # noqa: E402

NAMESPACES, ROLES, DOMAIN = 100, 50, "svc.io"
RBAC = f"rbac.authorization.{DOMAIN}"
ADMIN = UserInfo("admin", groups=("system:masters",))


def policy(n_rb: int, n_crb: int) -> RBACIndex:
    objects: list[dict[str, Any]] = list(load_bootstrap_policy(DOMAIN))
    for r in range(ROLES):
        objects.append({"apiVersion": f"{RBAC}/v1", "kind": "ClusterRole", "metadata": {"name": f"bench-role-{r}"},
                        "rules": [{"apiGroups": [RBAC], "resources": ["roles", "rolebindings"],
                                   "verbs": ["get", "list"]}]})
    for i in range(n_rb):
        objects.append({"apiVersion": f"{RBAC}/v1", "kind": "RoleBinding",
                        "metadata": {"name": f"rb-{i}", "namespace": f"ns-{i % NAMESPACES}"},
                        "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": f"bench-role-{i % ROLES}"},
                        "subjects": [{"apiGroup": RBAC, "kind": "User", "name": f"user-{i}"}]})
    for j in range(n_crb):
        objects.append({"apiVersion": f"{RBAC}/v1", "kind": "ClusterRoleBinding", "metadata": {"name": f"crb-{j}"},
                        "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": f"bench-role-{j % ROLES}"},
                        "subjects": [{"apiGroup": RBAC, "kind": "User", "name": f"cuser-{j}"},
                                     {"apiGroup": RBAC, "kind": "Group", "name": f"group-{j}"}]})
    return aggregate(RBACIndex(objects))


class Context:
    """What the kinds' `evaluate` reads: the index, decisions, and (for the lint) an empty watch cache."""

    def __init__(self, index: RBACIndex) -> None:
        self.rbac = index
        self.authorizer = RBACAuthorizer(index)

    def decide(self, attrs):
        return self.authorizer.authorize(attrs)

    def kind_cache(self, rt):
        return self

    def list(self, prefix: str = "") -> list[Any]:
        return []


def seconds_per_call(fn: Callable[[], Any], budget: float) -> float:
    fn()
    count, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < budget or count == 0:
        fn()
        count += 1
    return elapsed / count


def run(n_rb: int, n_crb: int, budget: float) -> None:
    index, scheme = policy(n_rb, n_crb), Scheme(DOMAIN)
    ctx = Context(index)
    kind = {k: scheme.by_kind(k).strategy for k in ("WhoCan", "AccessExplanation", "AccessMatrix", "RBACLint",
                                                    "RBACDiff")}
    alice = UserInfo("user-7", groups=("system:authenticated",))
    request = {"verb": "delete", "group": RBAC, "resource": "roles", "namespace": "ns-7"}
    new_binding = {"apiVersion": f"{RBAC}/v1", "kind": "RoleBinding", "metadata": {"name": "new", "namespace": "ns-1"},
                   "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "edit"},
                   "subjects": [{"apiGroup": RBAC, "kind": "User", "name": "user-1"}]}
    cases = {
        "decision (baseline)": lambda: ctx.decide(resource_attributes(alice, "delete", "roles", api_group=RBAC,
                                                                      namespace="ns-7")),
        "WhoCan list roles in a namespace": lambda: kind["WhoCan"].evaluate(
            ctx, ADMIN, "", {"spec": {"resourceAttributes": {**request, "verb": "list"}}}),
        "AccessExplanation (denied)": lambda: kind["AccessExplanation"].evaluate(
            ctx, ADMIN, "", {"spec": {"user": alice.name, "groups": list(alice.groups),
                                      "resourceAttributes": request}}),
        "AccessMatrix of a user in a namespace": lambda: kind["AccessMatrix"].evaluate(
            ctx, ADMIN, "", {"spec": {"user": alice.name, "namespace": "ns-7"}}),
        "RBACLint": lambda: kind["RBACLint"].evaluate(ctx, ADMIN, "", {"spec": {}}),
        "RBACDiff of one RoleBinding": lambda: kind["RBACDiff"].evaluate(
            ctx, ADMIN, "", {"spec": {"objects": [new_binding]}}),
    }
    base = seconds_per_call(cases["decision (baseline)"], budget)
    print(f"\n{n_rb} RoleBindings + {n_crb} ClusterRoleBindings")
    for name, fn in cases.items():
        took = base if name.startswith("decision") else seconds_per_call(fn, budget)
        print(f"  {name:40s} {took * 1000:10.3f} ms   {took / base:10.0f}x the decision")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    budget = 0.1 if parser.parse_args().quick else 1.0
    for n_rb, n_crb in ((100, 10), (10_000, 1_000)):
        run(n_rb, n_crb, budget)


if __name__ == "__main__":
    main()
