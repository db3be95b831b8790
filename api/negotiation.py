"""Content negotiation: the Accept header (types, `as`/`g`/`v`/`stream` parameters, q-values) and Content-Type.

Pure functions of header values, after Kubernetes' `apiserver/pkg/endpoints/handlers/negotiation`:

- `parse_accept(header)` orders the media ranges by q (highest first), then
  specificity (`type/sub` before `type/*` before `*/*`), keeping the
  header's order among equals; `q=0` ranges are dropped.
- `negotiate(accept, ...)` walks the ranges in that order and returns the
  first one the server can produce, as a `Choice` (codec, the media type to
  answer with, and the conversion asked: `as=Table`, `as=PartialObjectMetadata`,
  `as=PartialObjectMetadataList`, `as=APIGroupDiscoveryList` with their
  `g`/`v`). A range whose conversion cannot be served here is skipped, so
  `...;as=Table...,application/json` falls back to full objects. None fits:
  `NotAcceptable` (406) naming the media types that would.
- `content_media_type(header)`: a Content-Type's media type (`type/subtype`,
  lower-cased, parameters dropped), parsed once per request (`api.filters`)
  and handed down; `request_codec(media_type, ...)` names the decoder of a
  request body of that type, independently of Accept; unknown:
  `UnsupportedMediaType` (415).
- `wants_pretty(...)`: pretty-printed JSON (`?pretty=true`, or a curl, Wget or
  browser User-Agent, as Kubernetes does).

Media types: `application/json` (also for `*/*` and `application/*`),
`application/yaml`, Protobuf under `application/vnd.kubernetes.protobuf` and
under the domain's name (`application/vnd.svc.protobuf` for `svc.io`, see
`protobuf_types`), and `application/cbor` only while the
`CBORServingAndStorage` gate is on. Watches (`stream=True`) have no YAML form
(Kubernetes' YAML serializer has no stream framing) and accept
`application/cbor-seq` besides `application/cbor`.

Conversions (Kubernetes' `RequestScope.AllowsConversion`): Table only in
JSON or YAML (it has no Protobuf or CBOR form), PartialObjectMetadata(List)
in every codec; both only with `g` the metadata group (`meta.k8s.io`, or
`meta.<domain>`) and `v` `v1` or `v1beta1`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from runtime.machinery import errors

__all__ = ["MediaRange", "Choice", "parse_accept", "negotiate", "content_media_type", "request_codec", "protobuf_types",
           "wants_pretty", "PROTOBUF", "JSON", "YAML", "CBOR", "CBOR_SEQ", "CONVERSIONS"]

PROTOBUF = "application/vnd.kubernetes.protobuf"
JSON = "application/json"
YAML = "application/yaml"
CBOR = "application/cbor"
CBOR_SEQ = "application/cbor-seq"

#: The `as` conversions of resource reads (get, list, watch).
CONVERSIONS = ("", "Table", "PartialObjectMetadata", "PartialObjectMetadataList")
_META_VERSIONS = ("v1", "v1beta1")
_DISCOVERY_VERSIONS = ("v2", "v2beta1")


@dataclass(frozen=True)
class MediaRange:
    """One entry of an Accept header: `type` is `type/subtype`, lower-cased; `params` exclude q."""

    type: str
    params: tuple[tuple[str, str], ...]
    q: float

    def param(self, name: str) -> str:
        return dict(self.params).get(name, "")

    @property
    def specificity(self) -> int:
        """2 for `type/sub`, 1 for `type/*`, 0 for `*/*`."""
        main, _, sub = self.type.partition("/")
        return 0 if main == "*" else 1 if sub == "*" else 2


@dataclass(frozen=True)
class Choice:
    """The negotiated answer: codec (json|yaml|protobuf|cbor), its media type, and the `as` form asked."""

    codec: str
    media_type: str
    as_kind: str = ""  # "", Table, PartialObjectMetadata, PartialObjectMetadataList, APIGroupDiscoveryList
    group: str = ""
    version: str = ""

    @property
    def meta_api_version(self) -> str:
        """The apiVersion of a converted answer: the `g`/`v` the client asked (`meta.k8s.io/v1`)."""
        return f"{self.group}/{self.version}"


def parse_accept(header: str) -> list[MediaRange]:
    """Return the media ranges of an Accept header, most preferred first; q=0 and malformed ranges dropped."""
    ranges: list[MediaRange] = []
    for part in header.split(","):
        pieces = [p.strip() for p in part.split(";")]
        mtype = pieces[0].lower()
        if "/" not in mtype:
            continue
        params: list[tuple[str, str]] = []
        q = 1.0
        for p in pieces[1:]:
            key, _, value = p.partition("=")
            key, value = key.strip().lower(), value.strip().strip('"')
            if key == "q":
                try:
                    q = min(max(float(value), 0.0), 1.0)
                except ValueError:
                    q = 0.0
            elif key:
                params.append((key, value))
        if q > 0:
            ranges.append(MediaRange(mtype, tuple(params), q))
    return sorted(ranges, key=lambda r: (-r.q, -r.specificity))


def protobuf_types(domain: str) -> tuple[str, ...]:
    """Protobuf media types: Kubernetes' own, and the domain's (`vnd.svc.protobuf` for `svc.io`)."""
    label = domain.split(".")[0]
    return tuple(dict.fromkeys((PROTOBUF, f"application/vnd.{label}.protobuf",
                                f"application/vnd.{domain}.protobuf")))


def _codec_of(mtype: str, domain: str, cbor: bool, stream: bool) -> tuple[str, str] | None:
    if mtype in (JSON, "*/*", "application/*"):
        return "json", JSON
    if mtype == YAML:
        return None if stream else ("yaml", YAML)
    if mtype in protobuf_types(domain):
        return "protobuf", mtype
    if cbor and (mtype == CBOR or (stream and mtype == CBOR_SEQ)):
        return "cbor", CBOR_SEQ if stream else CBOR
    return None


def _convertible(r: MediaRange, codec: str, domain: str) -> bool:
    """Whether the server can produce the `as` conversion `r` asks for, in `codec`."""
    as_kind, group, version = r.param("as"), r.param("g"), r.param("v")
    if as_kind == "APIGroupDiscoveryList":
        return group == "apidiscovery.k8s.io" and version in _DISCOVERY_VERSIONS
    if group not in ("meta.k8s.io", f"meta.{domain}") or version not in _META_VERSIONS:
        return False
    if as_kind == "Table":
        return codec in ("json", "yaml")
    return as_kind in ("PartialObjectMetadata", "PartialObjectMetadataList")


def supported_types(domain: str, *, cbor: bool = False, stream: bool = False) -> list[str]:
    """The media types an answer can take, for the 406 message."""
    types = [JSON] + ([] if stream else [YAML]) + [PROTOBUF]
    own = protobuf_types(domain)[1]
    if own != PROTOBUF:
        types.append(own)
    if cbor:
        types.append(CBOR_SEQ if stream else CBOR)
    return types


def negotiate(accept: str | None, *, domain: str, cbor: bool = False, allowed_as: tuple[str, ...] = CONVERSIONS,
              protobuf_ok: bool = True, stream: bool = False) -> Choice:
    """Return the first media range of `accept` the server can answer (plain JSON when `accept` is empty).

    `allowed_as` lists the conversions this endpoint serves ("" = none);
    `protobuf_ok=False` for answers without a Protobuf schema; `stream=True`
    for watches. A range with a `stream` parameter other than `watch` is
    skipped. Raises `NotAcceptable` when no range fits.
    """
    if not accept or not accept.strip():
        return Choice("json", JSON)
    return _negotiate(accept, domain, cbor, allowed_as, protobuf_ok, stream)


@lru_cache(maxsize=512)  # a client sends the same Accept on every request: parsed once (a refusal is not kept)
def _negotiate(accept: str, domain: str, cbor: bool, allowed_as: tuple[str, ...], protobuf_ok: bool,
               stream: bool) -> Choice:
    for r in parse_accept(accept):
        found = _codec_of(r.type, domain, cbor, stream)
        if found is None:
            continue
        codec, media = found
        if codec == "protobuf" and not protobuf_ok:
            continue
        if r.param("stream") not in ("", "watch"):
            continue
        as_kind = r.param("as")
        if as_kind not in allowed_as:
            continue
        if as_kind and not _convertible(r, codec, domain):
            continue
        return Choice(codec, media, as_kind, r.param("g") if as_kind else "", r.param("v") if as_kind else "")
    raise errors.NotAcceptable("only the following media types are accepted: "
                               + ", ".join(supported_types(domain, cbor=cbor, stream=stream)))


def content_media_type(content_type: str | None) -> str:
    """The media type of a Content-Type header: `type/subtype`, lower-cased, without parameters; "" for none."""
    return content_type.split(";", 1)[0].strip().lower() if content_type else ""


def request_codec(mtype: str, *, domain: str, cbor: bool = False) -> str:
    """Return the decoder of a request body by its media type (`content_media_type`; none means JSON).

    Raises `UnsupportedMediaType` (415) for any other type, for
    `application/cbor` while the CBOR gate is off, and for
    `application/cbor-seq` (a body is one item).
    """
    if mtype in (JSON, ""):
        return "json"
    if mtype == YAML:
        return "yaml"
    if mtype in protobuf_types(domain):
        return "protobuf"
    if mtype == CBOR and cbor:
        return "cbor"
    accepted = [JSON, YAML, PROTOBUF] + ([CBOR] if cbor else [])
    raise errors.UnsupportedMediaType("the body of the request was in an unknown format - accepted media types "
                                      f"include: {', '.join(accepted)}")


def wants_pretty(pretty: str | None, user_agent: str) -> bool:
    """Return whether JSON should be indented: `?pretty=` parsed as a Go bool, else by User-Agent.

    As Kubernetes' `isPrettyPrint`: a non-empty `pretty` decides (`true`,
    `1`, `t`...; anything unparsable is false); otherwise curl, Wget and
    browsers (`Mozilla/5.0`) get pretty output.
    """
    if pretty:
        return pretty in ("1", "t", "T", "true", "TRUE", "True")
    return user_agent.startswith(("curl", "Wget", "Mozilla/5.0"))
