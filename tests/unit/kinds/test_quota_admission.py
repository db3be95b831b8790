"""ResourceQuota admission's rules (runtime.server.admission.resourcequota), in Kubernetes' words
(plugin/pkg/admission/resourcequota, v1.28): the check, and the conflict-checked charge."""

from __future__ import annotations

from typing import Any

import pytest

from runtime.machinery import errors
from runtime.machinery.quota import evaluator_for
from runtime.machinery.scheme import Scheme
from runtime.machinery.storedobject import StoredObject
from runtime.server.admission.resourcequota import RETRIES, ResourceQuotaAdmission, check_request
from runtime.server.kinds import AdmissionRequest
from runtime.server.rbac.user import UserInfo
from runtime.server.storage import Entry, RevisionConflict, StoreUnavailable

SCHEME = Scheme("k8s.io")
PODS = SCHEME.by_kind("Pod")
SERVICES = SCHEME.by_kind("Service")
QUOTAS = SCHEME.by_kind("ResourceQuota")
USER = UserInfo("admin")


def _quota(name: str, hard: dict[str, str], used: dict[str, str] | None, revision: int = 5,
           **spec: Any) -> StoredObject:
    obj = {"metadata": {"name": name, "namespace": "ns"}, "spec": {"hard": hard, **spec},
           "status": {"hard": hard, **({"used": used} if used is not None else {})}}
    return StoredObject(QUOTAS.storage_key("ns", name), obj, revision)


def _pod(name: str = "p", cpu: str | None = "100m") -> dict[str, Any]:
    res = {"resources": {"requests": {"cpu": cpu}, "limits": {"cpu": cpu}}} if cpu else {}
    return {"metadata": {"name": name, "namespace": "ns"}, "spec": {"containers": [{"name": "app", **res}]}}


def _request(rt: Any, obj: dict[str, Any], operation: str = "create", old: dict[str, Any] | None = None,
             dry_run: bool = False) -> AdmissionRequest:
    return AdmissionRequest(USER, rt, operation, obj, old, dry_run)


def _forbidden(quotas: list[StoredObject], request: AdmissionRequest) -> str:
    with pytest.raises(errors.Forbidden) as caught:
        check_request(quotas, request, evaluator_for(request.resource))
    return str(caught.value)


def test_a_create_over_quota_is_refused_with_what_was_requested_used_and_limited():
    quota = _quota("q", {"pods": "2", "requests.cpu": "1"}, {"pods": "2", "requests.cpu": "200m"})
    assert _forbidden([quota], _request(PODS, _pod("x"))) == \
        'pods "x" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2'


def test_a_create_within_quota_is_charged_what_it_uses_of_what_is_limited():
    quota = _quota("q", {"pods": "2", "requests.cpu": "1"}, {"pods": "1", "requests.cpu": "200m"})
    [(stored, used)] = check_request([quota], _request(PODS, _pod()), evaluator_for(PODS))
    assert stored is quota
    assert {k: str(v) for k, v in used.items()} == {"pods": "2", "requests.cpu": "300m"}


def test_a_cpu_quota_refuses_a_pod_without_a_cpu_request():
    quota = _quota("q", {"requests.cpu": "1"}, {"requests.cpu": "0"})
    assert _forbidden([quota], _request(PODS, _pod("x", cpu=None))) == \
        'pods "x" is forbidden: failed quota: q: must specify requests.cpu for: app'


def test_a_quota_not_yet_counted_refuses_what_it_limits():
    quota = _quota("q", {"pods": "2"}, None)
    assert _forbidden([quota], _request(PODS, _pod("x"))) == \
        'pods "x" is forbidden: status unknown for quota: q, resources: pods'


def test_a_quota_limiting_nothing_the_object_uses_is_passed_by():
    quota = _quota("q", {"count/configmaps": "0"}, {"count/configmaps": "0"})
    assert check_request([quota], _request(PODS, _pod()), evaluator_for(PODS)) == []


def test_a_quota_whose_scopes_do_not_select_the_pod_is_passed_by():
    quota = _quota("q", {"pods": "0"}, {"pods": "0"}, scopes=["BestEffort"])
    assert check_request([quota], _request(PODS, _pod()), evaluator_for(PODS)) == []
    assert "exceeded quota" in _forbidden([quota], _request(PODS, _pod("x", cpu=None)))


def test_negative_usage_is_refused():
    quota = _quota("q", {"requests.cpu": "1"}, {"requests.cpu": "0"})
    assert _forbidden([quota], _request(PODS, _pod("x", cpu="-1"))) == \
        'pods "x" is forbidden: quota usage is negative for resource(s): cpu,limits.cpu,requests.cpu'


def test_an_update_is_charged_the_difference_it_makes():
    quota = _quota("q", {"services.loadbalancers": "1"}, {"services.loadbalancers": "1"})
    old = {"metadata": {"name": "s", "namespace": "ns", "resourceVersion": "3"}, "spec": {"type": "ClusterIP"}}
    new = {"metadata": {"name": "s", "namespace": "ns"}, "spec": {"type": "LoadBalancer"}}
    assert _forbidden([quota], _request(SERVICES, new, "update", old)) == (
        'services "s" is forbidden: exceeded quota: q, requested: services.loadbalancers=1, '
        "used: services.loadbalancers=1, limited: services.loadbalancers=1")
    assert check_request([quota], _request(SERVICES, old, "update", old), evaluator_for(SERVICES)) == []


def test_an_update_that_uses_less_is_not_credited():
    quota = _quota("q", {"services.loadbalancers": "1", "services": "5"},
                   {"services.loadbalancers": "1", "services": "1"})
    old = {"metadata": {"name": "s", "namespace": "ns", "resourceVersion": "3"}, "spec": {"type": "LoadBalancer"}}
    new = {"metadata": {"name": "s", "namespace": "ns"}, "spec": {"type": "ClusterIP"}}
    assert check_request([quota], _request(SERVICES, new, "update", old), evaluator_for(SERVICES)) == []


class FakeCache:
    def __init__(self, objects: list[StoredObject]) -> None:
        self.objects = objects

    def list(self, prefix: str = "") -> list[StoredObject]:
        return [o for o in self.objects if o.key.startswith(prefix)]


class FakeStore:
    """Refuses the first `conflicts` updates as if another write had come first."""

    def __init__(self, conflicts: int) -> None:
        self.conflicts = conflicts
        self.unavailable = False
        self.written: list[dict[str, Any]] = []

    async def update(self, key: str, encode: Any, *, expected_revision: int | None) -> Entry:
        if self.unavailable:
            raise StoreUnavailable("etcd is down")
        if self.conflicts:
            self.conflicts -= 1
            raise RevisionConflict(key, Entry(key, b"{}", expected_revision + 1, 1))
        encode(expected_revision + 1)
        self.written.append(encode.obj)
        return Entry(key, encode.value, expected_revision + 1, 1)


class FakeContext:
    def __init__(self, quota: StoredObject, fresh: StoredObject, conflicts: int) -> None:
        self.scheme = SCHEME
        self.store = FakeStore(conflicts)
        self.cache = FakeCache([quota])
        self.fresh = fresh

    def kind_cache(self, rt: Any) -> FakeCache:
        return self.cache

    async def read_current(self, rt: Any, key: str, name: str = "") -> StoredObject | None:
        return self.fresh


async def test_the_charge_is_written_at_the_revision_read():
    context = FakeContext(_quota("q", {"pods": "2"}, {"pods": "0"}), _quota("q", {"pods": "2"}, {"pods": "0"}), 0)
    await ResourceQuotaAdmission(context).validate(_request(PODS, _pod()))
    assert [w["status"]["used"] for w in context.store.written] == [{"pods": "1"}]


async def test_a_quota_changed_meanwhile_is_read_and_checked_again():
    # Another create took the last pod while this one was checked: the fresh quota refuses it.
    context = FakeContext(_quota("q", {"pods": "2"}, {"pods": "1"}), _quota("q", {"pods": "2"}, {"pods": "2"}, 6), 1)
    with pytest.raises(errors.Forbidden, match="used: pods=2, limited: pods=2"):
        await ResourceQuotaAdmission(context).validate(_request(PODS, _pod()))
    assert context.store.written == []


async def test_a_quota_that_keeps_changing_ends_in_a_conflict():
    context = FakeContext(_quota("q", {"pods": "9"}, {"pods": "0"}), _quota("q", {"pods": "9"}, {"pods": "0"}),
                          RETRIES + 1)
    with pytest.raises(errors.Conflict, match='Operation cannot be fulfilled on resourcequotas "q"'):
        await ResourceQuotaAdmission(context).validate(_request(PODS, _pod()))


async def test_a_dry_run_is_checked_but_charges_nothing():
    context = FakeContext(_quota("q", {"pods": "1"}, {"pods": "0"}), _quota("q", {"pods": "1"}, {"pods": "0"}), 0)
    await ResourceQuotaAdmission(context).validate(_request(PODS, _pod(), dry_run=True))
    assert context.store.written == []
    context = FakeContext(_quota("q", {"pods": "1"}, {"pods": "1"}), _quota("q", {"pods": "1"}, {"pods": "1"}), 0)
    with pytest.raises(errors.Forbidden):
        await ResourceQuotaAdmission(context).validate(_request(PODS, _pod(), dry_run=True))


async def test_a_store_that_cannot_take_the_charge_is_a_503():
    context = FakeContext(_quota("q", {"pods": "2"}, {"pods": "0"}), _quota("q", {"pods": "2"}, {"pods": "0"}), 0)
    context.store.unavailable = True
    with pytest.raises(errors.ServiceUnavailable, match="storage is unavailable"):
        await ResourceQuotaAdmission(context).validate(_request(PODS, _pod()))
