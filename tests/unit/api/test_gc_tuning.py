"""The cycle collector's settings for a serving process (`api.serving.gc_tuning`)."""

from __future__ import annotations

import gc

import pytest

from api.serving import gc_tuning


@pytest.fixture
def restored_collector():
    """The test process's collector as it was, whatever the test did to it."""
    enabled, threshold = gc.isenabled(), gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*threshold)
    if enabled:
        gc.enable()
    else:
        gc.disable()


def test_start_up_runs_without_cycle_collection(restored_collector):
    gc_tuning.pause_for_startup()
    assert not gc.isenabled()


def test_once_serving_what_start_up_built_is_frozen_and_collection_resumes(restored_collector):
    gc_tuning.pause_for_startup()
    cache = [{"metadata": {"name": f"role-{i}"}} for i in range(1000)]  # what start-up keeps
    gc_tuning.settle_after_startup()
    assert gc.isenabled()
    assert gc.get_freeze_count() >= len(cache)
    walked = {id(obj) for generation in range(3) for obj in gc.get_objects(generation=generation)}
    assert not any(id(obj) in walked for obj in cache)  # in the permanent generation: never walked again


def test_once_serving_the_young_generation_is_larger_than_cpythons(restored_collector):
    _, middle, old = gc.get_threshold()
    gc_tuning.settle_after_startup()
    assert gc.get_threshold() == (gc_tuning.YOUNG_THRESHOLD, middle, old)
    assert gc_tuning.YOUNG_THRESHOLD > 700
