"""The pod spec's defaults (Kubernetes' `pkg/apis/core/v1/defaults.go` and the generated defaulters), in place.

What a Pod and every pod template get (`SetDefaults_PodSpec` and the walk
`zz_generated.defaults.go` does over the spec's parts):

- the spec: `dnsPolicy: ClusterFirst`, `restartPolicy: Always`,
  `terminationGracePeriodSeconds: 30`, `securityContext: {}`,
  `schedulerName: default-scheduler`;
- each container (init, regular and ephemeral): `imagePullPolicy` by the
  image's tag (`Always` for `:latest` or no tag, `IfNotPresent` otherwise,
  and for a digest or an image that does not parse), `terminationMessagePath:
  /dev/termination-log`, `terminationMessagePolicy: File`; ports' `protocol:
  TCP`; env `valueFrom.fieldRef.apiVersion: v1`; probes' `timeoutSeconds: 1`,
  `periodSeconds: 10`, `successThreshold: 1`, `failureThreshold: 3`; an
  `httpGet`'s `path: /` and `scheme: HTTP` (probes and lifecycle hooks); a
  `grpc` probe's `service: ""`;
- resource lists (containers' limits and requests, `overhead`, an ephemeral
  volume's claim) rounded up to milli units and written in canonical form
  (`1000m` is `1`), as Kubernetes serializes a Quantity; emptyDir's
  `sizeLimit` canonical too;
- volumes: no source is `emptyDir: {}`; `secret`, `configMap`,
  `downwardAPI` and `projected` `defaultMode: 420`; `hostPath.type: ""`;
  downward API items' `fieldRef.apiVersion: v1`; a projected service account
  token's `expirationSeconds: 3600`; the legacy sources' declarative defaults
  (iSCSI, RBD, Azure Disk, ScaleIO); an ephemeral volume's claim
  `volumeMode: Filesystem`.

The v1 conversion's service account is kept here too, as a read back shows
it: the deprecated `serviceAccount` is `serviceAccountName` (given either way).

`default_pod_only` is `SetDefaults_Pod`, a Pod's and not a template's:
requests copied from limits where unset (containers and init containers),
`enableServiceLinks: true`, and with `hostNetwork` each port's `hostPort`
from its `containerPort`.

A malformed quantity is left as it is, for validation to refuse.
Defaulting twice equals defaulting once.
"""

from __future__ import annotations

import functools
import math
import re
from fractions import Fraction
from typing import Any

from runtime.machinery.quantity import Quantity, QuantityError
from runtime.server.kinds.pods.podspec_common import cached_quantity

__all__ = ["default_spec", "default_pod_only", "image_pull_policy", "canonical_resource", "VOLUME_SOURCES"]

#: Every VolumeSource member (`core/v1` VolumeSource's JSON names), in Kubernetes' order.
VOLUME_SOURCES = (
    "emptyDir", "hostPath", "gitRepo", "gcePersistentDisk", "awsElasticBlockStore", "secret", "nfs", "iscsi",
    "glusterfs", "flocker", "persistentVolumeClaim", "rbd", "cinder", "cephfs", "quobyte", "downwardAPI", "fc",
    "flexVolume", "configMap", "azureFile", "vsphereVolume", "photonPersistentDisk", "portworxVolume", "azureDisk",
    "storageos", "projected", "scaleIO", "csi", "ephemeral",
)
_DEFAULT_MODE = 0o644
_PROBES = ("livenessProbe", "readinessProbe", "startupProbe")
_CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")

# distribution/reference's grammar (what Kubernetes' ParseImageName parses with).
_PATH_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN = rf"(?:{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})*|\[[a-fA-F0-9:]+\])(?::[0-9]+)?"
_REFERENCE = re.compile(
    rf"(?P<name>(?:{_DOMAIN}/)?{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*)"
    r"(?::(?P<tag>[\w][\w.-]{0,127}))?"
    r"(?:@(?P<digest>[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9A-Fa-f]{32,}))?")
_HEX64 = re.compile(r"[a-f0-9]{64}")


def image_pull_policy(image: str) -> str:
    """SetDefaults_Container's pull policy: `Always` when the image's tag is `latest` (given, or implied by no
    tag and no digest), `IfNotPresent` otherwise (a digest alone, or an image that is no reference)."""
    match = _REFERENCE.fullmatch(image or "")
    if match is None or len(match["name"]) > 255 or _HEX64.fullmatch(match["name"]):
        return "IfNotPresent"
    tag = match["tag"] or ("" if match["digest"] else "latest")
    return "Always" if tag == "latest" else "IfNotPresent"


def canonical_resource(value: Any, *, round_to_milli: bool = True) -> Any:
    """A quantity as Kubernetes writes it back: rounded up (away from zero) to milli units when
    `round_to_milli` (SetDefaults_ResourceList), in canonical form; a value that is no quantity as it is."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return value
    try:
        return _canonical_text(value if isinstance(value, str) else repr(value), round_to_milli)
    except QuantityError:
        return value


@functools.lru_cache(maxsize=4096)
def _canonical_text(text: str, round_to_milli: bool) -> str:
    quantity = cached_quantity(text)
    exact = quantity.value
    if round_to_milli and (exact * 1000).denominator != 1:
        milli = Fraction(math.ceil(abs(exact) * 1000), 1000)
        exact = milli if exact > 0 else -milli
    return str(Quantity(exact, quantity.format))


def _resource_list(owner: dict[str, Any] | None, key: str) -> None:
    if isinstance(owner, dict) and isinstance(owner.get(key), dict):
        owner[key] = {name: canonical_resource(q) for name, q in owner[key].items()}


def _set(obj: dict[str, Any], key: str, value: Any) -> None:
    """Sets `key` when it is missing or null (a pointer's nil)."""
    if obj.get(key) is None:
        obj[key] = value


def _set_if_empty(obj: dict[str, Any], key: str, value: Any) -> None:
    """Sets `key` when it is Go's zero value (missing, null, "" or 0)."""
    if not obj.get(key):
        obj[key] = value


def _http_get(handler: Any) -> None:
    if isinstance(handler, dict) and isinstance(handler.get("httpGet"), dict):
        _set_if_empty(handler["httpGet"], "path", "/")
        _set_if_empty(handler["httpGet"], "scheme", "HTTP")


def _probe(probe: Any) -> None:
    if not isinstance(probe, dict):
        return
    for key, value in (("timeoutSeconds", 1), ("periodSeconds", 10), ("successThreshold", 1),
                       ("failureThreshold", 3)):
        _set_if_empty(probe, key, value)
    _http_get(probe)
    if isinstance(probe.get("grpc"), dict):
        _set(probe["grpc"], "service", "")


def _field_ref(owner: Any) -> None:
    if isinstance(owner, dict) and isinstance(owner.get("fieldRef"), dict):
        _set_if_empty(owner["fieldRef"], "apiVersion", "v1")


def _container(container: dict[str, Any]) -> None:
    if not container.get("imagePullPolicy"):
        container["imagePullPolicy"] = image_pull_policy(container.get("image") or "")
    _set_if_empty(container, "terminationMessagePath", "/dev/termination-log")
    _set_if_empty(container, "terminationMessagePolicy", "File")
    for port in container.get("ports") or []:
        if isinstance(port, dict):
            _set_if_empty(port, "protocol", "TCP")
    for env in container.get("env") or []:
        if isinstance(env, dict):
            _field_ref(env.get("valueFrom"))
    _resource_list(container.get("resources"), "limits")
    _resource_list(container.get("resources"), "requests")
    for key in _PROBES:
        _probe(container.get(key))
    lifecycle = container.get("lifecycle")
    if isinstance(lifecycle, dict):
        _http_get(lifecycle.get("postStart"))
        _http_get(lifecycle.get("preStop"))


def _legacy_sources(volume: dict[str, Any]) -> None:
    """The declarative defaults (`+default=`) of the in-tree sources no controller's author writes."""
    if isinstance(iscsi := volume.get("iscsi"), dict):
        _set_if_empty(iscsi, "iscsiInterface", "default")
    if isinstance(rbd := volume.get("rbd"), dict):
        _set_if_empty(rbd, "pool", "rbd")
        _set_if_empty(rbd, "user", "admin")
        _set_if_empty(rbd, "keyring", "/etc/ceph/keyring")
    if isinstance(azure := volume.get("azureDisk"), dict):
        _set(azure, "cachingMode", "ReadWrite")
        _set(azure, "fsType", "ext4")
        _set(azure, "readOnly", False)
        _set(azure, "kind", "Shared")
    if isinstance(scale := volume.get("scaleIO"), dict):
        _set_if_empty(scale, "storageMode", "ThinProvisioned")
        _set_if_empty(scale, "fsType", "xfs")


def _volume(volume: dict[str, Any]) -> None:
    if all(volume.get(source) is None for source in VOLUME_SOURCES):
        volume["emptyDir"] = {}
    if isinstance(empty := volume.get("emptyDir"), dict) and empty.get("sizeLimit") is not None:
        empty["sizeLimit"] = canonical_resource(empty["sizeLimit"], round_to_milli=False)
    if isinstance(host := volume.get("hostPath"), dict):
        _set(host, "type", "")
    for source in ("secret", "configMap", "downwardAPI", "projected"):
        if isinstance(volume.get(source), dict):
            _set(volume[source], "defaultMode", _DEFAULT_MODE)
    for item in (volume.get("downwardAPI") or {}).get("items") or []:
        _field_ref(item)
    for projection in (volume.get("projected") or {}).get("sources") or []:
        if not isinstance(projection, dict):
            continue
        for item in (projection.get("downwardAPI") or {}).get("items") or []:
            _field_ref(item)
        if isinstance(token := projection.get("serviceAccountToken"), dict):
            _set(token, "expirationSeconds", 3600)
    _legacy_sources(volume)
    claim = (volume.get("ephemeral") or {}).get("volumeClaimTemplate")
    if isinstance(claim, dict) and isinstance(claim.get("spec"), dict):
        _set(claim["spec"], "volumeMode", "Filesystem")
        _resource_list(claim["spec"].get("resources"), "limits")
        _resource_list(claim["spec"].get("resources"), "requests")


def _service_account(spec: dict[str, Any]) -> None:
    """The v1 conversion's service account: the deprecated `serviceAccount` names it when `serviceAccountName`
    does not, and is written back as `serviceAccountName` (`Convert_core_PodSpec_To_v1_PodSpec`)."""
    name = spec.get("serviceAccountName") or spec.get("serviceAccount")
    if name:
        spec["serviceAccountName"] = spec["serviceAccount"] = name
    else:
        spec.pop("serviceAccount", None)


def default_spec(spec: dict[str, Any]) -> None:
    """SetDefaults_PodSpec and the defaults of the spec's volumes and containers (see the module doc)."""
    _service_account(spec)
    _set_if_empty(spec, "dnsPolicy", "ClusterFirst")
    _set_if_empty(spec, "restartPolicy", "Always")
    _set(spec, "securityContext", {})
    _set(spec, "terminationGracePeriodSeconds", 30)
    _set_if_empty(spec, "schedulerName", "default-scheduler")
    for volume in spec.get("volumes") or []:
        if isinstance(volume, dict):
            _volume(volume)
    for key in _CONTAINER_LISTS:
        for container in spec.get(key) or []:
            if isinstance(container, dict):
                _container(container)
    _resource_list(spec, "overhead")


def default_pod_only(spec: dict[str, Any]) -> None:
    """SetDefaults_Pod on a Pod's spec: requests from limits, `enableServiceLinks`, host network ports."""
    for key in ("containers", "initContainers"):
        for container in spec.get(key) or []:
            resources = container.get("resources") if isinstance(container, dict) else None
            if isinstance(resources, dict) and isinstance(resources.get("limits"), dict):
                requests = resources.get("requests")
                requests = dict(requests) if isinstance(requests, dict) else {}
                for name, limit in resources["limits"].items():
                    requests.setdefault(name, limit)
                resources["requests"] = requests
    _set(spec, "enableServiceLinks", True)
    if spec.get("hostNetwork"):
        for key in ("containers", "initContainers"):
            for container in spec.get(key) or []:
                for port in (container.get("ports") or []) if isinstance(container, dict) else []:
                    if isinstance(port, dict) and not port.get("hostPort") and port.get("containerPort"):
                        port["hostPort"] = port["containerPort"]
