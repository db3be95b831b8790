"""API tests of the workload kinds (issue 38), on the memory store: a kind's API rules are tested on one store, the
stores themselves by the conformance suite."""
