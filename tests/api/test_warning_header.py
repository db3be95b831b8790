"""The Warning header as apimachinery's `net.NewWarningHeader(299, "-", text)` writes it.

Only `"` and `\\` are escaped; every other character goes as it is (UTF-8 on
the wire), so kubectl prints `é`, not `\\u00e9`. A text with a control
character is refused by Kubernetes, whose warning recorder then drops it.
"""

from __future__ import annotations

from api.responses import warning_header


def raw_warnings(r) -> list[str]:
    return [v.decode("utf-8") for k, v in r.headers.raw if k.lower() == b"warning"]


async def test_a_warning_keeps_its_non_ascii_characters_as_they_are(server):
    body = {"apiVersion": f"rbac.authorization.{server.domain}/v1", "kind": "ClusterRole",
            "metadata": {"name": "reader", "colé": "blue"}, "rules": []}
    async with server.client() as c:
        r = await c.post(f"{server.rbac}/clusterroles", json=body)
        assert r.status_code == 201, r.text
        assert raw_warnings(r) == ['299 - "unknown field \\"metadata.colé\\""']


def test_a_warning_escapes_only_quotes_and_backslashes() -> None:
    assert warning_header('a "b" \\ é ☃') == '299 - "a \\"b\\" \\\\ é ☃"'


def test_a_warning_with_a_control_character_is_dropped() -> None:
    assert warning_header("line\nbreak") is None
    assert warning_header("bell\x07") is None
    assert warning_header("c1\x85") is None
