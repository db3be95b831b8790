"""Answers: negotiation, encoding, compression, Status errors, and the object, list and watch forms.

`Responder` holds what every handler needs to answer (the route and the
filters hold one; nothing inherits from it): the negotiated media
type (`api.negotiation`), encoding once per object and media type (cached on
the `StoredObject`), gzip when asked and allowed, a `Status` for every error,
and the conversions of the spec (Table with the kind's columns,
PartialObjectMetadata, PartialObjectMetadataList). Lists are streamed item by
item; watches as JSON lines, Protobuf frames or a CBOR sequence.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime
from typing import Any, AsyncIterator, Callable

from quart import Response

from api import openapi
from api.audit import current_record
from api.codecs import (coalesce, coalesce_queued, encode, encode_list_chunks, encode_stored, gzip_bytes,
                        gzip_chunks, gzip_stored)
from api.negotiation import Choice, negotiate, wants_pretty
from api.request_class import current_request
from api.tables import include_object_option, partial_object_metadata, partial_object_metadata_list, table
from runtime.machinery import errors
from runtime.machinery.serializer import cbor
from runtime.machinery.serializer import protobuf
from runtime.machinery.storedobject import StoredObject, dumps_json
from runtime.machinery.warnings import warning_header, warning_headers
from runtime.server.registry import DeleteResult, ListResult, WatchStream
from runtime.machinery.scheme import ResourceType

__all__ = ["Responder", "gzip_asked", "not_modified", "warning_header"]

#: The head of a JSON watch event's frame, per event type: made once, not per event and watcher.
_JSON_EVENT_HEADS = {t: b'{"type":' + dumps_json(t) + b',"object":'
                     for t in ("ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR")}


class Responder:
    """Answers for the request in context; `state` gives the server's options and feature gates."""

    __slots__ = ("state", "domain")

    def __init__(self, state: Any) -> None:
        self.state = state
        self.domain = state.registry.scheme.domain

    def gate(self, name: str) -> bool:
        return self.state.registry.gate(name)

    def choice(self, **kw: Any) -> Choice:
        request = current_request()
        return negotiate(request.headers.get("Accept"), domain=self.domain,
                         cbor=self.gate("CBORServingAndStorage"), **kw)

    def pretty(self) -> bool:
        request = current_request()
        # The query's parsed form only when it may name `pretty` (a look in C at the raw bytes first).
        query = request.query_string
        pretty = request.args.get("pretty") if b"pretty" in query or b"%" in query else None
        return wants_pretty(pretty, request.headers.get("User-Agent", ""))

    def _gzip_wanted(self) -> bool:
        """Compression asked (`Accept-Encoding: gzip`, q not 0) and allowed (gate APIResponseCompression)."""
        return self.gate("APIResponseCompression") and gzip_asked(current_request().headers.get("Accept-Encoding", ""))

    def respond(self, code: int, doc: dict[str, Any] | bytes | Iterator[bytes], choice: Choice, *,
                 warnings: list[str] = (), compressible: bool = False,
                 gzipped: Callable[[], bytes] | None = None) -> Response:
        """The answer: a document (encoded in `choice`), its bytes, or a chunk iterator streamed as written.

        `compressible` (get and list) answers are gzipped when the client
        accepts it and the body reaches `min_compress_bytes`; a stream is
        compressed incrementally, the decision taken on its first bytes. `gzipped` gives the bytes'
        compressed form when it is cached (a stored object's).
        """
        headers = {"Content-Type": choice.media_type, "Cache-Control": "no-cache, private"}
        if isinstance(doc, dict):
            _audit_response(doc)
            doc = encode(choice.codec, doc, pretty=choice.codec == "json" and self.pretty())
        if isinstance(doc, bytes):
            body: bytes | AsyncIterator[bytes] = self._maybe_gzip(doc, headers, gzipped) if compressible else doc
        else:
            body = self._stream_body(doc, headers, compressible)
        response = Response(body, status=code, headers=headers)
        if not isinstance(body, bytes):
            response.timeout = None
        for header in warning_headers(warnings):
            response.headers.add("Warning", header)
        return response

    def _stream_body(self, chunks: Iterator[bytes], headers: dict[str, str], compressible: bool
                     ) -> AsyncIterator[bytes]:
        """An async body over `chunks`, regrouped into writes of `CHUNK_BYTES`, gzipped when wanted.

        The first writes are produced here, before the answer starts, so an
        encoding error still becomes a Status, and enough is read to compare
        with `min_compress_bytes`.
        """
        grouped = coalesce(chunks)
        head: list[bytes] = []
        held = 0
        for chunk in grouped:
            head.append(chunk)
            held += len(chunk)
            if held >= self.state.min_compress_bytes:
                break
        stream: Iterator[bytes] = itertools.chain(head, grouped)
        if compressible and self._gzip_wanted() and held >= self.state.min_compress_bytes:
            headers["Content-Encoding"] = "gzip"
            headers["Vary"] = "Accept-Encoding"
            stream = gzip_chunks(stream)

        async def body() -> AsyncIterator[bytes]:
            for chunk in stream:  # each write to the client is a checkpoint
                if chunk:
                    yield chunk
        return body()

    def _maybe_gzip(self, body: bytes, headers: dict[str, str], gzipped: Callable[[], bytes] | None = None) -> bytes:
        if self._gzip_wanted() and len(body) >= self.state.min_compress_bytes:
            headers["Content-Encoding"] = "gzip"
            headers["Vary"] = "Accept-Encoding"
            return gzipped() if gzipped is not None else gzip_bytes(body)
        return body

    def status(self, exc: errors.StatusError) -> Response:
        """A Status answer in the negotiated codec (JSON when nothing fits; conversions do not apply)."""
        try:
            choice = self.choice(allowed_as=("", "Table", "PartialObjectMetadata", "PartialObjectMetadataList",
                                              "APIGroupDiscoveryList"))
            if choice.as_kind:
                choice = Choice(choice.codec, choice.media_type)
        except errors.StatusError:
            choice = Choice("json", "application/json")
        status = exc.status()
        record = current_record()
        if record is not None:
            record.log_status(status)
        response = self.respond(exc.code, status, choice)
        if exc.retry_after is not None:
            response.headers["Retry-After"] = str(exc.retry_after)
        for key, value in exc.headers.items():
            response.headers[key] = value
        return response

    def openapi_answer(self, data: bytes, content_type: str, *, immutable: bool = False) -> Response:
        """OpenAPI bytes with their ETag; 304 when If-None-Match names it; hash-pinned URLs cached a year."""
        request = current_request()
        etag = openapi.content_etag(data)
        headers = {"Content-Type": content_type, "Etag": etag, "Vary": "Accept"}
        if immutable:
            headers["Cache-Control"] = "public, immutable"
            headers["Expires"] = format_datetime(datetime.now(timezone.utc) + timedelta(days=365), usegmt=True)
        else:
            headers["Cache-Control"] = "no-cache, private"
        if etag in [t.strip() for t in request.headers.get("If-None-Match", "").split(",")]:
            return not_modified(headers)
        return Response(data, status=200, headers=headers)


    # ---- object, list and watch forms ---------------------------------------------------------------

    def _without_protobuf(self, choice: Choice, api_version: str, kind: str, *, stream: bool = False) -> Choice:
        """`choice`, or the next acceptable plain answer when it is Protobuf and the kind has no Protobuf form.

        Kubernetes leaves Protobuf out of negotiation for such kinds, so
        `application/vnd.kubernetes.protobuf, application/json` gets JSON;
        Protobuf alone gets 406.
        """
        if choice.codec != "protobuf" or protobuf.supports(api_version, kind):
            return choice
        return self.choice(protobuf_ok=False, allowed_as=("",), stream=stream)

    def object_response(self, code: int, obj: StoredObject, choice: Choice, rt: ResourceType, *,
                         warnings: list[str] = (), compressible: bool = False) -> Response:
        """One object, as itself, a one-row Table or a PartialObjectMetadata (a list form asked: the next
        acceptable range, 406 when there is none)."""
        if choice.as_kind == "Table":
            doc = table(rt, [obj], meta_api_version=choice.meta_api_version,
                        resource_version=obj.obj["metadata"].get("resourceVersion", ""),
                        include_object=include_object_option(current_request().args.get("includeObject")))
            return self.respond(code, doc, choice, warnings=warnings, compressible=compressible)
        if choice.as_kind == "PartialObjectMetadataList":
            # The spec (media types 11): a fallback in Accept is served instead of 406.
            choice = self._fallback(choice, "you requested PartialObjectMetadataList, but the requested object "
                                            "is not a list", ("", "Table", "PartialObjectMetadata"))
            if choice.as_kind:
                return self.object_response(code, obj, choice, rt, warnings=warnings, compressible=compressible)
        if choice.as_kind == "PartialObjectMetadata":
            doc = partial_object_metadata(obj.obj, choice.meta_api_version)
            return self.respond(code, doc, choice, warnings=warnings, compressible=compressible)
        choice = self._without_protobuf(choice, rt.api_version, rt.kind)
        pretty = choice.codec == "json" and self.pretty()
        _audit_response(obj)
        return self.respond(code, encode_stored(choice.codec, obj, pretty=pretty), choice, warnings=warnings,
                             compressible=compressible,
                             gzipped=None if pretty else lambda: gzip_stored(choice.codec, obj))

    def _fallback(self, choice: Choice, refusal: str, allowed_as: tuple[str, ...]) -> Choice:
        """The next acceptable range among `allowed_as` when `choice` cannot be served; 406 `refusal` if none."""
        try:
            return self.choice(allowed_as=allowed_as)
        except errors.NotAcceptable:
            raise errors.NotAcceptable(refusal) from None

    def delete_response(self, deleted: DeleteResult, choice: Choice, rt: ResourceType) -> Response:
        if isinstance(deleted.body, StoredObject):
            return self.object_response(deleted.code, deleted.body, choice, rt, warnings=deleted.warnings)
        return self.respond(deleted.code, deleted.body, choice, warnings=deleted.warnings)

    def list_response(self, listed: ListResult, choice: Choice, rt: ResourceType) -> Response:
        """A list, as itself, a Table or a PartialObjectMetadataList (also for `as=PartialObjectMetadata`).

        JSON and Protobuf lists are streamed item by item (`encode_list_chunks`),
        gzipped on the fly when asked; pretty JSON and Tables are built whole.
        """
        request = current_request()
        meta: dict[str, Any] = {"resourceVersion": str(listed.resource_version)}
        if listed.continue_token:
            meta["continue"] = listed.continue_token
        if listed.remaining is not None:
            meta["remainingItemCount"] = listed.remaining
        record = current_record()
        if record is not None and record.wants_response:
            record.log_response_object({"kind": rt.list_kind, "apiVersion": rt.api_version, "metadata": meta,
                                        "items": [o.obj for o in listed.items]})
        if choice.as_kind == "Table":
            doc = table(rt, listed.items, meta_api_version=choice.meta_api_version, list_meta=meta,
                        include_object=include_object_option(request.args.get("includeObject")))
            return self.respond(200, doc, choice, compressible=True)
        if choice.as_kind in ("PartialObjectMetadata", "PartialObjectMetadataList"):
            # The spec (media types 11): `as=PartialObjectMetadata` on a collection is a PartialObjectMetadataList.
            mv = choice.meta_api_version
            header = partial_object_metadata_list(meta, mv)
            items: Sequence[Any] = _Mapped(listed.items, lambda o: partial_object_metadata(o.obj, mv))
        else:
            choice = self._without_protobuf(choice, rt.api_version, rt.list_kind)
            header = {"kind": rt.list_kind, "apiVersion": rt.api_version, "metadata": meta}
            items = listed.items
        if choice.codec == "json" and self.pretty():
            return self.respond(200, dict(header, items=[i.obj if isinstance(i, StoredObject) else i
                                                          for i in items]), choice, compressible=True)
        return self.respond(200, encode_list_chunks(choice.codec, header, items), choice, compressible=True)

    def watch_response(self, stream: WatchStream, choice: Choice, rt: ResourceType, *,
                        track: Callable[[AsyncIterator[bytes]], AsyncIterator[bytes]] | None = None) -> Response:
        """A watch: JSON lines, Protobuf length-prefixed frames, or a CBOR Sequence.

        `track` wraps the stream of frames (the chain's accounting of open watches).

        `choice` was negotiated for a stream (no YAML form; `application/cbor-seq`).
        With `as=Table` each event's object is a Table (columns on the first
        only); with `as=PartialObjectMetadata(List)` a PartialObjectMetadata.
        ERROR events carry the Status unchanged.
        """
        request = current_request()
        if not choice.as_kind:
            choice = self._without_protobuf(choice, rt.api_version, rt.kind, stream=True)
        codec, as_kind, meta_version = choice.codec, choice.as_kind, choice.meta_api_version
        include = include_object_option(request.args.get("includeObject")) if as_kind == "Table" else ""
        first = [True]

        def converted(event_type: str, payload: Any) -> dict[str, Any] | StoredObject:
            if not as_kind or event_type == "ERROR":
                return payload
            obj = payload.obj if isinstance(payload, StoredObject) else payload
            if as_kind == "Table":
                objects = [payload] if isinstance(payload, StoredObject) else []
                doc = table(rt, objects, meta_api_version=meta_version, include_object=include,
                            list_meta={"resourceVersion": obj.get("metadata", {}).get("resourceVersion", "")},
                            with_columns=first[0])
                first[0] = False
                return doc
            return partial_object_metadata(obj, meta_version)

        def frame(item: tuple[str, Any]) -> bytes:
            event_type, payload = item
            doc = converted(event_type, payload)
            if codec == "json":
                body = doc.json_bytes() if isinstance(doc, StoredObject) else dumps_json(doc)
                return _JSON_EVENT_HEADS[event_type] + body + b"}\n"
            if codec == "protobuf":
                if isinstance(doc, StoredObject):
                    return protobuf.encode_watch_event(event_type, encoded=encode_stored("protobuf", doc))
                return protobuf.encode_watch_event(event_type, doc)
            if isinstance(doc, StoredObject):
                return cbor.encode_watch_event(event_type, None, encoded_object=encode_stored("cbor", doc))
            return cbor.encode_watch_event(event_type, doc)

        sent = self.state.metrics.watch_events(rt.group, rt.version, rt.kind)
        media = {"protobuf": choice.media_type + ";stream=watch", "cbor": "application/cbor-seq"}.get(
            codec, "application/json")
        writes = coalesce_queued(aiter(stream), lambda: stream.backlog, frame=frame, written=sent.inc)
        body = writes if track is None else track(writes)
        response = Response(body, status=200, headers={"Content-Type": media,
                                                             "Cache-Control": "no-cache, private"})
        response.timeout = None
        return response



def not_modified(headers: dict[str, str]) -> Response:
    """A 304 with `headers` but no Content-Type, as Go's (`http.ServeContent` drops it): a cache that
    revalidates copies the 304's headers onto the document it holds, and Quart's default would relabel it."""
    response = Response(b"", status=304, headers=headers)
    del response.headers["Content-Type"]
    return response


def _audit_response(doc: Any) -> None:
    """Give the request's audit record (at level RequestResponse) the object answered."""
    record = current_record()
    if record is not None and record.wants_response:
        record.log_response_object(doc.obj if isinstance(doc, StoredObject) else doc)


class _Mapped(Sequence):
    """`items` seen through `fn`, computed on access (a list's items converted without a second list)."""

    def __init__(self, items: Sequence[Any], fn: Callable[[Any], Any]) -> None:
        self._items, self._fn = items, fn

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, index: Any) -> Any:
        return self._fn(self._items[index])

    def __iter__(self) -> Iterator[Any]:
        return map(self._fn, self._items)


def gzip_asked(accept_encoding: str) -> bool:
    """Whether an `Accept-Encoding` header accepts gzip (named, q not 0), as kube-apiserver's compression filter."""
    for part in accept_encoding.split(","):
        coding, _, params = part.strip().partition(";")
        if coding.strip().lower() == "gzip":
            q = params.strip().removeprefix("q=").strip() if params.strip().startswith("q=") else "1"
            try:
                return float(q) > 0
            except ValueError:
                return False
    return False
