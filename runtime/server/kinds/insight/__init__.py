"""The RBAC insight kinds (`insight.<domain>`): virtual kinds evaluated over the server's policy.

Modules: `strategies` (each kind's strategy, `INSIGHT_STRATEGIES`), `base`
(what every insight strategy shares), `queries` (the query kinds: who can,
access matrix, explain...), `policy` (the policy-wide kinds: lint, risk,
diff). Internal to `runtime.server.kinds`, which serves the kinds of
`runtime.models.catalog.INSIGHT_KINDS` with `INSIGHT_STRATEGIES`.
"""

__all__: list[str] = []
