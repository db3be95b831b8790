"""`miniplane serve --encryption-provider-config`: a configuration Kubernetes would refuse (a wrong key, a file
that does not read or parse, an unknown kind, duplicate resources) stops the start with one line naming the
flag and kube's complaint, exit 2, as every other bad value of the command line; a good one reaches the
server's options, and a server of two workers started with it stores ciphertext and answers plaintext."""

from __future__ import annotations

import base64
import sqlite3

import pytest

from api.cli import parser, serve_options
from tests.support.cli import free_port, miniplane
from tests.support.serverproc import admin_client, spawn_server


def config(resources: str, provider: str, *, kind: str = "EncryptionConfiguration") -> str:
    return (f"apiVersion: apiserver.config.k8s.io/v1\nkind: {kind}\nresources:\n  - resources: [{resources}]\n"
            f"    providers:\n      - {provider}\n")


SHORT_KEY = base64.b64encode(b"k" * 8).decode()

BAD = {
    "wrong-size-key": (config("secrets", f"aesgcm: {{keys: [{{name: key1, secret: {SHORT_KEY}}}]}}"),
                       'resources[0].providers[0].aesgcm.keys[0].secret: Invalid value: "REDACTED": secret is not '
                       'of the expected length, got 8, expected one of [16 24 32]'),
    "not-base64-key": (config("secrets", "secretbox: {keys: [{name: key1, secret: '@@@'}]}"),
                       'resources[0].providers[0].secretbox.keys[0].secret: Invalid value: "REDACTED": secrets must '
                       'be base64 encoded'),
    "no-keys": (config("secrets", "aescbc: {keys: []}"),
                "resources[0].providers[0].aescbc.keys: Required value: at least one keys is required"),
    "unknown-kind": (config("secrets", "identity: {}", kind="Encryption"),
                     'no kind "Encryption" is registered for version "apiserver.config.k8s.io/v1"'),
    "duplicate-resources": (config("secrets, secrets", "identity: {}"),
                            'resources[0].resources: Invalid value: []string{"secrets", "secrets"}: the same resource '
                            'cannot be specified multiple times'),
}


@pytest.mark.parametrize("case", sorted(BAD))
async def test_serve_with_a_bad_encryption_config_says_kubes_words_in_one_line_and_exits_2(tmp_path, case):
    text, complaint = BAD[case]
    path = tmp_path / "enc.yaml"
    path.write_text(text)
    code, err = await miniplane("serve", "--data-dir", str(tmp_path / "data"), "--store", "memory",
                                "--port", str(free_port()), "--encryption-provider-config", str(path))
    assert (code, err) == (2, [f"miniplane: error: --encryption-provider-config {path}: {complaint}"])


async def test_serve_with_an_encryption_config_that_does_not_read_says_so_in_one_line_and_exits_2(tmp_path):
    path = tmp_path / "missing.yaml"
    code, err = await miniplane("serve", "--data-dir", str(tmp_path / "data"), "--store", "memory",
                                "--port", str(free_port()), "--encryption-provider-config", str(path))
    assert (code, err) == (2, [f'miniplane: error: --encryption-provider-config {path}: error opening encryption '
                               f'provider configuration file "{path}": No such file or directory'])


async def test_serve_with_a_config_that_is_not_yaml_says_so_in_one_line_and_exits_2(tmp_path):
    path = tmp_path / "enc.yaml"
    path.write_text("resources: [unclosed\n  - {")
    code, err = await miniplane("serve", "--data-dir", str(tmp_path / "data"), "--store", "memory",
                                "--port", str(free_port()), "--encryption-provider-config", str(path))
    assert code == 2 and len(err) == 1
    assert err[0].startswith(f"miniplane: error: --encryption-provider-config {path}: error converting YAML to JSON")


def test_serve_flags_of_a_good_config_reach_the_servers_options(tmp_path):
    path = tmp_path / "enc.yaml"
    path.write_text(config("secrets, configmaps", "identity: {}"))
    options = serve_options(parser().parse_args(["serve", "--encryption-provider-config", str(path),
                                                 "--encryption-provider-config-automatic-reload", "true"]))
    assert (options.encryption_provider_config, options.encryption_provider_config_automatic_reload) == (
        str(path), True)


def test_automatic_reload_without_a_config_is_kubes_must_be_set_with():
    with pytest.raises(ValueError, match="^--encryption-provider-config-automatic-reload must be set with "
                                         "--encryption-provider-config$"):
        serve_options(parser().parse_args(["serve", "--encryption-provider-config-automatic-reload", "true"]))


async def test_serve_with_a_good_config_and_two_workers_stores_ciphertext_and_serves_plaintext(tmp_path):
    path = tmp_path / "enc.yaml"
    key = base64.b64encode(b"k" * 32).decode()
    path.write_text(config("serviceaccounts", f"aesgcm: {{keys: [{{name: key1, secret: {key}}}]}}"))
    data_dir = tmp_path / "data"
    proc, url = await spawn_server(data_dir, "--store", "sqlite", "--workers", "2", "--encryption-provider-config",
                                   str(path), "--encryption-provider-config-automatic-reload", "true")
    try:
        async with admin_client(data_dir, url) as client:
            body = {"metadata": {"name": "robot", "annotations": {"note": "plaintext-marker"}}}
            assert (await client.post("/api/v1/namespaces/default/serviceaccounts", json=body)).status_code == 201
            got = await client.get("/api/v1/namespaces/default/serviceaccounts/robot")
            assert got.json()["metadata"]["annotations"]["note"] == "plaintext-marker"
    finally:
        proc.terminate()
        await proc.wait()
    with sqlite3.connect(data_dir / "state.db") as db:
        (value,), = db.execute("SELECT value FROM kv WHERE key = '/core/serviceaccounts/default/robot'")
    assert value.startswith(b"k8s:enc:aesgcm:v1:key1:") and b"plaintext-marker" not in value
