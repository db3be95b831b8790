"""`miniplane serve`'s options for a shared store: `--store etcd://...`, the `--etcd-*` flags, durations."""

from __future__ import annotations

import socket

import pytest

from api.cli import main, parser, serve_options


def options(*argv: str):
    return serve_options(parser().parse_args(["serve", *argv]))


def test_an_etcd_url_is_a_store_and_the_etcd_flags_reach_the_options() -> None:
    opts = options("--store", "etcd://10.0.0.1:2379,10.0.0.2:2379", "--etcd-prefix", "/team",
                   "--etcd-cafile", "ca.pem", "--etcd-certfile", "c.pem", "--etcd-keyfile", "k.pem",
                   "--etcd-compaction-interval", "10m")
    assert opts.store == "etcd://10.0.0.1:2379,10.0.0.2:2379"
    assert (opts.etcd_prefix, opts.etcd_cafile, opts.etcd_certfile, opts.etcd_keyfile) == \
        ("/team", "ca.pem", "c.pem", "k.pem")
    assert opts.etcd_compaction_interval == 600


def test_the_defaults_are_kube_apiservers() -> None:
    opts = options("--store", "etcd://127.0.0.1:2379")
    assert opts.etcd_compaction_interval == 300  # kube-apiserver's 5m
    assert opts.etcd_prefix is None  # the URL's prefix, else /registry
    assert opts.leader_elect is None  # on, because the store is shared
    assert (opts.leader_elect_lease_duration, opts.leader_elect_renew_deadline,
            opts.leader_elect_retry_period) == (15, 10, 2)


@pytest.mark.parametrize(("text", "seconds"), [
    ("5m", 300), ("1h30m", 5400), ("90s", 90), ("1m30s", 90), ("500ms", 0.5), ("0", 0), ("2.5", 2.5),
])
def test_durations_are_read_as_kube_apiserver_reads_them(text: str, seconds: float) -> None:
    assert options("--etcd-compaction-interval", text).etcd_compaction_interval == seconds


@pytest.mark.parametrize("text", ["5x", "m5", "5m junk", ""])
def test_a_malformed_duration_is_refused(text: str, capsys) -> None:
    with pytest.raises(SystemExit):
        parser().parse_args(["serve", "--etcd-compaction-interval", text])
    assert "duration" in capsys.readouterr().err


@pytest.mark.parametrize("store", ["etcd:/x", "postgres://db", "etcd"])
def test_an_unknown_store_is_refused(store: str, capsys) -> None:
    with pytest.raises(SystemExit):
        parser().parse_args(["serve", "--store", store])
    assert "etcd://HOST:PORT" in capsys.readouterr().err


@pytest.mark.parametrize("flag", ["--etcd-prefix", "--etcd-cafile", "--etcd-certfile", "--etcd-keyfile"])
def test_an_etcd_flag_without_an_etcd_store_stops_serve_at_start(flag: str, capsys, tmp_path) -> None:
    assert main(["serve", "--data-dir", str(tmp_path), flag, "x"]) == 2
    assert f"{flag} needs --store etcd://" in capsys.readouterr().err


def test_inconsistent_leader_election_timing_stops_serve_at_start(capsys, tmp_path) -> None:
    assert main(["serve", "--data-dir", str(tmp_path), "--leader-elect-lease-duration", "5",
                 "--leader-elect-renew-deadline", "10"]) == 2
    assert "lease_duration must be greater than renew_deadline" in capsys.readouterr().err


def test_serve_on_an_etcd_that_does_not_answer_exits_1_saying_why(capsys, tmp_path) -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert main(["serve", "--data-dir", str(tmp_path), "--port", "0", "--store", f"etcd://127.0.0.1:{port}"]) == 1
    assert "no etcd endpoint answered" in capsys.readouterr().err


def test_serve_without_flags_is_the_default_serve_options() -> None:
    from api.assembly import ServeOptions
    assert options() == ServeOptions()


def test_every_serve_option_but_the_internal_ones_is_a_flag() -> None:
    import dataclasses

    from api.assembly import ServeOptions
    from api.cli import serve_flags
    fields = {f.name for f in dataclasses.fields(ServeOptions)}
    assert fields - {flag.field for flag in serve_flags()} == {"compaction_interval", "worker"}


@pytest.mark.parametrize("command", [["serve"], ["controllers", "--kubeconfig", "k"]])
def test_leader_election_flags_are_shared_by_serve_and_controllers(command: list[str]) -> None:
    args = parser().parse_args([*command, "--leader-elect-lease-duration", "20s",
                                "--leader-elect-renew-deadline", "1m", "--leader-elect-retry-period", "3",
                                "--leader-elect-identity", "me"])
    assert (args.leader_elect_lease_duration, args.leader_elect_renew_deadline, args.leader_elect_retry_period,
            args.leader_elect_identity) == (20, 60, 3, "me")
