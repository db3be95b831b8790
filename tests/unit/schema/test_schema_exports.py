"""The package's surface is its `__all__`, documented by its contract docstring."""

from runtime.server import schema


def test_every_export_exists_and_is_documented_in_the_contract():
    assert {"prune", "apply_defaults", "validate", "structural_errors", "schema_node", "Structural"} <= \
        set(schema.__all__)
    for name in schema.__all__:
        assert hasattr(schema, name), name
    for name in ("prune", "apply_defaults", "validate", "structural_errors", "schema_node", "Structural"):
        assert name in schema.__doc__
