"""Events end to end: a controller (out of process, over HTTPS) records events about a Role; the real kubectl shows them.

- `kubectl events` and `kubectl get events` (field selectors, `-o wide`)
  list them; repeats are one event with a count;
- `kubectl describe` shows them under Events where kubectl's describer
  prints events: for a Role served under `svc.io` (kubectl's generic
  describer) and for a Lease under `k8s.io`. kubectl's own Role describer
  (a Role of `rbac.authorization.k8s.io`) prints no events, as against
  kube-apiserver.
"""

from __future__ import annotations

import json
import re
from typing import Any

import trio

from runtime.client.interface import ObjectKey
from runtime.client.http import open_http_client
from runtime.client.kubeconfig import load_kubeconfig
from runtime.controller.manager import Manager
from tests.support.kubectl import Kubectl
from tests.support.server import Server

#: How long a controller may take to see a Role and have its events written, on a loaded test machine.
DEADLINE = 30.0


async def create(kubectl: Kubectl, obj: dict[str, Any]) -> None:
    await kubectl("create", "-f", "-", stdin=json.dumps(obj).encode())


async def record_events(server: Server, kind: str, namespace: str, name: str, repeats: int) -> None:
    """Run a controller of `kind` that records `repeats` identical Normal events and a Warning about `name`,
    until kubectl can list them; stop it."""
    async with open_http_client(load_kubeconfig(server.kubeconfig)) as client:
        manager = Manager(client, name="e2e")
        recorder = manager.event_recorder("role-auditor")
        rt = client.scheme.by_kind(kind)
        cache = manager.informers.informer(rt)

        async def reconcile(key: ObjectKey) -> None:
            obj = cache.get(key)
            if obj is None or key.name != name:
                return
            for _ in range(repeats):
                recorder.event(obj, "Normal", "Audited", f"{kind.lower()} {key} audited")
            recorder.eventf(obj, "Warning", "NoRules", "%s grants nothing", key.name)

        manager.controller("auditor").for_(rt).complete(reconcile)
        async with trio.open_nursery() as nursery:
            await nursery.start(manager.run)
            events = client.scheme.by_kind("Event")
            with trio.fail_after(DEADLINE):
                while True:  # the events are written in the background: look until they are all there
                    found = (await client.list(events, namespace=namespace,
                                               field_selector=f"involvedObject.name={name}")).items
                    if len(found) == 2 and sum(e.get("count") or 0 for e in found) == repeats + 1:
                        break
                    await trio.sleep(0.05)
            nursery.cancel_scope.cancel()


async def test_kubectl_events_lists_what_a_controller_recorded(kubectl, k8s_server):
    await kubectl("create", "namespace", "team-a")
    await kubectl("create", "role", "reader", "--verb=get,list", "--resource=events", "-n", "team-a")
    await record_events(k8s_server, "Role", "team-a", "reader", repeats=3)

    listed = (await kubectl("events", "-n", "team-a")).out.splitlines()
    print("$ kubectl events -n team-a", *listed, sep="\n")
    assert listed[0].split() == ["LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    rows = {line.split()[-1]: line for line in listed[1:]}
    assert "Role/reader" in rows["audited"] and "Normal" in rows["audited"] and "Audited" in rows["audited"]
    assert re.match(r"\d+s \(x3 over \d+s\)", rows["audited"])  # LAST SEEN of a repeated event
    assert "Warning" in rows["nothing"] and "NoRules" in rows["nothing"]

    for_role = (await kubectl("events", "-n", "team-a", "--for", "role/reader")).out
    assert "role team-a/reader audited" in for_role and "reader grants nothing" in for_role

    wide = (await kubectl("get", "events", "-n", "team-a", "-o", "wide",
                          "--field-selector", "involvedObject.name=reader,type=Normal")).out.splitlines()
    print("$ kubectl get events -n team-a -o wide --field-selector involvedObject.name=reader,type=Normal",
          *wide, sep="\n")
    assert wide[0].split() == ["LAST", "SEEN", "TYPE", "REASON", "OBJECT", "SUBOBJECT", "SOURCE", "MESSAGE",
                               "FIRST", "SEEN", "COUNT", "NAME"]
    (row,) = wide[1:]
    assert "role/reader" in row and "role-auditor" in row and " 3 " in row and "reader." in row


async def test_kubectl_describe_shows_the_events_of_a_role(kubectl_svc, https_server):
    await kubectl_svc("create", "namespace", "team-a")
    await create(kubectl_svc, {"apiVersion": "rbac.authorization.svc.io/v1", "kind": "Role",
                               "metadata": {"name": "reader", "namespace": "team-a"}, "rules": []})
    await record_events(https_server, "Role", "team-a", "reader", repeats=2)

    described = (await kubectl_svc("describe", "role", "reader", "-n", "team-a")).out
    print("$ kubectl describe role reader -n team-a", described, sep="\n")
    events = described[described.index("Events:"):].splitlines()
    assert events[1].split() == ["Type", "Reason", "Age", "From", "Message"]
    audited = next(line for line in events if "Audited" in line)
    assert audited.split()[0] == "Normal" and "(x2 over" in audited and "role-auditor" in audited
    assert "role team-a/reader audited" in audited
    assert any(line.split()[:2] == ["Warning", "NoRules"] for line in events)


async def test_kubectl_describe_shows_the_events_of_a_lease_under_k8s_io(kubectl, k8s_server):
    await create(kubectl, {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                           "metadata": {"name": "leader", "namespace": "default"},
                           "spec": {"holderIdentity": "replica-1", "leaseDurationSeconds": 15}})
    await record_events(k8s_server, "Lease", "default", "leader", repeats=1)
    described = (await kubectl("describe", "lease", "leader", "-n", "default")).out
    print("$ kubectl describe lease leader -n default", described, sep="\n")
    events = described[described.index("Events:"):]
    assert "lease default/leader audited" in events and "leader grants nothing" in events
