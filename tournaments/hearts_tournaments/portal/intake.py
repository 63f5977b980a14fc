"""How a request's body comes into the portal: within a byte cap and a time limit, whatever its
headers say, and an upload's file straight to a spool file on disk.

uvicorn hands an app a body in chunks as they arrive, and neither it nor Starlette bounds how
many bytes or how long they take: a ``Content-Length`` is only a claim (a chunked body overrides
it), and Starlette's form parser spools a file of any size to the system's temporary folder. So
every portal route that reads a body reads it here, counting the bytes as they come:

* :func:`read_form`: a small urlencoded form (sign-in, sign-out, registration) into memory, at
  most :data:`MAX_FORM_BYTES`;
* :func:`read_upload`: a ``multipart/form-data`` upload whose file part is written, as it
  arrives, to a file of the :class:`Spool`, at most :data:`MAX_UPLOAD_BYTES` in all.

Past the cap the answer is 413, past the time limit 408, and the rest of the body is never read
(uvicorn closes the connection after such an answer).

The :class:`Spool` is a folder of the league (``LEAGUE/spool``, 0700) with a fixed number of
places: an upload holds one from its first byte until the portal's worker is done with it, at
most :data:`SHARE` of them one entrant's. So the folder never holds more than
``places × MAX_UPLOAD_BYTES``, and no entrant can fill the queue.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import shutil
import threading
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from python_multipart import MultipartParser
from python_multipart.exceptions import FormParserError
from python_multipart.multipart import parse_options_header
from starlette.requests import ClientDisconnect, Request

from hearts_tournaments.portal.uploads import MAX_ARCHIVE_BYTES

if TYPE_CHECKING:
    from python_multipart.multipart import MultipartCallbacks

#: Bytes of a sign-in, sign-out or registration form at most.
MAX_FORM_BYTES = 16 * 1024
#: Bytes of an upload's body at most: the archive and the form around it.
MAX_UPLOAD_BYTES = MAX_ARCHIVE_BYTES + 64 * 1024
#: Bytes of a text field of the upload form (its CSRF token) at most, and fields and files in all.
MAX_FIELD_BYTES = 1024
MAX_PARTS = 4
#: Seconds a request's body may take to arrive, by default.
BODY_SECONDS = 120.0
#: Uploads arriving, waiting or being checked at once (the spool's places), and one entrant's.
PLACES = 20
SHARE = 2
#: Where the spool lives inside the league folder.
SPOOL = "spool"


class Refused(Exception):
    """A request refused while its body arrived: the HTTP status and one line saying why."""

    def __init__(self, status: int, why: str) -> None:
        super().__init__(why)
        self.status = status
        self.why = why


async def _receive(request: Request, cap: int, seconds: float, sink: Callable[[bytes], None]) -> int:
    """Hands the body's chunks to ``sink`` as they arrive; its size.

    Raises:
        Refused: 413 past ``cap`` bytes (the rest is not read), 408 past ``seconds``, 400 when
            the client went away.
    """
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > cap:
        raise _too_large(cap, f"it says {declared} bytes")
    size = 0
    try:
        async with asyncio.timeout(seconds):
            async for chunk in request.stream():
                size += len(chunk)
                if size > cap:
                    raise _too_large(cap, "it goes on")
                sink(chunk)
    except TimeoutError:
        raise Refused(
            408, f"the request's body did not arrive within {seconds:g} s: send it again over a faster link"
        ) from None
    except ClientDisconnect:
        raise Refused(400, "the connection closed before the request's body arrived") from None
    return size


def _too_large(cap: int, how: str) -> Refused:
    limit = f"{cap >> 20} MiB" if cap >= 1 << 20 else f"{cap >> 10} KiB"
    return Refused(413, f"the request's body is more than {limit} ({how}): it is refused")


async def read_form(request: Request, seconds: float) -> dict[str, str]:
    """A small urlencoded form's fields (an empty dict for any other kind of body).

    Raises:
        Refused: over :data:`MAX_FORM_BYTES`, too slow, or not a form of a few fields.
    """
    chunks: list[bytes] = []
    await _receive(request, MAX_FORM_BYTES, seconds, chunks.append)
    kind, _ = parse_options_header(request.headers.get("content-type", ""))
    if kind != b"application/x-www-form-urlencoded":
        return {}
    try:
        pairs = urllib.parse.parse_qsl(
            b"".join(chunks).decode("utf-8", "replace"), keep_blank_values=True, max_num_fields=MAX_PARTS
        )
    except ValueError:
        raise Refused(400, f"the form has more than {MAX_PARTS} fields") from None
    return dict(pairs)


@dataclass
class Upload:
    """A received upload: its form's text fields and the size of its file (None: it had none)."""

    fields: dict[str, str] = field(default_factory=dict)
    file_bytes: int | None = None
    body_bytes: int = 0


class _Parts:
    """The callbacks of python-multipart's parser: text fields kept, the file ``bot`` written out."""

    def __init__(self, out: Callable[[bytes], object], upload: Upload) -> None:
        self.out = out
        self.upload = upload
        self.parts = 0
        self.header = b""
        self.value = b""
        self.disposition = b""
        self.name = ""
        self.is_file = False
        self.text = bytearray()
        self.ended = False

    def on_part_begin(self) -> None:
        self.parts += 1
        if self.parts > MAX_PARTS:
            raise Refused(400, f"the upload has more than {MAX_PARTS} parts: send -F bot=@bot.tar.gz")
        self.disposition, self.name, self.is_file, self.text = b"", "", False, bytearray()

    def on_header_field(self, data: bytes, start: int, end: int) -> None:
        self.header += data[start:end]

    def on_header_value(self, data: bytes, start: int, end: int) -> None:
        self.value += data[start:end]

    def on_header_end(self) -> None:
        if self.header.lower() == b"content-disposition":
            self.disposition = self.value
        self.header, self.value = b"", b""

    def on_headers_finished(self) -> None:
        _, options = parse_options_header(self.disposition)
        self.name = options.get(b"name", b"").decode("utf-8", "replace")
        self.is_file = b"filename" in options
        if self.is_file and (self.name != "bot" or self.upload.file_bytes is not None):
            raise Refused(400, "the upload's one file must be the field 'bot': send -F bot=@bot.tar.gz")
        if self.is_file:
            self.upload.file_bytes = 0

    def on_part_data(self, data: bytes, start: int, end: int) -> None:
        if self.is_file:
            self.out(data[start:end])
            self.upload.file_bytes = (self.upload.file_bytes or 0) + end - start
            return
        self.text += data[start:end]
        if len(self.text) > MAX_FIELD_BYTES:
            raise Refused(400, f"the upload's field {self.name[:40]!r} is over {MAX_FIELD_BYTES} bytes")

    def on_part_end(self) -> None:
        if not self.is_file:
            self.upload.fields[self.name] = self.text.decode("utf-8", "replace")

    def on_end(self) -> None:
        self.ended = True


async def read_upload(request: Request, path: Path, seconds: float) -> Upload:
    """Receives a ``multipart/form-data`` upload, its file field ``bot`` written to ``path``.

    Raises:
        Refused: over :data:`MAX_UPLOAD_BYTES` whatever the headers say, too slow, not such a form.
    """
    kind, options = parse_options_header(request.headers.get("content-type", ""))
    boundary = options.get(b"boundary")
    if kind != b"multipart/form-data" or not boundary:
        raise Refused(400, "the upload is not a multipart form with a 'bot' file: send -F bot=@bot.tar.gz")
    upload = Upload()
    with path.open("xb") as out:
        parts = _Parts(out.write, upload)
        callbacks: MultipartCallbacks = {
            "on_part_begin": parts.on_part_begin,
            "on_header_field": parts.on_header_field,
            "on_header_value": parts.on_header_value,
            "on_header_end": parts.on_header_end,
            "on_headers_finished": parts.on_headers_finished,
            "on_part_data": parts.on_part_data,
            "on_part_end": parts.on_part_end,
            "on_end": parts.on_end,
        }
        try:
            parser = MultipartParser(boundary, callbacks)
        except FormParserError as exc:
            raise Refused(400, f"the upload's multipart boundary is refused ({exc})") from None

        def parse(chunk: bytes) -> None:
            try:
                parser.write(chunk)
            except FormParserError as exc:
                raise Refused(400, f"the upload is not a well-formed multipart form ({exc})") from None

        upload.body_bytes = await _receive(request, MAX_UPLOAD_BYTES, seconds, parse)
    if not parts.ended:
        raise Refused(400, "the upload's multipart form is cut short: send it again")
    if upload.file_bytes is None:
        raise Refused(400, "the upload has no file field 'bot': send -F bot=@bot.tar.gz")
    return upload


@dataclass(frozen=True, slots=True)
class Place:
    """One upload's place in the spool: its entrant and its file."""

    entrant: str
    path: Path


class Spool:
    """``LEAGUE/spool``: a file per upload from its first byte until the worker is done with it.

    At most ``places`` at once, ``share`` of them one entrant's; emptied when the portal starts
    (a stopped portal's uploads are given up: :func:`.uploads.abandon_unchecked`). Thread-safe:
    places are taken by the event loop and given back by the worker.
    """

    def __init__(self, folder: Path, places: int = PLACES, share: int = SHARE) -> None:
        self.folder = folder / SPOOL
        self.places = places
        self.share = share
        self.held: dict[Path, Place] = {}
        self.reserved: dict[Path, int] = {}
        self.lock = threading.Lock()
        if self.folder.is_symlink():
            self.folder.unlink()
        shutil.rmtree(self.folder, ignore_errors=True)
        self.folder.mkdir(mode=0o700)

    def take(self, entrant: str) -> Place:
        """A place for one more upload of ``entrant``.

        Raises:
            Refused: 429 when ``entrant`` holds its share, 503 when every place is held.
        """
        with self.lock:
            mine = sum(1 for place in self.held.values() if place.entrant == entrant)
            if mine >= self.share:
                raise Refused(
                    429,
                    f"{self.share} uploads of yours are arriving or waiting to be checked: send the "
                    "next once one is checked",
                )
            if len(self.held) >= self.places:
                raise Refused(
                    503,
                    f"the portal is checking {self.places} submissions already: try again in a few minutes",
                )
            place = Place(entrant, self.folder / f"{secrets.token_hex(8)}.upload")
            self.held[place.path] = place
            return place

    def reserve(self, place: Place, unpacked: int) -> None:
        """Notes the bytes ``place``'s archive unpacks to (they count for its entrant's storage)."""
        with self.lock:
            self.reserved[place.path] = unpacked

    def waiting_bytes(self, entrant: str, besides: Place) -> int:
        """Bytes ``entrant``'s other checked uploads still waiting will unpack to."""
        with self.lock:
            return sum(
                size
                for path, size in self.reserved.items()
                if path != besides.path and self.held[path].entrant == entrant
            )

    def give_back(self, place: Place) -> None:
        """Frees ``place`` and removes its file."""
        with contextlib.suppress(FileNotFoundError):
            os.unlink(place.path)
        with self.lock:
            self.held.pop(place.path, None)
            self.reserved.pop(place.path, None)

    def __len__(self) -> int:
        with self.lock:
            return len(self.held)
