"""The RBAC insight page in real headless Chromium (Debian's, driven by Playwright), against a real server.

Each test starts a server (HTTPS, `--api-domain k8s.io`, the test token
users), writes a small policy, then drives the page in one thread
(`trio.to_thread.run_sync`: Playwright's sync API) while the server keeps
serving; kubectl runs from that thread through `trio.from_thread.run`.
Screenshots are saved under the test's tmp dir.

The policy: namespace team-a; Role `reader` (get, list roles) bound by
RoleBinding `readers` to User alice and Group devs; ClusterRole `ops`
(create, delete roles) bound cluster-wide to bob.
"""

from __future__ import annotations

from pathlib import Path

import trio

from api.certs import ensure_pki, issue_client_cert
from tests.support.browser import open_page, sign_in, submit_form
from tests.support.kubectl import Kubectl
from tests.support.rbac import bind, grant, namespaces, ok, rule, user
from tests.support.server import Server, start_server

RBAC = "rbac.authorization.k8s.io"


async def team_policy(srv: Server) -> None:
    await namespaces(srv, "team-a")
    async with srv.client() as admin:
        await ok(await admin.post(f"{srv.rbac}/namespaces/team-a/roles", json={
            "metadata": {"name": "reader"}, "rules": [rule(["get", "list"], ["roles"], [RBAC])]}), 201)
    await bind(srv, "readers", "Role", "reader", [user("alice"), {"kind": "Group", "name": "devs"}],
               namespace="team-a")
    await grant(srv, user("bob"), rule(["create", "delete"], ["roles"], [RBAC]), name="ops")


def cells(page, selector: str) -> list[list[str]]:
    """The text of every cell of the table rows under `selector`."""
    return page.eval_on_selector_all(f"{selector} tbody tr",
                                     "rows => rows.map(r => [...r.cells].map(c => c.textContent.trim()))")


async def test_the_page_loads_with_subjects_roles_bindings_the_aggregation_graph_and_lint(ui_server, tmp_path):
    await team_policy(ui_server)

    def session() -> None:
        with open_page(tmp_path / "profile") as page:
            sign_in(page, ui_server.url, ui_server.token)
            page.wait_for_selector('#bindings-table tr[data-name="readers"]')
            assert page.title() == "miniplane · RBAC insight"
            assert page.text_content("#whoami") == "signed in as admin"
            subjects = {(row[0], row[1]) for row in cells(page, "#subjects-table")}
            assert {("User", "alice"), ("Group", "devs"), ("User", "bob"), ("Group", "system:masters")} <= subjects
            assert ["RoleBinding", "team-a", "readers", "Role reader", "User alice, Group devs"] in \
                cells(page, "#bindings-table")
            page.fill("#search", "alice")
            assert [row[1] for row in cells(page, "#subjects-table")] == ["alice"]
            page.screenshot(path=str(tmp_path / "policy.png"))
            page.click("#tabs button[data-tab=graph]")
            page.wait_for_selector("#graph-results svg path.edge", state="attached")
            labels = page.eval_on_selector_all("#graph-results svg text", "ts => ts.map(t => t.textContent)")
            assert any(label.startswith("admin (") for label in labels)
            assert any(label.startswith("system:aggregate-to-view (") for label in labels)
            page.screenshot(path=str(tmp_path / "graph.png"))
            page.click("#tabs button[data-tab=lint]")
            page.wait_for_selector("#lint-results table tbody tr")
            assert ["Critical", "RiskyGrant", "ClusterRole cluster-admin"] in \
                [row[:3] for row in cells(page, "#lint-results")]
            page.screenshot(path=str(tmp_path / "lint.png"))

    await trio.to_thread.run_sync(session)
    assert all((tmp_path / f"{name}.png").stat().st_size > 0 for name in ("policy", "graph", "lint"))


async def test_a_who_can_search_returns_the_subjects_the_server_allows(ui_server, tmp_path):
    await team_policy(ui_server)

    def session() -> list[list[str]]:
        with open_page(tmp_path / "profile") as page:
            sign_in(page, ui_server.url, ui_server.token)
            page.click("#tabs button[data-tab=whocan]")
            submit_form(page, "#whocan-form", verb="list", resource="roles", group=RBAC, namespace="team-a")
            page.wait_for_selector("#whocan-results table tbody tr")
            page.screenshot(path=str(tmp_path / "who-can.png"))
            return cells(page, "#whocan-results")

    rows = await trio.to_thread.run_sync(session)
    assert {(row[0], row[1]) for row in rows} == {("User", "alice"), ("Group", "devs"),
                                                   ("Group", "system:masters")}
    alice = next(row for row in rows if row[1] == "alice")
    assert alice[3:5] == ["RoleBinding team-a/readers", "Role team-a/reader"]


async def test_a_subjects_access_matrix_shows_when_the_subject_is_chosen(ui_server, tmp_path):
    await team_policy(ui_server)

    def session() -> tuple[list[str], list[list[str]]]:
        with open_page(tmp_path / "profile") as page:
            sign_in(page, ui_server.url, ui_server.token)
            page.fill("#search", "alice")
            page.click("#subjects-table tbody tr:has-text('alice')")
            page.wait_for_selector("#matrix-results table.matrix")
            submit_form(page, "#matrix-form", namespace="team-a")
            page.wait_for_selector("#matrix-results p:has-text('team-a')")
            page.screenshot(path=str(tmp_path / "matrix.png"))
            head = page.eval_on_selector_all("#matrix-results thead th", "ths => ths.map(t => t.textContent)")
            return head, cells(page, "#matrix-results")

    head, rows = await trio.to_thread.run_sync(session)
    assert head == ["Resource", "get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"]
    by_name = {row[0]: row[1:] for row in rows}
    assert by_name[f"roles.{RBAC}"] == ["✔", "✔", "✖", "✖", "✖", "✖", "✖", "✖"]
    assert by_name[f"rolebindings.{RBAC}"] == ["✖"] * 8


async def test_an_explanation_shows_its_near_misses(ui_server, tmp_path):
    await team_policy(ui_server)

    def session() -> tuple[str, list[str]]:
        with open_page(tmp_path / "profile") as page:
            sign_in(page, ui_server.url, ui_server.token)
            page.click("#tabs button[data-tab=explain]")
            submit_form(page, "#explain-form", user="alice", verb="delete", resource="roles", group=RBAC,
                        namespace="team-a")
            page.wait_for_selector("#explain-results .near-miss")
            page.screenshot(path=str(tmp_path / "explain.png"), full_page=True)
            misses = page.eval_on_selector_all("#explain-results .near-miss", "ms => ms.map(m => m.textContent)")
            return page.text_content("#explain-results .verdict"), misses

    verdict, misses = await trio.to_thread.run_sync(session)
    assert verdict.startswith("DENIED")
    verb = next(m for m in misses if m.startswith("Attribute · verb"))
    assert "RoleBinding \"team-a/readers\"" in verb and "→ verb \"get\"" in verb


async def test_a_binding_created_with_kubectl_appears_without_a_reload(ui_server, kubectl: Kubectl, tmp_path):
    await team_policy(ui_server)

    def session() -> list[list[str]]:
        with open_page(tmp_path / "profile") as page:
            sign_in(page, ui_server.url, ui_server.token)
            page.wait_for_selector('#bindings-table tr[data-name="readers"]')
            page.wait_for_selector("#live:has-text('live')")
            page.evaluate("window.loadedOnce = true")
            trio.from_thread.run(kubectl, "create", "rolebinding", "newcomer", "--clusterrole=view",
                                 "--user=zoe", "-n", "team-a")
            page.wait_for_selector('#bindings-table tr[data-name="newcomer"]')
            assert page.evaluate("window.loadedOnce") is True  # the same document: no reload
            page.screenshot(path=str(tmp_path / "live.png"))
            return cells(page, "#subjects-table")

    subjects = await trio.to_thread.run_sync(session)
    assert ["User", "zoe", "", "newcomer"] in subjects


async def test_every_query_is_authorized_as_the_signed_in_user(ui_server, tmp_path):
    await team_policy(ui_server)

    def session() -> tuple[str, str]:
        with open_page(tmp_path / "profile") as page:
            page.goto(f"{ui_server.url}/ui/")
            # The form shows once the page has asked who it is (a request after load): wait for it.
            page.wait_for_selector("#sign-in", state="visible")
            assert page.text_content("#sign-in-error") == ""
            page.fill("#token", "not-a-token")
            page.click("#sign-in button[type=submit]")
            page.wait_for_selector("#sign-in-error:has-text('Unauthorized')")
            sign_in(page, ui_server.url, "bob-token")
            page.wait_for_selector("#policy-error:has-text('forbidden')")
            page.click("#tabs button[data-tab=whocan]")
            submit_form(page, "#whocan-form", resource="roles")
            page.wait_for_selector("#error:has-text('forbidden')")
            return page.text_content("#whoami"), page.text_content("#error")

    who, error = await trio.to_thread.run_sync(session)
    assert who == "signed in as bob"
    assert error.startswith('whocans.insight.k8s.io is forbidden: User "bob" cannot list resource "clusterroles"')


async def test_a_client_certificate_signs_in_without_a_token(nursery, tmp_path):
    pki = ensure_pki(tmp_path / "data")
    srv = await start_server(nursery, tmp_path, api_domain="k8s.io", client_ca_file=str(pki.ca_cert_path))
    await team_policy(srv)
    cert, key = issue_client_cert(pki, "carol", ["system:masters"])
    (tmp_path / "carol.crt").write_bytes(cert)
    (tmp_path / "carol.key").write_bytes(key)

    def session() -> tuple[str, bool]:
        with open_page(tmp_path / "profile", (srv.url, tmp_path / "carol.crt", tmp_path / "carol.key")) as page:
            page.goto(f"{srv.url}/ui/")
            page.wait_for_selector('#bindings-table tr[data-name="readers"]')
            return page.text_content("#whoami"), page.is_visible("#sign-in")

    assert await trio.to_thread.run_sync(session) == ("signed in as carol", False)


def test_a_screenshot_of_the_page_is_in_the_readme():
    root = Path(__file__).resolve().parents[2]
    shot = root / "docs" / "insight-ui.png"
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size < 300_000
    assert "![The RBAC insight page](docs/insight-ui.png)" in (root / "README.md").read_text()
