"""A fast start (issue 40): the command line parses without the server or the client, the controllers' command
runs without server code, and the defaults written out for that are still their owners'.

`miniplane controllers --help` cost 2.4 s of CPU: `import api.cli` loaded 250 project modules, the server's
assembly, its kinds and the insight client among them. Each count is taken in a fresh interpreter
(`tests.support.footprint.loaded_by`); bench/bench_start.py measures the times.
"""

from __future__ import annotations

import dataclasses

from api.cli import main
from api.serveoptions import ServeOptions
from controllers.cli import LEADER_ELECTION_TIMING
from runtime.controller.leaderelection import LeaderElectionConfig
from runtime.machinery.crds import is_custom, kinds_of
from runtime.machinery.scheme import DEFAULT_DOMAIN, Scheme
from runtime.server.tokens import DEFAULT_ISSUER
from tests.support.crds import widget_crd
from tests.support.footprint import COMMAND_LINE, loaded_by, project_modules, server_code

#: Parsing `miniplane`'s command line loads 10 project modules (it loaded 250).
MAX_COMMAND_LINE_MODULES = 12
#: What `miniplane controllers` imports once it runs: the command, the HTTP client, the built-in controllers
#: and the follower of custom kinds.
CONTROLLERS_RUN = "api.cli, controllers.cli, controllers.builtin, runtime.controller.customkinds, runtime.client.http"
#: What the controllers' run loads of the project: 81 modules since stop 61 split the informer factory out of
#: `runtime.controller.informer` (76 at first; more with the patch engine and the Protobuf codec).
MAX_CONTROLLERS_RUN_MODULES = 84
#: Modules only a rare call needs, loaded by it: the patch engine (create_or_patch), the Protobuf codec.
RARE_PATHS = ("runtime.machinery.patch", "runtime.machinery.serializer.protobuf", "runtime.machinery.serializer.proto",
              "google.protobuf")
#: Libraries only the server or a served endpoint needs, besides SERVER_CODE's.
HEAVY = ("pydantic", "httpx", "yaml", "hypercorn", "prometheus_client")


def test_parsing_the_command_line_loads_neither_the_server_nor_the_client():
    loaded = loaded_by("api.cli")
    assert len(project_modules(loaded)) <= MAX_COMMAND_LINE_MODULES, project_modules(loaded)
    assert server_code(loaded) == COMMAND_LINE
    assert [m for m in loaded if m.split(".")[0] in HEAVY] == []


def test_listing_every_command_loads_no_client():
    # `miniplane --help` lists the insight commands too: their parsers, not the client they connect with.
    loaded = loaded_by("api.cli, api.insightcli")
    assert "runtime.client.http" not in loaded and "pydantic" not in loaded
    assert [m for m in server_code(loaded) if m not in COMMAND_LINE and not m.startswith("api.insightcli")] == []


def test_the_controllers_command_loads_no_server_code_when_it_runs():
    loaded = loaded_by(CONTROLLERS_RUN)
    assert [m for m in server_code(loaded) if m not in COMMAND_LINE and m.split(".")[0] != "controllers"] == []
    assert "runtime.client.http" in loaded and "controllers.gc" in loaded  # what it counts was loaded


def test_the_controllers_command_loads_no_patch_engine_nor_protobuf_codec_when_it_runs():
    # Each is loaded late, by the rare call that needs it (create_or_patch; a Protobuf request or answer):
    # together they cost a controller's start ~75 ms of CPU.
    loaded = loaded_by(CONTROLLERS_RUN)
    assert [m for m in loaded if m.startswith(RARE_PATHS)] == []
    assert len(project_modules(loaded)) <= MAX_CONTROLLERS_RUN_MODULES, project_modules(loaded)


def test_controllers_help_exits_0_with_the_commands_flags(capsys):
    try:
        main(["controllers", "--help"])
    except SystemExit as exc:
        assert exc.code == 0
    out = capsys.readouterr().out
    assert "--kubeconfig" in out and "--metrics-bind-address" in out and "--leader-elect-retry-period" in out


def test_the_defaults_written_out_for_a_fast_start_are_their_owners():
    assert ServeOptions().api_domain == DEFAULT_DOMAIN
    assert ServeOptions().service_account_issuer == DEFAULT_ISSUER
    config = {f.name: f.default for f in dataclasses.fields(LeaderElectionConfig)}
    assert LEADER_ELECTION_TIMING == {name: config[name] for name in LEADER_ELECTION_TIMING}


def test_a_kind_is_custom_when_a_crd_defines_it_whether_or_not_it_has_a_strategy():
    scheme = Scheme(DEFAULT_DOMAIN)
    assert not any(is_custom(rt) for rt in scheme.types)
    (info, _), = kinds_of(widget_crd(DEFAULT_DOMAIN))
    custom = scheme.register(info, lambda scheme, rt: None)
    assert is_custom(custom) and custom.strategy is None


def test_the_server_loads_no_http_client_until_it_calls_a_webhook():
    # httpx, with its command line's rich and pygments, was a tenth of `miniplane serve`'s start-up.
    loaded = loaded_by("api.assembly, api.serving.server")
    assert "runtime.server.admission.webhookclient" in loaded  # what it counts was loaded
    assert [m for m in loaded if m.split(".")[0] in ("httpx", "rich", "pygments")] == []
