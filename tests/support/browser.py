"""Real headless Chromium for the page's tests: Debian's `chromium`, driven by Playwright for Python.

Contract: `open_page(profile_dir)` (a context manager, synchronous: run it
in one thread, e.g. inside `trio.to_thread.run_sync`) launches
`/usr/bin/chromium` headless with `CHROMIUM_ARGS` and a fresh user-data dir
(`profile_dir`), the server's self-signed certificate accepted, and yields a
Playwright `Page`; everything is closed on exit. `client_certificate=(origin,
cert_path, key_path)` makes the browser present that certificate to `origin`. Playwright's own browser
downloads are never used (`playwright install` is not run): a missing
`/usr/bin/chromium` raises AssertionError saying how the project installs
it (`make chromium`, which `make test` runs). `sign_in(page, url, token)`
opens `URL/ui/`, enters the token and waits until the page says who is
signed in.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from playwright.sync_api import Page, sync_playwright

__all__ = ["CHROMIUM", "CHROMIUM_ARGS", "chromium", "open_page", "sign_in", "submit_form"]

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync")


def chromium() -> str:
    """The path of Debian's chromium; AssertionError (never a skip) when it is not installed."""
    if not os.access(CHROMIUM, os.X_OK):
        raise AssertionError(f"Debian's chromium is not installed at {CHROMIUM}: `make chromium` installs it "
                             "(`make test` runs that first; it needs apt-get and the Debian archive)")
    return CHROMIUM


@contextmanager
def open_page(profile_dir: Path, client_certificate: tuple[str, Path, Path] | None = None) -> Iterator[Page]:
    """Launch headless Chromium with a fresh profile in `profile_dir`; yield a page (1280x860)."""
    executable = chromium()
    certificates = []
    if client_certificate is not None:
        origin, cert, key = client_certificate
        certificates.append({"origin": origin, "certPath": str(cert), "keyPath": str(key)})
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(profile_dir), executable_path=executable, headless=True, args=list(CHROMIUM_ARGS),
            ignore_https_errors=True, viewport={"width": 1280, "height": 860}, client_certificates=certificates)
        try:
            context.set_default_timeout(20_000)
            yield context.pages[0] if context.pages else context.new_page()
        finally:
            context.close()


def sign_in(page: Page, url: str, token: str) -> None:
    """Open the page, sign in with `token`, and wait until it names the signed-in user."""
    page.goto(f"{url}/ui/")
    page.fill("#token", token)
    page.click("#sign-in button[type=submit]")
    page.wait_for_selector("#whoami:has-text('signed in as')")


def submit_form(page: Page, form: str, **fields: str) -> None:
    """Fill the inputs of the form `form` (a selector) by name, then press its submit button."""
    for name, value in fields.items():
        page.fill(f"{form} [name={name}]", value)
    page.click(f"{form} button[type=submit]")
