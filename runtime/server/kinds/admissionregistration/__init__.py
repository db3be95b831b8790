"""The `admissionregistration.<domain>/v1` kinds (issue 39): ValidatingWebhookConfiguration,
MutatingWebhookConfiguration, ValidatingAdmissionPolicy (with its `status`), ValidatingAdmissionPolicyBinding,
MutatingAdmissionPolicy and MutatingAdmissionPolicyBinding, cluster-scoped, in the `api-extensions` category.

Contract: each kind's strategy (`runtime.server.kinds.Strategy`), named in `runtime.server.kinds.STRATEGIES`:
what Kubernetes stores, defaults, validates and prints for them (`pkg/apis/admissionregistration/v1/defaults.go`,
`pkg/apis/admissionregistration/validation`, `pkg/registry/admissionregistration/*`, `printers.go`). These kinds
only hold configuration: calling webhooks and evaluating policies belong to the admission plug-ins
(`runtime.server.admission`), which read the stored objects. Modules: `webhookconfig` (both webhook
configurations; their `clientconfig`), `validatingpolicy`, `mutatingpolicy` (each policy with its binding;
`bindings`, what the bindings share; `paramauth`, the writer's access to the params they name), `rules` (resource rules, match resources and conditions, param kinds, CEL
expressions: what all of them share). Also exported for the dispatcher: `ACCEPTED_REVIEW_VERSIONS`,
`NO_SIDE_EFFECTS`, `VALIDATION_ACTIONS`, `PATCH_TYPES`.

Caveats: CEL expressions are parsed, not type-checked (`runtime.server.schema.cel.program` has no checker), so
an expression of the wrong type or naming an unknown variable is refused when evaluated, not when stored.
"""

from runtime.server.kinds.admissionregistration.mutatingpolicy import (
    PATCH_TYPES, MutatingAdmissionPolicyBindingStrategy, MutatingAdmissionPolicyStrategy,
)
from runtime.server.kinds.admissionregistration.validatingpolicy import (
    VALIDATION_ACTIONS, ValidatingAdmissionPolicyBindingStrategy, ValidatingAdmissionPolicyStrategy,
)
from runtime.server.kinds.admissionregistration.webhookconfig import (
    ACCEPTED_REVIEW_VERSIONS, NO_SIDE_EFFECTS, MutatingWebhookConfigurationStrategy,
    ValidatingWebhookConfigurationStrategy,
)

__all__ = ["ValidatingWebhookConfigurationStrategy", "MutatingWebhookConfigurationStrategy",
           "ValidatingAdmissionPolicyStrategy", "ValidatingAdmissionPolicyBindingStrategy",
           "MutatingAdmissionPolicyStrategy", "MutatingAdmissionPolicyBindingStrategy", "ACCEPTED_REVIEW_VERSIONS",
           "NO_SIDE_EFFECTS", "VALIDATION_ACTIONS", "PATCH_TYPES"]
