"""The example Python webhooks (tests/support/python_admission.py) in process, over HTTP: in a control plane
(`open_control_plane(admission=...)`, what `miniplane serve --admission-module` runs) and in a test env
(`open_test_env(admission=..., https=True)`). Each place answers alike: a denial in kube's words with its
code, a patch stored, warnings as Warning headers, an exception a 500 denial, other kinds untouched."""

from __future__ import annotations

import ssl
from contextlib import asynccontextmanager
from typing import AsyncIterator

import httpx
import pytest

from runtime.controller.testing import open_test_env
from tests.support.python_admission import (
    DENIED_CODE, DENY_LABELLED, DENY_MESSAGE, STAMP, STAMP_WEBHOOK, WARNING, WEBHOOKS, configmap,
)
from tests.support.server import start_in_process

pytestmark = pytest.mark.stores("memory")

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"


@asynccontextmanager
async def _in_control_plane(nursery, tmp_path) -> AsyncIterator[httpx.AsyncClient]:
    server = await start_in_process(nursery, tmp_path, admission=WEBHOOKS)
    async with server.client() as client:
        yield client


@asynccontextmanager
async def _in_test_env(nursery, tmp_path) -> AsyncIterator[httpx.AsyncClient]:
    async with open_test_env(controllers=False, https=True, admission=WEBHOOKS) as env:
        assert env.url and env.ca_pem
        async with httpx.AsyncClient(base_url=env.url, verify=ssl.create_default_context(cadata=env.ca_pem.decode()),
                                     headers={"Authorization": f"Bearer {env.token}"}, timeout=30) as client:
            yield client


@pytest.fixture(params=["control-plane", "test-env"])
async def client(request, nursery, tmp_path) -> AsyncIterator[httpx.AsyncClient]:
    place = _in_control_plane if request.param == "control-plane" else _in_test_env
    async with place(nursery, tmp_path) as opened:
        yield opened


async def test_a_denial_is_refused_in_kubes_words_with_its_code(client):
    answer = await client.post(CONFIGMAPS, json=configmap(labels={"deny": "now"}))
    assert answer.status_code == DENIED_CODE
    status = answer.json()
    assert (status["kind"], status["reason"]) == ("Status", "Forbidden")
    assert status["message"] == (f'admission webhook "{DENY_LABELLED.name}" denied the request: '
                                 f'{DENY_MESSAGE.format("now")}')
    assert (await client.get(f"{CONFIGMAPS}/c")).status_code == 404


async def test_a_mutating_webhooks_patch_is_stored(client):
    answer = await client.post(CONFIGMAPS, json=configmap(labels={"a": "b"}))
    assert answer.status_code == 201
    stored = (await client.get(f"{CONFIGMAPS}/c")).json()
    assert stored["metadata"]["labels"] == {"a": "b", STAMP[0]: STAMP[1]}


async def test_warnings_reach_the_client_as_warning_headers(client):
    answer = await client.post(CONFIGMAPS, json=configmap(data={"warn": "1"}))
    assert answer.status_code == 201
    assert answer.headers["warning"] == f'299 - "{WARNING}"'


async def test_an_exception_in_admit_is_a_500_denial(client):
    answer = await client.post(CONFIGMAPS, json=configmap(data={"explode": "1"}))
    assert answer.status_code == 500
    assert answer.json()["message"] == f'admission webhook "{STAMP_WEBHOOK.name}" denied the request: the stamp broke'


async def test_a_dry_run_is_admitted_and_stores_nothing(client):
    answer = await client.post(CONFIGMAPS, params={"dryRun": "All"}, json=configmap())
    assert answer.status_code == 201 and answer.json()["metadata"]["labels"] == {STAMP[0]: STAMP[1]}
    assert (await client.get(f"{CONFIGMAPS}/c")).status_code == 404


async def test_other_kinds_are_not_admitted(client):
    answer = await client.post("/api/v1/namespaces/default/secrets",
                               json={"apiVersion": "v1", "kind": "Secret",
                                     "metadata": {"name": "s", "labels": {"deny": "now"}}})
    assert answer.status_code == 201 and "labels" in answer.json()["metadata"]
    assert STAMP[0] not in answer.json()["metadata"]["labels"]
