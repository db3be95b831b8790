"""A webhook's warnings, answered as Warning headers as kube-apiserver's warning recorder writes them
(`endpoints/filters/warning.go`): each once, `299 - "text"`, none with a control character; past 4096 runes in
all, every warning cut to 256 runes. With a refusal too, as kube writes them before the answer's status."""

from __future__ import annotations

from typing import Any

import pytest

from runtime.machinery import errors
from runtime.machinery.warnings import ITEM_RUNES, TOTAL_RUNES, warning_headers
from runtime.server.admission.webhooks import ValidatingWebhooks
from tests.support.policy_fakes import request
from tests.support.webhook_fakes import allowing, configuration, denying, hook_spec, webhook_context


def _configmap() -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "ns"}}


async def test_an_allowing_webhooks_warnings_are_the_requests_in_order_once_each():
    context = webhook_context(configuration("ValidatingWebhookConfiguration", "cfg", hook_spec("a"), hook_spec("b")),
                              answer=allowing(warnings=["first", "second", "first"]))
    req = request(_configmap())
    await ValidatingWebhooks(context).validate(req)
    assert req.warnings == ["first", "second"]


async def test_a_refusal_carries_the_warnings_as_one_header():
    context = webhook_context(configuration("ValidatingWebhookConfiguration", "cfg", hook_spec("a")),
                              answer=denying({"message": "no"}, warnings=['say "x"', "bad\nline"]))
    with pytest.raises(errors.StatusError) as caught:
        await ValidatingWebhooks(context).validate(request(_configmap()))
    assert caught.value.headers["Warning"] == '299 - "say \\"x\\""'


def test_a_warning_is_formatted_with_code_299_and_no_agent():
    assert warning_headers(['a "b" \\ é']) == ['299 - "a \\"b\\" \\\\ é"']


def test_a_warning_with_a_control_character_is_dropped():
    assert warning_headers(["ok", "line\nbreak", "bell\x07", "c1\x85"]) == ['299 - "ok"']


def test_empty_and_repeated_warnings_are_dropped():
    assert warning_headers(["", "x", "x"]) == ['299 - "x"']


def test_warnings_within_the_total_limit_are_kept_whole():
    long = "a" * 1000
    assert warning_headers([long, "b" * 1000]) == [f'299 - "{long}"', f'299 - "{"b" * 1000}"']


def test_past_the_total_limit_every_warning_is_cut_to_the_item_limit():
    texts = ["a" * 2000, "b" * 2000, "c" * 200, "d" * 2000]
    assert sum(map(len, texts)) > TOTAL_RUNES
    assert warning_headers(texts) == [f'299 - "{t[:ITEM_RUNES]}"' for t in texts]


def test_truncation_counts_runes_not_bytes():
    texts = ["é" * 2000, "ü" * 2000]  # 4000 runes, 8000 bytes: within the limit
    assert warning_headers(texts) == [f'299 - "{t}"' for t in texts]


async def test_a_refusals_warnings_past_the_total_limit_are_cut_as_kubes_recorder_cuts_them():
    texts = ["a" * 3000, "b" * 3000]
    context = webhook_context(configuration("ValidatingWebhookConfiguration", "cfg", hook_spec("a")),
                              answer=denying({"message": "no"}, warnings=texts))
    with pytest.raises(errors.StatusError) as caught:
        await ValidatingWebhooks(context).validate(request(_configmap()))
    assert caught.value.headers["Warning"] == ", ".join(f'299 - "{t[:ITEM_RUNES]}"' for t in texts)
