"""The pod spec's defaults (Kubernetes' `SetDefaults_PodSpec`, `SetDefaults_Pod`, `SetDefaults_Container`,
`SetDefaults_Probe`, `SetDefaults_HTTPGetAction`, the volume sources' and resource lists' defaults), on
`runtime.server.kinds.pods.podspec` directly; and the property: defaulted twice equals defaulted once.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from runtime.server.kinds.pods.podspec import default_pod, default_pod_spec, default_pod_template
from runtime.server.kinds.pods.podspec_defaults import canonical_resource, image_pull_policy


def defaulted(spec: dict[str, Any]) -> dict[str, Any]:
    default_pod_spec(spec)
    return spec


def container(**fields: Any) -> dict[str, Any]:
    return {"name": "c", "image": "nginx:1.25", **fields}


def test_pod_spec_defaults_dns_restart_grace_security_context_scheduler():
    spec = defaulted({"containers": [container()]})
    assert (spec["dnsPolicy"], spec["restartPolicy"], spec["terminationGracePeriodSeconds"],
            spec["securityContext"], spec["schedulerName"]) == ("ClusterFirst", "Always", 30, {}, "default-scheduler")


def test_pod_spec_defaults_keep_given_values():
    spec = defaulted({"containers": [container()], "restartPolicy": "Never", "terminationGracePeriodSeconds": 0,
                      "dnsPolicy": "Default", "securityContext": {"runAsUser": 1}})
    assert (spec["restartPolicy"], spec["terminationGracePeriodSeconds"], spec["dnsPolicy"],
            spec["securityContext"]) == ("Never", 0, "Default", {"runAsUser": 1})


def test_template_spec_gets_no_service_links_nor_requests_from_limits():
    template = {"spec": {"containers": [container(resources={"limits": {"cpu": "1"}})]}}
    default_pod_template(template)
    assert "enableServiceLinks" not in template["spec"]
    assert "requests" not in template["spec"]["containers"][0]["resources"]


def test_pod_defaults_requests_from_limits_where_unset():
    pod = {"spec": {"containers": [container(resources={"limits": {"cpu": "1", "memory": "1Gi"},
                                                        "requests": {"cpu": "500m"}})],
                    "initContainers": [container(name="i", resources={"limits": {"memory": "64Mi"}})]}}
    default_pod(pod)
    assert pod["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "500m", "memory": "1Gi"}
    assert pod["spec"]["initContainers"][0]["resources"]["requests"] == {"memory": "64Mi"}


def test_pod_defaults_enable_service_links_true():
    pod = {"spec": {"containers": [container()]}}
    default_pod(pod)
    assert pod["spec"]["enableServiceLinks"] is True
    assert pod["spec"]["dnsPolicy"] == "ClusterFirst"  # and the spec's defaults


def test_pod_on_host_network_defaults_host_ports_to_container_ports():
    pod = {"spec": {"hostNetwork": True, "containers": [container(ports=[{"containerPort": 8080}])]}}
    default_pod(pod)
    assert pod["spec"]["containers"][0]["ports"] == [{"containerPort": 8080, "hostPort": 8080, "protocol": "TCP"}]


@pytest.mark.parametrize("image, policy", [
    ("nginx", "Always"), ("nginx:latest", "Always"), ("localhost:5000/team/app", "Always"),
    ("nginx:1.25", "IfNotPresent"), ("registry.example.com:5000/app:v1", "IfNotPresent"),
    ("nginx@sha256:" + "a" * 64, "IfNotPresent"), ("nginx:latest@sha256:" + "a" * 64, "Always"),
    ("", "IfNotPresent"), ("NGINX", "IfNotPresent"),
])
def test_image_pull_policy_defaults_by_the_image_tag(image, policy):
    assert image_pull_policy(image) == policy
    spec = defaulted({"containers": [container(image=image)]})
    assert spec["containers"][0]["imagePullPolicy"] == policy


def test_container_defaults_termination_message_path_and_policy():
    first = defaulted({"containers": [container()]})["containers"][0]
    assert (first["terminationMessagePath"], first["terminationMessagePolicy"]) == ("/dev/termination-log", "File")


def test_init_and_ephemeral_containers_get_container_defaults():
    spec = defaulted({"containers": [container()], "initContainers": [container(name="i", image="busybox")],
                      "ephemeralContainers": [container(name="e")]})
    assert spec["initContainers"][0]["imagePullPolicy"] == "Always"
    assert spec["ephemeralContainers"][0]["terminationMessagePolicy"] == "File"


def test_container_port_protocol_defaults_to_tcp():
    first = defaulted({"containers": [container(ports=[{"containerPort": 80}, {"containerPort": 53,
                                                                             "protocol": "UDP"}])]})["containers"][0]
    assert [p["protocol"] for p in first["ports"]] == ["TCP", "UDP"]


def test_env_field_ref_api_version_defaults_to_v1():
    env = [{"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}]
    first = defaulted({"containers": [container(env=env)]})["containers"][0]
    assert first["env"][0]["valueFrom"]["fieldRef"] == {"fieldPath": "metadata.name", "apiVersion": "v1"}


def test_probe_defaults_timeout_period_thresholds_and_http_get():
    probe = {"httpGet": {"port": 80}}
    first = defaulted({"containers": [container(livenessProbe=probe, readinessProbe={"grpc": {"port": 9}})]})
    liveness = first["containers"][0]["livenessProbe"]
    assert liveness == {"httpGet": {"port": 80, "path": "/", "scheme": "HTTP"}, "timeoutSeconds": 1,
                        "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3}
    assert first["containers"][0]["readinessProbe"]["grpc"] == {"port": 9, "service": ""}


def test_lifecycle_http_get_gets_path_and_scheme():
    lifecycle = {"preStop": {"httpGet": {"port": 80}}}
    first = defaulted({"containers": [container(lifecycle=lifecycle)]})["containers"][0]
    assert first["lifecycle"]["preStop"]["httpGet"] == {"port": 80, "path": "/", "scheme": "HTTP"}


def test_resource_lists_are_rounded_to_milli_and_canonical():
    resources = {"limits": {"cpu": "1000m", "memory": 1073741824, "ephemeral-storage": "2048Ki"},
                 "requests": {"cpu": "0.0001", "memory": 0.5}}
    first = defaulted({"containers": [container(resources=resources)]})["containers"][0]
    assert first["resources"] == {"limits": {"cpu": "1", "memory": "1073741824", "ephemeral-storage": "2Mi"},
                                  "requests": {"cpu": "1m", "memory": "500m"}}


def test_malformed_quantity_is_left_for_validation():
    assert canonical_resource("12 apples") == "12 apples"


def test_volume_without_source_is_an_empty_dir():
    spec = defaulted({"containers": [container()], "volumes": [{"name": "scratch"}]})
    assert spec["volumes"] == [{"name": "scratch", "emptyDir": {}}]


def test_volume_sources_default_modes_and_host_path_type():
    volumes = [{"name": "s", "secret": {"secretName": "s"}}, {"name": "c", "configMap": {"name": "c"}},
               {"name": "d", "downwardAPI": {"items": [{"path": "n", "fieldRef": {"fieldPath": "metadata.name"}}]}},
               {"name": "p", "projected": {"sources": [{"serviceAccountToken": {"path": "t"}}]}},
               {"name": "h", "hostPath": {"path": "/data"}}]
    spec = defaulted({"containers": [container()], "volumes": volumes})
    by_name = {v["name"]: v for v in spec["volumes"]}
    assert by_name["s"]["secret"]["defaultMode"] == by_name["c"]["configMap"]["defaultMode"] == 420
    assert by_name["d"]["downwardAPI"] == {"defaultMode": 420, "items": [
        {"path": "n", "fieldRef": {"fieldPath": "metadata.name", "apiVersion": "v1"}}]}
    assert by_name["p"]["projected"] == {"defaultMode": 420, "sources": [
        {"serviceAccountToken": {"path": "t", "expirationSeconds": 3600}}]}
    assert by_name["h"]["hostPath"] == {"path": "/data", "type": ""}


def test_ephemeral_volume_claim_defaults_to_filesystem_mode():
    claim = {"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1024Mi"}}}}
    spec = defaulted({"containers": [container()], "volumes": [{"name": "e", "ephemeral": {
        "volumeClaimTemplate": claim}}]})
    assert claim["spec"]["volumeMode"] == "Filesystem"
    assert spec["volumes"][0]["ephemeral"]["volumeClaimTemplate"]["spec"]["resources"]["requests"] == {
        "storage": "1Gi"}


def test_legacy_volume_sources_declarative_defaults():
    volumes = [{"name": "r", "rbd": {"monitors": ["m"], "image": "i"}},
               {"name": "a", "azureDisk": {"diskName": "d", "diskURI": "https://x"}}]
    spec = defaulted({"containers": [container()], "volumes": volumes})
    assert spec["volumes"][0]["rbd"] == {"monitors": ["m"], "image": "i", "pool": "rbd", "user": "admin",
                                             "keyring": "/etc/ceph/keyring"}
    assert spec["volumes"][1]["azureDisk"]["cachingMode"] == "ReadWrite"


_NAMES = st.from_regex(r"[a-z]([a-z0-9-]{0,6}[a-z0-9])?", fullmatch=True)
_QUANTITIES = st.one_of(st.sampled_from(["100m", "0.5", "1Gi", "2048Ki", "1e3", "0.0001", "12 apples"]),
                        st.integers(0, 10**6), st.floats(0, 10, allow_nan=False, allow_infinity=False))
_PROBES = st.one_of(st.none(), st.fixed_dictionaries({}, optional={
    "httpGet": st.fixed_dictionaries({"port": st.integers(1, 65535)}, optional={"path": st.just("/healthz")}),
    "timeoutSeconds": st.integers(0, 5), "periodSeconds": st.integers(0, 5)}),
    st.fixed_dictionaries({"grpc": st.fixed_dictionaries({"port": st.integers(1, 65535)})}))
_VOLUMES = st.lists(st.one_of(
    st.fixed_dictionaries({"name": _NAMES}),
    st.fixed_dictionaries({"name": _NAMES, "secret": st.fixed_dictionaries({"secretName": _NAMES})}),
    st.fixed_dictionaries({"name": _NAMES, "configMap": st.fixed_dictionaries({}, optional={
        "defaultMode": st.integers(0, 0o777)})}),
    st.fixed_dictionaries({"name": _NAMES, "hostPath": st.fixed_dictionaries({"path": st.just("/x")})}),
    st.fixed_dictionaries({"name": _NAMES, "emptyDir": st.fixed_dictionaries({}, optional={
        "sizeLimit": _QUANTITIES})}),
    st.fixed_dictionaries({"name": _NAMES, "projected": st.fixed_dictionaries({"sources": st.lists(
        st.fixed_dictionaries({"serviceAccountToken": st.fixed_dictionaries({"path": st.just("t")})}),
        max_size=2)})}),
), max_size=4)


@st.composite
def _containers(draw: st.DrawFn) -> dict[str, Any]:
    out: dict[str, Any] = {"name": draw(_NAMES), "image": draw(st.sampled_from(
        ["nginx", "nginx:1.25", "x@sha256:" + "b" * 64, ""]))}
    if draw(st.booleans()):
        out["ports"] = draw(st.lists(st.fixed_dictionaries({"containerPort": st.integers(1, 65535)}, optional={
            "protocol": st.sampled_from(["TCP", "UDP"]), "hostPort": st.integers(0, 100)}), max_size=3))
    if draw(st.booleans()):
        out["resources"] = draw(st.fixed_dictionaries({}, optional={
            "limits": st.dictionaries(st.sampled_from(["cpu", "memory"]), _QUANTITIES, max_size=2),
            "requests": st.dictionaries(st.sampled_from(["cpu", "memory"]), _QUANTITIES, max_size=2)}))
    if (probe := draw(_PROBES)) is not None:
        out["livenessProbe"] = probe
    if draw(st.booleans()):
        out["env"] = [{"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}]
    return out


@st.composite
def _specs(draw: st.DrawFn) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": draw(st.lists(_containers(), min_size=1, max_size=3)),
                            "volumes": draw(_VOLUMES)}
    if draw(st.booleans()):
        spec["initContainers"] = draw(st.lists(_containers(), max_size=2))
    if draw(st.booleans()):
        spec["hostNetwork"] = True
    for key in ("serviceAccount", "serviceAccountName"):
        if draw(st.booleans()):
            spec[key] = draw(st.sampled_from(["", "robot", "other"]))
    return spec


@settings(max_examples=100, deadline=None)
@given(_specs(), st.booleans())
def test_defaulting_twice_equals_defaulting_once(spec, as_pod):
    def run(obj: dict[str, Any]) -> None:
        default_pod({"spec": obj}) if as_pod else default_pod_spec(obj)

    run(spec)
    once = copy.deepcopy(spec)
    run(spec)
    assert spec == once


def test_service_account_and_its_deprecated_name_read_back_alike():
    assert defaulted({"containers": [container()], "serviceAccountName": "robot"})["serviceAccount"] == "robot"
    legacy = defaulted({"containers": [container()], "serviceAccount": "old"})
    assert (legacy["serviceAccountName"], legacy["serviceAccount"]) == ("old", "old")
    both = defaulted({"containers": [container()], "serviceAccount": "old", "serviceAccountName": "new"})
    assert (both["serviceAccountName"], both["serviceAccount"]) == ("new", "new")
