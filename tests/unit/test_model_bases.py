"""One model layer: every model, built-in, insight result or a user's typed model, has one camelCase base."""

import pydantic
import pytest

from runtime.models import insight
from runtime.models.base import K8sModel
from runtime.client.typed import KubeModel


def test_typed_models_share_the_built_in_models_camel_case_base_with_lax_types():
    class Part(KubeModel):
        replica_count: int | None = None

    assert issubclass(KubeModel, K8sModel)
    assert Part.model_validate({"replicaCount": "3"}).replica_count == 3  # lax, unlike the built-in kinds


def test_the_insight_kinds_share_their_type_meta_and_their_results_are_the_status_models():
    kinds = [insight.AccessExplanation, insight.WhoCan, insight.AccessMatrix, insight.RBACLint,
             insight.AggregationGraph, insight.RBACDiff]
    assert all(issubclass(k, insight.InsightKind) for k in kinds)
    assert all(issubclass(k.model_fields["status"].annotation.__args__[0], (insight.InsightValue, K8sModel))
               for k in kinds)
    assert list(insight.WhoCan.model_fields) == ["api_version", "kind", "metadata", "spec", "status"]


def test_a_result_built_unvalidated_equals_the_validated_one_and_json_is_still_decoded_strictly():
    fast = insight.Permission.of("", "get", "", "pods")
    assert fast == insight.Permission("", "get", "", "pods") and hash(fast) == hash(insight.Permission("", "get",
                                                                                                        "", "pods"))
    assert insight.AttributeCheck.of("verb", False, "", ("a",)).allowed == ["a"]  # tuples become lists
    assert sorted([insight.Permission.of("b", "x"), fast]) == [fast, insight.Permission.of("b", "x")]
    # Fields not given take their defaults, an empty list a fresh one each time (as validation copies it).
    held = insight.TerminatingNamespace.of("ns", "now")
    assert held == insight.TerminatingNamespace("ns", "now")
    assert held.blockers == [] and held.blockers is not insight.TerminatingNamespace.of("ns", "now").blockers
    with pytest.raises(pydantic.ValidationError):
        insight.AccessExplanation.model_validate({"status": {"allowed": "yes"}})
