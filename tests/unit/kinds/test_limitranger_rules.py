"""LimitRanger's rules (runtime.server.admission.limitranger), in Kubernetes' words
(plugin/pkg/admission/limitranger, v1.28)."""

from __future__ import annotations

from typing import Any

from runtime.server.admission.limitranger import aggregate, claim_violations, default_pod, pod_violations


def _range(*items: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": "lr"}, "spec": {"limits": list(items)}}


def _pod(*containers: dict[str, Any], init: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"metadata": {"name": "p"}, "spec": {"containers": list(containers), **({"initContainers": init} if init
                                                                                   else {})}}


def _c(name: str = "app", requests: dict[str, str] | None = None, limits: dict[str, str] | None = None) -> dict:
    res = {k: v for k, v in (("requests", requests), ("limits", limits)) if v}
    return {"name": name, "image": "nginx", **({"resources": res} if res else {})}


DEFAULTS = _range({"type": "Container", "default": {"cpu": "500m", "memory": "256Mi"},
                   "defaultRequest": {"cpu": "100m", "memory": "128Mi"}})


def test_defaults_fill_the_requests_and_limits_a_container_lacks_and_say_so():
    pod = _pod(_c("app"), _c("side", {"cpu": "50m"}, {"cpu": "1"}))
    default_pod(DEFAULTS, pod)
    app, side = pod["spec"]["containers"]
    assert app["resources"] == {"requests": {"cpu": "100m", "memory": "128Mi"},
                                "limits": {"cpu": "500m", "memory": "256Mi"}}
    assert side["resources"] == {"requests": {"cpu": "50m", "memory": "128Mi"},
                                 "limits": {"cpu": "1", "memory": "256Mi"}}
    assert pod["metadata"]["annotations"]["kubernetes.io/limit-ranger"] == (
        "LimitRanger plugin set: cpu, memory request for container app; cpu, memory limit for container app; "
        "memory request for container side; memory limit for container side")


def test_defaults_reach_init_containers_named_as_such():
    pod = _pod(_c("app", {"cpu": "1", "memory": "1Gi"}, {"cpu": "1", "memory": "1Gi"}), init=[_c("setup")])
    default_pod(DEFAULTS, pod)
    assert pod["metadata"]["annotations"]["kubernetes.io/limit-ranger"] == (
        "LimitRanger plugin set: cpu, memory request for init container setup; "
        "cpu, memory limit for init container setup")


def test_a_pod_that_says_everything_is_not_annotated():
    pod = _pod(_c("app", {"cpu": "1", "memory": "1Gi"}, {"cpu": "1", "memory": "1Gi"}))
    default_pod(DEFAULTS, pod)
    assert "annotations" not in pod["metadata"]


def test_a_request_below_the_container_minimum_is_refused():
    lr = _range({"type": "Container", "min": {"cpu": "100m"}})
    assert pod_violations(lr, _pod(_c("a", {"cpu": "50m"}, {"cpu": "1"}))) == [
        "minimum cpu usage per Container is 100m, but request is 50m"]
    assert pod_violations(lr, _pod(_c("a"))) == ["minimum cpu usage per Container is 100m.  No request is specified"]


def test_a_limit_above_the_container_maximum_is_refused():
    lr = _range({"type": "Container", "max": {"memory": "1Gi"}})
    assert pod_violations(lr, _pod(_c("a", {"memory": "1Gi"}, {"memory": "2Gi"}))) == [
        "maximum memory usage per Container is 1Gi, but limit is 2Gi"]
    assert pod_violations(lr, _pod(_c("a", {"memory": "1Gi"}))) == [
        "maximum memory usage per Container is 1Gi.  No limit is specified"]


def test_a_limit_to_request_ratio_above_the_maximum_is_refused():
    lr = _range({"type": "Container", "maxLimitRequestRatio": {"cpu": "2"}})
    assert pod_violations(lr, _pod(_c("a", {"cpu": "100m"}, {"cpu": "300m"}))) == [
        "cpu max limit to request ratio per Container is 2, but provided ratio is 3.000000"]
    assert pod_violations(lr, _pod(_c("a", {"cpu": "100m"}, {"cpu": "200m"}))) == []
    assert pod_violations(lr, _pod(_c("a", None, {"cpu": "200m"}))) == [
        "cpu max limit to request ratio per Container is 2, but no request is specified or request is 0"]


def test_pod_bounds_apply_to_the_containers_summed():
    lr = _range({"type": "Pod", "max": {"cpu": "1"}})
    pod = _pod(_c("a", {"cpu": "600m"}, {"cpu": "600m"}), _c("b", {"cpu": "600m"}, {"cpu": "600m"}))
    assert pod_violations(lr, pod) == ["maximum cpu usage per Pod is 1, but limit is 1200m"]


def test_every_failure_is_told_in_brackets_one_alone_without():
    lr = _range({"type": "Container", "min": {"cpu": "100m", "memory": "64Mi"}})
    failures = pod_violations(lr, _pod(_c("a", {"cpu": "50m", "memory": "1Mi"})))
    assert aggregate(failures) == ("[minimum cpu usage per Container is 100m, but request is 50m, "
                                   "minimum memory usage per Container is 64Mi, but request is 1Mi]")
    assert aggregate(failures[:1]) == "minimum cpu usage per Container is 100m, but request is 50m"


def test_a_claims_storage_is_bounded_by_its_requests():
    lr = _range({"type": "PersistentVolumeClaim", "min": {"storage": "1Gi"}, "max": {"storage": "10Gi"}})
    claim = {"spec": {"resources": {"requests": {"storage": "20Gi"}}}}
    assert claim_violations(lr, claim) == [
        "maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi"]
    claim["spec"]["resources"]["requests"]["storage"] = "500Mi"
    assert claim_violations(lr, claim) == [
        "minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 500Mi"]


def test_container_items_do_not_bound_claims_nor_claim_items_pods():
    assert claim_violations(_range({"type": "Container", "min": {"storage": "1Gi"}}), {"spec": {}}) == []
    assert pod_violations(_range({"type": "PersistentVolumeClaim", "min": {"cpu": "1"}}), _pod(_c("a"))) == []
