"""A field selector on a label the kind does not serve is a 400 in the words of the kind's field label conversion,
as kube-apiserver v1.28 answers: `runtime.DefaultMetaV1FieldSelectorConversion`'s for a kind with none of its own
(ConfigMap, Deployment), `field label not supported: <label>` for the core kinds that register one (Pod, Node), and
batch/v1's own words for a Job.
"""

from __future__ import annotations

import pytest

from tests.support.crds import GROUP, crd_path, established, widget_crd
from tests.support.server import Server, start_in_process

pytestmark = pytest.mark.stores("memory")


@pytest.fixture
async def srv(nursery, tmp_path) -> Server:
    return await start_in_process(nursery, tmp_path, api_domain="k8s.io")


async def refused(srv: Server, path: str, selector: str) -> str:
    async with srv.client() as c:
        r = await c.get(path, params={"fieldSelector": selector})
    assert r.status_code == 400 and r.json()["reason"] == "BadRequest"
    return r.json()["message"]


async def test_a_configmap_field_selector_on_an_unknown_label_is_the_default_conversions_error(srv, autojump_clock):
    message = await refused(srv, "/api/v1/namespaces/default/configmaps", "type=x")
    assert message == '"type" is not a known field selector: only "metadata.name", "metadata.namespace"'


async def test_a_deployment_field_selector_on_an_unknown_label_is_the_default_conversions_error(srv, autojump_clock):
    message = await refused(srv, "/apis/apps/v1/namespaces/default/deployments", "spec.replicas=1")
    assert message == '"spec.replicas" is not a known field selector: only "metadata.name", "metadata.namespace"'


async def test_a_pod_field_selector_on_an_unknown_label_is_field_label_not_supported(srv, autojump_clock):
    message = await refused(srv, "/api/v1/namespaces/default/pods", "spec.priority=1")
    assert message == "field label not supported: spec.priority"


async def test_a_node_field_selector_on_metadata_namespace_is_field_label_not_supported(srv, autojump_clock):
    message = await refused(srv, "/api/v1/nodes", "metadata.namespace=x")
    assert message == "field label not supported: metadata.namespace"


async def test_a_job_field_selector_on_an_unknown_label_is_batch_v1s_own_error(srv, autojump_clock):
    message = await refused(srv, "/apis/batch/v1/namespaces/default/jobs", "status.failed=0")
    assert message == 'field label "status.failed" not supported for Job'


async def test_a_known_label_still_selects_on_a_kind_with_the_default_conversion(srv, autojump_clock):
    async with srv.client() as c:
        r = await c.get("/api/v1/namespaces/default/configmaps", params={"fieldSelector": "metadata.name=none"})
    assert r.status_code == 200 and r.json()["items"] == []


async def test_a_cluster_scoped_custom_resources_field_selector_on_metadata_namespace_is_not_supported(
        nursery, tmp_path, autojump_clock):
    srv = await start_in_process(nursery, tmp_path, controllers=True)  # the CRD helpers' domain
    async with srv.client() as c:
        assert (await c.post(crd_path(), json=widget_crd(scope="Cluster"))).status_code == 201
        await established(c)
        path = f"/apis/{GROUP}/v1/widgets"
        r = await c.get(path, params={"fieldSelector": "metadata.namespace=default"})
        assert (r.status_code, r.json()["message"]) == (400, "field label not supported: metadata.namespace")
        assert (await c.get(path, params={"fieldSelector": "metadata.name=w,spec.color=red"})).status_code == 200
