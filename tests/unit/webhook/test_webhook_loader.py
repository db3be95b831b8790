"""`load_webhooks(module)`: a module's `WEBHOOKS`, or one line saying why there are none."""

from __future__ import annotations

import sys
import types

import pytest

from runtime.webhook import WebhookModuleError, load_webhooks
from tests.support.python_admission import DENY_LABELLED, WEBHOOKS


@pytest.fixture
def module(monkeypatch):
    """A module `fake_admission_module` whose attributes the test sets."""
    made = types.ModuleType("fake_admission_module")
    monkeypatch.setitem(sys.modules, "fake_admission_module", made)
    return made


def test_a_modules_webhooks_are_its_WEBHOOKS():
    assert load_webhooks("tests.support.python_admission") == tuple(WEBHOOKS)


def test_a_module_that_does_not_import_is_one_line():
    with pytest.raises(WebhookModuleError) as caught:
        load_webhooks("no.such.module")
    assert str(caught.value) == "cannot import no.such.module: ModuleNotFoundError: No module named 'no'"


def test_a_module_without_WEBHOOKS_is_refused(module):
    with pytest.raises(WebhookModuleError, match="^fake_admission_module defines no WEBHOOKS$"):
        load_webhooks("fake_admission_module")


def test_an_empty_WEBHOOKS_is_refused(module):
    module.WEBHOOKS = []
    with pytest.raises(WebhookModuleError, match="WEBHOOKS is empty"):
        load_webhooks("fake_admission_module")


def test_WEBHOOKS_holds_webhooks_only(module):
    module.WEBHOOKS = [DENY_LABELLED, "x"]
    with pytest.raises(WebhookModuleError, match="holds a str, not a Webhook"):
        load_webhooks("fake_admission_module")
    module.WEBHOOKS = DENY_LABELLED
    with pytest.raises(WebhookModuleError, match="is not a list of Webhook"):
        load_webhooks("fake_admission_module")


def test_WEBHOOKS_names_each_webhook_once(module):
    module.WEBHOOKS = [DENY_LABELLED, DENY_LABELLED]
    with pytest.raises(WebhookModuleError, match="names webhook 'deny-labelled.example.com' twice"):
        load_webhooks("fake_admission_module")
