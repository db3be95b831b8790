"""Connections survive early answers (issue 17.3): whatever answers before reading a request's body leaves
the connection able to carry the next request, or says `Connection: close` and closes it cleanly.

Over real HTTPS, one HTTP/1.1 connection per case (`tests.support.rawhttp`): a request with a body of
1 KB to 3 MB that the server answers before reading it (401, 403, 404, 405, 413, 415, 400 on the
query), then a second request on the same connection. Bodies up to `--max-body-bytes` are drained and
the connection kept; past it the answer says `Connection: close` (the server reads no more than that).
"""

from __future__ import annotations

import pytest

from tests.support.rawhttp import open_connection
from tests.support.server import start_server

RBAC = "/apis/rbac.authorization.svc.io/v1"
LIMIT = 3 * 1024 * 1024  # --max-body-bytes (the default)
SIZES = (1_000, 20_000, 300_000, 3_000_000)


def body_of(size: int) -> bytes:
    """A JSON document of `size` bytes (a ClusterRole with a long annotation)."""
    head = b'{"apiVersion":"rbac.authorization.svc.io/v1","kind":"ClusterRole","metadata":{"name":"big",' \
           b'"annotations":{"pad":"'
    tail = b'"}},"rules":[]}'
    return head + b"x" * (size - len(head) - len(tail)) + tail


def cases(token: str) -> list[tuple[str, str, str, dict[str, str], tuple[int, ...]]]:
    """(name, method, path, headers, sizes) of requests answered before their body is read."""
    admin = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    return [
        ("401 bad token", "POST", f"{RBAC}/clusterroles", {**admin, "Authorization": "Bearer wrong"}, SIZES),
        ("403 anonymous", "POST", f"{RBAC}/clusterroles", {"Content-Type": "application/json"}, SIZES),
        ("404 no such resource", "POST", f"{RBAC}/widgets", admin, SIZES),
        ("405 create on an item path", "POST", f"{RBAC}/clusterroles/admin", admin, SIZES),
        ("413 past the limit", "POST", f"{RBAC}/clusterroles", admin, (LIMIT + 1_000, 2 * LIMIT)),
        ("415 unknown patch type", "PATCH", f"{RBAC}/clusterroles/admin", {**admin, "Content-Type": "text/plain"},
         SIZES),
        ("400 on the query", "POST", f"{RBAC}/clusterroles?timeout=soon", admin, SIZES),
    ]


async def test_every_early_answer_leaves_the_connection_usable_for_the_next_request(nursery, tmp_path):
    server = await start_server(nursery, tmp_path)  # real sockets and TLS: the real clock
    seen: list[tuple[str, int, int]] = []
    for name, method, path, headers, sizes in cases(server.token):
        expected = int(name.split()[0])
        for size in sizes:
            async with open_connection(server) as conn:
                answer = await conn.request(method, path, headers=headers, body=body_of(size))
                assert answer.status == expected, (name, size, answer.body[:300])
                assert answer.headers["content-type"] == "application/json", (name, size)
                seen.append((name, size, answer.status))
                if size <= LIMIT or expected == 413:
                    # Drained: the same connection serves the next request, with no Connection: close.
                    assert not answer.closing and conn.reusable, (name, size, answer.headers)
                    follow = await conn.request("GET", f"{RBAC}/clusterroles/admin",
                                                headers={"Authorization": f"Bearer {server.token}"})
                    assert follow.status == 200, (name, size, follow.body[:300])
                else:
                    assert answer.closing and await conn.wait_closed(), (name, size)
    assert len(seen) == 6 * len(SIZES) + 2


@pytest.mark.parametrize("size", [LIMIT + 1, 5 * LIMIT])
async def test_a_body_past_the_drain_bound_is_answered_with_connection_close(nursery, tmp_path, size):
    # A 401 is answered before the body; past --max-body-bytes the server stops reading and says so.
    server = await start_server(nursery, tmp_path)
    async with open_connection(server) as conn:
        answer = await conn.request("POST", f"{RBAC}/clusterroles", body=body_of(size),
                                    headers={"Authorization": "Bearer wrong", "Content-Type": "application/json"})
        assert answer.status == 401 and answer.closing
        assert await conn.wait_closed()
    async with open_connection(server) as conn:  # the server is fine, on a new connection
        assert (await conn.request("GET", "/version", headers={"Authorization": f"Bearer {server.token}"})
                ).status == 200


async def test_a_body_that_stops_arriving_ends_at_the_request_deadline_and_closes_the_connection(nursery, tmp_path):
    # The body is read within the request's deadline (?timeout, 60 s by default): past it 504, and the
    # connection closes, since the body's rest could still come. One second of the real clock.
    server = await start_server(nursery, tmp_path)
    admin = {"Authorization": f"Bearer {server.token}", "Content-Type": "application/json"}
    async with open_connection(server) as conn:
        answer = await conn.stalled("POST", f"{RBAC}/clusterroles?timeout=1s", headers=admin,
                                    length=1_000, part=body_of(1_000)[:100])
        assert answer.status == 504, answer.body[:300]
        assert answer.closing and await conn.wait_closed()
    async with open_connection(server) as conn:  # the server is fine, on a new connection
        follow = await conn.request("POST", f"{RBAC}/clusterroles", headers=admin, body=body_of(1_000))
        assert follow.status == 201, follow.body[:300]
