"""The `runtime.webhook` package: what it exports, and that an author's webhook server loads no server code."""

from __future__ import annotations

import subprocess
import sys

import runtime.webhook


def test_the_surface_is_all_and_all_exists():
    assert all(hasattr(runtime.webhook, name) for name in runtime.webhook.__all__)
    assert {"Webhook", "Rule", "Request", "Allowed", "Denied", "Patch", "WebhookServer",
            "load_webhooks"} <= set(runtime.webhook.__all__)


def test_importing_runtime_webhook_loads_no_server_module():
    code = ("import sys, runtime.webhook, runtime.webhook.review; "
            "print(sorted(m for m in sys.modules if m.startswith(('runtime.server', 'api', 'controllers'))))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"
