"""`miniplane serve --admission-module M`: a module's WEBHOOKS admit in the serving process; a module that
cannot be used is one line on stderr and exit code 2, before anything starts."""

from __future__ import annotations

import pytest

from api.cli import main
from tests.support.python_admission import DENY_LABELLED, DENY_MESSAGE, STAMP, configmap
from tests.support.serverproc import admin_client, spawn_server

pytestmark = pytest.mark.stores("memory")

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"


def test_a_module_that_does_not_import_is_one_line_and_exit_2(tmp_path, capsys):
    code = main(["serve", "--data-dir", str(tmp_path), "--admission-module", "no.such.module"])
    assert code == 2
    assert capsys.readouterr().err == ("miniplane: error: --admission-module no.such.module: cannot import "
                                       "no.such.module: ModuleNotFoundError: No module named 'no'\n")


def test_a_module_without_webhooks_is_one_line_and_exit_2(tmp_path, capsys):
    code = main(["serve", "--data-dir", str(tmp_path), "--admission-module", "tests.support.server"])
    assert code == 2
    assert capsys.readouterr().err == ("miniplane: error: --admission-module tests.support.server: "
                                       "tests.support.server defines no WEBHOOKS\n")


async def test_the_modules_webhooks_admit_in_the_serving_process(tmp_path):
    data_dir = tmp_path / "data"
    proc, url = await spawn_server(data_dir, "--store", "memory", "--controllers", "false",
                                   "--admission-module", "tests.support.python_admission")
    try:
        async with admin_client(data_dir, url) as client:
            denied = await client.post(CONFIGMAPS, json=configmap(labels={"deny": "now"}))
            assert denied.status_code == 403
            assert denied.json()["message"] == (f'admission webhook "{DENY_LABELLED.name}" denied the request: '
                                                f'{DENY_MESSAGE.format("now")}')
            created = await client.post(CONFIGMAPS, json=configmap())
            assert created.status_code == 201 and created.json()["metadata"]["labels"] == {STAMP[0]: STAMP[1]}
    finally:
        proc.terminate()
        await proc.wait()
