"""What an object charges to quota, per kind (runtime.machinery.quota.evaluators; Kubernetes'
pkg/quota/v1/evaluator/core and the generic object count evaluator)."""

from __future__ import annotations

from typing import Any

from runtime.machinery.quota import evaluator_for, quota_matches, to_text
from runtime.machinery.scheme import Scheme

SCHEME = Scheme("k8s.io")
NOW = 1_800_000_000.0


def _ev(kind: str, group: str | None = None) -> Any:
    rt = SCHEME.by_kind(kind, group)
    assert rt is not None
    return evaluator_for(rt)


def _pod(*containers: dict[str, Any], init: list[dict[str, Any]] | None = None, **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "p", "namespace": "ns"},
            "spec": {"containers": list(containers), **({"initContainers": init} if init else {}), **spec}}


def _c(name: str = "app", requests: dict[str, str] | None = None, limits: dict[str, str] | None = None,
       **extra: Any) -> dict[str, Any]:
    res = {k: v for k, v in (("requests", requests), ("limits", limits)) if v}
    return {"name": name, "image": "nginx", **({"resources": res} if res else {}), **extra}


def test_a_pods_containers_requests_and_limits_are_summed_cpu_and_memory_meaning_requests():
    pod = _pod(_c("a", {"cpu": "100m", "memory": "64Mi"}, {"cpu": "200m"}), _c("b", {"cpu": "150m"}))
    assert to_text(_ev("Pod").usage(pod, NOW)) == {
        "count/pods": "1", "pods": "1", "cpu": "250m", "requests.cpu": "250m", "limits.cpu": "200m",
        "memory": "64Mi", "requests.memory": "64Mi"}


def test_a_larger_init_container_sets_the_pods_requests():
    pod = _pod(_c("a", {"cpu": "100m"}), init=[_c("i", {"cpu": "1"}), _c("j", {"cpu": "300m"})])
    assert to_text(_ev("Pod").usage(pod, NOW))["requests.cpu"] == "1"


def test_a_restartable_init_container_adds_to_the_pods_requests():
    pod = _pod(_c("a", {"cpu": "100m"}), init=[_c("side", {"cpu": "200m"}, restartPolicy="Always")])
    assert to_text(_ev("Pod").usage(pod, NOW))["requests.cpu"] == "300m"


def test_a_pods_overhead_adds_to_its_requests():
    pod = _pod(_c("a", {"cpu": "100m"}), overhead={"cpu": "10m"})
    assert to_text(_ev("Pod").usage(pod, NOW))["requests.cpu"] == "110m"


def test_hugepages_and_extended_resources_are_charged_as_requests():
    pod = _pod(_c("a", {"hugepages-2Mi": "4Mi", "example.com/gpu": "1"}))
    usage = to_text(_ev("Pod").usage(pod, NOW))
    assert usage["requests.hugepages-2Mi"] == "4Mi" and usage["hugepages-2Mi"] == "4Mi"
    assert usage["requests.example.com/gpu"] == "1" and "example.com/gpu" not in usage
    assert _ev("Pod").matching_resources(["requests.example.com/gpu", "hugepages-2Mi", "configmaps"]) == [
        "hugepages-2Mi", "requests.example.com/gpu"]


def test_a_terminal_pod_is_charged_its_object_count_only():
    for phase in ("Succeeded", "Failed"):
        pod = {**_pod(_c("a", {"cpu": "1"})), "status": {"phase": phase}}
        assert to_text(_ev("Pod").usage(pod, NOW)) == {"count/pods": "1"}


def test_a_pod_past_its_deletion_grace_is_not_charged_but_one_within_it_is():
    pod = _pod(_c("a", {"cpu": "1"}))
    pod["metadata"].update(deletionTimestamp="2027-01-15T08:00:00Z", deletionGracePeriodSeconds=30)
    deleted = NOW  # 2027-01-15T08:00:00Z
    assert "pods" in _ev("Pod").usage(pod, deleted + 10)
    assert "pods" not in _ev("Pod").usage(pod, deleted + 31)


def test_pod_scopes_terminating_and_best_effort():
    ev = _ev("Pod")
    best_effort = _pod(_c("a"))
    burstable = _pod(_c("a", {"memory": "1Mi"}), activeDeadlineSeconds=60)
    assert ev.matches_scope(("BestEffort", "Exists", ()), best_effort)
    assert ev.matches_scope(("NotBestEffort", "Exists", ()), burstable)
    assert ev.matches_scope(("Terminating", "Exists", ()), burstable)
    assert ev.matches_scope(("NotTerminating", "Exists", ()), best_effort)
    assert not ev.matches_scope(("Terminating", "Exists", ()), best_effort)


def test_the_priority_class_scope_selects_by_operator():
    ev = _ev("Pod")
    pod = _pod(_c("a"), priorityClassName="high")
    assert ev.matches_scope(("PriorityClass", "In", ("high", "mid")), pod)
    assert not ev.matches_scope(("PriorityClass", "NotIn", ("high",)), pod)
    assert ev.matches_scope(("PriorityClass", "Exists", ()), pod)
    assert not ev.matches_scope(("PriorityClass", "Exists", ()), _pod(_c("a")))


def test_a_quota_with_scopes_matches_pods_only():
    quota = {"spec": {"hard": {"count/configmaps": "1", "pods": "1"}, "scopes": ["BestEffort"]}}
    assert quota_matches(_ev("Pod"), quota, ["count/configmaps", "pods"], _pod(_c("a")))
    assert not quota_matches(_ev("ConfigMap"), quota, ["count/configmaps", "pods"], {"metadata": {}})


def test_a_cpu_quota_demands_every_container_says_its_cpu():
    pod = _pod(_c("a", {"cpu": "1"}), _c("b"), init=[_c("i")])
    assert _ev("Pod").constraints(["requests.cpu", "limits.cpu", "pods"], pod) == \
        "must specify limits.cpu for: a,b,i; requests.cpu for: b,i"
    assert _ev("Pod").constraints(["pods", "requests.storage"], pod) == ""


def test_a_node_port_service_is_charged_its_ports():
    svc = {"spec": {"type": "NodePort", "ports": [{"port": 80}, {"port": 443}]}}
    assert to_text(_ev("Service").usage(svc)) == {"count/services": "1", "services": "1",
                                                 "services.loadbalancers": "0", "services.nodeports": "2"}


def test_a_load_balancer_is_charged_one_balancer_and_its_node_ports():
    svc = {"spec": {"type": "LoadBalancer", "ports": [{"port": 80}, {"port": 443, "nodePort": 30001}]}}
    assert to_text(_ev("Service").usage(svc))["services.loadbalancers"] == "1"
    assert to_text(_ev("Service").usage(svc))["services.nodeports"] == "2"
    svc["spec"]["allocateLoadBalancerNodePorts"] = False
    assert to_text(_ev("Service").usage(svc))["services.nodeports"] == "1"


def test_a_claim_is_charged_its_storage_in_total_and_per_storage_class():
    claim = {"metadata": {}, "spec": {"storageClassName": "fast", "resources": {"requests": {"storage": "10Gi"}}}}
    assert to_text(_ev("PersistentVolumeClaim").usage(claim)) == {
        "count/persistentvolumeclaims": "1", "persistentvolumeclaims": "1", "requests.storage": "10Gi",
        "fast.storageclass.storage.k8s.io/persistentvolumeclaims": "1",
        "fast.storageclass.storage.k8s.io/requests.storage": "10Gi"}


def test_the_beta_storage_class_annotation_wins_over_the_field():
    claim = {"metadata": {"annotations": {"volume.beta.kubernetes.io/storage-class": "old"}},
             "spec": {"storageClassName": "fast", "resources": {"requests": {"storage": "1Gi"}}}}
    assert "old.storageclass.storage.k8s.io/requests.storage" in _ev("PersistentVolumeClaim").usage(claim)


def test_every_namespaced_kind_is_counted_as_count_resource_group():
    assert set(_ev("Deployment", "apps").usage({})) == {"count/deployments.apps"}
    assert set(_ev("ConfigMap").usage({})) == {"count/configmaps", "configmaps"}
    assert set(_ev("Secret").usage({})) == {"count/secrets", "secrets"}
    assert set(_ev("ResourceQuota").usage({})) == {"count/resourcequotas", "resourcequotas"}


def test_events_and_cluster_scoped_kinds_are_not_counted():
    assert _ev("Event", "") is None
    assert _ev("Namespace") is None and _ev("Node") is None


def test_only_services_and_claims_are_charged_on_update():
    assert not _ev("Pod").handles("update") and not _ev("ConfigMap").handles("update")
    assert _ev("Service").handles("update") and _ev("PersistentVolumeClaim").handles("update")
