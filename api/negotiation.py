"""Content negotiation: the Accept header (types, `as`/`g`/`v` parameters, q-values) and Content-Type.

`negotiate(accept, ...)` picks the response encoding; `request_codec(ct)`
names the decoder of a request body. Nothing fits: 406 / 415 as a Status.
"""

from __future__ import annotations

from dataclasses import dataclass

from runtime import errors

__all__ = ["MediaRange", "Choice", "parse_accept", "negotiate", "request_codec", "PROTOBUF"]

PROTOBUF = "application/vnd.kubernetes.protobuf"


@dataclass(frozen=True)
class MediaRange:
    type: str
    params: tuple[tuple[str, str], ...]
    q: float

    def param(self, name: str) -> str:
        return dict(self.params).get(name, "")


@dataclass(frozen=True)
class Choice:
    """The negotiated answer: codec (json|yaml|protobuf|cbor), its media type, and the `as` form."""

    codec: str
    media_type: str
    as_kind: str = ""  # "", Table, PartialObjectMetadata, PartialObjectMetadataList, APIGroupDiscoveryList
    group: str = ""
    version: str = ""


def parse_accept(header: str) -> list[MediaRange]:
    """Media ranges by descending q (stable for equal q), q=0 dropped."""
    ranges: list[MediaRange] = []
    for part in header.split(","):
        part = part.strip()
        if not part:
            continue
        pieces = [p.strip() for p in part.split(";")]
        mtype = pieces[0].lower()
        params: list[tuple[str, str]] = []
        q = 1.0
        for p in pieces[1:]:
            key, _, value = p.partition("=")
            key, value = key.strip().lower(), value.strip().strip('"')
            if key == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
            else:
                params.append((key, value))
        if q > 0:
            ranges.append(MediaRange(mtype, tuple(params), q))
    return sorted(ranges, key=lambda r: -r.q)


def protobuf_types(domain: str) -> tuple[str, ...]:
    """Protobuf media types: Kubernetes' own, and the domain's (`vnd.svc.protobuf` for `svc.io`)."""
    label = domain.split(".")[0]
    return (PROTOBUF, f"application/vnd.{label}.protobuf", f"application/vnd.{domain}.protobuf")


def _codec_of(mtype: str, domain: str, cbor: bool) -> tuple[str, str] | None:
    if mtype in ("application/json", "*/*", "application/*"):
        return "json", "application/json"
    if mtype == "application/yaml":
        return "yaml", "application/yaml"
    if mtype in protobuf_types(domain):
        return "protobuf", mtype
    if mtype == "application/cbor" and cbor:
        return "cbor", "application/cbor"
    return None


def negotiate(accept: str | None, *, domain: str, cbor: bool = False,
              allowed_as: tuple[str, ...] = ("", "Table", "PartialObjectMetadata", "PartialObjectMetadataList"),
              protobuf_ok: bool = True) -> Choice:
    """Pick the first acceptable media range; raise NotAcceptable when none fits."""
    if not accept:
        return Choice("json", "application/json")
    meta_groups = ("meta.k8s.io", f"meta.{domain}")
    for r in parse_accept(accept):
        found = _codec_of(r.type, domain, cbor)
        if found is None:
            continue
        codec, media = found
        if codec == "protobuf" and not protobuf_ok:
            continue
        as_kind = r.param("as")
        if as_kind not in allowed_as:
            continue
        if as_kind in ("Table", "PartialObjectMetadata", "PartialObjectMetadataList"):
            if r.param("g") not in meta_groups or r.param("v") not in ("v1", "v1beta1"):
                continue
            if as_kind == "Table" and codec in ("protobuf",):
                continue
        if as_kind == "APIGroupDiscoveryList":
            if r.param("g") != "apidiscovery.k8s.io" or r.param("v") not in ("v2", "v2beta1"):
                continue
        return Choice(codec, media, as_kind, r.param("g"), r.param("v"))
    supported = ["application/json", "application/yaml", PROTOBUF] + (["application/cbor"] if cbor else [])
    raise errors.NotAcceptable(f"only the following media types are accepted: {', '.join(supported)}")


def request_codec(content_type: str | None, *, domain: str, cbor: bool = False) -> str:
    """The decoder for a request body's Content-Type; 415 when unsupported."""
    mtype = (content_type or "application/json").split(";")[0].strip().lower()
    if mtype in ("application/json", ""):
        return "json"
    if mtype == "application/yaml":
        return "yaml"
    if mtype in protobuf_types(domain):
        return "protobuf"
    if mtype == "application/cbor" and cbor:
        return "cbor"
    raise errors.UnsupportedMediaType(f'the body of the request was in an unknown format - accepted media types '
                                      f'include: application/json, application/yaml, {PROTOBUF}')
