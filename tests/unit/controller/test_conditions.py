"""Condition rules (apimachinery's `meta.SetStatusCondition` and friends), on dicts and `Condition` models alike."""

from __future__ import annotations

import pytest

from runtime.controller.conditions import (
    find_status_condition, is_status_condition_false, is_status_condition_true, remove_status_condition,
    set_status_condition,
)
from runtime.models import Condition

EARLIER = "2020-01-01T00:00:00Z"


def ready(status: str = "True", **fields) -> dict:
    return {"type": "Ready", "status": status, "reason": "Reconciled", "message": "", **fields}


@pytest.mark.parametrize("as_model", [False, True], ids=["dicts", "models"])
def test_a_new_condition_is_appended_with_lasttransitiontime_set_when_missing(as_model):
    conditions: list = []
    new = Condition.model_validate(ready()) if as_model else ready()
    assert set_status_condition(conditions, new) is True
    assert len(conditions) == 1
    found = find_status_condition(conditions, "Ready")
    time = found.last_transition_time if as_model else found["lastTransitionTime"]
    assert time and time.endswith("Z") and time != EARLIER


def test_a_new_condition_keeps_the_lasttransitiontime_it_carries():
    conditions: list = []
    set_status_condition(conditions, ready(lastTransitionTime=EARLIER))
    assert conditions[0]["lastTransitionTime"] == EARLIER


@pytest.mark.parametrize("as_model", [False, True], ids=["dicts", "models"])
def test_lasttransitiontime_is_kept_when_the_status_stays(as_model):
    first = ready(lastTransitionTime=EARLIER, observedGeneration=1)
    conditions = [Condition.model_validate(first) if as_model else first]
    changed = set_status_condition(conditions, ready(reason="Other", message="m", observedGeneration=2))
    assert changed is True
    found = find_status_condition(conditions, "Ready")
    as_dict = found.to_dict() if as_model else found
    assert as_dict == {"type": "Ready", "status": "True", "reason": "Other", "message": "m",
                       "observedGeneration": 2, "lastTransitionTime": EARLIER}


def test_lasttransitiontime_changes_when_the_status_changes():
    conditions = [ready(lastTransitionTime=EARLIER)]
    assert set_status_condition(conditions, ready("False")) is True
    assert conditions[0]["status"] == "False" and conditions[0]["lastTransitionTime"] != EARLIER


def test_a_status_change_takes_the_lasttransitiontime_the_new_condition_carries():
    conditions = [ready(lastTransitionTime=EARLIER)]
    set_status_condition(conditions, ready("False", lastTransitionTime="2021-01-01T00:00:00Z"))
    assert conditions[0]["lastTransitionTime"] == "2021-01-01T00:00:00Z"


def test_setting_the_same_condition_again_changes_nothing():
    conditions = [ready(lastTransitionTime=EARLIER, observedGeneration=3)]
    assert set_status_condition(conditions, ready(observedGeneration=3)) is False
    assert conditions == [ready(lastTransitionTime=EARLIER, observedGeneration=3)]


def test_a_model_condition_set_into_a_list_of_dicts_is_stored_as_a_dict_and_back():
    dicts: list = [ready(lastTransitionTime=EARLIER)]
    set_status_condition(dicts, Condition(type="Synced", status="True", reason="Done"))
    assert isinstance(dicts[1], dict) and dicts[1]["type"] == "Synced"
    models: list = [Condition.model_validate(ready(lastTransitionTime=EARLIER))]
    set_status_condition(models, {"type": "Synced", "status": "True", "reason": "Done"})
    assert isinstance(models[1], Condition) and models[1].type == "Synced"


@pytest.mark.parametrize("as_model", [False, True], ids=["dicts", "models"])
def test_remove_status_condition_removes_that_type_and_says_whether_it_did(as_model):
    items = [ready(), {"type": "Synced", "status": "False", "reason": "Waiting"}]
    conditions = [Condition.model_validate(c) for c in items] if as_model else items
    assert remove_status_condition(conditions, "Ready") is True
    assert remove_status_condition(conditions, "Ready") is False
    assert find_status_condition(conditions, "Ready") is None
    assert find_status_condition(conditions, "Synced") is not None


@pytest.mark.parametrize("as_model", [False, True], ids=["dicts", "models"])
def test_is_status_condition_true_and_false_need_the_condition_present_with_that_status(as_model):
    items = [ready("True"), {"type": "Synced", "status": "False"}, {"type": "Known", "status": "Unknown"}]
    conditions = [Condition.model_validate(c) for c in items] if as_model else items
    assert is_status_condition_true(conditions, "Ready") and not is_status_condition_false(conditions, "Ready")
    assert is_status_condition_false(conditions, "Synced") and not is_status_condition_true(conditions, "Synced")
    assert not is_status_condition_true(conditions, "Known") and not is_status_condition_false(conditions, "Known")
    assert not is_status_condition_true(conditions, "Missing") and not is_status_condition_false(conditions, "Missing")


def test_condition_model_has_metav1_conditions_fields():
    condition = Condition.model_validate({"type": "Ready", "status": "True", "observedGeneration": 4,
                                          "lastTransitionTime": EARLIER, "reason": "R", "message": "M"})
    assert condition.to_dict() == {"type": "Ready", "status": "True", "observedGeneration": 4,
                                   "lastTransitionTime": EARLIER, "reason": "R", "message": "M"}


@pytest.mark.parametrize("as_model", [False, True], ids=["dicts", "models"])
def test_set_status_condition_changes_the_found_condition_in_place(as_model):
    first = ready(lastTransitionTime=EARLIER)
    conditions = [Condition.model_validate(first) if as_model else first]
    held = find_status_condition(conditions, "Ready")
    set_status_condition(conditions, ready("False", message="down"))
    assert conditions[0] is held
    assert (held.message if as_model else held["message"]) == "down"
