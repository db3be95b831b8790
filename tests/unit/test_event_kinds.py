"""The event kinds' rules (Kubernetes' `pkg/apis/core/validation/events.go`, `EventToSelectableFields`, `printEvent`)."""

from __future__ import annotations

import copy
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from runtime.models.catalog import CORE_EVENT, EVENTS_EVENT
from runtime.machinery.scheme import ResourceType, Scheme
from runtime.machinery.selectors import SelectorError, parse_field_selector
from tests.support.event_objects import EVENTS_V1_EVENT, core_event, events_v1_event

SCHEME = Scheme("k8s.io")
CORE = next(t for t in SCHEME.types if t.info is CORE_EVENT)
EVENTS = next(t for t in SCHEME.types if t.info is EVENTS_EVENT)


def errors_of(rt: ResourceType, obj: dict[str, Any]) -> list[str]:
    return [str(e) for e in rt.strategy.validate(obj)]


def ago(seconds: int) -> str:
    return (datetime.now(timezone.utc) - timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


# ---- the kinds ------------------------------------------------------------------------------------

def test_core_event_is_namespaced_in_the_core_group_with_short_name_ev():
    assert (CORE.api_version, CORE.plural, CORE.namespaced, CORE.info.short_names) == ("v1", "events", True, ("ev",))
    assert "deletecollection" in CORE.info.verbs and "watch" in CORE.info.verbs


def test_events_k8s_io_group_follows_the_api_domain():
    assert EVENTS.api_version == "events.k8s.io/v1"
    assert Scheme("svc.io").by_kind("Event", "events.svc.io").api_version == "events.svc.io/v1"
    assert CORE.storage_prefix != EVENTS.storage_prefix


# ---- core/v1 validation (legacyValidateEvent and ObjectMeta) --------------------------------------

def test_a_core_event_about_an_object_lives_in_its_namespace():
    assert errors_of(CORE, core_event(namespace="ci")) == []
    assert errors_of(CORE, core_event(namespace="ci", involved_namespace="other")) == [
        'involvedObject.namespace: Invalid value: "other": does not match event.namespace']


def test_a_core_event_about_a_cluster_scoped_object_lives_in_default():
    assert errors_of(CORE, core_event(namespace="default", involved_namespace="")) == []
    assert errors_of(CORE, core_event(namespace="ci", involved_namespace="")) == [
        'involvedObject.namespace: Invalid value: "": does not match event.namespace']


def test_core_event_names_may_be_any_path_segment():
    assert errors_of(CORE, core_event(name="system:aggregate-to-view.17a0b1c2")) == []
    assert errors_of(CORE, core_event(name="Upper_Case.1")) == []
    assert errors_of(CORE, core_event(name="a/b")) == ["metadata.name: Invalid value: \"a/b\": may not contain '/'"]


def test_a_core_event_with_event_time_needs_reporting_controller_instance_action_and_reason():
    obj = core_event(eventTime="2024-01-02T03:04:05.000000Z", reason="")
    assert errors_of(CORE, obj) == [
        "reportingController: Required value",
        'reportingController: Invalid value: "": name part must be non-empty',
        'reportingController: Invalid value: "": name part must consist of alphanumeric characters, \'-\', \'_\' '
        "or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
        "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        "reportingInstance: Required value", "action: Required value", "reason: Required value"]
    full = core_event(eventTime="2024-01-02T03:04:05.000000Z", reportingComponent="example.com/ctl",
                      reportingInstance="ctl-0", action="Sync")
    assert errors_of(CORE, full) == []


def test_reporting_instance_action_and_reason_have_128_characters_and_message_1024():
    obj = core_event(eventTime="2024-01-02T03:04:05.000000Z", reportingComponent="ctl", reportingInstance="i" * 129,
                     action="a" * 129, reason="r" * 129, message="m" * 1025)
    assert errors_of(CORE, obj) == [
        'reportingInstance: Invalid value: "": can have at most 128 characters',
        'action: Invalid value: "": can have at most 128 characters',
        'reason: Invalid value: "": can have at most 128 characters',
        'message: Invalid value: "": can have at most 1024 characters']
    assert errors_of(CORE, core_event(message="m" * 5000)) == []  # only new-style events are limited


def test_a_new_style_core_event_about_a_cluster_scoped_object_may_live_in_kube_system():
    fields = {"eventTime": "2024-01-02T03:04:05.000000Z", "reportingComponent": "ctl", "reportingInstance": "c",
              "action": "Sync"}
    assert errors_of(CORE, core_event(namespace="kube-system", involved_namespace="", **fields)) == []
    assert errors_of(CORE, core_event(namespace="ci", involved_namespace="", **fields)) == [
        'involvedObject.namespace: Invalid value: "": does not match event.namespace']


# ---- events.k8s.io/v1 validation (strict) ---------------------------------------------------------

def test_an_events_v1_event_needs_event_time_and_a_known_type():
    assert errors_of(EVENTS, events_v1_event()) == []
    obj = events_v1_event(type="Info")
    del obj["eventTime"]
    assert errors_of(EVENTS, obj) == ["eventTime: Required value", 'type: Invalid value: "": has invalid value: Info']


def test_an_events_v1_event_leaves_the_deprecated_fields_unset():
    obj = events_v1_event(deprecatedSource={"component": "c"}, deprecatedFirstTimestamp="2024-01-02T03:04:05Z",
                          deprecatedLastTimestamp="2024-01-02T03:04:05Z", deprecatedCount=2)
    assert errors_of(EVENTS, obj) == [
        'firstTimestamp: Invalid value: "": needs to be unset', 'lastTimestamp: Invalid value: "": needs to be unset',
        'count: Invalid value: "": needs to be unset', 'source: Invalid value: "": needs to be unset']


def test_an_events_v1_series_counts_at_least_two_and_has_a_last_observed_time():
    assert errors_of(EVENTS, copy.deepcopy(EVENTS_V1_EVENT)) == []
    assert errors_of(EVENTS, events_v1_event(series={"count": 1})) == [
        'series.count: Invalid value: "": should be at least 2', "series.lastObservedTime: Required value"]


def test_events_v1_names_are_dns_subdomains_and_errors_use_core_paths():
    assert [e.split(":")[0] for e in errors_of(EVENTS, events_v1_event(name="Bad_Name"))] == ["metadata.name"]
    obj = events_v1_event(regarding={"kind": "Role", "namespace": "other", "name": "r"}, note="n" * 1025,
                          reportingController="")
    assert [e.split(":")[0] for e in errors_of(EVENTS, obj)] == [
        "reportingController", "reportingController", "reportingController", "message"]


def test_an_events_v1_event_keeps_its_content_on_update():
    old = events_v1_event()
    new = events_v1_event(note="changed", action="Other")
    new["metadata"]["labels"] = {"a": "b"}
    assert [str(e) for e in EVENTS.strategy.validate_update(new, old)] == [
        'message: Invalid value: "changed": field is immutable', 'action: Invalid value: "Other": field is immutable']
    series = events_v1_event(series={"count": 2, "lastObservedTime": "2024-01-02T03:05:05.000000Z"})
    assert EVENTS.strategy.validate_update(series, old) == []


# ---- field selectors (EventToSelectableFields) ----------------------------------------------------

def test_core_event_selectable_fields_are_kubernetes():
    obj = core_event(reportingComponent="ctl")
    obj["involvedObject"].update(uid="u1", resourceVersion="9", fieldPath="rules[0]")
    assert CORE.strategy.selectable_fields(obj) == {
        "involvedObject.kind": "Role", "involvedObject.namespace": "ci", "involvedObject.name": "reader",
        "involvedObject.uid": "u1", "involvedObject.apiVersion": "rbac.authorization.k8s.io/v1",
        "involvedObject.resourceVersion": "9", "involvedObject.fieldPath": "rules[0]", "reason": "Synced",
        "reportingComponent": "ctl", "source": "role-controller", "type": "Normal", "metadata.name": "reader.1",
        "metadata.namespace": "ci"}
    assert set(CORE.strategy.field_labels) == set(CORE.strategy.selectable_fields(obj))


def test_source_selects_the_reporting_controller_when_the_event_has_no_source_component():
    obj = core_event(source={}, reportingComponent="ctl")
    assert CORE.strategy.selectable_fields(obj)["source"] == "ctl"


def test_kubectl_get_events_field_selector_involved_object_name():
    selector = parse_field_selector("involvedObject.name=x", CORE.strategy.field_labels)
    assert selector.matches(CORE.strategy.selectable_fields(core_event(involved="x")))
    assert not selector.matches(CORE.strategy.selectable_fields(core_event(involved="y")))
    describe = parse_field_selector("involvedObject.name=x,involvedObject.namespace=ci,involvedObject.kind=Role",
                                    CORE.strategy.field_labels)
    assert describe.matches(CORE.strategy.selectable_fields(core_event(involved="x")))


def test_an_unsupported_field_label_is_refused_in_kubernetes_words():
    with pytest.raises(SelectorError, match="field label not supported: regarding.name"):
        parse_field_selector("regarding.name=x", CORE.strategy.field_labels)
    with pytest.raises(SelectorError, match="field label not supported: involvedObject.name"):
        parse_field_selector("involvedObject.name=x", EVENTS.strategy.field_labels)


def test_events_v1_selects_on_regarding_and_reporting_controller():
    fields = EVENTS.strategy.selectable_fields(events_v1_event())
    assert fields["regarding.name"] == "reader" and fields["regarding.kind"] == "Role"
    assert fields["reportingController"] == fields["source"] == "example.com/role-controller"
    assert set(EVENTS.strategy.field_labels) == set(fields)


# ---- table (printEvent) ---------------------------------------------------------------------------

def test_columns_are_kubectl_get_events():
    columns = CORE.strategy.columns.definitions
    assert [(c["name"], c["priority"]) for c in columns] == [
        ("Last Seen", 0), ("Type", 0), ("Reason", 0), ("Object", 0), ("Subobject", 1), ("Source", 1), ("Message", 0),
        ("First Seen", 1), ("Count", 1), ("Name", 1)]
    obj = core_event(firstTimestamp=ago(600), lastTimestamp=ago(30), count=4, message=" hi \n")
    assert CORE.strategy.columns.cells(obj) == ["30s", "Normal", "Synced", "role/reader", "", "role-controller",
                                                "hi", "10m", 4, "reader.1"]


def test_a_singleton_new_style_event_prints_its_event_time_and_count_one():
    obj = core_event(eventTime=ago(5)[:-1] + ".123456Z", count=None, source={}, reportingComponent="ctl",
                     reportingInstance="ctl-0")
    cells = CORE.strategy.columns.cells(obj)
    assert (cells[0], cells[5], cells[7], cells[8]) == ("5s", "ctl, ctl-0", "5s", 1)


def test_an_events_v1_event_prints_as_core_with_its_series():
    obj = events_v1_event(eventTime=ago(300)[:-1] + ".000000Z",
                          series={"count": 7, "lastObservedTime": ago(10)[:-1] + ".000000Z"})
    cells = EVENTS.strategy.columns.cells(obj)
    assert cells == ["10s", "Normal", "Synced", "role/reader", "", "example.com/role-controller, role-controller-0",
                     "rules aggregated", "5m", 7, "reader.2"]
