"""How `miniplane` says an error (`api.cli`): the leaf of trio's exception groups, in one line."""

from __future__ import annotations

import errno

import pytest
import trio

from api.cli import describe_error, leaf_cause, main
from api.serving.server import ListenError
from runtime.server.storage import StoreError


def test_an_error_outside_a_group_is_its_own_cause():
    error = ValueError("bad")
    assert leaf_cause(error) is error


def test_the_cause_is_the_leaf_of_nested_groups():
    bind = OSError(errno.EADDRINUSE, "Address already in use")
    group = ExceptionGroup("nursery", [ExceptionGroup("inner nursery", [bind])])
    assert leaf_cause(group) is bind


def test_an_exception_beside_a_keyboard_interrupt_is_the_cause():
    store = StoreError("no etcd endpoint answered")
    assert leaf_cause(BaseExceptionGroup("nursery", [KeyboardInterrupt(), ExceptionGroup("x", [store])])) is store


def test_a_keyboard_interrupt_alone_is_the_cause():
    interrupt = KeyboardInterrupt()
    assert leaf_cause(BaseExceptionGroup("nursery", [interrupt])) is interrupt


def test_the_leaf_of_a_group_trio_raised_is_found():
    async def fail() -> None:
        raise StoreError("no etcd endpoint answered /v3/kv/range")

    async def run() -> None:
        async with trio.open_nursery() as outer:
            async with trio.open_nursery() as inner:
                inner.start_soon(fail)
            outer.start_soon(trio.sleep_forever)

    with pytest.raises(BaseExceptionGroup) as raised:
        trio.run(run)
    assert describe_error(leaf_cause(raised.value)) == "no etcd endpoint answered /v3/kv/range"


def test_an_os_error_is_said_by_its_reason_after_its_file():
    assert describe_error(FileNotFoundError(errno.ENOENT, "No such file or directory", "/x.csv")) == \
        "/x.csv: no such file or directory"
    assert describe_error(ListenError(errno.EADDRINUSE, "cannot listen on 127.0.0.1:6443: address already in use")) \
        == "cannot listen on 127.0.0.1:6443: address already in use"


def test_an_error_of_no_known_kind_is_said_with_its_type():
    assert describe_error(KeyError("spec")) == "KeyError: 'spec'"
    assert describe_error(RuntimeError()) == "RuntimeError"


def test_a_message_of_several_lines_is_said_in_one():
    assert describe_error(ValueError("first\n  second\n")) == "first second"


def test_a_bad_option_value_found_before_running_is_one_line_exiting_2(tmp_path, capsys):
    missing = tmp_path / "tokens.csv"
    assert main(["serve", "--data-dir", str(tmp_path), "--token-auth-file", str(missing)]) == 2
    assert capsys.readouterr().err.splitlines() == \
        [f"miniplane: error: --token-auth-file {missing}: no such file or directory"]


def test_a_port_out_of_range_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as raised:
        main(["serve", "--port", "65536"])
    assert raised.value.code == 2
    assert "argument --port: must be between 0 and 65535, got 65536" in capsys.readouterr().err
