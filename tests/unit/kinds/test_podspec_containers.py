"""The pod spec's container rules (Kubernetes' `validateContainers`, `validateInitContainers`,
`validateContainerCommon`, `validateContainerPorts`, `ValidateEnv`, `ValidateEnvFrom`, `ValidateVolumeMounts`,
`ValidateContainerResourceRequirements`, probes and handlers), on `validate_pod_spec` directly.

Messages and field paths are kube-apiserver v1.28's word for word.
"""

from __future__ import annotations

from typing import Any

import pytest

from runtime.server.kinds.pods.podspec import default_pod_spec, validate_pod_spec

QUANTITY_MSG = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"


def spec_with(*containers: dict[str, Any], **fields: Any) -> dict[str, Any]:
    spec = {"containers": list(containers) or [{"name": "c", "image": "nginx:1.25"}], **fields}
    default_pod_spec(spec)
    return spec


def errors(*containers: dict[str, Any], path: str = "spec", **fields: Any) -> list[str]:
    return [str(e) for e in validate_pod_spec(spec_with(*containers, **fields), path)]


def c(name: str = "c", **fields: Any) -> dict[str, Any]:
    return {"name": name, "image": "nginx:1.25", **fields}


def test_valid_spec_has_no_errors():
    assert errors(c(ports=[{"containerPort": 80, "name": "http"}],
                    env=[{"name": "A", "value": "1"}],
                    resources={"limits": {"cpu": "1"}, "requests": {"cpu": "500m"}},
                    livenessProbe={"httpGet": {"port": "http"}}), volumes=[{"name": "v"}]) == []


def test_containers_are_required():
    assert errors(c(), containers=[]) == ["spec.containers: Required value"]


def test_container_name_is_required():
    assert errors(c(name="")) == ["spec.containers[0].name: Required value"]


def test_container_name_is_a_dns_label():
    assert errors(c(name="Web_1")) == [
        'spec.containers[0].name: Invalid value: "Web_1": a lowercase RFC 1123 label must consist of lower case '
        "alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  "
        "or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"]


def test_container_names_are_unique():
    assert errors(c("a"), c("a")) == ['spec.containers[1].name: Duplicate value: "a"']


def test_init_container_names_are_unique_across_containers():
    assert errors(c("a"), initContainers=[c("a")]) == ['spec.initContainers[0].name: Duplicate value: "a"']


def test_container_image_is_required():
    assert errors(c(image="")) == ["spec.containers[0].image: Required value"]


def test_paths_are_under_the_given_path():
    assert [str(e) for e in validate_pod_spec(spec_with(c(image="")), "spec.template.spec")] == [
        "spec.template.spec.containers[0].image: Required value"]


def test_image_pull_policy_is_supported():
    assert errors(c(imagePullPolicy="Sometimes")) == [
        'spec.containers[0].imagePullPolicy: Unsupported value: "Sometimes": supported values: "Always", '
        '"IfNotPresent", "Never"']


def test_termination_message_policy_is_supported():
    assert errors(c(terminationMessagePolicy="Log")) == [
        'spec.containers[0].terminationMessagePolicy: Unsupported value: "Log": supported values: "File", '
        '"FallbackToLogsOnError"']


def test_container_port_is_required():
    assert errors(c(ports=[{"name": "http"}])) == ["spec.containers[0].ports[0].containerPort: Required value"]


@pytest.mark.parametrize("key", ["containerPort", "hostPort"])
def test_ports_are_in_range(key):
    port = {"containerPort": 80, key: 70000}
    assert errors(c(ports=[port])) == [
        f"spec.containers[0].ports[0].{key}: Invalid value: 70000: must be between 1 and 65535, inclusive"]


def test_port_protocol_is_supported():
    assert errors(c(ports=[{"containerPort": 80, "protocol": "HTTP"}])) == [
        'spec.containers[0].ports[0].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"']


@pytest.mark.parametrize("name, message", [
    ("http-endpoint-long", "must be no more than 15 characters"),
    ("a_b", "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)"),
    ("8080", "must contain at least one letter (a-z)"),
    ("a--b", "must not contain consecutive hyphens"),
    ("-ab", "must not begin or end with a hyphen"),
])
def test_port_names_are_iana_service_names(name, message):
    assert errors(c(ports=[{"containerPort": 80, "name": name}])) == [
        f'spec.containers[0].ports[0].name: Invalid value: "{name}": {message}']


def test_port_names_are_unique_in_a_container():
    ports = [{"containerPort": 80, "name": "web"}, {"containerPort": 81, "name": "web"}]
    assert errors(c(ports=ports)) == ['spec.containers[0].ports[1].name: Duplicate value: "web"']


def test_host_ports_are_unique_across_containers():
    port = [{"containerPort": 80, "hostPort": 8080}]
    assert errors(c("a", ports=port), c("b", ports=port)) == [
        'spec.containers[1].ports[0].hostPort: Duplicate value: "TCP//8080"']


def test_host_network_template_port_must_match_container_port():
    assert errors(c(ports=[{"containerPort": 80, "hostPort": 81}]), hostNetwork=True) == [
        "spec.containers[0].ports[0].hostPort: Invalid value: 81: must match `containerPort` when `hostNetwork` is "
        "true"]
    assert errors(c(ports=[{"containerPort": 80}]), hostNetwork=True) == []


def test_host_network_pod_port_must_be_set_to_container_port():
    spec = spec_with(c(ports=[{"containerPort": 80}]), hostNetwork=True)
    assert [str(e) for e in validate_pod_spec(spec, "spec", is_pod=True)] == [
        "spec.containers[0].ports[0].hostPort: Invalid value: 0: must match `containerPort` when `hostNetwork` is "
        "true"]


def test_env_name_is_required():
    assert errors(c(env=[{"value": "1"}])) == ["spec.containers[0].env[0].name: Required value"]


def test_env_name_is_an_environment_variable_name():
    assert errors(c(env=[{"name": "1A"}])) == [
        'spec.containers[0].env[0].name: Invalid value: "1A": a valid environment variable name must consist of '
        "alphabetic characters, digits, '_', '-', or '.', and must not start with a digit (e.g. 'my.env-name',  "
        "or 'MY_ENV.NAME',  or 'MyEnvName1', regex used for validation is '[-._a-zA-Z][-._a-zA-Z0-9]*')"]


def test_env_value_from_needs_one_source():
    assert errors(c(env=[{"name": "A", "valueFrom": {}}])) == [
        'spec.containers[0].env[0].valueFrom: Invalid value: "": must specify one of: `fieldRef`, '
        "`resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`"]


def test_env_value_from_has_at_most_one_source():
    source = {"configMapKeyRef": {"name": "c", "key": "k"}, "secretKeyRef": {"name": "s", "key": "k"}}
    assert errors(c(env=[{"name": "A", "valueFrom": source}])) == [
        'spec.containers[0].env[0].valueFrom: Invalid value: "": may not have more than one field specified at a '
        "time"]


def test_env_value_from_not_beside_a_value():
    source = {"secretKeyRef": {"name": "s", "key": "k"}}
    assert errors(c(env=[{"name": "A", "value": "x", "valueFrom": source}])) == [
        'spec.containers[0].env[0].valueFrom: Invalid value: "": may not be specified when `value` is not empty']


def test_env_key_ref_key_is_required():
    assert errors(c(env=[{"name": "A", "valueFrom": {"secretKeyRef": {"name": "s"}}}])) == [
        "spec.containers[0].env[0].valueFrom.secretKeyRef.key: Required value"]


def test_env_field_ref_path_is_supported():
    source = {"fieldRef": {"fieldPath": "spec.schedulerName"}}
    assert errors(c(env=[{"name": "A", "valueFrom": source}])) == [
        'spec.containers[0].env[0].valueFrom.fieldRef.fieldPath: Unsupported value: "spec.schedulerName": supported '
        'values: "metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", "spec.serviceAccountName", '
        '"status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs"']


def test_env_field_ref_label_subscript_is_a_qualified_name():
    assert errors(c(env=[{"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['app']"}}}])) == []


def test_env_resource_field_ref_resource_is_supported():
    source = {"resourceFieldRef": {"resource": "limits.gpu"}}
    assert errors(c(env=[{"name": "A", "valueFrom": source}])) == [
        'spec.containers[0].env[0].valueFrom.resourceFieldRef.resource: Unsupported value: "limits.gpu": supported '
        'values: "limits.cpu", "limits.ephemeral-storage", "limits.memory", "requests.cpu", '
        '"requests.ephemeral-storage", "requests.memory"']


def test_env_from_needs_one_source():
    assert errors(c(envFrom=[{"prefix": "P_"}])) == [
        'spec.containers[0].envFrom: Invalid value: "": must specify one of: `configMapRef` or `secretRef`']


def test_env_from_source_name_is_required():
    assert errors(c(envFrom=[{"configMapRef": {}}])) == ["spec.containers[0].envFrom[0].configMapRef.name: "
                                                          "Required value"]


def test_volume_mount_names_a_volume():
    assert errors(c(volumeMounts=[{"name": "data", "mountPath": "/d"}])) == [
        'spec.containers[0].volumeMounts[0].name: Not found: "data"']


def test_volume_mount_path_is_required():
    assert errors(c(volumeMounts=[{"name": "v"}]), volumes=[{"name": "v"}]) == [
        "spec.containers[0].volumeMounts[0].mountPath: Required value"]


def test_volume_mount_paths_are_unique():
    mounts = [{"name": "v", "mountPath": "/d"}, {"name": "v", "mountPath": "/d"}]
    assert errors(c(volumeMounts=mounts), volumes=[{"name": "v"}]) == [
        'spec.containers[0].volumeMounts[1].mountPath: Invalid value: "/d": must be unique']


def test_volume_mount_sub_path_is_relative_without_backsteps():
    mounts = [{"name": "v", "mountPath": "/d", "subPath": "../x"}]
    assert errors(c(volumeMounts=mounts), volumes=[{"name": "v"}]) == [
        "spec.containers[0].volumeMounts.subPath: Invalid value: \"../x\": must not contain '..'"]


def test_bidirectional_mount_propagation_needs_privileged():
    mounts = [{"name": "v", "mountPath": "/d", "mountPropagation": "Bidirectional"}]
    assert errors(c(volumeMounts=mounts), volumes=[{"name": "v"}]) == [
        "spec.containers[0].volumeMounts.mountPropagation: Forbidden: Bidirectional mount propagation is available "
        "only to privileged containers"]


def test_volume_devices_need_a_claim_volume():
    devices = [{"name": "v", "devicePath": "/dev/x"}]
    assert errors(c(volumeDevices=devices), volumes=[{"name": "v"}]) == [
        'spec.containers[0].volumeDevices[0].name: Invalid value: "v": can only use volume source type of '
        "PersistentVolumeClaim or Ephemeral for block mode"]


def test_resource_quantity_is_a_quantity():
    assert errors(c(resources={"limits": {"cpu": "lots"}})) == [
        f'spec.containers[0].resources.limits[cpu]: Invalid value: "lots": {QUANTITY_MSG}']


def test_resource_quantity_is_not_negative():
    assert errors(c(resources={"requests": {"memory": "-1Gi"}})) == [
        'spec.containers[0].resources.requests[memory]: Invalid value: "-1Gi": must be greater than or equal to 0']


def test_requests_are_at_most_limits():
    assert errors(c(resources={"limits": {"cpu": "1"}, "requests": {"cpu": "2"}})) == [
        'spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1']


def test_resource_names_are_standard_or_qualified():
    assert errors(c(resources={"limits": {"gpu": "1"}})) == [
        'spec.containers[0].resources.limits[gpu]: Invalid value: "gpu": must be a standard resource type or fully '
        "qualified",
        'spec.containers[0].resources.limits[gpu]: Invalid value: "gpu": must be a standard resource for '
        "containers"]


def test_resource_names_for_containers_are_container_resources():
    assert errors(c(resources={"limits": {"pods": "1"}})) == [
        'spec.containers[0].resources.limits[pods]: Invalid value: "pods": must be a standard resource for '
        "containers"]


def test_extended_resources_need_equal_limits():
    assert errors(c(resources={"requests": {"example.com/gpu": "1"}})) == [
        "spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources"]
    assert errors(c(resources={"limits": {"example.com/gpu": "2"}, "requests": {"example.com/gpu": "1"}})) == [
        'spec.containers[0].resources.requests: Invalid value: "1": must be equal to example.com/gpu limit of 2']


def test_hugepages_need_cpu_or_memory():
    assert errors(c(resources={"limits": {"hugepages-2Mi": "4Mi"}, "requests": {"hugepages-2Mi": "4Mi"}})) == [
        "spec.containers[0].resources: Forbidden: HugePages require cpu or memory"]


def test_probe_needs_a_handler():
    assert errors(c(livenessProbe={"periodSeconds": 5})) == [
        "spec.containers[0].livenessProbe: Required value: must specify a handler type"]


def test_probe_has_one_handler():
    probe = {"exec": {"command": ["true"]}, "tcpSocket": {"port": 80}}
    assert errors(c(readinessProbe=probe)) == [
        "spec.containers[0].readinessProbe.tcpSocket: Forbidden: may not specify more than 1 handler type"]


def test_probe_timings_are_not_negative():
    assert errors(c(readinessProbe={"exec": {"command": ["true"]}, "initialDelaySeconds": -1})) == [
        "spec.containers[0].readinessProbe.initialDelaySeconds: Invalid value: -1: must be greater than or equal "
        "to 0"]


def test_liveness_and_startup_success_threshold_is_one():
    probe = {"exec": {"command": ["true"]}, "successThreshold": 2}
    assert errors(c(livenessProbe=probe, startupProbe=dict(probe))) == [
        "spec.containers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1",
        "spec.containers[0].startupProbe.successThreshold: Invalid value: 2: must be 1"]


def test_readiness_probe_has_no_termination_grace_period():
    assert errors(c(readinessProbe={"exec": {"command": ["true"]}, "terminationGracePeriodSeconds": 5})) == [
        "spec.containers[0].readinessProbe.terminationGracePeriodSeconds: Invalid value: 5: must not be set for "
        "readinessProbes"]


def test_http_get_port_and_exec_command():
    assert errors(c(livenessProbe={"httpGet": {"port": 0}}, lifecycle={"preStop": {"exec": {}}})) == [
        "spec.containers[0].lifecycle.preStop.exec.command: Required value",
        "spec.containers[0].livenessProbe.httpGet.port: Invalid value: 0: must be between 1 and 65535, inclusive"]


def test_http_get_scheme_is_supported():
    assert errors(c(livenessProbe={"httpGet": {"port": 80, "scheme": "FTP"}})) == [
        'spec.containers[0].livenessProbe.httpGet.scheme: Unsupported value: "FTP": supported values: "HTTP", '
        '"HTTPS"']


def test_container_restart_policy_is_forbidden():
    assert errors(c(restartPolicy="Always")) == [
        "spec.containers[0].restartPolicy: Forbidden: may not be set for non-init containers"]


def test_init_container_restart_policy_is_always_only():
    assert errors(c(), initContainers=[c("i", restartPolicy="Never")]) == [
        'spec.initContainers[0].restartPolicy: Unsupported value: "Never": supported values: "Always"']


def test_init_container_without_restart_always_has_no_probes():
    assert errors(c(), initContainers=[c("i", readinessProbe={"exec": {"command": ["true"]}})]) == [
        "spec.initContainers[0].readinessProbe: Forbidden: may not be set for init containers without "
        "restartPolicy=Always"]
    assert errors(c(), initContainers=[c("i", restartPolicy="Always",
                                         readinessProbe={"exec": {"command": ["true"]}})]) == []


def test_container_security_context_ids_in_range():
    assert errors(c(securityContext={"runAsUser": -1})) == [
        "spec.containers[0].securityContext.runAsUser: Invalid value: -1: must be between 0 and 2147483647, "
        "inclusive"]


@pytest.mark.parametrize("ref, message", [
    ({"apiVersion": "v2", "fieldPath": "metadata.name"}, "error converting fieldPath: unsupported pod version: v2"),
    ({"fieldPath": "spec.nodeName['x']"}, "error converting fieldPath: field label does not support subscript: "
                                          "spec.nodeName['x']"),
    ({"fieldPath": "spec.containers"}, "error converting fieldPath: field label not supported: spec.containers"),
])
def test_env_field_ref_path_converts_as_a_v1_pod_field_label(ref, message):
    field_path = ref["fieldPath"]
    assert errors(c(env=[{"name": "A", "valueFrom": {"fieldRef": ref}}])) == [
        f'spec.containers[0].env[0].valueFrom.fieldRef.fieldPath: Invalid value: "{field_path}": {message}']


def test_env_field_ref_spec_host_is_the_node_name():
    assert errors(c(env=[{"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "spec.host"}}}])) == []


def test_env_field_ref_annotation_subscript_key_is_qualified():
    ref = {"fieldPath": "metadata.annotations['a b']"}
    assert errors(c(env=[{"name": "A", "valueFrom": {"fieldRef": ref}}]))[0].startswith(
        'spec.containers[0].env[0].valueFrom.fieldRef: Invalid value: "a b": name part must consist of')


def test_ephemeral_container_names_are_unique_among_all_containers():
    assert errors(c("a"), ephemeralContainers=[c("a")]) == ['spec.ephemeralContainers[0].name: Duplicate value: "a"']


def test_ephemeral_container_target_is_a_container():
    assert errors(c("a"), ephemeralContainers=[c("debug", targetContainerName="b")]) == [
        'spec.ephemeralContainers[0].targetContainerName: Not found: "b"']


def test_ephemeral_container_may_not_set_ports_probes_or_resources():
    debug = c("debug", ports=[{"containerPort": 80}], resources={"limits": {"cpu": "1"}},
              readinessProbe={"exec": {"command": ["true"]}})
    assert errors(c("a"), ephemeralContainers=[debug]) == [
        "spec.ephemeralContainers[0].ports: Forbidden: cannot be set for an Ephemeral Container",
        "spec.ephemeralContainers[0].resources: Forbidden: cannot be set for an Ephemeral Container",
        "spec.ephemeralContainers[0].readinessProbe: Forbidden: cannot be set for an Ephemeral Container"]


def test_ephemeral_container_mounts_have_no_sub_path():
    debug = c("debug", volumeMounts=[{"name": "v", "mountPath": "/v", "subPath": "x"}])
    assert errors(c("a"), ephemeralContainers=[debug], volumes=[{"name": "v"}]) == [
        "spec.ephemeralContainers[0].volumeMounts[0].subPath: Forbidden: cannot be set for an Ephemeral Container"]


def test_ephemeral_container_image_has_no_surrounding_whitespace():
    assert errors(c("a"), ephemeralContainers=[c("debug", image=" busybox")]) == [
        'spec.ephemeralContainers[0].image: Invalid value: " busybox": must not have leading or trailing whitespace']


def test_no_privilege_escalation_is_not_privileged():
    assert errors(c(securityContext={"privileged": True, "allowPrivilegeEscalation": False})) == [
        "spec.containers[0].securityContext: Invalid value: core.SecurityContext{Privileged:true, "
        "AllowPrivilegeEscalation:false}: cannot set `allowPrivilegeEscalation` to false and `privileged` to true"]
