"""The message a field selector on an unserved label raises: the kind's field label conversion's words
(`FieldSelection.field_label_error`), formatted by `parse_field_selector`."""

from __future__ import annotations

import pytest

from runtime.machinery.scheme import Scheme
from runtime.machinery.selectors import SelectorError, parse_field_selector
from runtime.server.kinds.parts import DEFAULT_FIELD_LABEL_ERROR, FIELD_LABEL_NOT_SUPPORTED

META = ("metadata.name", "metadata.namespace")


def error_of(text: str, unknown: str) -> str:
    with pytest.raises(SelectorError) as info:
        parse_field_selector(text, META, unknown)
    return str(info.value)


def test_the_default_conversions_error_quotes_the_label_as_go_does():
    assert error_of('sp"ec=1', DEFAULT_FIELD_LABEL_ERROR) == \
        '"sp\\"ec" is not a known field selector: only "metadata.name", "metadata.namespace"'


def test_a_kinds_own_conversion_error_names_the_label_bare():
    assert error_of("spec.x=1", FIELD_LABEL_NOT_SUPPORTED) == "field label not supported: spec.x"


def test_a_kind_with_no_conversion_of_its_own_answers_the_default_error():
    scheme = Scheme("k8s.io")
    for api_version, kind in (("v1", "ConfigMap"), ("apps/v1", "Deployment"), ("v1", "Service")):
        assert scheme.by_api_version_kind(api_version, kind).strategy.field_label_error == DEFAULT_FIELD_LABEL_ERROR


def test_the_kinds_with_their_own_conversion_answer_field_label_not_supported():
    scheme = Scheme("k8s.io")
    for api_version, kind in (("v1", "Pod"), ("v1", "Node"), ("v1", "Secret"), ("v1", "Namespace"), ("v1", "Event"),
                              ("events.k8s.io/v1", "Event")):
        assert scheme.by_api_version_kind(api_version, kind).strategy.field_label_error == FIELD_LABEL_NOT_SUPPORTED


def test_a_jobs_conversion_error_is_batch_v1s_own():
    rt = Scheme("k8s.io").by_api_version_kind("batch/v1", "Job")
    assert error_of("status.failed=0", rt.strategy.field_label_error) == \
        'field label "status.failed" not supported for Job'
