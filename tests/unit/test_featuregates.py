"""Feature gates: the spec's defaults, overrides, and an unknown gate refused at start-up."""

from __future__ import annotations

import pytest

from api.cli import main
from runtime.server.featuregates import DEFAULT_GATES, parse_feature_gates


def test_defaults_are_the_specs():
    assert DEFAULT_GATES == {"CBORServingAndStorage": False, "AllowUnsafeMalformedObjectDeletion": False,
                             "APIResponseCompression": True, "ListFromCacheSnapshot": True}


def test_overrides_apply():
    gates = parse_feature_gates("CBORServingAndStorage=true, APIResponseCompression=false")
    assert gates["CBORServingAndStorage"] is True and gates["APIResponseCompression"] is False


def test_unknown_gate_is_an_error():
    with pytest.raises(ValueError, match="unrecognized feature gate: Nope"):
        parse_feature_gates("Nope=true")


def test_unknown_gate_stops_serve_at_start(capsys, tmp_path):
    assert main(["serve", "--data-dir", str(tmp_path), "--feature-gates", "Nope=true"]) == 2
    assert "unrecognized feature gate" in capsys.readouterr().err
