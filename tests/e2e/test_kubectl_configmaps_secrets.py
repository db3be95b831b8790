"""ConfigMaps and Secrets through the real kubectl (issue 37's acceptance), one server for the module.

`kubectl create configmap --from-literal/--from-file`, `create secret
generic|tls|docker-registry`, `get` (kube's Table columns), `describe` (a
Secret's sizes, never its values), `edit` (KUBE_EDITOR a script that edits the
file), `apply` client side and `--server-side`, `patch` of each type, `delete`,
and an immutable ConfigMap's edit refused with Kubernetes' words. The server audits with the default
policy: its log names kubectl's Secret writes, never their data.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
from pathlib import Path
from typing import Iterator

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from tests.support.kubectl import Kubectl
from tests.support.server import Server
from tests.support.served import served

SECRET_VALUE = "s3cr3t-Value-never-shown"


@pytest.fixture(scope="module")
def module_server(tmp_path_factory) -> Iterator[Server]:
    folder = tmp_path_factory.mktemp("cm-secrets")  # audited by the default policy (no --audit-policy-file)
    with served(folder / "data", "--api-domain", "k8s.io", "--controllers", "false",
                "--audit-log-path", str(folder / "audit.log")) as server:
        yield server


@pytest.fixture
def kubectl(module_server, tmp_path_factory) -> Kubectl:
    return Kubectl(module_server, str(tmp_path_factory.getbasetemp() / "kube-cache"))


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def unb64(text: str) -> str:
    return base64.b64decode(text).decode()


async def get_json(kubectl: Kubectl, *what: str) -> dict:
    return json.loads((await kubectl("get", *what, "-o", "json")).out)


def rows(out: str) -> list[list[str]]:
    return [line.split() for line in out.strip().splitlines()]


def tls_pair(tmp_path: Path) -> tuple[Path, Path]:
    """A self-signed certificate and its key, PEM files (kubectl checks the pair before it sends)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "example.test")])
    now = dt.datetime.now(dt.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now)
            .not_valid_after(now + dt.timedelta(days=1)).sign(key, hashes.SHA256()))
    crt, pem = tmp_path / "tls.crt", tmp_path / "tls.key"
    crt.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    pem.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                      serialization.NoEncryption()))
    return crt, pem


def editor(tmp_path: Path, sed: str) -> tuple[dict[str, str], Path]:
    """KUBE_EDITOR: a script that keeps each file kubectl hands it (in `seen`) and edits it with `sed`."""
    seen, script = tmp_path / "seen.txt", tmp_path / "editor.sh"
    script.write_text(f'#!/bin/sh\ncat "$1" >> {seen}\necho "--- end of round ---" >> {seen}\nsed -i \'{sed}\' "$1"\n')
    script.chmod(0o755)
    return {"KUBE_EDITOR": str(script), "TMPDIR": str(tmp_path)}, seen  # TMPDIR: kubectl's copies of a failed edit


async def test_create_configmap_from_literal_and_from_file_and_get_shows_name_data_age(kubectl, tmp_path):
    (tmp_path / "ui.properties").write_text("color=blue\n")
    (tmp_path / "app.conf").write_text("mode: fast\n")
    made = await kubectl("create", "configmap", "game", "--from-literal=lives=3", "--from-literal=level=hard",
                         f"--from-file={tmp_path / 'ui.properties'}", f"--from-file=conf={tmp_path / 'app.conf'}")
    assert made.out.strip() == "configmap/game created"
    obj = await get_json(kubectl, "configmap", "game")
    assert obj["data"] == {"lives": "3", "level": "hard", "ui.properties": "color=blue\n", "conf": "mode: fast\n"}
    listed = rows((await kubectl("get", "configmaps", "game")).out)
    assert listed[0] == ["NAME", "DATA", "AGE"] and listed[1][:2] == ["game", "4"]
    described = (await kubectl("describe", "configmap", "game")).out
    assert "lives:\n----\n3" in described and "ui.properties:\n----\ncolor=blue" in described


async def test_create_secret_generic_tls_and_docker_registry_and_get_shows_name_type_data_age(kubectl, tmp_path):
    crt, key = tls_pair(tmp_path)
    (tmp_path / "ssh").write_text("not-a-key\n")
    assert (await kubectl("create", "secret", "generic", "db", f"--from-literal=password={SECRET_VALUE}",
                          f"--from-file=id={tmp_path / 'ssh'}")).out.strip() == "secret/db created"
    assert (await kubectl("create", "secret", "tls", "web", f"--cert={crt}", f"--key={key}")
            ).out.strip() == "secret/web created"
    assert (await kubectl("create", "secret", "docker-registry", "pull", "--docker-server=registry.test",
                          "--docker-username=u", "--docker-password=p", "--docker-email=u@example.test")
            ).out.strip() == "secret/pull created"
    db = await get_json(kubectl, "secret", "db")
    assert db["type"] == "Opaque" and {k: unb64(v) for k, v in db["data"].items()} == {
        "password": SECRET_VALUE, "id": "not-a-key\n"}
    web = await get_json(kubectl, "secret", "web")
    assert web["type"] == "kubernetes.io/tls" and unb64(web["data"]["tls.crt"]) == crt.read_text()
    pull = await get_json(kubectl, "secret", "pull")
    auths = json.loads(unb64(pull["data"][".dockerconfigjson"]))["auths"]
    assert pull["type"] == "kubernetes.io/dockerconfigjson" and auths["registry.test"]["username"] == "u"
    listed = rows((await kubectl("get", "secrets", "db", "web", "pull")).out)
    assert listed[0] == ["NAME", "TYPE", "DATA", "AGE"]
    assert [r[:3] for r in listed[1:]] == [["db", "Opaque", "2"], ["web", "kubernetes.io/tls", "2"],
                                          ["pull", "kubernetes.io/dockerconfigjson", "1"]]
    typed = rows((await kubectl("get", "secrets", "--field-selector", "type=kubernetes.io/tls")).out)
    assert [r[0] for r in typed[1:]] == ["web"]


async def test_describe_secret_shows_sizes_never_values(kubectl):
    await kubectl("create", "secret", "generic", "described", f"--from-literal=password={SECRET_VALUE}",
                  "--from-literal=user=admin")
    described = (await kubectl("describe", "secret", "described")).out
    print("$ kubectl describe secret described", described, sep="\n")
    assert "Type:  Opaque" in described
    assert f"password:  {len(SECRET_VALUE)} bytes" in described and "user:      5 bytes" in described
    assert SECRET_VALUE not in described and b64(SECRET_VALUE) not in described and "admin" not in described


async def test_edit_configmap_and_secret_with_kube_editor(kubectl, tmp_path):
    await kubectl("create", "configmap", "edited", "--from-literal=mode=slow")
    env, _ = editor(tmp_path, "s/mode: slow/mode: fast/")
    assert (await kubectl("edit", "configmap", "edited", env=env)).out.strip() == "configmap/edited edited"
    assert (await get_json(kubectl, "configmap", "edited"))["data"] == {"mode": "fast"}
    await kubectl("create", "secret", "generic", "edited", "--from-literal=k=old")
    env, _ = editor(tmp_path, f"s/k: {b64('old')}/k: {b64('new')}/")
    assert (await kubectl("edit", "secret", "edited", env=env)).out.strip() == "secret/edited edited"
    assert unb64((await get_json(kubectl, "secret", "edited"))["data"]["k"]) == "new"


async def test_edit_of_an_immutable_configmap_is_refused_with_kubes_words(kubectl, tmp_path):
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "frozen"}, "data": {"mode": "slow"},
            "immutable": True}
    await kubectl("create", "-f", "-", stdin=json.dumps(body).encode())
    env, seen = editor(tmp_path, "s/mode: slow/mode: fast/")
    refused = await kubectl("edit", "configmap", "frozen", env=env, check=False)
    print("$ kubectl edit configmap frozen", refused.out, refused.err, sep="\n")
    assert refused.code != 0
    assert 'error: configmaps "frozen" is invalid' in refused.err
    assert "Edit cancelled, no valid changes were saved." in refused.err
    second_round = seen.read_text().split("--- end of round ---")[1]  # kubectl reopens it, kube's causes atop
    assert '# configmaps "frozen" was not valid:' in second_round
    assert "# * data: Forbidden: field is immutable when `immutable` is set" in second_round
    assert (await get_json(kubectl, "configmap", "frozen"))["data"] == {"mode": "slow"}


def configmap_yaml(name: str, data: dict[str, str]) -> str:
    lines = ["apiVersion: v1", "kind: ConfigMap", "metadata:", f"  name: {name}", "data:"]
    return "\n".join(lines + [f"  {k}: {json.dumps(v)}" for k, v in data.items()]) + "\n"


def secret_yaml(name: str, data: dict[str, str]) -> str:
    lines = ["apiVersion: v1", "kind: Secret", "metadata:", f"  name: {name}", "type: Opaque", "data:"]
    return "\n".join(lines + [f"  {k}: {b64(v)}" for k, v in data.items()]) + "\n"


async def test_client_side_apply_of_a_configmap_and_a_secret_merges_three_ways(kubectl, tmp_path):
    path = tmp_path / "objects.yaml"
    path.write_text(configmap_yaml("csa", {"a": "1", "b": "2"}) + "---\n" + secret_yaml("csa", {"a": "1"}))
    assert sorted((await kubectl("apply", "-f", str(path))).out.split()) == sorted(
        ["configmap/csa", "created", "secret/csa", "created"])
    await kubectl("patch", "configmap", "csa", "--type", "merge", "-p", '{"data":{"other":"kept"}}')
    path.write_text(configmap_yaml("csa", {"a": "10"}) + "---\n" + secret_yaml("csa", {"a": "1", "z": "26"}))
    assert (await kubectl("apply", "-f", str(path))).out.split() == ["configmap/csa", "configured",
                                                                     "secret/csa", "configured"]
    cm = await get_json(kubectl, "configmap", "csa")
    assert cm["data"] == {"a": "10", "other": "kept"}  # b removed (last applied), another writer's key kept
    assert "kubectl.kubernetes.io/last-applied-configuration" in cm["metadata"]["annotations"]
    secret = await get_json(kubectl, "secret", "csa")
    assert {k: unb64(v) for k, v in secret["data"].items()} == {"a": "1", "z": "26"}
    assert "unchanged" in (await kubectl("apply", "-f", str(path))).out


async def test_server_side_apply_of_a_configmap_and_a_secret_with_two_managers(kubectl, tmp_path):
    mine, theirs = tmp_path / "mine.yaml", tmp_path / "theirs.yaml"
    mine.write_text(configmap_yaml("ssa", {"a": "1"}) + "---\n" + secret_yaml("ssa", {"a": "1"}))
    theirs.write_text(configmap_yaml("ssa", {"a": "2"}))
    assert (await kubectl("apply", "--server-side", "-f", str(mine))).out.split() == [
        "configmap/ssa", "serverside-applied", "secret/ssa", "serverside-applied"]
    clash = await kubectl("apply", "--server-side", "--field-manager=rival", "-f", str(theirs), check=False)
    assert clash.code != 0 and "conflict" in clash.err.lower() and ".data.a" in clash.err
    await kubectl("apply", "--server-side", "--field-manager=rival", "--force-conflicts", "-f", str(theirs))
    cm = json.loads((await kubectl("get", "configmap", "ssa", "-o", "json", "--show-managed-fields")).out)
    assert cm["data"] == {"a": "2"}
    assert {e["manager"] for e in cm["metadata"]["managedFields"]} >= {"rival"}
    secret = await get_json(kubectl, "secret", "ssa")
    assert unb64(secret["data"]["a"]) == "1"


async def test_kubectl_patch_json_merge_and_strategic_of_a_configmap_and_a_secret(kubectl):
    await kubectl("create", "configmap", "patched", "--from-literal=a=1", "--from-literal=b=2")
    await kubectl("create", "secret", "generic", "patched", "--from-literal=a=1", "--from-literal=b=2")
    for kind, value in (("configmap", lambda v: v), ("secret", b64)):
        steps = [("json", json.dumps([{"op": "add", "path": "/data/c", "value": value("3")}])),
                 ("merge", json.dumps({"data": {"a": None, "d": value("4")}})),
                 ("strategic", json.dumps({"data": {"b": value("20")}, "metadata": {"labels": {"x": "y"}}}))]
        for patch_type, patch in steps:
            out = (await kubectl("patch", kind, "patched", "--type", patch_type, "-p", patch)).out.strip()
            assert out == f"{kind}/patched patched"
        obj = await get_json(kubectl, kind, "patched")
        data = obj["data"] if kind == "configmap" else {k: unb64(v) for k, v in obj["data"].items()}
        assert data == {"b": "20", "c": "3", "d": "4"} and obj["metadata"]["labels"] == {"x": "y"}


async def test_kubectl_delete_of_a_configmap_and_a_secret(kubectl):
    await kubectl("create", "configmap", "doomed", "--from-literal=a=1")
    await kubectl("create", "secret", "generic", "doomed", "--from-literal=a=1")
    deleted = await kubectl("delete", "configmap/doomed", "secret/doomed")
    assert deleted.out.splitlines() == ['configmap "doomed" deleted', 'secret "doomed" deleted']
    gone = await kubectl("get", "secret", "doomed", check=False)
    assert gone.code != 0 and 'Error from server (NotFound): secrets "doomed" not found' in gone.err


async def test_the_default_audit_policy_logs_kubectls_secret_writes_without_their_data(kubectl, module_server,
                                                                                       tmp_path):
    value = "audited-value-never-logged"
    await kubectl("create", "secret", "generic", "audited", f"--from-literal=a={value}")
    path = tmp_path / "secret.yaml"
    path.write_text(f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: audited-applied\nstringData:\n  a: {value}\n")
    await kubectl("apply", "-f", str(path))  # its last-applied annotation holds the value too
    await kubectl("patch", "secret", "audited", "-p", json.dumps({"stringData": {"b": value}}))
    await kubectl("get", "secret", "audited", "-o", "yaml")
    log = (module_server.data_dir.parent / "audit.log").read_text()
    events = [json.loads(line) for line in log.splitlines()]
    ours = [e for e in events if e.get("objectRef", {}).get("name", "").startswith("audited")]
    assert {e["verb"] for e in ours} >= {"create", "patch", "get"}
    assert {e["level"] for e in ours} == {"Metadata"}
    assert value not in log and b64(value) not in log
