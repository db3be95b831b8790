"""`miniplane controllers` under a ServiceAccount with least privilege, as the README shows it.

The real kubectl applies `manifests/controllers-rbac.yaml`, asks a token
(`kubectl create token`) and writes a kubeconfig with it (`kubectl config
set-credentials`); `miniplane controllers` then runs the built-in
controllers as that service account against a server that runs none of its
own: ClusterRole aggregation, namespace cascade deletion and garbage
collection all work, nothing it does is refused (its log holds no
"forbidden"), and the token grants nothing beyond the role (no creates of
namespaces or bindings, no impersonation, no tokens).
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import trio

from tests.support.kubectl import KUBECTL, Kubectl
from tests.support.serverproc import ROOT

MANIFEST = ROOT / "manifests" / "controllers-rbac.yaml"


async def until(kubectl: Kubectl, predicate, *args: str, limit: float = 60.0) -> None:
    """Run `kubectl ARGS` until `predicate(result)` holds (a real process: real time, bounded)."""
    with trio.fail_after(limit):
        while not predicate(await kubectl(*args, check=False)):
            await trio.sleep(0.2)


async def test_builtin_controllers_run_under_a_least_privilege_service_account(kubectl, k8s_server, tmp_path):
    await kubectl("apply", "-f", str(MANIFEST))
    token = (await kubectl("create", "token", "miniplane-controllers", "-n", "miniplane-system",
                           "--duration", "1h")).out.strip()
    config = tmp_path / "controllers.kubeconfig"
    shutil.copy(k8s_server.kubeconfig, config)
    for args in (["set-credentials", "miniplane-controllers", f"--token={token}"],
                 ["set-context", "--current", "--user=miniplane-controllers"]):
        await trio.run_process([KUBECTL, "--kubeconfig", str(config), "config", *args], capture_stdout=True)

    # What the token may do (one rules review): creates only of events and leases; no impersonate, bind or
    # token requests; escalate only on clusterroles (the aggregation controller's).
    rows = [line.split() for line in (await kubectl("auth", "can-i", "--list", "--token", token)).out.splitlines()[1:]]
    granted = {(row[0], verb.strip("[],")) for row in rows for verb in row[3:]}
    assert {r for r, v in granted if v == "create"} <= {"events", "events.events.k8s.io", "leases.coordination.k8s.io",
                                                        "selfsubjectaccessreviews.authorization.k8s.io",
                                                        "selfsubjectrulesreviews.authorization.k8s.io",
                                                        "selfsubjectreviews.authentication.k8s.io"}
    assert not {v for _, v in granted} & {"impersonate", "bind", "*"}
    assert {r for r, v in granted if v == "escalate"} == {"clusterroles.rbac.authorization.k8s.io"}
    assert ("*.*", "delete") in granted

    log = tmp_path / "controllers.log"
    with open(log, "wb") as out:
        proc = await trio.lowlevel.open_process(
            [sys.executable, "-m", "api.cli", "controllers", "--kubeconfig", str(config)],
            stdout=out, stderr=subprocess.STDOUT, cwd=str(ROOT))
    try:
        # ClusterRole aggregation into the bootstrap `view`.
        await kubectl("create", "clusterrole", "lease-reader", "--verb=get", "--resource=leases")
        await kubectl("label", "clusterrole", "lease-reader", "rbac.authorization.k8s.io/aggregate-to-view=true")
        await until(kubectl, lambda r: "leases" in r.out, "get", "clusterrole", "view", "-o", "json")
        # Namespace cascade deletion.
        await kubectl("create", "namespace", "team")
        await kubectl("create", "role", "r", "--verb=get", "--resource=leases", "-n", "team")
        await kubectl("create", "serviceaccount", "robot", "-n", "team")
        await kubectl("delete", "namespace", "team", "--wait=false")
        await until(kubectl, lambda r: r.code != 0 and "NotFound" in r.err, "get", "namespace", "team")
        # Garbage collection: a ServiceAccount owned by a Lease goes with it.
        lease = json.loads((await kubectl("create", "-f", "-", "-o", "json", stdin=json.dumps({
            "apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "owner"},
            "spec": {}}).encode())).out)
        await kubectl("create", "-f", "-", stdin=json.dumps({
            "apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "owned", "ownerReferences": [{
                "apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "name": "owner",
                "uid": lease["metadata"]["uid"]}]}}).encode())
        await kubectl("delete", "lease", "owner")
        await until(kubectl, lambda r: r.code != 0 and "NotFound" in r.err, "get", "serviceaccount", "owned")
        # Status writes: a quota's usage and a ValidatingAdmissionPolicy's type checking.
        await kubectl("create", "quota", "q", "--hard=configmaps=5")
        await until(kubectl, lambda r: '"configmaps":"' in r.out, "get", "quota", "q", "-o", "jsonpath={.status.used}")
        await kubectl("create", "-f", "-", stdin=json.dumps({
            "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": "typo"}, "spec": {"matchConstraints": {"resourceRules": [{
                "apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["deployments"]}]},
                "validations": [{"expression": "object.replicas > 1"}]}}).encode())
        await until(kubectl, lambda r: "undefined field 'replicas'" in r.out, "get", "validatingadmissionpolicy",
                    "typo", "-o", "jsonpath={.status.typeChecking}")
    finally:
        proc.send_signal(signal.SIGTERM)
        with trio.fail_after(30):
            code = await proc.wait()
    assert code == 0
    assert "forbidden" not in log.read_text().lower()
