"""`--workers`: a positive count or `auto` (the cores this process may use); refused where it cannot work."""

from __future__ import annotations

import os

import pytest

from api.cli import main, parser, serve_options
from api.serving.workers import resolve_workers


def test_workers_is_a_positive_count_or_auto():
    assert resolve_workers("1") == 1 and resolve_workers("3") == 3
    assert resolve_workers("auto") == len(os.sched_getaffinity(0))
    for bad in ("0", "-2", "two", ""):
        with pytest.raises(ValueError, match="--workers: expected a positive number or auto"):
            resolve_workers(bad)


def test_the_default_is_one_process():
    assert serve_options(parser().parse_args(["serve"])).workers == 1


def test_several_workers_over_a_memory_store_are_refused(capsys):
    assert main(["serve", "--store", "memory", "--workers", "2"]) == 2
    assert "a memory store cannot be shared by processes" in capsys.readouterr().err
    assert main(["serve", "--workers", "none"]) == 2
    assert "--workers: expected a positive number or auto" in capsys.readouterr().err
