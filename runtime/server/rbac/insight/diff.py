"""`diff(before, after)`: per subject, the permissions a policy change grants and revokes.

A subject's permissions are what the bindings naming it give (its
`probe_user`: a Group's members also hold what other bindings give them,
so diff the Group too). They are compared per scope, broken down into one
verb on one resource (or URL) and at most one name (`breakdown_rule`), a
permission counting as held when the other side's rules cover it
(`covers`, as escalation checks judge it), so `verbs: ["*"]` replacing
`verbs: ["get"]` grants `*` and revokes nothing:

- cluster-wide (`namespace` ""): the rules of the ClusterRoleBindings;
- each namespace where a RoleBinding names the subject (before or after):
  the RoleBindings' resource rules, cluster-wide rules counting as held
  there, so a change is reported once, at the widest scope it takes.

Give sources with aggregated rules filled in (`aggregate`), so a change of
labels or of an aggregated-from role shows as the rules it moves. Only
subjects with changes are returned, sorted; unresolvable roleRefs grant
nothing (see `lint`).

Cost: only the subjects a change can reach are compared
(`changed_subjects`: those named by a binding that differs, or by a binding
whose role differs), so one new binding in a large policy costs one pass
over the policy, not one rules lookup per subject.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from runtime.models.insight import InsightSubject, Permission, SubjectDiff, permission_rule
from runtime.server.rbac.escalation import breakdown_rule, covers
from runtime.server.rbac.insight.aggregate import policy_objects
from runtime.server.rbac.insight.refs import binding_namespace, object_key, probe_user, role_key, subject_of, user_name
from runtime.server.rbac.resolver import policy_rules_for
from runtime.server.rbac.rules import RuleDict
from runtime.server.rbac.source import PolicySource

__all__ = ["diff", "subjects_in", "changed_subjects"]


#: A permission while the diff computes: `Permission`'s fields in order, as a tuple (hashed and sorted
#: by the ten thousand; the `Permission` models are built for the answer only).
_Atom = tuple[str, str, str, str, str, str]


def _permissions(rules: Iterable[RuleDict], namespace: str) -> list[_Atom]:
    found: dict[_Atom, None] = {}
    for rule in rules:
        for atom in breakdown_rule(rule):
            urls = atom.get("nonResourceURLs")
            if urls:
                if not namespace:
                    found[("", atom["verbs"][0], "", "", "", urls[0])] = None
                continue
            names = atom.get("resourceNames") or ("",)
            found[(namespace, atom["verbs"][0], atom["apiGroups"][0], atom["resources"][0], names[0], "")] = None
    return list(found)


def _held(rules: Sequence[RuleDict], atom: _Atom) -> bool:
    return covers(rules, [permission_rule(*atom)])[0]


def _changes(gained: Sequence[RuleDict], lost: Sequence[RuleDict], wider: Sequence[RuleDict],
             namespace: str) -> list[_Atom]:
    """Permissions of `gained` that neither `lost` nor `wider` cover."""
    return [p for p in _permissions(gained, namespace)
            if not _held(lost, p) and not (wider and _held(wider, p))]


def subjects_in(source: PolicySource) -> dict[InsightSubject, set[str]]:
    """Return every subject bindings name, with the namespaces of the RoleBindings naming it."""
    found: dict[InsightSubject, set[str]] = {}
    for binding in [*source.list_cluster_role_bindings(), *source.list_role_bindings()]:
        namespace = binding_namespace(binding)
        for raw in binding.get("subjects") or ():
            subject = subject_of(raw, namespace)
            if subject is not None:
                spaces = found.setdefault(subject, set())
                if namespace:
                    spaces.add(namespace)
    return found


def changed_subjects(before: PolicySource, after: PolicySource) -> set[InsightSubject]:
    """Return the subjects whose permissions may differ: named by a binding that differs between the
    sides, or by a binding (either side) whose role differs. Every other subject holds the same rules."""
    old = {object_key(o): o for o in policy_objects(before)}
    new = {object_key(o): o for o in policy_objects(after)}
    changed = {ref for ref in old.keys() | new.keys() if old.get(ref) != new.get(ref)}
    found: set[InsightSubject] = set()
    for side in (old, new):
        for ref, binding in side.items():
            if not binding.get("roleRef"):
                continue
            if ref in changed or role_key(binding) in changed:
                namespace = binding_namespace(binding)
                found.update(s for s in (subject_of(raw, namespace) for raw in binding.get("subjects") or ())
                             if s is not None)
    return found


def _identity(subject: InsightSubject) -> tuple[str, str]:
    return ("group", subject.name) if subject.kind == "Group" else ("user", user_name(subject))


def _subject_diff(subject: InsightSubject, namespaces: set[str], before: PolicySource,
                  after: PolicySource) -> SubjectDiff:
    user = probe_user(subject)
    before_c, _ = policy_rules_for(user, "", before)
    after_c, _ = policy_rules_for(user, "", after)
    granted = _changes(after_c, before_c, (), "")
    revoked = _changes(before_c, after_c, (), "")
    for namespace in sorted(namespaces):
        before_n, _ = policy_rules_for(user, namespace, before)
        after_n, _ = policy_rules_for(user, namespace, after)
        granted += _changes(after_n, before_n, after_c, namespace)
        revoked += _changes(before_n, after_n, before_c, namespace)
    return SubjectDiff.of(subject, [Permission.of(*p) for p in sorted(set(granted))],
                       [Permission.of(*p) for p in sorted(set(revoked))])


def diff(before: PolicySource, after: PolicySource,
         subjects: Iterable[InsightSubject] | None = None) -> tuple[SubjectDiff, ...]:
    """Return, for each subject with a change, what `after` grants and revokes compared to `before`.

    `subjects` limits the answer; by default every subject a change can
    reach (`changed_subjects`).
    """
    named = subjects_in(before)
    for subject, spaces in subjects_in(after).items():
        named.setdefault(subject, set()).update(spaces)
    # A ServiceAccount and a User of its user name are one principal: pool their namespaces.
    pooled: dict[tuple[str, str], set[str]] = {}
    for subject, spaces in named.items():
        pooled.setdefault(_identity(subject), set()).update(spaces)
    wanted = sorted(changed_subjects(before, after) if subjects is None else set(subjects),
                    key=InsightSubject.sort_key)
    out = []
    for subject in wanted:
        change = _subject_diff(subject, pooled.get(_identity(subject), set()), before, after)
        if change.granted or change.revoked:
            out.append(change)
    return tuple(out)
