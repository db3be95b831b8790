"""Custom resources with the real kubectl: a CRD applied, then its kind used as any other, under `k8s.io`.

One session, as a user types it: `kubectl apply -f crd.yaml`, `kubectl wait`
for Established, then at once (one attempt each: discovery and OpenAPI v2/v3
follow the server's kinds while it runs) `kubectl explain` and `kubectl
apply` on the new kind; `get` by plural, short name and category with the
printer columns; `describe`; client-side and server-side apply (a conflict,
then `--force-conflicts`); `patch --type=merge` and `--type=json` (a
strategic merge patch refused); `edit` through a `KUBE_EDITOR` script; a CEL
rule's message on a bad object; `scale`; `kubectl events` and `describe`
showing what a controller recorded; a schema change seen by `explain` at
once; `delete`; and the CRD deleted with its objects.
"""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import pytest
import trio
import yaml

from runtime.client.http import open_http_client
from runtime.client.kubeconfig import load_kubeconfig
from runtime.controller.manager import Manager
from tests.support.crds import GROUP, widget, widget_crd
from tests.support.kubectl import Kubectl
from tests.support.server import Server, start_server

DOMAIN = "k8s.io"
CRD_NAME = f"widgets.{GROUP}"


@pytest.fixture
async def crd_server(nursery, tmp_path) -> Server:
    """A server running the built-in controllers (the CRD controller establishes CRDs), under k8s.io."""
    return await start_server(nursery, tmp_path, api_domain=DOMAIN, controllers=True)


@pytest.fixture
def kubectl(crd_server, tmp_path) -> Kubectl:
    return Kubectl(crd_server, str(tmp_path / "kube-cache"))


def write(path: Path, *docs: dict[str, Any]) -> str:
    path.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    return str(path)


def rows(out: str) -> list[list[str]]:
    return [line.split() for line in out.strip().splitlines()]


async def record_event(server: Server, obj: dict[str, Any], reason: str, message: str) -> None:
    """What a controller does: record an event about `obj` with the runtime's recorder, until it is written."""
    async with open_http_client(load_kubeconfig(server.kubeconfig)) as client:
        manager = Manager(client, name="e2e")
        manager.event_recorder("widget-controller").event(obj, "Normal", reason, message)
        async with trio.open_nursery() as nursery:
            await nursery.start(manager.run)
            nursery.cancel_scope.cancel()  # a graceful stop flushes the queued event


async def test_kubectl_uses_a_custom_kind_as_any_other(kubectl, crd_server, tmp_path):
    crd_file = write(tmp_path / "crd.yaml", widget_crd(DOMAIN))
    print((await kubectl("apply", "-f", crd_file)).out)
    await kubectl("wait", "--for=condition=Established", f"crd/{CRD_NAME}", "--timeout=30s")

    # At once: discovery and OpenAPI know the new kind.
    explained = (await kubectl("explain", "widgets.spec.size")).out
    assert "KIND:       Widget" in explained and "How big the widget is." in explained
    w1 = widget("w1", "default", color="red", replicas=1)
    assert (await kubectl("apply", "-f", write(tmp_path / "w1.yaml", w1))).out.strip() == \
        f"widget.{GROUP}/w1 created"

    listed = rows((await kubectl("get", "wd")).out)
    assert listed == [["NAME", "SIZE", "COLOR"], ["w1", "1", "red"]]
    assert rows((await kubectl("get", "gadgets")).out) == listed  # a category
    assert rows((await kubectl("get", f"widgets.{GROUP}", "-o", "name")).out) == [[f"widget.{GROUP}/w1"]]
    described = (await kubectl("describe", "widget", "w1")).out
    assert "Kind:         Widget" in described and "Max Size:  10" in described

    # Client-side apply again (a change); server-side apply takes its fields over without conflict (as
    # Kubernetes upgrades client-side apply); patches: merge and json; strategic merge (kubectl's default)
    # refused as by kube-apiserver.
    w1["spec"]["size"] = 2
    assert "configured" in (await kubectl("apply", "-f", write(tmp_path / "w1.yaml", w1))).out
    w1["spec"]["size"] = 3
    taken = await kubectl("apply", "--server-side", "-f", write(tmp_path / "w1.yaml", w1))
    assert taken.out.strip() == f"widget.{GROUP}/w1 serverside-applied"
    await kubectl("patch", "widget", "w1", "--type=merge", "-p", '{"spec":{"color":"blue"}}')
    await kubectl("patch", "wd", "w1", "--type=json", "-p", '[{"op":"replace","path":"/spec/size","value":4}]')
    strategic = await kubectl("patch", "wd", "w1", "-p", '{"spec":{"size":5}}', check=False)
    assert strategic.code != 0 and "application/strategic-merge-patch+json is not supported" in strategic.err
    got = json.loads((await kubectl("get", "wd", "w1", "-o", "json")).out)
    assert (got["spec"]["color"], got["spec"]["size"]) == ("blue", 4)
    conflict = await kubectl("apply", "--server-side", "-f", str(tmp_path / "w1.yaml"), check=False)
    assert conflict.code != 0 and 'conflicts with "kubectl-patch"' in conflict.err
    assert ".spec.color" in conflict.err and ".spec.size" in conflict.err
    forced = await kubectl("apply", "--server-side", "--force-conflicts", "-f", str(tmp_path / "w1.yaml"))
    assert "serverside-applied" in forced.out
    await kubectl("apply", "--server-side", "-f", write(tmp_path / "w2.yaml", widget("w2", "default")))
    await kubectl("patch", "widget", "w1", "--type=merge", "-p", '{"spec":{"color":"blue","size":4}}')
    got = json.loads((await kubectl("get", "wd", "w1", "-o", "json")).out)

    # kubectl edit, with an editor that is a script.
    editor = tmp_path / "editor.sh"
    editor.write_text("#!/bin/sh\nsed -i 's/color: blue/color: red/' \"$1\"\n")
    editor.chmod(editor.stat().st_mode | stat.S_IXUSR)
    edited = await kubectl("edit", "widget", "w1", env={"KUBE_EDITOR": str(editor)})
    assert edited.out.strip() == f"widget.{GROUP}/w1 edited"
    assert (await kubectl("get", "wd", "w1", "-o", "jsonpath={.spec.color}")).out == "red"

    # A CEL rule's message, and an unknown field refused (kubectl validates strictly).
    bad = await kubectl("apply", "-f", write(tmp_path / "bad.yaml", widget("bad", "default", size=50)), check=False)
    assert bad.code != 0 and 'spec: Invalid value: "object": size must not exceed maxSize' in bad.err
    unknown = await kubectl("apply", "-f", write(tmp_path / "bad.yaml", widget("bad", "default", bogus=1)),
                            check=False)
    assert unknown.code != 0 and 'strict decoding error: unknown field "spec.bogus"' in unknown.err

    # Scale through the scale subresource.
    assert (await kubectl("scale", "widget", "w1", "--replicas=3")).out.strip() == f"widget.{GROUP}/w1 scaled"
    assert (await kubectl("get", "wd", "w1", "-o", "jsonpath={.spec.replicas}")).out == "3"

    # What a controller recorded about it.
    await record_event(crd_server, got, "Resized", "widget w1 resized to 4")
    events = (await kubectl("events", "-n", "default", "--for", "widget/w1")).out
    print("$ kubectl events -n default --for widget/w1", events, sep="\n")
    assert "Widget/w1" in events and "Resized" in events and "widget w1 resized to 4" in events
    described = (await kubectl("describe", "widget", "w1")).out
    assert "Resized" in described[described.index("Events:"):]

    # The schema changes while the server runs: explain sees the new field at once.
    changed = widget_crd(DOMAIN)
    changed["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["shape"] = {
        "type": "string", "description": "The shape of the widget."}
    await kubectl("apply", "-f", write(tmp_path / "crd.yaml", changed))
    assert "The shape of the widget." in (await kubectl("explain", "widgets.spec.shape")).out

    assert (await kubectl("delete", "wd", "w2")).out.strip() == f'widget.{GROUP} "w2" deleted'
    # Deleting the CRD deletes its objects first, then its kind is no longer served.
    await kubectl("delete", "-f", crd_file, "--timeout=60s")
    gone = await kubectl("get", "widgets", check=False)  # kubectl's cached discovery still names the kind
    assert gone.code != 0 and "the server could not find the requested resource" in gone.err
    assert "widgets" not in (await kubectl("api-resources", "--api-group", GROUP)).out
