"""Names the API fixes, shared by the server's kinds and the controllers acting on them.

The finalizers Kubernetes' components own (`spec.finalizers` of a Namespace, `metadata.finalizers`
otherwise) and the field manager the registry recognises. Here, below the server and the clients,
so that a controller over HTTP (`miniplane controllers`) names them without loading the server's
kinds; `runtime.server.kinds` re-exports them.
"""

from __future__ import annotations

__all__ = ["NAMESPACE_FINALIZER", "ORPHAN_FINALIZER", "FOREGROUND_FINALIZER", "CRD_CLEANUP_FINALIZER",
           "AGGREGATION_MANAGER"]

#: The namespace controller's finalizer in `spec.finalizers` (corev1.FinalizerKubernetes).
NAMESPACE_FINALIZER = "kubernetes"
#: metav1.FinalizerOrphanDependents.
ORPHAN_FINALIZER = "orphan"
#: metav1.FinalizerDeleteDependents.
FOREGROUND_FINALIZER = "foregroundDeletion"
#: The finalizer that keeps a deleted CRD until its objects are gone.
CRD_CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"
#: The field manager of the aggregation controller's writes (spared the aggregated-rules warning).
AGGREGATION_MANAGER = "clusterrole-aggregation-controller"
