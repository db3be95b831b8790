"""core/v1 Namespace (namespaced kinds live and die with it), ServiceAccount (an identity for processes),
ConfigMap and Secret (configuration and credentials, as key-value maps).

ServiceAccount descriptions are Kubernetes' own, shortened; ConfigMap's and
Secret's are Kubernetes' own. Binary values (`binaryData`, a Secret's `data`)
are Go's `[]byte` in their JSON form, base64 text (`Base64`); a Secret's
`stringData` is write-only: the server merges it into `data` and never
returns it. Its tokens are not
stored: they are asked of its `token` subresource (authentication/v1
`TokenRequest`, in `runtime.models.authentication`).
"""

from __future__ import annotations

from typing import Optional

from pydantic import ConfigDict, Field

from runtime.models.base import Base64, K8sModel, list_field, map_field
from runtime.models.events.core import ObjectReference
from runtime.models.meta import ListMeta, ObjectMeta

__all__ = ["NamespaceSpec", "NamespaceCondition", "NamespaceStatus", "Namespace", "NamespaceList",
           "LocalObjectReference", "ServiceAccount", "ServiceAccountList", "ConfigMap", "ConfigMapList", "Secret",
           "SecretList"]


class NamespaceSpec(K8sModel):
    finalizers: Optional[list[str]] = list_field(
        description="Must be empty before the namespace is removed from storage.")


class NamespaceCondition(K8sModel):
    type: Optional[str] = None
    status: Optional[str] = None
    last_transition_time: Optional[str] = None
    reason: Optional[str] = None
    message: Optional[str] = None


class NamespaceStatus(K8sModel):
    phase: Optional[str] = None
    conditions: Optional[list[NamespaceCondition]] = list_field(
        list_type="map", map_keys=["type"], patch_strategy="merge", patch_merge_key="type")


class Namespace(K8sModel):
    api_version: Optional[str] = None
    kind: Optional[str] = None
    metadata: Optional[ObjectMeta] = None
    spec: Optional[NamespaceSpec] = None
    status: Optional[NamespaceStatus] = None


class NamespaceList(K8sModel):
    api_version: Optional[str] = None
    kind: Optional[str] = None
    metadata: Optional[ListMeta] = None
    items: Optional[list[Namespace]] = None


class LocalObjectReference(K8sModel):
    """LocalObjectReference contains enough information to let you locate the referenced object inside the same
    namespace."""

    model_config = ConfigDict(json_schema_extra={"x-kubernetes-map-type": "atomic"})

    name: Optional[str] = Field(None, description="Name of the referent.")


class ServiceAccount(K8sModel):
    """ServiceAccount binds together: a name, understood by users, and perhaps by peripheral systems, for an
    identity; a principal that can be authenticated and authorized; a set of secrets."""

    api_version: Optional[str] = None
    kind: Optional[str] = None
    metadata: Optional[ObjectMeta] = None
    secrets: Optional[list[ObjectReference]] = list_field(
        list_type="map", map_keys=["name"], patch_strategy="merge", patch_merge_key="name",
        description="Secrets is a list of the secrets in the same namespace that pods running using this "
                    "ServiceAccount are allowed to use. Only the name of each reference is kept.")
    image_pull_secrets: Optional[list[LocalObjectReference]] = list_field(
        description="ImagePullSecrets is a list of references to secrets in the same namespace to use for pulling "
                    "any images in pods that reference this ServiceAccount.")
    automount_service_account_token: Optional[bool] = Field(
        None, description="AutomountServiceAccountToken indicates whether pods running as this service account "
                          "should have an API token automatically mounted.")


class ServiceAccountList(K8sModel):
    api_version: Optional[str] = None
    kind: Optional[str] = None
    metadata: Optional[ListMeta] = None
    items: Optional[list[ServiceAccount]] = list_field(
        description="List of ServiceAccounts.")


class ConfigMap(K8sModel):
    """ConfigMap holds configuration data for pods to consume."""

    api_version: Optional[str] = None
    kind: Optional[str] = None
    metadata: Optional[ObjectMeta] = None
    immutable: Optional[bool] = Field(
        None, description="Immutable, if set to true, ensures that data stored in the ConfigMap cannot be updated "
                          "(only object metadata can be modified). If not set to true, the field can be modified at "
                          "any time. Defaulted to nil.")
    data: Optional[dict[str, str]] = map_field(
        description="Data contains the configuration data. Each key must consist of alphanumeric characters, '-', "
                    "'_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored "
                    "in Data must not overlap with the keys in the BinaryData field, this is enforced during "
                    "validation process.")
    binary_data: Optional[dict[str, Base64]] = map_field(
        description="BinaryData contains the binary data. Each key must consist of alphanumeric characters, '-', "
                    "'_' or '.'. BinaryData can contain byte sequences that are not in the UTF-8 range. The keys "
                    "stored in BinaryData must not overlap with the ones in the Data field, this is enforced during "
                    "validation process. Using this field will require 1.10+ apiserver and kubelet.")


class ConfigMapList(K8sModel):
    """ConfigMapList is a resource containing a list of ConfigMap objects."""

    api_version: Optional[str] = None
    kind: Optional[str] = None
    metadata: Optional[ListMeta] = None
    items: Optional[list[ConfigMap]] = list_field(description="Items is the list of ConfigMaps.")


class Secret(K8sModel):
    """Secret holds secret data of a certain type. The total bytes of the values in the Data field must be less
    than MaxSecretSize bytes."""

    api_version: Optional[str] = None
    kind: Optional[str] = None
    metadata: Optional[ObjectMeta] = None
    immutable: Optional[bool] = Field(
        None, description="Immutable, if set to true, ensures that data stored in the Secret cannot be updated "
                          "(only object metadata can be modified). If not set to true, the field can be modified at "
                          "any time. Defaulted to nil.")
    data: Optional[dict[str, Base64]] = map_field(
        description="Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' or "
                    "'.'. The serialized form of the secret data is a base64 encoded string, representing the "
                    "arbitrary (possibly non-string) data value here. Described in "
                    "https://tools.ietf.org/html/rfc4648#section-4")
    string_data: Optional[dict[str, str]] = map_field(
        description="stringData allows specifying non-binary secret data in string form. It is provided as a "
                    "write-only input field for convenience. All keys and values are merged into the data field on "
                    "write, overwriting any existing values. The stringData field is never output when reading from "
                    "the API.")
    type: Optional[str] = Field(
        None, description="Used to facilitate programmatic handling of secret data. More info: "
                          "https://kubernetes.io/docs/concepts/configuration/secret/#secret-types")


class SecretList(K8sModel):
    """SecretList is a list of Secret."""

    api_version: Optional[str] = None
    kind: Optional[str] = None
    metadata: Optional[ListMeta] = None
    items: Optional[list[Secret]] = list_field(
        description="Items is a list of secret objects. More info: "
                    "https://kubernetes.io/docs/concepts/configuration/secret")
