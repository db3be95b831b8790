"""admissionregistration/v1 admission policies: ValidatingAdmissionPolicy and its binding (Kubernetes v1.30's
`v1`, the shape of v1.28's `v1beta1`), MutatingAdmissionPolicy and its binding (Kubernetes v1.36's `v1`).

Hand-written in the generated models' style (`runtime.models.k8s`): our OpenAPI is v1.28's, which has no `v1`
policies. Every field is optional (validation reports what is missing); list and map semantics are kube's
`+listType` markers (`k8s.io/api/admissionregistration/v1/types.go`). The webhook configurations' shared types
(MatchCondition, RuleWithOperations) are the generated ones.
"""

from typing import Optional

from pydantic import Field

from runtime.models.base import K8sModel, int_field, list_field
from runtime.models.k8s.admissionregistration_v1 import MatchCondition, RuleWithOperations
from runtime.models.meta import Condition, LabelSelector, ListMeta, ObjectMeta

__all__ = [
    "ApplyConfiguration", "AuditAnnotation", "ExpressionWarning", "JSONPatch", "MatchResources",
    "MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding", "MutatingAdmissionPolicyBindingList",
    "MutatingAdmissionPolicyBindingSpec", "MutatingAdmissionPolicyList", "MutatingAdmissionPolicySpec", "Mutation",
    "NamedRuleWithOperations", "ParamKind", "ParamRef", "TypeChecking", "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding", "ValidatingAdmissionPolicyBindingList", "ValidatingAdmissionPolicyBindingSpec",
    "ValidatingAdmissionPolicyList", "ValidatingAdmissionPolicySpec", "ValidatingAdmissionPolicyStatus",
    "Validation", "Variable"]

_META_DOC = ("Standard object metadata; More info: "
             "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata.")
_API_VERSION_DOC = "APIVersion defines the versioned schema of this representation of an object."
_KIND_DOC = "Kind is a string value representing the REST resource this object represents."


class ParamKind(K8sModel, defer_build=True):
    """ParamKind is a tuple of Group Kind and Version."""

    api_version: Optional[str] = Field(
        None, description="APIVersion is the API group version the resources belong to.")
    kind: Optional[str] = Field(None, description="Kind is the API kind the resources belong to.")


class NamedRuleWithOperations(RuleWithOperations, defer_build=True):
    """NamedRuleWithOperations is a tuple of Operations and Resources with ResourceNames."""

    resource_names: Optional[list[str]] = list_field(
        list_type="atomic", description="ResourceNames is an optional white list of names that the rule applies to.")


class MatchResources(K8sModel, defer_build=True):
    """MatchResources decides whether to run the admission control policy on an object based on whether it meets
    the match criteria."""

    exclude_resource_rules: Optional[list[NamedRuleWithOperations]] = list_field(
        list_type="atomic", description="ExcludeResourceRules describes what operations on what "
                                        "resources/subresources the policy should not care about.")
    match_policy: Optional[str] = Field(
        None, description="matchPolicy defines how the \"MatchResources\" list is used to match incoming requests.")
    namespace_selector: Optional[LabelSelector] = Field(
        None, description="NamespaceSelector decides whether to run the admission control policy on an object based "
                          "on whether the namespace for that object matches the selector.")
    object_selector: Optional[LabelSelector] = Field(
        None, description="ObjectSelector decides whether to run the validation based on if the object has matching "
                          "labels.")
    resource_rules: Optional[list[NamedRuleWithOperations]] = list_field(
        list_type="atomic", description="ResourceRules describes what operations on what resources/subresources the "
                                        "policy matches.")


class Validation(K8sModel, defer_build=True):
    """Validation specifies the CEL expression which is used to apply the validation."""

    expression: Optional[str] = Field(
        None, json_schema_extra={"default": ""},
        description="Expression represents the expression which will be evaluated by CEL.")
    message: Optional[str] = Field(
        None, description="Message represents the message displayed when validation fails.")
    message_expression: Optional[str] = Field(
        None, description="messageExpression declares a CEL expression that evaluates to the validation failure "
                          "message that is returned when this rule fails.")
    reason: Optional[str] = Field(
        None, description="Reason represents a machine-readable description of why this validation failed.")


class AuditAnnotation(K8sModel, defer_build=True):
    """AuditAnnotation describes how to produce an audit annotation for an API request."""

    key: Optional[str] = Field(
        None, json_schema_extra={"default": ""},
        description="key specifies the audit annotation key.")
    value_expression: Optional[str] = Field(
        None, json_schema_extra={"default": ""},
        description="valueExpression represents the expression which is evaluated by CEL to produce an audit "
                    "annotation value.")


class Variable(K8sModel, defer_build=True):
    """Variable is the definition of a variable that is used for composition."""

    expression: Optional[str] = Field(
        None, json_schema_extra={"default": ""},
        description="Expression is the expression that will be evaluated as the value of the variable.")
    name: Optional[str] = Field(
        None, json_schema_extra={"default": ""},
        description="Name is the name of the variable.")


class ValidatingAdmissionPolicySpec(K8sModel, defer_build=True):
    """ValidatingAdmissionPolicySpec is the specification of the desired behavior of the AdmissionPolicy."""

    audit_annotations: Optional[list[AuditAnnotation]] = list_field(
        list_type="atomic", description="auditAnnotations contains CEL expressions which are used to produce audit "
                                        "annotations for the audit event of the API request.")
    failure_policy: Optional[str] = Field(
        None, description="failurePolicy defines how to handle failures for the admission policy.")
    match_conditions: Optional[list[MatchCondition]] = list_field(
        list_type="map", map_keys=["name"], patch_strategy="merge", patch_merge_key="name",
        description="MatchConditions is a list of conditions that must be met for a request to be validated.")
    match_constraints: Optional[MatchResources] = Field(
        None, description="MatchConstraints specifies what resources this policy is designed to validate.")
    param_kind: Optional[ParamKind] = Field(
        None, description="ParamKind specifies the kind of resources used to parameterize this policy.")
    validations: Optional[list[Validation]] = list_field(
        list_type="atomic", description="Validations contain CEL expressions which is used to apply the validation.")
    variables: Optional[list[Variable]] = list_field(
        list_type="map", map_keys=["name"], patch_strategy="merge", patch_merge_key="name",
        description="Variables contain definitions of variables that can be used in composition of other "
                    "expressions.")


class ExpressionWarning(K8sModel, defer_build=True):
    """ExpressionWarning is a warning information that targets a specific expression."""

    field_ref: Optional[str] = Field(
        None, json_schema_extra={"default": ""},
        description="The path to the field that refers the expression.")
    warning: Optional[str] = Field(
        None, json_schema_extra={"default": ""},
        description="The content of type checking information in a human-readable form.")


class TypeChecking(K8sModel, defer_build=True):
    """TypeChecking contains results of type checking the expressions in the ValidatingAdmissionPolicy"""

    expression_warnings: Optional[list[ExpressionWarning]] = list_field(
        list_type="atomic", description="The type checking warnings for each expression.")


class ValidatingAdmissionPolicyStatus(K8sModel, defer_build=True):
    """ValidatingAdmissionPolicyStatus represents the status of an admission validation policy."""

    conditions: Optional[list[Condition]] = list_field(
        list_type="map", map_keys=["type"], description="The conditions represent the latest available observations "
                                                         "of a policy's current state.")
    observed_generation: Optional[int] = int_field(
        description="The generation observed by the controller.")
    type_checking: Optional[TypeChecking] = Field(
        None, description="The results of type checking for each expression.")


class ValidatingAdmissionPolicy(K8sModel, defer_build=True):
    """ValidatingAdmissionPolicy describes the definition of an admission validation policy that accepts or rejects
    an object without changing it."""

    api_version: Optional[str] = Field(None, description=_API_VERSION_DOC)
    kind: Optional[str] = Field(None, description=_KIND_DOC)
    metadata: Optional[ObjectMeta] = Field(None, description=_META_DOC)
    spec: Optional[ValidatingAdmissionPolicySpec] = Field(
        None, description="Specification of the desired behavior of the ValidatingAdmissionPolicy.")
    status: Optional[ValidatingAdmissionPolicyStatus] = Field(
        None, description="The status of the ValidatingAdmissionPolicy, including warnings that are useful to "
                          "determine if the policy behaves in the expected way.")


class ValidatingAdmissionPolicyList(K8sModel, defer_build=True):
    """ValidatingAdmissionPolicyList is a list of ValidatingAdmissionPolicy."""

    api_version: Optional[str] = Field(None, description=_API_VERSION_DOC)
    items: Optional[list[ValidatingAdmissionPolicy]] = list_field(description="List of ValidatingAdmissionPolicy.")
    kind: Optional[str] = Field(None, description=_KIND_DOC)
    metadata: Optional[ListMeta] = Field(None, description="Standard list metadata.")


class ParamRef(K8sModel, defer_build=True):
    """ParamRef describes how to locate the params to be used as input to expressions of rules applied by a policy
    binding."""

    name: Optional[str] = Field(None, description="name is the name of the resource being referenced.")
    namespace: Optional[str] = Field(None, description="namespace is the namespace of the referenced resource.")
    parameter_not_found_action: Optional[str] = Field(
        None, description="`parameterNotFoundAction` controls the behavior of the binding when the resource exists, "
                          "and name or selector is valid, but there are no parameters matched by the binding.")
    selector: Optional[LabelSelector] = Field(
        None, description="selector can be used to match multiple param objects based on their labels.")


class ValidatingAdmissionPolicyBindingSpec(K8sModel, defer_build=True):
    """ValidatingAdmissionPolicyBindingSpec is the specification of the ValidatingAdmissionPolicyBinding."""

    match_resources: Optional[MatchResources] = Field(
        None, description="MatchResources declares what resources match this binding and will be validated by it.")
    param_ref: Optional[ParamRef] = Field(
        None, description="paramRef specifies the parameter resource used to configure the admission control "
                          "policy.")
    policy_name: Optional[str] = Field(
        None, description="PolicyName references a ValidatingAdmissionPolicy name which the "
                          "ValidatingAdmissionPolicyBinding binds to.")
    validation_actions: Optional[list[str]] = list_field(
        list_type="set", description="validationActions declares how Validations of the referenced "
                                     "ValidatingAdmissionPolicy are enforced.")


class ValidatingAdmissionPolicyBinding(K8sModel, defer_build=True):
    """ValidatingAdmissionPolicyBinding binds the ValidatingAdmissionPolicy with paramerized resources."""

    api_version: Optional[str] = Field(None, description=_API_VERSION_DOC)
    kind: Optional[str] = Field(None, description=_KIND_DOC)
    metadata: Optional[ObjectMeta] = Field(None, description=_META_DOC)
    spec: Optional[ValidatingAdmissionPolicyBindingSpec] = Field(
        None, description="Specification of the desired behavior of the ValidatingAdmissionPolicyBinding.")


class ValidatingAdmissionPolicyBindingList(K8sModel, defer_build=True):
    """ValidatingAdmissionPolicyBindingList is a list of ValidatingAdmissionPolicyBinding."""

    api_version: Optional[str] = Field(None, description=_API_VERSION_DOC)
    items: Optional[list[ValidatingAdmissionPolicyBinding]] = list_field(description="List of PolicyBinding.")
    kind: Optional[str] = Field(None, description=_KIND_DOC)
    metadata: Optional[ListMeta] = Field(None, description="Standard list metadata.")


class ApplyConfiguration(K8sModel, defer_build=True):
    """ApplyConfiguration defines the desired configuration values of an object."""

    expression: Optional[str] = Field(
        None, description="expression will be evaluated by CEL to create an apply configuration.")


class JSONPatch(K8sModel, defer_build=True):
    """JSONPatch defines a JSON Patch."""

    expression: Optional[str] = Field(
        None, description="expression will be evaluated by CEL to create a JSON patch.")


class Mutation(K8sModel, defer_build=True):
    """Mutation specifies the CEL expression which is used to apply the Mutation."""

    apply_configuration: Optional[ApplyConfiguration] = Field(
        None, description="applyConfiguration defines the desired configuration values of an object.")
    json_patch: Optional[JSONPatch] = Field(
        None, description="jsonPatch defines a [JSON patch](https://jsonpatch.com/) operation to perform a mutation "
                          "to the object.")
    patch_type: Optional[str] = Field(
        None, json_schema_extra={"default": ""},
        description="patchType indicates the patch strategy used. Allowed values are \"ApplyConfiguration\" and "
                    "\"JSONPatch\".")


class MutatingAdmissionPolicySpec(K8sModel, defer_build=True):
    """MutatingAdmissionPolicySpec is the specification of the desired behavior of the admission policy."""

    failure_policy: Optional[str] = Field(
        None, description="failurePolicy defines how to handle failures for the admission policy.")
    match_conditions: Optional[list[MatchCondition]] = list_field(
        list_type="map", map_keys=["name"], patch_strategy="merge", patch_merge_key="name",
        description="matchConditions is a list of conditions that must be met for a request to be validated.")
    match_constraints: Optional[MatchResources] = Field(
        None, description="matchConstraints specifies what resources this policy is designed to evaluate.")
    mutations: Optional[list[Mutation]] = list_field(
        list_type="atomic", description="mutations contain operations to perform on matching objects.")
    param_kind: Optional[ParamKind] = Field(
        None, description="paramKind specifies the kind of resources used to parameterize this policy.")
    reinvocation_policy: Optional[str] = Field(
        None, description="reinvocationPolicy indicates whether mutations may be called multiple times per "
                          "MutatingAdmissionPolicyBinding as part of a single admission evaluation.")
    variables: Optional[list[Variable]] = list_field(
        list_type="atomic", description="variables contain definitions of variables that can be used in composition "
                                        "of other expressions.")


class MutatingAdmissionPolicy(K8sModel, defer_build=True):
    """MutatingAdmissionPolicy describes the definition of an admission mutation policy that mutates the object
    coming into admission chain."""

    api_version: Optional[str] = Field(None, description=_API_VERSION_DOC)
    kind: Optional[str] = Field(None, description=_KIND_DOC)
    metadata: Optional[ObjectMeta] = Field(None, description=_META_DOC)
    spec: Optional[MutatingAdmissionPolicySpec] = Field(
        None, description="Specification of the desired behavior of the MutatingAdmissionPolicy.")


class MutatingAdmissionPolicyList(K8sModel, defer_build=True):
    """MutatingAdmissionPolicyList is a list of MutatingAdmissionPolicy."""

    api_version: Optional[str] = Field(None, description=_API_VERSION_DOC)
    items: Optional[list[MutatingAdmissionPolicy]] = list_field(description="List of ValidatingAdmissionPolicy.")
    kind: Optional[str] = Field(None, description=_KIND_DOC)
    metadata: Optional[ListMeta] = Field(None, description="Standard list metadata.")


class MutatingAdmissionPolicyBindingSpec(K8sModel, defer_build=True):
    """MutatingAdmissionPolicyBindingSpec is the specification of the MutatingAdmissionPolicyBinding."""

    match_resources: Optional[MatchResources] = Field(
        None, description="matchResources limits what resources match this binding and may be mutated by it.")
    param_ref: Optional[ParamRef] = Field(
        None, description="paramRef specifies the parameter resource used to configure the admission control "
                          "policy.")
    policy_name: Optional[str] = Field(
        None, description="policyName references a MutatingAdmissionPolicy name which the "
                          "MutatingAdmissionPolicyBinding binds to.")


class MutatingAdmissionPolicyBinding(K8sModel, defer_build=True):
    """MutatingAdmissionPolicyBinding binds the MutatingAdmissionPolicy with parametrized resources."""

    api_version: Optional[str] = Field(None, description=_API_VERSION_DOC)
    kind: Optional[str] = Field(None, description=_KIND_DOC)
    metadata: Optional[ObjectMeta] = Field(None, description=_META_DOC)
    spec: Optional[MutatingAdmissionPolicyBindingSpec] = Field(
        None, description="Specification of the desired behavior of the MutatingAdmissionPolicyBinding.")


class MutatingAdmissionPolicyBindingList(K8sModel, defer_build=True):
    """MutatingAdmissionPolicyBindingList is a list of MutatingAdmissionPolicyBinding."""

    api_version: Optional[str] = Field(None, description=_API_VERSION_DOC)
    items: Optional[list[MutatingAdmissionPolicyBinding]] = list_field(description="List of PolicyBinding.")
    kind: Optional[str] = Field(None, description=_KIND_DOC)
    metadata: Optional[ListMeta] = Field(None, description="Standard list metadata.")
