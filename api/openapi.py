"""OpenAPI documents: `/openapi/v3` (the index), one v3 document per group-version, and `/openapi/v2`.

Pure builders from a `Scheme`. Each group-version document is an OpenAPI
3.0.0 document shaped as the Kubernetes API server's, because kubectl reads it:

- `create -f`/`replace -f` look for a PATCH operation whose
  `x-kubernetes-group-version-kind` (one object) names the kind and whose
  own parameters include `fieldValidation`; found, validation is left to
  the server.
- `apply` needs `application/strategic-merge-patch+json` on that PATCH, then
  walks the kind's schema (the one in `components.schemas` whose
  `x-kubernetes-group-version-kind` list holds the kind), following
  `allOf[0]`/`$ref` and reading `x-kubernetes-patch-*` markers.
- `explain` finds the kind from the operations of
  `/apis/GROUP/VERSION/RESOURCE` and prints the schema's properties,
  descriptions and `required`.

Schemas come from the pydantic models (`runtime.models`): Optional fields
become plain typed properties, nested models `$ref`s named as Kubernetes
names them (`io.k8s.api.rbac.v1.PolicyRule`, whatever the domain: the GVK
extensions carry the served group), list/map/patch markers from the fields'
`json_schema_extra`, required fields from the spec's tables (`REQUIRED`).
Descriptions come from the models, else from Kubernetes' own documentation
of the same types (`_DOCS`), so `kubectl explain` prints one for every field.

`/openapi/v2` (Swagger 2.0) holds the same schemas under `definitions`, in
JSON or in gnostic's Protobuf (`openapi_v2_protobuf`), which kubectl asks
for when v3 cannot answer (see `openapi_v2_document`). Served bytes are
identified by `content_etag` (sha512) for `ETag`/`If-None-Match`.
"""

from __future__ import annotations

import functools
import hashlib
import json
import types as pytypes
import typing
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import yaml
from pydantic import BaseModel

from api.discovery import SUBRESOURCE_VERBS
from runtime import models
from runtime.models.base import field_extensions
from runtime.scheme import ResourceType, Scheme

__all__ = [
    "REQUIRED", "schema_name", "openapi_v3_path",
    "openapi_v3_document", "openapi_v3_document_bytes", "openapi_v3_hash", "openapi_v3_index",
    "openapi_v2_document", "openapi_v2_json", "openapi_v2_protobuf", "content_etag",
    "V2_PROTOBUF_ACCEPT", "V2_PROTOBUF_CONTENT_TYPE",
]

_REF = "#/components/schemas/"
_META = "io.k8s.apimachinery.pkg.apis.meta.v1"
_PACKAGES = {"meta": _META, "rbac": "io.k8s.api.rbac.v1", "core": "io.k8s.api.core.v1",
             "authorization": "io.k8s.api.authorization.v1",
             "authentication": "io.k8s.api.authentication.v1", "coordination": "io.k8s.api.coordination.v1"}
_RENAMES = {"UserInfoModel": "UserInfo"}

# Fields the spec's tables mark required (JSON names). The models keep every
# field optional so that a missing one is a 422 from validation, not a 400.
REQUIRED: dict[type[BaseModel], tuple[str, ...]] = {
    models.PolicyRule: ("verbs",),
    models.RoleRef: ("apiGroup", "kind", "name"),
    models.Subject: ("kind", "name"),
    models.ClusterRoleBinding: ("roleRef",),
    models.RoleBinding: ("roleRef",),
    models.ClusterRoleList: ("items",),
    models.RoleList: ("items",),
    models.ClusterRoleBindingList: ("items",),
    models.RoleBindingList: ("items",),
    models.LeaseList: ("items",),
    models.NamespaceList: ("items",),
    models.SubjectAccessReview: ("spec",),
    models.LocalSubjectAccessReview: ("spec",),
    models.SelfSubjectAccessReview: ("spec",),
    models.SelfSubjectRulesReview: ("spec",),
    models.SelfSubjectRulesReviewSpec: ("namespace",),
    models.SubjectAccessReviewStatus: ("allowed",),
    models.SubjectRulesReviewStatus: ("resourceRules", "nonResourceRules", "incomplete"),
    models.ResourceRule: ("verbs",),
    models.NonResourceRule: ("verbs",),
    models.SelectorRequirement: ("key", "operator"),
    models.LabelSelectorRequirement: ("key", "operator"),
    models.OwnerReference: ("apiVersion", "kind", "name", "uid"),
    models.NamespaceCondition: ("type", "status"),
}

_DESCRIPTIONS: dict[type[BaseModel], str] = {
    models.Namespace: "Namespace provides a scope for names; namespaced objects live and die with it.",
    models.SubjectAccessReview: "Checks whether a user or group can perform an action.",
    models.LocalSubjectAccessReview: "Checks whether a user or group can perform an action in one namespace.",
    models.SelfSubjectAccessReview: "Checks whether the current user can perform an action.",
    models.SelfSubjectRulesReview: "Lists the actions the current user can perform within a namespace.",
    models.SelfSubjectReview: "Returns the user information the server holds about the caller.",
    models.DeleteOptions: "Options of a delete request.",
    models.Status: "Status is the return value of calls that do not return other objects.",
}
_FIELD_DESCRIPTIONS = {
    "apiVersion": "The versioned schema of this representation of an object (group/version).",
    "kind": "The REST resource this object represents, in CamelCase. Cannot be updated.",
    "spec": "The request or desired state.",
    "status": "The observed state or the server's answer; filled in by the server.",
}
# Descriptions Kubernetes' OpenAPI gives (its types' SwaggerDoc), shortened
# where long; used where a model or field has none of its own.
_DOCS: dict[str, str] = {
    # rbac
    "AggregationRule": "AggregationRule describes how to locate ClusterRoles to aggregate into the ClusterRole",
    "ClusterRoleList": "ClusterRoleList is a collection of ClusterRoles",
    "ClusterRoleList.items": "Items is a list of ClusterRoles",
    "ClusterRoleBindingList": "ClusterRoleBindingList is a collection of ClusterRoleBindings",
    "ClusterRoleBindingList.items": "Items is a list of ClusterRoleBindings",
    "RoleList": "RoleList is a collection of Roles",
    "RoleList.items": "Items is a list of Roles",
    "RoleBindingList": "RoleBindingList is a collection of RoleBindings",
    "RoleBindingList.items": "Items is a list of RoleBindings",
    "RoleRef": "RoleRef contains information that points to the role being used",
    "RoleRef.apiGroup": "APIGroup is the group for the resource being referenced",
    "RoleRef.kind": "Kind is the type of resource being referenced",
    "RoleRef.name": "Name is the name of resource being referenced",
    "Subject": ("Subject contains a reference to the object or user identities a role binding applies to. This can "
                "either hold a direct API object reference, or a value for non-objects such as user and group "
                "names."),
    "Subject.apiGroup": ('APIGroup holds the API group of the referenced subject. Defaults to "" for ServiceAccount '
                         'subjects. Defaults to "rbac.authorization.k8s.io" for User and Group subjects.'),
    "Subject.name": "Name of the object being referenced.",
    "Subject.namespace": ('Namespace of the referenced object.  If the object kind is non-namespace, such as '
                          '"User" or "Group", and this value is not empty the Authorizer should report an error.'),
    # meta
    "DeleteOptions.gracePeriodSeconds": ("The duration in seconds before the object should be deleted. Value must "
                                         "be non-negative integer. The value zero indicates delete immediately."),
    "DeleteOptions.preconditions": ("Must be fulfilled before a deletion is carried out. If not possible, a 409 "
                                    "Conflict status will be returned."),
    "DeleteOptions.orphanDependents": ("Deprecated: please use the PropagationPolicy, this field will be deprecated "
                                       "in 1.7. Should the dependent objects be orphaned."),
    "DeleteOptions.propagationPolicy": ("Whether and how garbage collection will be performed. Acceptable values "
                                        "are: 'Orphan', 'Background' and 'Foreground'."),
    "DeleteOptions.dryRun": ("When present, indicates that modifications should not be persisted. The only valid "
                             "value is: All."),
    "DeleteOptions.ignoreStoreReadErrorWithClusterBreakingPotential": (
        "if set to true, it will trigger an unsafe deletion of the resource in case the normal deletion flow fails "
        "with a corrupt object error (behind the feature gate AllowUnsafeMalformedObjectDeletion)."),
    "LabelSelector": ("A label selector is a label query over a set of resources. The result of matchLabels and "
                      "matchExpressions are ANDed. An empty label selector matches all objects. A null label "
                      "selector matches no objects."),
    "LabelSelector.matchLabels": ('matchLabels is a map of {key,value} pairs. A single {key,value} in the '
                                  'matchLabels map is equivalent to an element of matchExpressions, whose key field '
                                  'is "key", the operator is "In", and the values array contains only "value". The '
                                  'requirements are ANDed.'),
    "LabelSelector.matchExpressions": ("matchExpressions is a list of label selector requirements. The requirements "
                                       "are ANDed."),
    "LabelSelectorRequirement": ("A label selector requirement is a selector that contains values, a key, and an "
                                 "operator that relates the key and values."),
    "LabelSelectorRequirement.key": "key is the label key that the selector applies to.",
    "LabelSelectorRequirement.operator": ("operator represents a key's relationship to a set of values. Valid "
                                          "operators are In, NotIn, Exists and DoesNotExist."),
    "LabelSelectorRequirement.values": ("values is an array of string values. If the operator is In or NotIn, the "
                                        "values array must be non-empty. If the operator is Exists or DoesNotExist, "
                                        "the values array must be empty."),
    "ListMeta": ("ListMeta describes metadata that synthetic resources must have, including lists and various "
                 "status objects."),
    "ListMeta.resourceVersion": ("String that identifies the server's internal version of this object that can be "
                                 "used by clients to determine when objects have changed. Value must be treated as "
                                 "opaque by clients and passed unmodified back to the server."),
    "ListMeta.continue": ("continue may be set if the user set a limit on the number of items returned, and "
                          "indicates that the server has more data available. The value is opaque and may be used "
                          "to issue another request to the endpoint that served this list to retrieve the next set "
                          "of available objects."),
    "ListMeta.remainingItemCount": ("remainingItemCount is the number of subsequent items in the list which are not "
                                    "included in this list response. It is omitted with label or field selectors "
                                    "and when the list is complete; it is an estimate of the collection size."),
    "ListMeta.selfLink": "Deprecated: selfLink is a legacy read-only field that is no longer populated by the system.",
    "ManagedFieldsEntry.manager": "Manager is an identifier of the workflow managing these fields.",
    "ManagedFieldsEntry.operation": ("Operation is the type of operation which lead to this ManagedFieldsEntry "
                                     "being created. The only valid values for this field are 'Apply' and "
                                     "'Update'."),
    "ManagedFieldsEntry.apiVersion": ("APIVersion defines the version of this resource that this field set applies "
                                      "to."),
    "ManagedFieldsEntry.time": ("Time is the timestamp of when the ManagedFields entry was added. The timestamp "
                                "will also be updated if a field is added, the manager changes any of the owned "
                                "fields value or removes a field."),
    "ManagedFieldsEntry.fieldsType": ('FieldsType is the discriminator for the different fields format and version. '
                                      'There is currently only one possible value: "FieldsV1"'),
    "ManagedFieldsEntry.fieldsV1": "FieldsV1 holds the first JSON version format as described in the \"FieldsV1\" type.",
    "ManagedFieldsEntry.subresource": ("Subresource is the name of the subresource used to update that object, or "
                                       "empty string if the object was updated through the main resource."),
    "ObjectMeta.namespace": ("Namespace defines the space within which each name must be unique. An empty namespace "
                             "is equivalent to the \"default\" namespace, but \"default\" is the canonical "
                             "representation. Not all objects are required to be scoped to a namespace - the value "
                             "of this field for those objects will be empty. Cannot be updated."),
    "ObjectMeta.uid": ("UID is the unique in time and space value for this object. It is typically generated by the "
                       "server on successful creation of a resource and is not allowed to change on PUT operations. "
                       "Populated by the system. Read-only."),
    "ObjectMeta.generation": ("A sequence number representing a specific generation of the desired state. Populated "
                              "by the system. Read-only."),
    "ObjectMeta.creationTimestamp": ("CreationTimestamp is a timestamp representing the server time when this "
                                     "object was created. Clients may not set this value. It is represented in "
                                     "RFC3339 form and is in UTC. Populated by the system. Read-only. Null for "
                                     "lists."),
    "ObjectMeta.deletionGracePeriodSeconds": ("Number of seconds allowed for this object to gracefully terminate "
                                              "before it will be removed from the system. Only set when "
                                              "deletionTimestamp is also set. May only be shortened. Read-only."),
    "ObjectMeta.labels": ("Map of string keys and values that can be used to organize and categorize (scope and "
                          "select) objects. May match selectors of replication controllers and services."),
    "ObjectMeta.annotations": ("Annotations is an unstructured key value map stored with a resource that may be set "
                               "by external tools to store and retrieve arbitrary metadata. They are not queryable "
                               "and should be preserved when modifying objects."),
    "ObjectMeta.ownerReferences": ("List of objects depended by this object. If ALL objects in the list have been "
                                   "deleted, this object will be garbage collected. If this object is managed by a "
                                   "controller, then an entry in this list will point to this controller, with the "
                                   "controller field set to true. There cannot be more than one managing "
                                   "controller."),
    "ObjectMeta.finalizers": ("Must be empty before the object is deleted from the registry. Each entry is an "
                              "identifier for the responsible component that will remove the entry from the list. "
                              "If the deletionTimestamp of the object is non-nil, entries in this list can only be "
                              "removed. Finalizers may be processed and removed in any order."),
    "ObjectMeta.managedFields": ("ManagedFields maps workflow-id and version to the set of fields that are managed "
                                 "by that workflow. This is mostly for internal housekeeping, and users typically "
                                 "shouldn't need to set or understand this field."),
    "ObjectMeta.selfLink": ("Deprecated: selfLink is a legacy read-only field that is no longer populated by the "
                            "system."),
    "OwnerReference.apiVersion": "API version of the referent.",
    "OwnerReference.kind": "Kind of the referent.",
    "OwnerReference.name": "Name of the referent.",
    "OwnerReference.uid": "UID of the referent.",
    "OwnerReference.controller": "If true, this reference points to the managing controller.",
    "OwnerReference.blockOwnerDeletion": ("If true, AND if the owner has the \"foregroundDeletion\" finalizer, then "
                                          "the owner cannot be deleted from the key-value store until this reference "
                                          "is removed. Defaults to false."),
    "Preconditions": "Preconditions must be fulfilled before an operation (update, delete, etc.) is carried out.",
    "Preconditions.uid": "Specifies the target UID.",
    "Preconditions.resourceVersion": "Specifies the target ResourceVersion",
    "Status.message": "A human-readable description of the status of this operation.",
    "Status.reason": ("A machine-readable description of why this operation is in the \"Failure\" status. If this "
                      "value is empty there is no information available. A Reason clarifies an HTTP status code but "
                      "does not override it."),
    "Status.details": ("Extended data associated with the reason.  Each reason may define its own extended details. "
                       "This field is optional and the data returned is not guaranteed to conform to any schema "
                       "except that defined by the reason type."),
    "Status.code": "Suggested HTTP return code for this status, 0 if not set.",
    "StatusCause": ("StatusCause provides more information about an api.Status failure, including cases when "
                    "multiple errors are encountered."),
    "StatusCause.reason": ("A machine-readable description of the cause of the error. If this value is empty there "
                           "is no information available."),
    "StatusCause.message": ("A human-readable description of the cause of the error.  This field may be presented "
                            "as-is to a reader."),
    "StatusCause.field": ("The field of the resource that has caused this error, as named by its JSON "
                          "serialization. May include dot and postfix notation for nested attributes."),
    "StatusDetails": ("StatusDetails is a set of additional properties that MAY be set by the server to provide "
                      "additional information about a response."),
    "StatusDetails.name": ("The name attribute of the resource associated with the status StatusReason (when there "
                           "is a single name which can be described)."),
    "StatusDetails.group": "The group attribute of the resource associated with the status StatusReason.",
    "StatusDetails.kind": "The kind attribute of the resource associated with the status StatusReason.",
    "StatusDetails.uid": "UID of the resource. (when there is a single resource which can be described).",
    "StatusDetails.causes": ("The Causes array includes more details associated with the StatusReason failure. Not "
                             "all StatusReasons may provide detailed causes."),
    "StatusDetails.retryAfterSeconds": ("If specified, the time in seconds before the operation should be retried. "
                                        "Some errors may indicate the client must take an alternate action - for "
                                        "those errors this field may indicate how long to wait before taking the "
                                        "alternate action."),
    # authorization
    "FieldSelectorAttributes": ("FieldSelectorAttributes indicates a field limited access. Specify either "
                                "rawSelector or requirements, never both."),
    "FieldSelectorAttributes.rawSelector": ("rawSelector is the serialization of a field selector that would be "
                                            "included in a query parameter."),
    "FieldSelectorAttributes.requirements": ("requirements is the parsed interpretation of a field selector. All "
                                             "requirements must be met for a resource instance to match the "
                                             "selector."),
    "LabelSelectorAttributes": ("LabelSelectorAttributes indicates a label limited access. Specify either "
                                "rawSelector or requirements, never both."),
    "LabelSelectorAttributes.rawSelector": ("rawSelector is the serialization of a label selector that would be "
                                            "included in a query parameter."),
    "LabelSelectorAttributes.requirements": ("requirements is the parsed interpretation of a label selector. All "
                                             "requirements must be met for a resource instance to match the "
                                             "selector."),
    "NonResourceAttributes": ("NonResourceAttributes includes the authorization attributes available for "
                              "non-resource requests to the Authorizer interface"),
    "NonResourceAttributes.path": "Path is the URL path of the request",
    "NonResourceAttributes.verb": "Verb is the standard HTTP verb",
    "NonResourceRule": "NonResourceRule holds information that describes a rule for the non-resource",
    "NonResourceRule.verbs": ("Verb is a list of kubernetes non-resource API verbs, like: get, post, put, delete, "
                              "patch, head, options.  \"*\" means all."),
    "NonResourceRule.nonResourceURLs": ("NonResourceURLs is a set of partial urls that a user should have access "
                                        "to.  *s are allowed, but only as the full, final step in the path.  \"*\" "
                                        "means all."),
    "ResourceAttributes": ("ResourceAttributes includes the authorization attributes available for resource "
                           "requests to the Authorizer interface"),
    "ResourceAttributes.namespace": ("Namespace is the namespace of the action being requested. \"\" (empty) is "
                                     "defaulted for LocalSubjectAccessReviews and means \"all\" for cluster-scoped "
                                     "resources or namespace-scoped resources in SubjectAccessReview and "
                                     "SelfSubjectAccessReview."),
    "ResourceAttributes.verb": ("Verb is a kubernetes resource API verb, like: get, list, watch, create, update, "
                                "delete, proxy.  \"*\" means all."),
    "ResourceAttributes.group": "Group is the API Group of the Resource.  \"*\" means all.",
    "ResourceAttributes.version": "Version is the API Version of the Resource.  \"*\" means all.",
    "ResourceAttributes.resource": "Resource is one of the existing resource types.  \"*\" means all.",
    "ResourceAttributes.subresource": "Subresource is one of the existing resource types.  \"\" means none.",
    "ResourceAttributes.name": ("Name is the name of the resource being requested for a \"get\" or deleted for a "
                                "\"delete\". \"\" (empty) means all."),
    "ResourceAttributes.fieldSelector": "fieldSelector describes the limitation on access based on field.",
    "ResourceAttributes.labelSelector": "labelSelector describes the limitation on access based on labels.",
    "ResourceRule": ("ResourceRule is the list of actions the subject is allowed to perform on resources. The list "
                     "ordering isn't significant, may contain duplicates, and possibly be incomplete."),
    "ResourceRule.verbs": ("Verb is a list of kubernetes resource API verbs, like: get, list, watch, create, update, "
                           "delete, proxy.  \"*\" means all."),
    "ResourceRule.apiGroups": ("APIGroups is the name of the APIGroup that contains the resources.  If multiple API "
                               "groups are specified, any action requested against one of the enumerated resources "
                               "in any API group will be allowed.  \"*\" means all."),
    "ResourceRule.resources": ("Resources is a list of resources this rule applies to.  \"*\" means all in the "
                               "specified apiGroups. \"*/foo\" represents the subresource 'foo' for all resources "
                               "in the specified apiGroups."),
    "ResourceRule.resourceNames": ("ResourceNames is an optional white list of names that the rule applies to.  An "
                                   "empty set means that everything is allowed.  \"*\" means all."),
    "SelectorRequirement": ("SelectorRequirement is a selector that contains values, a key, and an operator that "
                            "relates the key and values."),
    "SelectorRequirement.key": "key is the label key that the selector applies to.",
    "SelectorRequirement.operator": ("operator represents a key's relationship to a set of values. Valid operators "
                                     "are In, NotIn, Exists and DoesNotExist."),
    "SelectorRequirement.values": ("values is an array of string values. If the operator is In or NotIn, the values "
                                   "array must be non-empty. If the operator is Exists or DoesNotExist, the values "
                                   "array must be empty."),
    "SelfSubjectAccessReviewSpec": ("SelfSubjectAccessReviewSpec is a description of the access request.  Exactly "
                                    "one of ResourceAuthorizationAttributes and NonResourceAuthorizationAttributes "
                                    "must be set"),
    "SelfSubjectAccessReviewSpec.resourceAttributes": "ResourceAuthorizationAttributes describes information for a resource access request",
    "SelfSubjectAccessReviewSpec.nonResourceAttributes": "NonResourceAttributes describes information for a non-resource access request",
    "SelfSubjectRulesReviewSpec": "SelfSubjectRulesReviewSpec defines the specification for SelfSubjectRulesReview.",
    "SelfSubjectRulesReviewSpec.namespace": "Namespace to evaluate rules for. Required.",
    "SubjectAccessReviewSpec": ("SubjectAccessReviewSpec is a description of the access request.  Exactly one of "
                                "ResourceAuthorizationAttributes and NonResourceAuthorizationAttributes must be set"),
    "SubjectAccessReviewSpec.resourceAttributes": "ResourceAuthorizationAttributes describes information for a resource access request",
    "SubjectAccessReviewSpec.nonResourceAttributes": "NonResourceAttributes describes information for a non-resource access request",
    "SubjectAccessReviewSpec.user": ("User is the user you're testing for. If you specify \"User\" but not "
                                     "\"Groups\", then is it interpreted as \"What if User were not a member of any "
                                     "groups"),
    "SubjectAccessReviewSpec.groups": "Groups is the groups you're testing for.",
    "SubjectAccessReviewSpec.extra": ("Extra corresponds to the user.Info.GetExtra() method from the authenticator. "
                                      "Since that is input to the authorizer it needs a reflection here."),
    "SubjectAccessReviewSpec.uid": "UID information about the requesting user.",
    "SubjectAccessReviewStatus": "SubjectAccessReviewStatus",
    "SubjectAccessReviewStatus.allowed": "Allowed is required. True if the action would be allowed, false otherwise.",
    "SubjectAccessReviewStatus.denied": ("Denied is optional. True if the action would be denied, otherwise false. "
                                         "If both allowed is false and denied is false, then the authorizer has no "
                                         "opinion on whether to authorize the action. Denied may not be true if "
                                         "Allowed is true."),
    "SubjectAccessReviewStatus.reason": "Reason is optional.  It indicates why a request was allowed or denied.",
    "SubjectAccessReviewStatus.evaluationError": ("EvaluationError is an indication that some error occurred during "
                                                  "the authorization check. It is entirely possible to get an error "
                                                  "and be able to continue determine authorization status in spite "
                                                  "of it."),
    "SubjectRulesReviewStatus": ("SubjectRulesReviewStatus contains the result of a rules check. This check can be "
                                 "incomplete depending on the set of authorizers the server is configured with and "
                                 "any errors experienced during evaluation."),
    "SubjectRulesReviewStatus.resourceRules": ("ResourceRules is the list of actions the subject is allowed to "
                                               "perform on resources. The list ordering isn't significant, may "
                                               "contain duplicates, and possibly be incomplete."),
    "SubjectRulesReviewStatus.nonResourceRules": ("NonResourceRules is the list of actions the subject is allowed "
                                                  "to perform on non-resources. The list ordering isn't significant, "
                                                  "may contain duplicates, and possibly be incomplete."),
    "SubjectRulesReviewStatus.incomplete": ("Incomplete is true when the rules returned by this call are incomplete. "
                                            "This is most commonly encountered when an authorizer, such as an "
                                            "external authorizer, doesn't support rules evaluation."),
    "SubjectRulesReviewStatus.evaluationError": ("EvaluationError can appear in combination with Rules. It indicates "
                                                 "an error occurred during rule evaluation, such as an authorizer "
                                                 "that doesn't support rule evaluation, and that ResourceRules "
                                                 "and/or NonResourceRules may be incomplete."),
    # core
    "NamespaceCondition": "NamespaceCondition contains details about state of namespace.",
    "NamespaceCondition.type": "Type of namespace controller condition.",
    "NamespaceCondition.status": "Status of the condition, one of True, False, Unknown.",
    "NamespaceCondition.lastTransitionTime": "Last time the condition transitioned from one status to another.",
    "NamespaceCondition.reason": "Unique, one-word, CamelCase reason for the condition's last transition.",
    "NamespaceCondition.message": "Human-readable message indicating details about last transition.",
    "NamespaceList": "NamespaceList is a list of Namespaces.",
    "NamespaceList.items": "Items is the list of Namespace objects in the list.",
    "NamespaceSpec": "NamespaceSpec describes the attributes on a Namespace.",
    "NamespaceStatus": "NamespaceStatus is information about the current status of a Namespace.",
    "NamespaceStatus.phase": "Phase is the current lifecycle phase of the namespace.",
    "NamespaceStatus.conditions": "Represents the latest available observations of a namespace's current state.",
    # authentication
    "SelfSubjectReviewStatus": "SelfSubjectReviewStatus is filled by the kube-apiserver and sent back to a user.",
    "SelfSubjectReviewStatus.userInfo": "User attributes of the user making this request.",
    "UserInfo": "UserInfo holds the information about the user needed to implement the user.Info interface.",
    "UserInfo.username": "The name that uniquely identifies this user among all active users.",
    "UserInfo.uid": ("A unique value that identifies this user across time. If this user is deleted and another "
                     "user by the same name is added, they will have different UIDs."),
    "UserInfo.groups": "The names of groups this user is a part of.",
    "UserInfo.extra": "Any additional information provided by the authenticator.",
}
_OBJECT_META = "Standard object metadata."
_LIST_META = "Standard list metadata."
_FORMATS = {"creationTimestamp", "deletionTimestamp", "lastTransitionTime", "time", "acquireTime", "renewTime"}
_PATCH_SCHEMA = {"description": "The body of a PATCH request; its shape depends on the Content-Type.",
                 "type": "object"}


def schema_name(model: type[BaseModel]) -> str:
    """Return the Kubernetes-style schema name of a model, e.g. `io.k8s.api.rbac.v1.ClusterRole`."""
    package = _PACKAGES[model.__module__.rsplit(".", 1)[-1]]
    return f"{package}.{_RENAMES.get(model.__name__, model.__name__)}"


def _ref(model: type[BaseModel]) -> dict[str, Any]:
    return {"$ref": _REF + schema_name(model)}


class _Schemas:
    """Accumulates `components.schemas` while walking model annotations."""

    def __init__(self, gvks: dict[type[BaseModel], list[dict[str, str]]]) -> None:
        self.gvks = gvks
        self.schemas: dict[str, dict[str, Any]] = {}

    def add(self, model: type[BaseModel]) -> dict[str, Any]:
        name = schema_name(model)
        if name in self.schemas:
            return _ref(model)
        schema: dict[str, Any] = {"type": "object"}
        self.schemas[name] = schema  # registered first: models may nest themselves
        description = (model.__dict__.get("__doc__") or _DESCRIPTIONS.get(model)
                       or _DOCS.get(_RENAMES.get(model.__name__, model.__name__)) or self._list_doc(model))
        if description:
            schema["description"] = description.strip()
        schema["properties"] = {(info.alias or field): self._field(model, field, info.alias or field)
                                for field, info in model.model_fields.items()}
        if model in REQUIRED:
            schema["required"] = list(REQUIRED[model])
        if model in self.gvks:
            schema["x-kubernetes-group-version-kind"] = self.gvks[model]
        return _ref(model)

    def _list_doc(self, model: type[BaseModel]) -> str:
        """Kubernetes' wording for a list kind without a description of its own ("" if not a list kind)."""
        kind = self.gvks.get(model, [{}])[0].get("kind", "")
        return f"{kind} is a list of {kind.removesuffix('List')} objects." if kind.endswith("List") else ""

    def _field(self, model: type[BaseModel], field: str, json_name: str) -> dict[str, Any]:
        info = model.model_fields[field]
        schema = self.of(info.annotation)
        description = info.description
        if model in self.gvks:  # the standard top-level fields; `kind` in a RoleRef means something else
            description = description or _FIELD_DESCRIPTIONS.get(json_name)
        description = description or _DOCS.get(f"{_RENAMES.get(model.__name__, model.__name__)}.{json_name}")
        if json_name == "items" and not description and self._list_doc(model):
            description = f"Items is the list of {self.gvks[model][0]['kind'].removesuffix('List')} objects."
        if json_name == "metadata" and not description:
            description = _LIST_META if schema.get("$ref", "").endswith(".ListMeta") else _OBJECT_META
        if "$ref" in schema and description:
            schema = {"allOf": [schema]}  # siblings of $ref are ignored in OpenAPI 3.0
        if description:
            schema["description"] = description
        if json_name in _FORMATS and schema.get("type") == "string":
            schema["format"] = "date-time"
        schema.update(field_extensions(model, field))
        return schema

    def of(self, annotation: Any) -> dict[str, Any]:
        """The schema of one annotation; Optional[X] is X (Kubernetes omits, never nulls)."""
        origin, args = typing.get_origin(annotation), typing.get_args(annotation)
        if origin in (typing.Union, pytypes.UnionType):
            (inner,) = [a for a in args if a is not type(None)]
            return self.of(inner)
        if origin is list:
            return {"type": "array", "items": self.of(args[0])}
        if origin is dict:
            if args[1] is Any:
                return {"type": "object"}
            return {"type": "object", "additionalProperties": self.of(args[1])}
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            return self.add(annotation)
        scalars = {str: {"type": "string"}, bool: {"type": "boolean"},
                   int: {"type": "integer", "format": "int64"}, float: {"type": "number", "format": "double"}}
        if annotation in scalars:
            return dict(scalars[annotation])
        if annotation is Any:
            return {}
        raise TypeError(f"no OpenAPI schema for annotation {annotation!r}")


def _protobuf_media_type(domain: str) -> str:
    """Return the Protobuf media type under a domain: `application/vnd.kubernetes.protobuf` for k8s.io."""
    name = "kubernetes" if domain == "k8s.io" else domain.split(".")[0]
    return f"application/vnd.{name}.protobuf"


def openapi_v3_path(group_version: str) -> str:
    """Return the index key of a group-version: `api/v1` for core, `apis/GROUP/v1` otherwise."""
    return f"apis/{group_version}" if "/" in group_version else f"api/{group_version}"


def _param(name: str, where: str, type_: str, description: str) -> dict[str, Any]:
    param = {"name": name, "in": where, "description": description, "schema": {"type": type_}}
    if where == "path":
        param["required"] = True
    return param


_Q = {n: _param(n, "query", t, d) for n, t, d in (
    ("pretty", "string", "If 'true', the output is pretty printed."),
    ("dryRun", "string", "When present (value `All`), changes are checked but not persisted."),
    ("fieldManager", "string", "Name of the actor making the change, recorded in managedFields."),
    ("fieldValidation", "string",
     "How unknown or duplicate fields are handled: Ignore, Warn (default) or Strict."),
    ("force", "boolean", "Apply requests only: take ownership of fields owned by other managers."),
    ("allowWatchBookmarks", "boolean", "Watch only: ask for BOOKMARK events."),
    ("continue", "string", "Token from a previous chunk of a paged list."),
    ("fieldSelector", "string", "Restricts the objects returned by their fields."),
    ("labelSelector", "string", "Restricts the objects returned by their labels."),
    ("limit", "integer", "Maximum number of items in one chunk of a list."),
    ("resourceVersion", "string", "The resource version a list or watch is served from."),
    ("resourceVersionMatch", "string", "How resourceVersion is applied to a list: NotOlderThan or Exact."),
    ("sendInitialEvents", "boolean", "Watch only: start with synthetic ADDED events for existing objects."),
    ("timeoutSeconds", "integer", "Time limit of a list or watch call."),
    ("watch", "boolean", "Watch for changes instead of listing."),
    ("gracePeriodSeconds", "integer", "Seconds before the object is deleted."),
    ("ignoreStoreReadErrorWithClusterBreakingPotential", "boolean",
     "Force-delete an object that cannot be read from storage (feature gated)."),
    ("orphanDependents", "boolean", "Deprecated: use propagationPolicy."),
    ("propagationPolicy", "string", "Garbage collection of dependents: Orphan, Background or Foreground."),
)}
_LIST = ("allowWatchBookmarks", "continue", "fieldSelector", "labelSelector", "limit", "resourceVersion",
         "resourceVersionMatch", "sendInitialEvents", "timeoutSeconds", "watch")
_WRITE = ("dryRun", "fieldManager", "fieldValidation")
_DELETE = ("dryRun", "gracePeriodSeconds", "ignoreStoreReadErrorWithClusterBreakingPotential",
           "orphanDependents", "propagationPolicy")
_DELETECOLLECTION = ("continue", "dryRun", "fieldSelector", "gracePeriodSeconds",
                     "ignoreStoreReadErrorWithClusterBreakingPotential", "labelSelector", "limit",
                     "orphanDependents", "propagationPolicy", "resourceVersion", "resourceVersionMatch",
                     "sendInitialEvents", "timeoutSeconds")
_PATCH_TYPES = ("application/json-patch+json", "application/merge-patch+json",
                "application/strategic-merge-patch+json", "application/apply-patch+yaml")
_WATCH_MEDIA = ("application/json;stream=watch", "application/vnd.kubernetes.protobuf;stream=watch")
_CODES = {"200": "OK", "201": "Created", "202": "Accepted"}
_VERBS = {"get": "read", "list": "list", "post": "create", "put": "replace", "patch": "patch",
          "delete": "delete", "deletecollection": "delete"}


class _Paths:
    """Builds the `paths` of one group-version, an operation per served verb."""

    def __init__(self, scheme: Scheme) -> None:
        self.media = ["application/json", "application/yaml", "application/vnd.kubernetes.protobuf"]
        if (own := _protobuf_media_type(scheme.domain)) not in self.media:
            self.media.append(own)
        self.paths: dict[str, dict[str, Any]] = {}

    def _content(self, schema: dict[str, Any], types: Sequence[str] | None = None) -> dict[str, Any]:
        return {t: {"schema": schema} for t in (types or self.media)}

    def _op(self, t: ResourceType, action: str, op_id: str, params: tuple[str, ...],
            ok: dict[str, Any], codes: tuple[str, ...], body: dict[str, Any] | None = None) -> dict[str, Any]:
        group_token = "".join(p.capitalize() for p in (t.info.group_prefix or "core").split("."))
        op: dict[str, Any] = {
            "description": f"{_VERBS[action]} {t.kind}",
            "operationId": f"{_VERBS[action]}{group_token}{t.version.capitalize()}{op_id}",
            "tags": [f"{t.info.group_prefix or 'core'}_{t.version}"],
            "parameters": [_Q[p] for p in params],
            "responses": {**{c: {"description": _CODES[c], "content": ok} for c in codes},
                          "401": {"description": "Unauthorized"}},
            "x-kubernetes-action": action,
            "x-kubernetes-group-version-kind": {"group": t.group, "version": t.version, "kind": t.kind},
        }
        if body is not None:
            op["requestBody"] = body
        return op

    def _path(self, path: str, params: list[dict[str, Any]], ops: dict[str, Any]) -> None:
        if ops:
            self.paths[path] = {**ops, "parameters": [*params, _Q["pretty"]]}

    def _item(self, t: ResourceType, verbs: Iterable[str], op_id: str) -> dict[str, Any]:
        """Operations on one object (or one of its subresources): get, update, patch, delete."""
        obj = self._content(_ref(t.model))
        status = self._content(_ref(models.Status))
        ops: dict[str, Any] = {}
        if "get" in verbs:
            ops["get"] = self._op(t, "get", op_id, (), obj, ("200",))
        if "update" in verbs:
            ops["put"] = self._op(t, "put", op_id, _WRITE, obj, ("200", "201"), {"content": obj, "required": True})
        if "patch" in verbs:
            body = {"content": self._content(_ref_patch(), _PATCH_TYPES), "required": True}
            ops["patch"] = self._op(t, "patch", op_id, _WRITE + ("force",), obj, ("200", "201"), body)
        if "delete" in verbs:
            body = {"content": self._content(_ref(models.DeleteOptions))}
            ops["delete"] = self._op(t, "delete", op_id, _DELETE, status, ("200", "202"), body)
        return ops

    def add(self, t: ResourceType) -> None:
        verbs = set(t.info.verbs)
        prefix = f"/apis/{t.group}/{t.version}" if t.group else f"/api/{t.version}"
        scope = "Namespaced" if t.namespaced else ""
        collection = f"{prefix}/namespaces/{{namespace}}/{t.plural}" if t.namespaced else f"{prefix}/{t.plural}"
        ns_param = [_param("namespace", "path", "string", "object name and auth scope")] if t.namespaced else []
        name_param = [_param("name", "path", "string", f"name of the {t.kind}")]
        obj = self._content(_ref(t.model))
        listed = (self._content(_ref(t.info.list_model), [*self.media, *_WATCH_MEDIA])
                  if t.info.list_model else obj)

        ops: dict[str, Any] = {}
        if "list" in verbs:  # watch is the list operation with watch=true
            ops["get"] = self._op(t, "list", scope + t.kind, _LIST, listed, ("200",))
        if "create" in verbs:
            ops["post"] = self._op(t, "post", scope + t.kind, _WRITE, obj, ("200", "201", "202"),
                                   {"content": obj, "required": True})
        if "deletecollection" in verbs:
            ops["delete"] = self._op(t, "deletecollection", "Collection" + scope + t.kind, _DELETECOLLECTION,
                                     self._content(_ref(models.Status)), ("200",),
                                     {"content": self._content(_ref(models.DeleteOptions))})
        self._path(collection, ns_param, ops)
        if t.namespaced and "list" in verbs:
            self._path(f"{prefix}/{t.plural}", [], {
                "get": self._op(t, "list", t.kind + "ForAllNamespaces", _LIST, listed, ("200",))})
        self._path(f"{collection}/{{name}}", ns_param + name_param, self._item(t, verbs, scope + t.kind))
        for sub in t.info.subresources:
            self._path(f"{collection}/{{name}}/{sub}", ns_param + name_param,
                       self._item(t, SUBRESOURCE_VERBS.get(sub, ("get", "patch", "update")),
                                  scope + t.kind + sub.capitalize()))


def _ref_patch() -> dict[str, Any]:
    return {"$ref": f"{_REF}{_META}.Patch"}


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        if isinstance(node.get("$ref"), str):
            yield node["$ref"].removeprefix(_REF)
        for value in node.values():
            yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)


def _gvks(scheme: Scheme) -> dict[type[BaseModel], list[dict[str, str]]]:
    """The `x-kubernetes-group-version-kind` of every model that is a kind (DeleteOptions: in every group)."""
    gvks: dict[type[BaseModel], list[dict[str, str]]] = {}
    for t in scheme.types:
        gvks[t.model] = [{"group": t.group, "kind": t.kind, "version": t.version}]
        if t.info.list_model is not None:
            gvks[t.info.list_model] = [{"group": t.group, "kind": t.list_kind, "version": t.version}]
    groups = dict.fromkeys(["", *(g for g, _ in scheme.groups())])
    gvks[models.DeleteOptions] = [{"group": g, "kind": "DeleteOptions", "version": "v1"} for g in groups]
    gvks[models.Status] = [{"group": "", "kind": "Status", "version": "v1"}]
    return gvks


def openapi_v3_document(scheme: Scheme, group_version: str) -> dict[str, Any] | None:
    """Return the OpenAPI v3 document of one group-version (`v1` or `GROUP/v1`), or None if not served.

    `components.schemas` holds exactly the schemas the paths reach: each
    kind, its List, every nested type, and DeleteOptions/Status/Patch where
    an operation uses them.
    """
    group, _, version = group_version.rpartition("/")
    served = [t for t in scheme.types if t.group == group and t.version == version]
    if not served:
        return None
    pool = _Schemas(_gvks(scheme))
    for model in (*(t.model for t in served), *(t.info.list_model for t in served if t.info.list_model),
                  models.DeleteOptions, models.Status):
        pool.add(model)
    pool.schemas[f"{_META}.Patch"] = dict(_PATCH_SCHEMA)

    paths = _Paths(scheme)
    for t in served:
        paths.add(t)
    reachable: set[str] = set()
    pending = list(_refs(paths.paths))
    while pending:
        name = pending.pop()
        if name not in reachable:
            reachable.add(name)
            pending.extend(_refs(pool.schemas[name]))
    return {
        "openapi": "3.0.0",
        "info": {"title": "miniplane", "version": version},
        "paths": paths.paths,
        "components": {"schemas": {n: s for n, s in sorted(pool.schemas.items()) if n in reachable}},
    }


@functools.lru_cache(maxsize=32)
def openapi_v3_document_bytes(scheme: Scheme, group_version: str) -> bytes | None:
    """Return the document as the compact, key-sorted JSON served (and hashed); None if not served.

    Cached per (scheme, group_version): the bytes never change while a scheme lives.
    """
    doc = openapi_v3_document(scheme, group_version)
    if doc is None:
        return None
    return json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()


def openapi_v3_hash(document: bytes) -> str:
    """Return the content hash Kubernetes puts in `?hash=`: uppercase hex sha512 of the served bytes."""
    return hashlib.sha512(document).hexdigest().upper()


def openapi_v3_index(scheme: Scheme) -> dict[str, Any]:
    """Return the `/openapi/v3` index: each group-version's path and its hash-pinned URL."""
    paths: dict[str, Any] = {}
    for group, types in scheme.groups():
        for version in dict.fromkeys(t.version for t in types):
            group_version = f"{group}/{version}" if group else version
            document = openapi_v3_document_bytes(scheme, group_version)
            assert document is not None
            path = openapi_v3_path(group_version)
            paths[path] = {"serverRelativeURL": f"/openapi/v3/{path}?hash={openapi_v3_hash(document)}"}
    return {"paths": paths}


# --- OpenAPI v2 (Swagger 2.0) ----------------------------------------------------------------

V2_PROTOBUF_ACCEPT = ("application/com.github.proto-openapi.spec.v2@v1.0+protobuf",
                      "application/com.github.proto-openapi.spec.v2.v1.0+protobuf")
"""Media types a client asks `/openapi/v2` in Protobuf with (kubectl sends the first)."""
V2_PROTOBUF_CONTENT_TYPE = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
"""The Content-Type of the Protobuf answer, spelled as Kubernetes' kube-openapi spells it: the `@`
of the request form is not a token character, and Go's `mime.ParseMediaType` in client-go refuses it."""


def _v2(node: Any) -> Any:
    """A v3 schema as Swagger 2.0 writes it: `#/definitions/` references, a described `$ref` without allOf."""
    if isinstance(node, list):
        return [_v2(item) for item in node]
    if not isinstance(node, dict):
        return node
    if isinstance(node.get("allOf"), list) and len(node["allOf"]) == 1 and "$ref" in node["allOf"][0]:
        rest = {k: v for k, v in node.items() if k != "allOf"}
        node = {**node["allOf"][0], **rest}
    out = {k: _v2(v) for k, v in node.items()}
    if isinstance(out.get("$ref"), str):
        out["$ref"] = "#/definitions/" + out["$ref"].removeprefix(_REF)
    return out


def openapi_v2_document(scheme: Scheme) -> dict[str, Any]:
    """Return the `/openapi/v2` Swagger 2.0 document: every served kind's schema under `definitions`.

    Definitions are the v3 schemas (same names, extensions, descriptions
    and `required`) with `#/definitions/` references. `paths` is empty on
    purpose: operations are described in v3, which kubectl reads first; v2
    is its fallback for client-side validation (`create -f` of a kind
    without a PATCH operation, the reviews) and `explain
    --output=plaintext-openapiv2`. Listing operations here would make
    kubectl look for PATCH's `fieldValidation` in v2 and, not finding the
    review kinds, list CustomResourceDefinitions, which this server does not
    serve, failing the command.
    """
    pool = _Schemas(_gvks(scheme))
    for t in scheme.types:
        pool.add(t.model)
        if t.info.list_model is not None:
            pool.add(t.info.list_model)
    pool.add(models.DeleteOptions)
    pool.add(models.Status)
    pool.schemas[f"{_META}.Patch"] = dict(_PATCH_SCHEMA)
    return {
        "swagger": "2.0",
        "info": {"title": "miniplane", "version": "v1"},
        "paths": {},
        "definitions": {name: _v2(schema) for name, schema in sorted(pool.schemas.items())},
    }


@functools.lru_cache(maxsize=8)
def openapi_v2_json(scheme: Scheme) -> bytes:
    """Return the v2 document as compact, key-sorted JSON (cached per scheme)."""
    return json.dumps(openapi_v2_document(scheme), sort_keys=True, separators=(",", ":")).encode()


def _yaml_text(value: Any) -> str:
    """A value as gnostic keeps vendor extensions: YAML text (`atomic\\n`, `- group: ...`)."""
    text = yaml.safe_dump(value, default_flow_style=False, sort_keys=False)
    return text.removesuffix("...\n") if not isinstance(value, (dict, list)) else text


def _named_any(pb: Any, name: str, value: Any) -> Any:
    return pb.NamedAny(name=name, value=pb.Any(yaml=_yaml_text(value)))


def _gnostic_schema(pb: Any, schema: dict[str, Any]) -> Any:
    """The gnostic `Schema` message of a Swagger 2.0 schema (the fields this server writes)."""
    out = pb.Schema()
    for key, value in schema.items():
        if key == "$ref":
            setattr(out, "_ref", value)
        elif key in ("description", "format", "title"):
            setattr(out, key, value)
        elif key == "type":
            out.type.value.extend([value] if isinstance(value, str) else value)
        elif key == "items":
            out.items.schema.extend(_gnostic_schema(pb, s) for s in (value if isinstance(value, list) else [value]))
        elif key == "properties":
            out.properties.SetInParent()
            out.properties.additional_properties.extend(
                pb.NamedSchema(name=n, value=_gnostic_schema(pb, s)) for n, s in value.items())
        elif key == "additionalProperties":
            if isinstance(value, bool):
                out.additional_properties.boolean = value
            else:
                out.additional_properties.schema.CopyFrom(_gnostic_schema(pb, value))
        elif key == "required":
            out.required.extend(value)
        elif key.startswith("x-"):
            out.vendor_extension.append(_named_any(pb, key, value))
    return out


@functools.lru_cache(maxsize=8)
def openapi_v2_protobuf(scheme: Scheme) -> bytes:
    """Return the v2 document as gnostic's `openapi.v2.Document` Protobuf message (cached per scheme).

    kubectl parses these bytes with `proto.Unmarshal` into gnostic's
    Document (no envelope, no prefix).
    """
    from runtime.codec.proto import openapi_v2_pb2 as pb

    doc = openapi_v2_document(scheme)
    message = pb.Document(swagger=doc["swagger"], info=pb.Info(**doc["info"]), paths=pb.Paths())
    message.definitions.SetInParent()
    message.definitions.additional_properties.extend(
        pb.NamedSchema(name=name, value=_gnostic_schema(pb, schema)) for name, schema in doc["definitions"].items())
    return message.SerializeToString(deterministic=True)


def content_etag(document: bytes) -> str:
    """Return the entity tag of served OpenAPI bytes: Kubernetes' uppercase hex sha512, quoted."""
    return '"' + openapi_v3_hash(document) + '"'
