"""The /ui/ page as the server serves it (its behaviour in a browser: tests/browser/).

The page is static code shipped in the package (`api/ui/static`), authorized
as a non-resource URL like any other: miniplane's bootstrap policy lets
everyone get `/ui` and `/ui/*`, while every piece of data the page shows is
asked for with the signed-in user's credentials.
"""

from __future__ import annotations

import re
from importlib import resources

from tests.support.rbac import ok, token_file
from tests.support.server import start_in_process

STATIC = resources.files("api.ui").joinpath("static")


async def test_the_page_and_its_assets_are_served_with_a_strict_content_security_policy(server):
    async with server.client(token=None) as anonymous:
        for path, media in (("/ui/", "text/html"), ("/ui/app.js", "text/javascript"), ("/ui/style.css", "text/css")):
            r = await anonymous.get(path)
            assert r.status_code == 200 and r.headers["content-type"].startswith(media), path
            assert "script-src 'self'" in r.headers["content-security-policy"]
            assert "frame-ancestors 'none'" in r.headers["content-security-policy"]
            assert r.headers["x-content-type-options"] == "nosniff"
        page = await anonymous.get("/ui/")
        assert page.content == STATIC.joinpath("index.html").read_bytes()
        moved = await anonymous.get("/ui")
        assert (moved.status_code, moved.headers["location"]) == (301, "/ui/")
        assert (await anonymous.get("/ui/missing.js")).status_code == 404


async def test_the_page_is_public_but_its_data_is_not(server):
    async with server.client(token=None) as anonymous:
        assert (await anonymous.get("/ui/")).status_code == 200
        assert (await anonymous.get(f"{server.rbac}/clusterrolebindings")).status_code == 403
        r = await anonymous.post(f"/apis/insight.{server.domain}/v1/whocans", json={
            "apiVersion": f"insight.{server.domain}/v1", "kind": "WhoCan",
            "spec": {"resourceAttributes": {"verb": "get", "resource": "roles"}}})
        assert r.status_code == 403
        assert (await anonymous.post("/ui/", content=b"x")).status_code == 403  # only get is granted


async def test_removing_the_viewer_binding_closes_the_page(nursery, tmp_path):
    srv = await start_in_process(nursery, tmp_path, token_auth_file=token_file(tmp_path))
    async with srv.client() as admin:
        await ok(await admin.delete(f"{srv.rbac}/clusterrolebindings/miniplane:insight-ui-viewer"))
    async with srv.client(token="bob-token") as bob:
        r = await bob.get("/ui/")
    assert r.status_code == 403 and r.json()["message"] == 'forbidden: User "bob" cannot get path "/ui/"'
    async with srv.client() as admin:
        assert (await admin.get("/ui/")).status_code == 200  # system:masters


def test_the_page_loads_nothing_from_outside_the_server():
    for name in ("index.html", "app.js", "style.css"):
        text = STATIC.joinpath(name).read_text()
        urls = re.findall(r"https?://[^\s\"'`)]+", text)
        assert urls in ([], ["http://www.w3.org/2000/svg"]), (name, urls)
    html = STATIC.joinpath("index.html").read_text()
    assert re.findall(r'(?:src|href)="([^"]+)"', html) == ["style.css", "app.js"]
    assert "innerHTML" not in STATIC.joinpath("app.js").read_text()  # data is written as text only
