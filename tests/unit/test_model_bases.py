"""One model layer: every model, built-in, insight result or a user's typed model, has one camelCase base."""

from runtime.models import insight
from runtime.models.base import K8sModel
from runtime.typed import KubeModel


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
