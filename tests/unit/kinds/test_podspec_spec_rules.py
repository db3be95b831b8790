"""The pod spec's own rules and its volumes' (Kubernetes' `ValidatePodSpec`, `ValidateVolumes`,
`validateVolumeSource` and the sources' validators, `ValidateTolerations`, `validateAffinity`,
`validatePodDNSConfig`, `validatePodSpecSecurityContext`, `ValidatePodTemplateSpec`), on the podspec functions.

Messages and field paths are kube-apiserver v1.28's word for word.
"""

from __future__ import annotations

from typing import Any

import pytest

from runtime.server.kinds.pods.podspec import default_pod_spec, validate_pod_spec, validate_pod_template_spec

DNS_LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
                 "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
                 "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                 "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
                 "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")


def errors(default: bool = True, **fields: Any) -> list[str]:
    spec = {"containers": [{"name": "c", "image": "nginx:1.25"}], **fields}
    if default:
        default_pod_spec(spec)
    return [str(e) for e in validate_pod_spec(spec, "spec")]


def volume_errors(*volumes: dict[str, Any]) -> list[str]:
    return errors(volumes=list(volumes))


# -- the spec's fields ------------------------------------------------------------------------------------------

def test_restart_policy_is_supported():
    assert errors(restartPolicy="Sometimes") == [
        'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"']


def test_restart_policy_dns_policy_and_grace_period_are_required_undefaulted():
    assert errors(default=False) == [
        "spec.terminationGracePeriodSeconds: Required value",
        "spec.containers[0].terminationMessagePolicy: Required value",
        "spec.containers[0].imagePullPolicy: Required value",
        "spec.restartPolicy: Required value",
        "spec.dnsPolicy: Required value"]


def test_dns_policy_is_supported():
    assert errors(dnsPolicy="Cluster") == [
        'spec.dnsPolicy: Unsupported value: "Cluster": supported values: "ClusterFirstWithHostNet", '
        '"ClusterFirst", "Default", "None"']


def test_active_deadline_seconds_is_positive():
    assert errors(activeDeadlineSeconds=0) == [
        "spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, inclusive"]


def test_node_selector_is_labels():
    assert errors(nodeSelector={"disk": "ssd!"}) == [
        'spec.nodeSelector: Invalid value: "ssd!": a valid label must be an empty string or consist of '
        "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
        "'MyValue',  or 'my_value',  or '12345', regex used for validation is "
        "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"]


def test_service_account_name_is_a_dns_subdomain():
    assert errors(serviceAccountName="Bad_SA") == [f'spec.serviceAccountName: Invalid value: "Bad_SA": '
                                                   f"{SUBDOMAIN_MSG}"]


@pytest.mark.parametrize("key", ["hostname", "subdomain"])
def test_hostname_and_subdomain_are_dns_labels(key):
    assert errors(**{key: "a.b"}) == [f'spec.{key}: Invalid value: "a.b": {DNS_LABEL_MSG}']


def test_priority_class_and_node_name_are_dns_subdomains():
    assert errors(nodeName="Node_1") == [f'spec.nodeName: Invalid value: "Node_1": {SUBDOMAIN_MSG}']


def test_preemption_policy_is_supported():
    assert errors(preemptionPolicy="Always") == [
        'spec.preemptionPolicy: Unsupported value: "Always": supported values: "PreemptLowerPriority", "Never"']


def test_os_name_is_supported():
    assert errors(os={"name": "plan9"}) == [
        'spec.os: Unsupported value: "plan9": supported values: "linux", "windows"']


def test_tolerations_empty_key_needs_exists():
    assert errors(tolerations=[{"operator": "Equal", "value": "x"}]) == [
        'spec.tolerations[0].operator: Invalid value: "Equal": operator must be Exists when `key` is empty, which '
        'means "match all values and all keys"']


def test_tolerations_exists_has_no_value():
    assert errors(tolerations=[{"key": "k", "operator": "Exists", "value": "v"}]) == [
        "spec.tolerations[0].operator: Invalid value: \"v\": value must be empty when `operator` is 'Exists'"]


def test_toleration_seconds_need_no_execute():
    assert errors(tolerations=[{"key": "k", "operator": "Exists", "effect": "NoSchedule",
                                "tolerationSeconds": 5}]) == [
        "spec.tolerations[0].effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' when "
        "`tolerationSeconds` is set"]


def test_toleration_operator_and_effect_are_supported():
    assert errors(tolerations=[{"key": "k", "operator": "In", "effect": "Evict"}]) == [
        'spec.tolerations[0].operator: Unsupported value: "In": supported values: "Equal", "Exists"',
        'spec.tolerations[0].effect: Unsupported value: "Evict": supported values: "NoSchedule", '
        '"PreferNoSchedule", "NoExecute"']


def test_node_affinity_needs_terms():
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}}}
    assert errors(affinity=affinity) == [
        "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms: Required "
        "value: must have at least one node selector term"]


def test_node_selector_requirement_operator_and_values():
    terms = [{"matchExpressions": [{"key": "zone", "operator": "In"}, {"key": "zone", "operator": "Near"}]}]
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}
    at = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
    assert errors(affinity=affinity) == [
        f"{at}.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
        f'{at}.matchExpressions[1].operator: Invalid value: "Near": not a valid selector operator']


def test_preferred_terms_weight_in_range():
    affinity = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 0, "podAffinityTerm": {"topologyKey": "zone"}}]}}
    assert errors(affinity=affinity) == [
        "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid value: "
        "0: must be in the range 1-100"]


def test_pod_affinity_term_needs_topology_key():
    affinity = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{"labelSelector": {}}]}}
    at = "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey"
    assert errors(affinity=affinity)[0] == f"{at}: Required value: can not be empty"


def test_topology_spread_constraints_rules():
    constraint = {"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "Never"}
    assert errors(topologySpreadConstraints=[constraint]) == [
        "spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero",
        'spec.topologySpreadConstraints[0].whenUnsatisfiable: Unsupported value: "Never": supported values: '
        '"DoNotSchedule", "ScheduleAnyway"']


def test_dns_config_required_with_dns_policy_none():
    assert errors(dnsPolicy="None") == [
        "spec.dnsConfig: Required value: must provide `dnsConfig` when `dnsPolicy` is None"]


def test_dns_config_nameservers_are_ips():
    assert errors(dnsConfig={"nameservers": ["dns.local"]}) == [
        'spec.dnsConfig.nameservers[0]: Invalid value: "dns.local": must be a valid IP address, (e.g. 10.9.8.7 or '
        "2001:db8::ffff)"]


def test_pod_security_context_ids_in_range():
    assert errors(securityContext={"fsGroup": -5}) == [
        "spec.securityContext.fsGroup: Invalid value: -5: must be between 0 and 2147483647, inclusive"]


def test_pod_security_context_sysctls_named_and_unique():
    sysctls = [{"name": "net.core.somaxconn", "value": "1"}, {"name": "net.core.somaxconn", "value": "2"}]
    assert errors(securityContext={"sysctls": sysctls}) == [
        'spec.securityContext.sysctls[1].name: Duplicate value: "net.core.somaxconn"']


def test_seccomp_localhost_needs_a_profile():
    assert errors(securityContext={"seccompProfile": {"type": "Localhost"}}) == [
        "spec.securityContext.seccompProfile.localhostProfile: Required value: must be set when seccomp type is "
        "Localhost"]


def test_host_aliases_ips():
    assert errors(hostAliases=[{"ip": "nope", "hostnames": ["a"]}]) == [
        'spec.hostAliases[0].ip: Invalid value: "nope": must be a valid IP address, (e.g. 10.9.8.7 or '
        "2001:db8::ffff)"]


def test_overhead_quantities_are_quantities():
    assert errors(overhead={"cpu": "x"})[0].startswith('spec.overhead.limits[cpu]: Invalid value: "x": quantities')


# -- volumes -----------------------------------------------------------------------------------------------------

def test_volume_name_is_required():
    assert volume_errors({"emptyDir": {}}) == ["spec.volumes[0].name: Required value"]


def test_volume_name_is_a_dns_label():
    assert volume_errors({"name": "Data", "emptyDir": {}}) == [f'spec.volumes[0].name: Invalid value: "Data": '
                                                              f"{DNS_LABEL_MSG}"]


def test_volume_names_are_unique():
    assert volume_errors({"name": "v"}, {"name": "v"}) == ['spec.volumes[1].name: Duplicate value: "v"']


def test_volume_has_one_source():
    assert volume_errors({"name": "v", "emptyDir": {}, "secret": {"secretName": "s"}}) == [
        "spec.volumes[0].secret: Forbidden: may not specify more than 1 volume type"]


def test_volume_needs_a_source_undefaulted():
    spec = {"containers": [{"name": "c", "image": "i"}], "volumes": [{"name": "v"}]}
    assert "spec.volumes[0]: Required value: must specify a volume type" in [
        str(e) for e in validate_pod_spec(spec, "spec")]


def test_secret_volume_needs_a_secret_name():
    assert volume_errors({"name": "v", "secret": {}}) == ["spec.volumes[0].secret.secretName: Required value"]


def test_config_map_volume_needs_a_name():
    assert volume_errors({"name": "v", "configMap": {}}) == ["spec.volumes[0].configMap.name: Required value"]


def test_volume_default_mode_within_0777():
    assert volume_errors({"name": "v", "configMap": {"name": "c", "defaultMode": 1000}}) == [
        "spec.volumes[0].configMap.defaultMode: Invalid value: 1000: must be a number between 0 and 0777 (octal), "
        "both inclusive"]


def test_volume_items_need_key_and_relative_path():
    items = [{"key": "k", "path": "/etc/x"}, {"path": "ok"}]
    assert volume_errors({"name": "v", "secret": {"secretName": "s", "items": items}}) == [
        'spec.volumes[0].secret.items[0].path: Invalid value: "/etc/x": must be a relative path',
        "spec.volumes[0].secret.items[1].key: Required value"]


def test_empty_dir_size_limit_not_negative():
    assert volume_errors({"name": "v", "emptyDir": {"sizeLimit": "-1Gi"}}) == [
        "spec.volumes[0].emptyDir.sizeLimit: Forbidden: SizeLimit field must be a valid resource quantity"]


def test_persistent_volume_claim_needs_a_claim_name():
    assert volume_errors({"name": "v", "persistentVolumeClaim": {}}) == [
        "spec.volumes[0].persistentVolumeClaim.claimName: Required value"]


def test_host_path_needs_a_path_without_backsteps():
    assert volume_errors({"name": "v", "hostPath": {"path": ""}}) == ["spec.volumes[0].hostPath.path: Required value"]
    assert volume_errors({"name": "v", "hostPath": {"path": "/a/../b"}}) == [
        "spec.volumes[0].hostPath.path: Invalid value: \"/a/../b\": must not contain '..'"]


def test_host_path_type_is_supported():
    assert volume_errors({"name": "v", "hostPath": {"path": "/a", "type": "Dir"}}) == [
        'spec.volumes[0].hostPath.type: Unsupported value: "Dir": supported values: "", "BlockDevice", '
        '"CharDevice", "Directory", "DirectoryOrCreate", "File", "FileOrCreate", "Socket"']


def test_downward_api_item_needs_one_reference():
    assert volume_errors({"name": "v", "downwardAPI": {"items": [{"path": "p"}]}}) == [
        "spec.volumes[0].downwardAPI: Required value: one of fieldRef and resourceFieldRef is required"]


def test_downward_api_volume_field_path_is_supported():
    items = [{"path": "p", "fieldRef": {"fieldPath": "spec.nodeName"}}]
    assert volume_errors({"name": "v", "downwardAPI": {"items": items}}) == [
        'spec.volumes[0].downwardAPI.fieldRef.fieldPath: Unsupported value: "spec.nodeName": supported values: '
        '"metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace", "metadata.uid"']


def test_projected_token_at_least_ten_minutes():
    sources = [{"serviceAccountToken": {"path": "t", "expirationSeconds": 60}}]
    assert volume_errors({"name": "v", "projected": {"sources": sources}}) == [
        "spec.volumes[0].projected.sources[0].serviceAccountToken.expirationSeconds: Invalid value: 60: may not "
        "specify a duration less than 10 minutes"]


def test_projected_paths_are_not_repeated():
    sources = [{"configMap": {"name": "a", "items": [{"key": "k", "path": "p"}]}},
               {"secret": {"name": "b", "items": [{"key": "k", "path": "p"}]}}]
    assert volume_errors({"name": "v", "projected": {"sources": sources}}) == [
        'spec.volumes[0].projected: Invalid value: "b": conflicting duplicate paths']


def test_nfs_path_is_absolute():
    assert volume_errors({"name": "v", "nfs": {"server": "s", "path": "data"}}) == [
        'spec.volumes[0].nfs.path: Invalid value: "data": must be an absolute path']


def test_ephemeral_volume_needs_a_claim_template():
    assert volume_errors({"name": "v", "ephemeral": {}}) == [
        "spec.volumes[0].ephemeral.volumeClaimTemplate: Required value"]


def test_invalid_volume_is_not_mountable():
    spec = {"containers": [{"name": "c", "image": "i", "volumeMounts": [{"name": "v", "mountPath": "/v"}]}],
            "volumes": [{"name": "v", "secret": {}}]}
    default_pod_spec(spec)
    assert [str(e) for e in validate_pod_spec(spec, "spec")] == [
        "spec.volumes[0].secret.secretName: Required value",
        'spec.containers[0].volumeMounts[0].name: Not found: "v"']


# -- templates ---------------------------------------------------------------------------------------------------

def template_errors(template: dict[str, Any]) -> list[str]:
    if isinstance(template.get("spec"), dict):
        default_pod_spec(template["spec"])
    return [str(e) for e in validate_pod_template_spec(template, "spec.template")]


def test_template_labels_are_validated_at_template_labels():
    template = {"metadata": {"labels": {"app": "-web"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}
    assert template_errors(template)[0].startswith('spec.template.labels: Invalid value: "-web": a valid label')


def test_template_annotations_keys_are_qualified_names():
    template = {"metadata": {"annotations": {"bad key": "x"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}
    assert template_errors(template)[0].startswith('spec.template.annotations: Invalid value: "bad key": name part')


def test_template_spec_paths_are_under_template_spec():
    assert template_errors({"spec": {"containers": []}}) == ["spec.template.spec.containers: Required value"]


def test_template_has_no_ephemeral_containers():
    template = {"spec": {"containers": [{"name": "c", "image": "i"}],
                         "ephemeralContainers": [{"name": "e", "image": "i"}]}}
    assert template_errors(template) == [
        "spec.template.spec.ephemeralContainers: Forbidden: ephemeral containers not allowed in pod template"]


def annotated(annotations: dict[str, str]) -> list[str]:
    return template_errors({"metadata": {"annotations": annotations},
                            "spec": {"containers": [{"name": "c", "image": "i"}]}})


def test_template_mirror_annotation_needs_a_node_name():
    assert annotated({"kubernetes.io/config.mirror": "x"}) == [
        'spec.template.annotations[kubernetes.io/config.mirror]: Invalid value: "x": must set spec.nodeName if '
        "mirror pod annotation is set"]


@pytest.mark.parametrize("cost, ok", [("10", True), ("-5", True), ("0", True), ("010", False), ("+1", False),
                                      ("2147483648", False), ("x", False)])
def test_template_pod_deletion_cost_is_a_32bit_integer(cost, ok):
    expected = [] if ok else [f'spec.template.annotations[controller.kubernetes.io/pod-deletion-cost]: Invalid '
                              f'value: "{cost}": must be a 32bit integer']
    assert annotated({"controller.kubernetes.io/pod-deletion-cost": cost}) == expected


def test_template_seccomp_annotation_is_a_profile():
    assert annotated({"seccomp.security.alpha.kubernetes.io/pod": "strict"}) == [
        'spec.template.annotations.seccomp.security.alpha.kubernetes.io/pod: Invalid value: "strict": must be a '
        "valid seccomp profile"]


def test_template_apparmor_annotation_names_a_container_and_a_profile():
    assert annotated({"container.apparmor.security.beta.kubernetes.io/web": "strict"}) == [
        'spec.template.annotations[container.apparmor.security.beta.kubernetes.io/web]: Invalid value: "web": '
        "container not found",
        'spec.template.annotations[container.apparmor.security.beta.kubernetes.io/web]: Invalid value: "strict": '
        'invalid AppArmor profile name: "strict"']


def test_pod_security_context_sysctls_not_of_a_host_namespace():
    assert errors(hostNetwork=True, securityContext={"sysctls": [{"name": "net.core.somaxconn", "value": "1"}]}) == [
        "spec.securityContext.sysctls[0].name: Invalid value: \"net.core.somaxconn\": may not be specified when "
        "'hostNetwork' is true"]


def test_linux_pod_has_no_windows_options():
    assert errors(os={"name": "linux"}, securityContext={"windowsOptions": {"runAsUserName": "x"}}) == [
        "spec.securityContext.windowsOptions: Forbidden: windows options cannot be set for a linux pod"]


def test_windows_pod_has_no_linux_settings():
    containers = [{"name": "c", "image": "i", "securityContext": {"privileged": False}}]
    assert errors(os={"name": "windows"}, hostPID=True, securityContext={"runAsUser": 1}, containers=containers) == [
        "spec.hostPID: Forbidden: cannot be set for a windows pod",
        "spec.securityContext.runAsUser: Forbidden: cannot be set for a windows pod",
        "spec.containers[0].securityContext.privileged: Forbidden: cannot be set for a windows pod"]


def test_ephemeral_volume_claim_template_is_a_claim():
    template = {"metadata": {"name": "x"}, "spec": {"resources": {"requests": {"storage": "1Gi"}}}}
    assert volume_errors({"name": "v", "ephemeral": {"volumeClaimTemplate": template}}) == [
        "spec.volumes[0].ephemeral.volumeClaimTemplate.metadata.name: Forbidden: cannot be set",
        "spec.volumes[0].ephemeral.volumeClaimTemplate.spec.accessModes: Required value: at least 1 access mode is "
        "required"]


def test_csi_volume_needs_a_driver_name():
    assert volume_errors({"name": "v", "csi": {}}) == [
        "spec.volumes[0].csi.driver: Required value",
        'spec.volumes[0].csi.driver: Invalid value: "": ' + SUBDOMAIN_MSG]
