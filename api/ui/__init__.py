"""The RBAC insight page at `/ui/`: plain HTML, CSS and JavaScript shipped in this package.

Contract: `ui_answer(path)` returns the answer to a GET of `path` (as sent,
trailing slash kept) when it is the page's: `/ui` redirects to `/ui/`, `/ui/`
is `index.html`, `/ui/<file>` a file of `static/`; None for any other path
(a 404 for the caller). The files are read once, at import; no build step.

Who may load it: the handler authorizes the path as any non-resource URL
before asking here. miniplane's bootstrap policy
(`manifests/insight-ui-policy.yaml`) lets everyone get `/ui` and `/ui/*`,
as `system:public-info-viewer` does `/version`: the page is code, not data,
and a browser must load it before it holds a token. Every query the page
makes (lists, watches, the insight kinds) carries the signed-in user's
credentials (a bearer token kept in the tab's sessionStorage, or the
browser's client certificate) and is authorized as that user.

Answers carry a strict Content-Security-Policy (only this origin's scripts,
styles and connections; no framing) and `nosniff`; the page writes data
with `textContent` only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources

__all__ = ["UIAnswer", "ui_answer", "UI_PATH", "SECURITY_HEADERS"]

#: Where the page is served.
UI_PATH = "/ui/"
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; "
                               "connect-src 'self'; img-src 'self' data:; form-action 'self'; "
                               "base-uri 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}
_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
          ".css": "text/css; charset=utf-8", ".svg": "image/svg+xml", ".png": "image/png"}


@dataclass(frozen=True)
class UIAnswer:
    """An answer of the page: status, body and headers."""

    status: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)


def _load() -> dict[str, UIAnswer]:
    files: dict[str, UIAnswer] = {}
    for entry in resources.files(__name__).joinpath("static").iterdir():
        suffix = "." + entry.name.rsplit(".", 1)[-1]
        if entry.is_file() and suffix in _TYPES:
            files[UI_PATH + entry.name] = UIAnswer(200, entry.read_bytes(),
                                                   {"Content-Type": _TYPES[suffix], **SECURITY_HEADERS})
    files[UI_PATH] = files[UI_PATH + "index.html"]
    return files


_FILES = _load()


def ui_answer(path: str) -> UIAnswer | None:
    """Return the page's answer to a GET of `path`, or None when the path is not the page's."""
    if path == UI_PATH.rstrip("/"):
        return UIAnswer(301, b"", {"Location": UI_PATH, **SECURITY_HEADERS})
    return _FILES.get(path)
