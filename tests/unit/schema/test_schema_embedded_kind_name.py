"""An embedded resource's kind is a DNS-1035 label (apimachinery's `IsDNS1035Label`, in `runtime.machinery.validation.names`)."""

from runtime.server.schema.embedded import embedded_resource_errors
from runtime.machinery.validation.names import dns1035_label_errors


def test_a_kind_is_a_dns1035_label_as_go_matches_it_not_before_a_trailing_newline():
    assert dns1035_label_errors("web") == []
    assert dns1035_label_errors("web\n") != []
    errors = embedded_resource_errors({"apiVersion": "v1", "kind": "Web\n"}, "spec.x")
    assert [e.field for e in errors] == ["spec.x.kind"]
