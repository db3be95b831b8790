"""`miniplane`'s errors, as a user sees them: one line on stderr naming the cause, and the exit code
(2: a command line that cannot be used; 1: a failure while running); the traceback only with --debug
or MINIPLANE_DEBUG=1. Each runs the command in a process of its own."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from tests.support.cli import free_port, miniplane


def kubeconfig_of(tmp_path: Path, server: str) -> Path:
    path = tmp_path / "config"
    path.write_text("apiVersion: v1\nkind: Config\ncurrent-context: c\n"
                    "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
                    f"clusters: [{{name: k, cluster: {{server: '{server}'}}}}]\n"
                    "users: [{name: u, user: {token: t}}]\n")
    return path


# The parent of --workers binds the port itself (api/serving/workers.py), one server through Hypercorn.
@pytest.mark.parametrize("serving", [["--store", "memory"], ["--workers", "2"]], ids=["one-server", "workers"])
async def test_serve_on_a_port_in_use_says_so_in_one_line_and_exits_1(tmp_path, serving):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, err = await miniplane("serve", "--data-dir", str(tmp_path), *serving, "--port", str(port))
    assert (code, err) == (1, [f"miniplane: error: cannot listen on 127.0.0.1:{port}: address already in use"])


@pytest.mark.parametrize("flag", ["--token-auth-file", "--client-ca-file", "--audit-policy-file"])
async def test_serve_with_a_file_option_that_does_not_read_says_which_in_one_line_and_exits_2(tmp_path, flag):
    missing = tmp_path / "missing.file"
    code, err = await miniplane("serve", "--data-dir", str(tmp_path), "--store", "memory", "--port", "0",
                                flag, str(missing))
    assert (code, err) == (2, [f"miniplane: error: {flag} {missing}: no such file or directory"])


async def test_serve_on_an_etcd_that_does_not_answer_says_so_in_one_line_and_exits_1(tmp_path):
    port = free_port()
    code, err = await miniplane("serve", "--data-dir", str(tmp_path), "--port", "0", "--store",
                                f"etcd://127.0.0.1:{port}")
    assert code == 1
    assert len(err) == 1 and err[0].startswith("miniplane: error: no etcd endpoint answered"), err
    assert f"127.0.0.1:{port}" in err[0]


async def test_controllers_with_a_kubeconfig_that_does_not_read_says_so_in_one_line_and_exits_2(tmp_path):
    missing = tmp_path / "missing.kubeconfig"
    code, err = await miniplane("controllers", "--kubeconfig", str(missing))
    assert (code, err) == (2, [f"miniplane: error: cannot read kubeconfig {missing}: no such file or directory"])


async def test_controllers_with_a_module_that_does_not_import_says_so_in_one_line_and_exits_2(tmp_path):
    module = tmp_path / "broken.py"
    module.write_text("import no_such_module_here\n")
    code, err = await miniplane("controllers", "--kubeconfig", str(kubeconfig_of(tmp_path, "https://127.0.0.1:1")),
                                "--module", str(module))
    assert (code, err) == (2, [f"miniplane: error: controller module {module}: No module named 'no_such_module_here'"])


async def test_controllers_against_a_server_that_does_not_answer_say_so_in_one_line_and_exit_1(tmp_path):
    server = f"https://127.0.0.1:{free_port()}"
    code, err = await miniplane("controllers", "--kubeconfig", str(kubeconfig_of(tmp_path, server)))
    assert code == 1
    assert len(err) == 1 and err[0].startswith(f"miniplane: error: cannot reach the server {server}: "), err


@pytest.mark.parametrize("how", ["--debug after the command", "--debug before it", "MINIPLANE_DEBUG=1"])
async def test_debug_prints_the_traceback_before_the_line(tmp_path, how):
    missing = tmp_path / "missing.kubeconfig"
    args = ["controllers", "--kubeconfig", str(missing)]
    args = {"--debug after the command": [*args, "--debug"], "--debug before it": ["--debug", *args]}.get(how, args)
    code, err = await miniplane(*args, debug_env=how == "MINIPLANE_DEBUG=1")
    assert code == 2
    assert err[0] == "Traceback (most recent call last):" and "FileNotFoundError" in "\n".join(err)
    assert err[-1] == f"miniplane: error: cannot read kubeconfig {missing}: no such file or directory"
