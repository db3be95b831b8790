"""Real clients of custom resources, unmodified, against miniplane under `--api-domain k8s.io`.

- kopf (from PyPI) runs two of its own example operators, taken unmodified
  from kopf's source distribution on PyPI (`examples/` of
  `kopf-<installed version>.tar.gz`, the same files as
  github.com/nolar/kopf at the release's tag; `make kopf-examples` unpacks
  them under `.venv/kopf-examples/`), with `kopf run --standalone` and
  kopf's own `examples/crd.yaml` and `examples/obj.yaml` applied by kubectl:
  `01-minimal/example.py` returns a value that kopf patches into the status
  (`status.create_fn.message`), `04-events/example.py` posts events that
  `kubectl events` and `kubectl describe` show, `02-children/example.py`
  creates a child Pod with pykube (kopf's `adopt`: the object owns it), which
  the garbage collector deletes with the object.
- the official `kubernetes` Python client: `ApiextensionsV1Api` creates the
  CRD, `CustomObjectsApi` creates, gets, lists, replaces, patches (merge,
  status, scale) and deletes custom objects, and `watch.Watch` streams them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import trio
from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException

from runtime.client.http import open_http_client
from runtime.client.kubeconfig import load_kubeconfig
from runtime.machinery.scheme import ResourceType
from runtime.controller.testing import wait_for_object
from tests.support.crds import GROUP, widget, widget_crd
from tests.support.kopfexamples import (DEADLINE, KOPF_EXAMPLES_KIND, install_kopf_crd, kopf_examples_dir, kopf_object,
                                        run_kopf)
from tests.support.kubectl import Kubectl
from tests.support.server import Server, start_server

DOMAIN = "k8s.io"


@pytest.fixture
async def crd_server(nursery, tmp_path) -> Server:
    return await start_server(nursery, tmp_path, api_domain=DOMAIN, controllers=True)


@pytest.fixture
def kubectl(crd_server, tmp_path) -> Kubectl:
    return Kubectl(crd_server, str(tmp_path / "kube-cache"))


@pytest.fixture
def kopf_examples() -> Path:
    return kopf_examples_dir()


async def test_kopfs_minimal_example_patches_the_status_of_an_object_created_with_kubectl(
        crd_server, kubectl, kopf_examples, tmp_path):
    await install_kopf_crd(kubectl, kopf_examples)
    await kubectl("apply", "-f", str(kopf_examples / "obj.yaml"))

    async def handled() -> None:
        async with open_http_client(load_kubeconfig(crd_server.kubeconfig)) as client:
            await wait_for_object(client, KOPF_EXAMPLES_KIND, "kopf-example-1", lambda o: o and (
                o.get("status") or {}).get("create_fn") == {"message": "hello world"}, namespace="default")

    await run_kopf(crd_server, kopf_examples / "01-minimal" / "example.py", tmp_path / "kopf.log", handled)
    listed = (await kubectl("get", "kex")).out.split("\n")
    print("$ kubectl get kex", *listed, sep="\n")
    assert listed[0].split() == ["NAME", "DURATION", "CHILDREN", "MESSAGE"]
    assert listed[1].split() == ["kopf-example-1", "1m", "hello", "world"]
    obj = json.loads((await kubectl("get", "kex", "kopf-example-1", "-o", "json")).out)
    assert "kopf.zalando.org/last-handled-configuration" in obj["metadata"]["annotations"]  # kopf's own bookkeeping


async def test_kopfs_events_example_posts_events_that_kubectl_shows(crd_server, kubectl, kopf_examples, tmp_path):
    await install_kopf_crd(kubectl, kopf_examples)
    await kubectl("create", "-f", "-", stdin=kopf_object(kopf_examples, "kopf-example-2"))
    events_kind = ResourceType.of("v1", "Event", "events")

    async def posted() -> None:
        async with open_http_client(load_kubeconfig(crd_server.kubeconfig)) as client:
            selector = "involvedObject.name=kopf-example-2"
            page = await client.list(events_kind, namespace="default", field_selector=selector)
            wanted, seen = {"SomeType", "Normal", "Warning", "Error"}, {e["type"] for e in page.items}
            if seen >= wanted:
                return
            async with client.watch(events_kind, namespace="default", field_selector=selector,
                                    resource_version=page.resource_version) as events:
                async for event in events:
                    seen.add(event.object["type"])
                    if seen >= wanted:
                        return

    await run_kopf(crd_server, kopf_examples / "04-events" / "example.py", tmp_path / "kopf.log", posted)
    listed = (await kubectl("events", "-n", "default", "--for", "kopfexample/kopf-example-2")).out
    print("$ kubectl events -n default --for kopfexample/kopf-example-2", listed, sep="\n")
    assert "KopfExample/kopf-example-2" in listed and "Some exception: Exception text." in listed
    described = (await kubectl("describe", "kex", "kopf-example-2")).out
    events = described[described.index("Events:"):].splitlines()
    assert events[1].split() == ["Type", "Reason", "Age", "From", "Message"]
    assert any(line.split()[:2] == ["Warning", "SomeReason"] and "kopf" in line for line in events)


async def test_kopfs_children_example_creates_a_pod_the_object_owns(crd_server, kubectl, kopf_examples, tmp_path):
    await install_kopf_crd(kubectl, kopf_examples)
    await kubectl("create", "-f", "-", stdin=kopf_object(kopf_examples, "kopf-example-3"))
    pods_kind = ResourceType.of("v1", "Pod", "pods")

    async def made() -> None:
        async with open_http_client(load_kubeconfig(crd_server.kubeconfig)) as client:
            await wait_for_object(client, KOPF_EXAMPLES_KIND, "kopf-example-3", lambda o: o and (
                (o.get("status") or {}).get("create_fn") or {}).get("children"), namespace="default")

    await run_kopf(crd_server, kopf_examples / "02-children" / "example.py", tmp_path / "kopf.log", made)
    parent = json.loads((await kubectl("get", "kex", "kopf-example-3", "-o", "json")).out)
    (child_uid,) = parent["status"]["create_fn"]["children"]
    pods = json.loads((await kubectl("get", "pods", "-o", "json")).out)["items"]
    (pod,) = [p for p in pods if p["metadata"]["uid"] == child_uid]
    assert pod["metadata"]["ownerReferences"][0]["uid"] == parent["metadata"]["uid"]
    assert pod["spec"]["containers"][0]["env"] == [{"name": "FIELD", "value": "value"}]
    assert pod["status"]["phase"] == "Pending"  # no kubelet runs it
    await kubectl("delete", "kex", "kopf-example-3")
    async with open_http_client(load_kubeconfig(crd_server.kubeconfig)) as client:
        with trio.fail_after(DEADLINE):
            await wait_for_object(client, pods_kind, pod["metadata"]["name"], lambda o: o is None,
                                  namespace="default")


# ---- the official kubernetes Python client -------------------------------------------------------

def custom_objects_session(kubeconfig: str) -> dict[str, Any]:
    """The kubernetes client's calls, blocking (run in a thread): what each answered."""
    api_client = config.new_client_from_config(config_file=kubeconfig)
    crds, objects = client.ApiextensionsV1Api(api_client), client.CustomObjectsApi(api_client)
    out: dict[str, Any] = {}
    crds.create_custom_resource_definition(widget_crd(DOMAIN))
    w = watch.Watch()
    for event in w.stream(crds.list_custom_resource_definition, field_selector=f"metadata.name=widgets.{GROUP}",
                          timeout_seconds=30):
        if any(c.type == "Established" and c.status == "True" for c in event["object"].status.conditions or []):
            w.stop()
    args = (GROUP, "v1", "default", "widgets")
    start = objects.list_namespaced_custom_object(*args)["metadata"]["resourceVersion"]
    out["created"] = objects.create_namespaced_custom_object(*args, widget("a", "default", replicas=1))
    out["got"] = objects.get_namespaced_custom_object(*args, "a")
    out["merged"] = objects.patch_namespaced_custom_object(*args, "a", {"spec": {"color": "blue"}})
    current = objects.get_namespaced_custom_object(*args, "a")
    current["spec"]["size"] = 5
    out["replaced"] = objects.replace_namespaced_custom_object(*args, "a", current)
    out["status"] = objects.patch_namespaced_custom_object_status(*args, "a", {"status": {"ready": True}})
    out["scale"] = objects.patch_namespaced_custom_object_scale(*args, "a", {"spec": {"replicas": 4}})
    out["listed"] = objects.list_cluster_custom_object(GROUP, "v1", "widgets")
    out["deleted"] = objects.delete_namespaced_custom_object(*args, "a")
    try:
        objects.get_namespaced_custom_object(*args, "a")
    except ApiException as e:  # its words: "(404)\nReason: Not Found\n..." (the status line's phrase)
        out["gone"] = (e.status, e.reason, json.loads(e.body)["reason"])
    out["events"] = []
    w = watch.Watch()
    for event in w.stream(objects.list_namespaced_custom_object, *args, resource_version=start, timeout_seconds=30):
        out["events"].append((event["type"], event["object"]["metadata"]["name"]))
        if event["type"] == "DELETED":
            w.stop()
    api_client.close()
    return out


async def test_the_kubernetes_client_custom_objects_api_does_crud_and_watch(crd_server):
    out = await trio.to_thread.run_sync(custom_objects_session, str(crd_server.kubeconfig))
    assert out["created"]["spec"] == {"size": 1, "maxSize": 10, "replicas": 1}
    assert out["got"]["metadata"]["uid"] == out["created"]["metadata"]["uid"]
    assert out["merged"]["spec"]["color"] == "blue"
    assert out["replaced"]["spec"]["size"] == 5 and out["replaced"]["metadata"]["generation"] == 3
    assert out["status"]["status"] == {"ready": True} and out["status"]["metadata"]["generation"] == 3
    assert out["scale"]["kind"] == "Scale" and out["scale"]["spec"] == {"replicas": 4}
    assert out["listed"]["kind"] == "WidgetList" and [i["metadata"]["name"] for i in out["listed"]["items"]] == ["a"]
    assert out["deleted"]["kind"] == "Status" and out["deleted"]["status"] == "Success"
    assert out["gone"] == (404, "Not Found", "NotFound")
    assert out["events"] == [("ADDED", "a")] + [("MODIFIED", "a")] * 4 + [("DELETED", "a")]
