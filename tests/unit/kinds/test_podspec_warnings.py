"""The warnings a pod spec earns (Kubernetes' `pkg/api/pod/warnings.go`), on `pod_spec_warnings` and
`pod_template_warnings`: the messages and field paths kube-apiserver v1.28 sends as `Warning:` headers.
"""

from __future__ import annotations

from typing import Any

from runtime.server.kinds.pods.podspec import default_pod_spec, pod_spec_warnings, pod_template_warnings


def warnings(meta: dict[str, Any] | None = None, **fields: Any) -> list[str]:
    spec = {"containers": [{"name": "c", "image": "nginx:1.25"}], **fields}
    default_pod_spec(spec)
    return pod_spec_warnings(spec, meta, "")


def c(name: str = "c", **fields: Any) -> dict[str, Any]:
    return {"name": name, "image": "nginx:1.25", **fields}


def test_a_plain_spec_earns_no_warning():
    assert warnings() == []


def test_deprecated_node_label_in_node_selector():
    assert warnings(nodeSelector={"beta.kubernetes.io/os": "linux"}) == [
        'spec.nodeSelector[beta.kubernetes.io/os]: deprecated since v1.14; use "kubernetes.io/os" instead']


def test_deprecated_node_label_in_topology_spread():
    constraint = {"maxSkew": 1, "topologyKey": "failure-domain.beta.kubernetes.io/zone",
                  "whenUnsatisfiable": "DoNotSchedule"}
    assert warnings(topologySpreadConstraints=[constraint]) == [
        "spec.topologySpreadConstraints[0].topologyKey: deprecated since v1.17; use \"topology.kubernetes.io/zone\" "
        "instead"]


def test_deprecated_annotation():
    assert warnings({"annotations": {"scheduler.alpha.kubernetes.io/critical-pod": ""}}) == [
        'metadata.annotations[scheduler.alpha.kubernetes.io/critical-pod]: non-functional in v1.16+; use the '
        '"priorityClassName" field instead']


def test_seccomp_annotation_without_its_field():
    assert warnings({"annotations": {"seccomp.security.alpha.kubernetes.io/pod": "runtime/default"}}) == [
        'metadata.annotations[seccomp.security.alpha.kubernetes.io/pod]: non-functional in v1.27+; use the '
        '"seccompProfile" field instead']


def test_removed_volume_plugin():
    assert warnings(volumes=[{"name": "g", "gitRepo": {"repository": "r"}}]) == [
        "spec.volumes[0].gitRepo: deprecated in v1.11"]


def test_duplicate_host_alias_ip_and_image_pull_secret():
    assert warnings(hostAliases=[{"ip": "10.0.0.1"}, {"ip": "10.0.0.1"}],
                    imagePullSecrets=[{"name": "r"}, {"name": "r"}, {}]) == [
        'spec.hostAliases[1].ip: duplicate ip "10.0.0.1"',
        'spec.imagePullSecrets[1].name: duplicate name "r"',
        'spec.imagePullSecrets[2].name: invalid empty name ""']


def test_fractional_byte_value():
    assert warnings(containers=[c(resources={"limits": {"memory": "1.5"}})]) == [
        'spec.containers[0].resources.limits[memory]: fractional byte value "1500m" is invalid, must be an integer']


def test_env_var_hiding_an_earlier_one():
    env = [{"name": "A", "value": "1"}, {"name": "A", "value": "$(A)"}, {"name": "A", "value": "2"}]
    assert warnings(containers=[c(env=env)]) == ['spec.containers[0].env[2]: hides previous definition of "A"']


def test_duplicate_and_overlapping_ports():
    ports = [{"containerPort": 80}, {"containerPort": 80}, {"containerPort": 80, "hostPort": 8080}]
    assert warnings(containers=[c(ports=ports)]) == [
        "spec.containers[0].ports[1]: duplicate port definition with spec.containers[0].ports[0]",
        "spec.containers[0].ports[2]: overlapping port definition with spec.containers[0].ports[0]",
        "spec.containers[0].ports[2]: overlapping port definition with spec.containers[0].ports[1]"]


def test_host_ip_without_host_port():
    assert warnings(containers=[c(ports=[{"containerPort": 80, "hostIP": "10.0.0.1"}])]) == [
        "spec.containers[0].ports[0]: hostIP set without hostPort: {Name: HostPort:0 ContainerPort:80 Protocol:TCP "
        "HostIP:10.0.0.1}"]


def test_negative_termination_grace_period():
    assert warnings(terminationGracePeriodSeconds=-1) == [
        "spec.terminationGracePeriodSeconds: must be >= 0; negative values are invalid and will be treated as 1"]


def test_template_warnings_are_under_the_template_path():
    template = {"metadata": {"annotations": {"security.alpha.kubernetes.io/sysctls": "x"}},
                "spec": {"containers": [c(env=[{"name": "A"}, {"name": "A"}])]}}
    assert pod_template_warnings(template, "spec.template") == [
        'spec.template.metadata.annotations[security.alpha.kubernetes.io/sysctls]: non-functional in v1.11+; use '
        'the "sysctls" field instead',
        'spec.template.spec.containers[0].env[1]: hides previous definition of "A"']
