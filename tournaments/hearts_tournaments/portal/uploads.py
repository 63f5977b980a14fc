"""A submitted bot: the archive checked before anything runs, then made the entrant's next version.

:func:`check_archive` reads a ``.tar``/``.tar.gz``/``.tar.xz``/``.tar.bz2`` or ``.zip`` archive
(a spool file, or bytes) and refuses, with one line for the entrant, anything that is not a plain
folder of a bot's files: more than :data:`MAX_ARCHIVE_BYTES`, more than :data:`MAX_FILES` entries
or :data:`MAX_UNPACKED_BYTES` unpacked, an unpacked size over :data:`MAX_RATIO` times the
archive's (a bomb), an absolute path, a ``..``, a link, a device or any other special file, an
encrypted or sparse member, two entries at one path; and a ``bot.toml`` manifest that is
missing, larger than :data:`MAX_MANIFEST_BYTES`, not TOML or not as documented
(docs/COMPETITION.md)::

    command = ["python3", "bot.py"]   # words naming the archive's files become their paths
    protocol = "stdio"                # or "grpc" (the SDK's flags are appended)
    runtime = "python-sdk"            # optional: a runtime the league provides (arena.runtimes)
    description = "lowest legal card"

It reads the archive as a stream, :data:`CHUNK` bytes at a time, and keeps none of its files'
bytes (only ``bot.toml``'s): what it holds is a few hundred KiB whatever the archive, so the
portal's memory does not grow with the uploads it checks. Nothing is written while checking.
:func:`submit_version` then unpacks the checked members, reading the archive again with the same
checks, into a private scratch folder (each file created anew, ``O_EXCL|O_NOFOLLOW``, no link
ever made), copies that into the league's content-addressed snapshot store with
:func:`hearts_tournaments.arena.snapshot.take` (through the league's own ``snapshot_files``),
removes the scratch folder, runs the pre-flight check in the sandbox as ``hearts league add``
does (the bot test kit's quick levels, whose report its submission page shows), and only when
it passes adds the snapshot as the entrant's next version (``pending`` until ``hearts league
run`` plays its validation game). A submission that fails leaves no bytes behind:
its snapshot (unless a version plays the same one) and its check's log go. The files an
entrant's versions keep are capped (:func:`storage_refusal`). The entrant's older versions play
on until the new one is active (:func:`sync_statuses`), then are retired: a submission that fails
leaves the entrant playing.
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import io
import lzma
import os
import re
import shutil
import stat
import struct
import tarfile
import tempfile
import tomllib
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from hearts_tournaments.arena import runtimes
from hearts_tournaments.arena.bots import BOT_NAME_PATTERN, BotProtocol, BotSpec
from hearts_tournaments.arena.sandbox import SYSTEM_DIRS, SandboxKind
from hearts_tournaments.league import commands
from hearts_tournaments.league.config import LeagueError
from hearts_tournaments.league.play import play_settings
from hearts_tournaments.league.store import ACTIVE as VERSION_ACTIVE
from hearts_tournaments.league.store import ERROR as VERSION_ERROR
from hearts_tournaments.league.store import LeagueStore
from hearts_tournaments.portal.accounts import ACTIVE, ERROR, PENDING, VALIDATING, PortalStore
from hearts_tournaments.portal.kit_reports import save_report
from hearts_tournaments.tournament.preflight import preflight

#: The most bytes of an uploaded archive: the example bots fit, with or without the runtime that
#: spares their dependencies, the heaviest (the Java example's shaded jar, 19.5 MB) with room to
#: spare (bench/runtimes.py sizes; docs/COMPETITION.md, "What fits").
MAX_ARCHIVE_BYTES = 32 * 1024 * 1024
#: The most bytes of its files, unpacked.
MAX_UNPACKED_BYTES = 64 * 1024 * 1024
#: The most entries (files and folders).
MAX_FILES = 2000
#: Unpacked size at most this many times the archive's, beyond :data:`RATIO_FREE_BYTES`.
MAX_RATIO = 100
RATIO_FREE_BYTES = 1024 * 1024
#: The most bytes of ``bot.toml``.
MAX_MANIFEST_BYTES = 4096
MAX_PATH_CHARS = 255
MAX_DEPTH = 16
MANIFEST = "bot.toml"
#: Where a program named without a path (``python3``) is looked for: the system's folders.
PROGRAM_PATH = "/usr/local/bin:/usr/bin:/bin"
#: Bytes of files one entrant's versions may keep in the league's snapshot store, by default.
MAX_ENTRANT_BYTES = 256 * 1024 * 1024
#: Lines of a log shown to the entrant with an error, and the characters of each at most.
LOG_LINES = 20
LOG_LINE_CHARS = 300
#: Bytes an archive is read by at a time (no read asks for more, so none holds more).
CHUNK = 64 * 1024
#: Bytes of a tar's headers in all (pax and long-name headers: tarfile keeps them per member).
MAX_HEADER_BYTES = 1024 * 1024
#: Bytes of a zip's central directory at most (zipfile reads it whole).
MAX_ZIP_DIRECTORY = 1024 * 1024
MANIFEST_KEYS = ("command", "protocol", "runtime", "description", "team")
#: Where an entrant reads what a bot needs: the portal's own help page (``GET /help``).
HELP = "the portal's help page, /help"
_BAD_NAME = re.compile(r"[\x00-\x1f\\]")


class UploadError(Exception):
    """An upload refused: one line saying why and what to do."""


@dataclass(frozen=True, slots=True)
class Member:
    """A checked entry of an archive: its path, its size (None for a folder), its executable bit."""

    path: str
    size: int | None
    executable: bool


@dataclass(frozen=True, slots=True)
class Manifest:
    """``bot.toml``, checked."""

    command: tuple[str, ...]
    protocol: BotProtocol
    description: str
    runtime: str | None = None
    #: The entrant's declared team (None: the manifest names none; the team stays as it was).
    team: str | None = None


@dataclass(frozen=True, slots=True)
class CheckedArchive:
    """An archive that passed every check: its members (the manifest's folder at the root, once
    ``prefix``, the one top folder the archive holds everything in, is taken off their paths)."""

    members: tuple[Member, ...]
    manifest: Manifest
    unpacked_bytes: int
    prefix: str = ""


def _clean_path(raw: str) -> str:
    """The member's path, relative and normalised; refused when it could land outside."""
    if not raw or len(raw) > MAX_PATH_CHARS or _BAD_NAME.search(raw):
        raise UploadError(f"the archive holds an entry named {raw[:80]!r}: use plain relative file names")
    if raw.startswith("/") or re.match(r"[A-Za-z]:", raw):
        raise UploadError(
            f"the archive holds an absolute path {raw[:80]!r}: pack the folder's contents relatively"
        )
    parts = [p for p in raw.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise UploadError(
            f"the archive holds a path with '..' ({raw[:80]!r}): no entry may lead outside the bot"
        )
    if not parts:
        return ""
    if len(parts) > MAX_DEPTH:
        raise UploadError(f"the archive nests {raw[:80]!r} deeper than {MAX_DEPTH} folders")
    return "/".join(parts)


class _Tally:
    def __init__(self, size: int) -> None:
        self.size = size
        self.entries = 0
        self.bytes = 0

    def add(self, size: int) -> None:
        self.entries += 1
        self.bytes += max(0, size)
        if self.entries > MAX_FILES:
            raise UploadError(f"the archive holds more than {MAX_FILES} entries: send only what the bot runs")
        if self.bytes > MAX_UNPACKED_BYTES:
            raise _too_large()
        if self.bytes > RATIO_FREE_BYTES and self.bytes > MAX_RATIO * self.size:
            raise UploadError(
                f"the archive unpacks to over {MAX_RATIO} times its size (an archive bomb?): it is refused"
            )


def _too_large() -> UploadError:
    return UploadError(
        f"the archive unpacks to more than {MAX_UNPACKED_BYTES >> 20} MiB: send only what the bot runs"
    )


def _first(exc: BaseException) -> str:
    """An exception's message as one line (tarfile's lists every method it tried)."""
    text = str(exc).strip().splitlines()
    return text[0].rstrip(":") if text else type(exc).__name__


def _special(kind: str, path: str) -> UploadError:
    return UploadError(
        f"the archive holds {kind} at {path[:80]!r}: a bot is plain files and folders (copy what a link "
        "points to instead)"
    )


#: Bytes of a decompressed tar stream at most: the files plus room for their headers.
MAX_TAR_STREAM_BYTES = MAX_UNPACKED_BYTES + MAX_FILES * 1536 + 64 * 1024
_DECOMPRESSION_ERRORS = (zlib.error, OSError, lzma.LZMAError, EOFError, ValueError)


class _TarStream:
    """A tar stream for tarfile's random-access mode, decompressed as it is read, read forward only.

    It seeks forward by reading on, and back no further than the last block read (tarfile steps
    back one byte to find the next header). No read may ask for more than :data:`CHUNK` bytes:
    tarfile reads a pax or long-name header whole, so a larger one is refused before it is read;
    and the stream ends at :data:`MAX_TAR_STREAM_BYTES` decompressed, whatever the archive says.
    """

    def __init__(self, source: io.BufferedIOBase | IO[bytes]) -> None:
        self.source = source
        self.position = 0
        self.top = 0  # bytes taken from the source so far
        self.window = b""  # the last block of them: the stream's bytes [top - len(window), top)

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        if whence not in (io.SEEK_SET, io.SEEK_CUR):
            raise io.UnsupportedOperation("a tar stream is read forward only")
        target = offset if whence == io.SEEK_SET else self.position + offset
        if target < self.top - len(self.window):
            raise UploadError("the archive's tar stream goes back on itself: pack it again")
        self.position = min(target, self.top)
        while self.position < target and self.read(min(CHUNK, target - self.position)):
            pass
        return self.position

    def read(self, size: int | None = -1) -> bytes:
        if size is None or size < 0 or size > CHUNK:
            raise UploadError(
                f"the archive holds a tar header over {CHUNK >> 10} KiB: pack it again with plain names"
            )
        out = b""
        if self.position < self.top:
            start = len(self.window) - (self.top - self.position)
            out = self.window[start : start + size]
        while len(out) < size:
            try:
                data = self.source.read(size - len(out))
            except _DECOMPRESSION_ERRORS as exc:
                raise UploadError(f"the archive does not decompress ({_first(exc)}): pack it again") from None
            if not data:
                break
            self.top += len(data)
            if self.top > MAX_TAR_STREAM_BYTES:
                raise _too_large()
            self.window = (self.window + data)[-tarfile.BLOCKSIZE :]
            out += data
        self.position += len(out)
        return out


def _decompressing(handle: IO[bytes]) -> io.BufferedIOBase | IO[bytes]:
    """The archive's plain tar stream: ``handle`` itself, or a reader decompressing it."""
    magic = handle.read(6)
    handle.seek(0)
    if magic[:2] == b"\x1f\x8b":
        return gzip.GzipFile(fileobj=handle, mode="rb")
    if magic[:3] == b"BZh":
        return bz2.BZ2File(handle)
    if magic == b"\xfd7zXZ\x00":
        return lzma.LZMAFile(handle)
    return handle


def _chunks(read: Callable[[int], bytes], size: int, path: str) -> Iterator[bytes]:
    """A member's bytes, :data:`CHUNK` at a time; refused when there are more or fewer than ``size``."""
    left = size
    try:
        while left > 0:
            chunk = read(min(CHUNK, left))
            if not chunk:
                raise UploadError(f"the archive's entry {path!r} is cut short: pack it again")
            left -= len(chunk)
            yield chunk
        if read(1):
            raise UploadError(f"the archive's entry {path!r} is not the size it says: pack it again")
    except (tarfile.TarError, zipfile.BadZipFile, *_DECOMPRESSION_ERRORS) as exc:
        raise UploadError(
            f"the archive's entry {path!r} does not read ({_first(exc)}): pack it again"
        ) from None


#: An entry as read: checked, with its bytes to drain before the next (None for a folder).
Entry = tuple[Member, Iterator[bytes] | None]


def _tar_entries(handle: IO[bytes], tally: _Tally) -> Iterator[Entry]:
    header_bytes = 0
    try:
        with tarfile.open(fileobj=_TarStream(_decompressing(handle)), mode="r:") as archive:  # type: ignore[call-overload]
            for info in archive:
                header_bytes += len(info.name) + len(info.linkname)
                header_bytes += sum(len(k) + len(str(v)) for k, v in info.pax_headers.items())
                if header_bytes > MAX_HEADER_BYTES:
                    raise UploadError(
                        f"the archive's tar headers hold over {MAX_HEADER_BYTES >> 20} MiB: pack it again"
                    )
                path = _clean_path(info.name)
                if info.issym() or info.islnk():
                    raise _special("a link", info.name)
                if info.ischr() or info.isblk() or info.isfifo() or info.isdev():
                    raise _special("a device or FIFO", info.name)
                if info.issparse():
                    raise _special("a sparse file", info.name)
                if not (info.isreg() or info.isdir()):
                    raise _special("a special entry", info.name)
                tally.add(info.size if info.isreg() else 0)
                if info.isdir():
                    if path:
                        yield Member(path, None, False), None
                    continue
                if not path:
                    raise UploadError("the archive holds a file with no name")
                handle_in = archive.extractfile(info)
                if handle_in is None:
                    raise _special("a special entry", info.name)
                yield (
                    Member(path, info.size, bool(info.mode & 0o111)),
                    _chunks(handle_in.read, info.size, path),
                )
    except (tarfile.TarError, EOFError, OSError, ValueError) as exc:
        raise UploadError(
            f"the archive does not read as tar or zip ({_first(exc)}): send a .tar.gz or .zip"
        ) from None


def _zip_directory(handle: IO[bytes], size: int) -> None:
    """Refuses a zip whose central directory lists more than :data:`MAX_FILES` entries or holds more
    than :data:`MAX_ZIP_DIRECTORY` bytes, from its end record, before zipfile reads it whole."""
    tail_size = min(size, 22 + 65535)
    handle.seek(size - tail_size)
    tail = handle.read(tail_size)
    handle.seek(0)
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or len(tail) - at < 22:
        return  # zipfile says what is wrong
    if at >= 20 and tail[at - 20 : at - 16] == b"PK\x06\x07":
        raise UploadError("the archive is a zip64: a bot fits a plain .zip or a .tar.gz")
    entries, directory = struct.unpack("<2xHL", tail[at + 8 : at + 16])
    if entries > MAX_FILES:
        raise UploadError(f"the archive holds more than {MAX_FILES} entries: send only what the bot runs")
    if directory > MAX_ZIP_DIRECTORY:
        raise UploadError(
            f"the zip's directory takes over {MAX_ZIP_DIRECTORY >> 20} MiB: pack it again with plain names"
        )


def _zip_entries(handle: IO[bytes], size: int, tally: _Tally) -> Iterator[Entry]:
    try:
        _zip_directory(handle, size)
        with zipfile.ZipFile(handle) as archive:
            infos = archive.infolist()
            if len(infos) > MAX_FILES:
                raise UploadError(
                    f"the archive holds more than {MAX_FILES} entries: send only what the bot runs"
                )
            for info in infos:
                _clean_path(info.filename)
                mode = (info.external_attr >> 16) & 0xFFFF
                kind = stat.S_IFMT(mode)
                if kind == stat.S_IFLNK:
                    raise _special("a link", info.filename)
                if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
                    raise _special("a device or FIFO", info.filename)
                if info.flag_bits & 0x1:
                    raise UploadError(
                        f"the archive's entry {info.filename[:80]!r} is encrypted: send it plain"
                    )
                tally.add(0 if info.is_dir() else info.file_size)
            for info in infos:
                path = _clean_path(info.filename)
                if info.is_dir():
                    if path:
                        yield Member(path, None, False), None
                    continue
                executable = bool((info.external_attr >> 16) & 0o111)
                with archive.open(info) as member:
                    yield Member(path, info.file_size, executable), _chunks(member.read, info.file_size, path)
    except (
        zipfile.BadZipFile,
        zipfile.LargeZipFile,
        EOFError,
        OSError,
        ValueError,
        NotImplementedError,
        zlib.error,
    ) as exc:
        raise UploadError(
            f"the archive does not read as zip ({_first(exc)}): send a .tar.gz or .zip"
        ) from None


@contextlib.contextmanager
def _opened(archive: bytes | Path) -> Iterator[tuple[IO[bytes], int]]:
    """The archive open for reading, and its size."""
    if isinstance(archive, bytes):
        yield io.BytesIO(archive), len(archive)
        return
    with archive.open("rb") as handle:
        yield handle, os.fstat(handle.fileno()).st_size


def _entries(handle: IO[bytes], size: int) -> Iterator[Entry]:
    """Every entry of an archive of ``size`` bytes, checked as it comes (see :class:`Entry`)."""
    if size > MAX_ARCHIVE_BYTES:
        raise UploadError(f"the archive is {size} bytes, more than {MAX_ARCHIVE_BYTES >> 20} MiB")
    if not size:
        raise UploadError("the upload is empty: send a .tar.gz or .zip of the bot's folder")
    tally = _Tally(size)
    zipped = handle.read(4) == b"PK\x03\x04"
    handle.seek(0)
    yield from _zip_entries(handle, size, tally) if zipped else _tar_entries(handle, tally)


def _manifest(text: bytes, names: set[str]) -> Manifest:
    if len(text) > MAX_MANIFEST_BYTES:
        raise UploadError(
            f"bot.toml is {len(text)} bytes, more than {MAX_MANIFEST_BYTES}: "
            f"keep it to its {len(MANIFEST_KEYS)} keys"
        )
    try:
        data = tomllib.loads(text.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UploadError(f"bot.toml is not valid TOML ({_first(exc)}): see {HELP}") from None
    unknown = sorted(set(data) - set(MANIFEST_KEYS))
    if unknown:
        raise UploadError(
            f"bot.toml has unknown keys {', '.join(unknown)}: it takes {', '.join(MANIFEST_KEYS)}"
        )
    command = data.get("command")
    if isinstance(command, str):
        import shlex

        try:
            command = shlex.split(command)
        except ValueError as exc:
            raise UploadError(f"bot.toml's command does not parse ({exc})") from None
    if (
        not isinstance(command, list)
        or not command
        or len(command) > 32
        or not all(isinstance(w, str) and w and len(w) <= 200 and "\0" not in w for w in command)
    ):
        raise UploadError(
            'bot.toml needs command = ["program", "args", ...] (at most 32 words): e.g. ["python3", "bot.py"]'
        )
    protocol = data.get("protocol", "grpc")
    if protocol not in tuple(BotProtocol):
        raise UploadError(f'bot.toml\'s protocol must be "grpc" or "stdio", not {protocol!r}')
    description = data.get("description", "")
    if not isinstance(description, str) or len(description) > 500:
        raise UploadError("bot.toml's description must be text of at most 500 characters")
    runtime = data.get("runtime")
    if runtime is not None:
        if not isinstance(runtime, str) or runtime not in runtimes.RUNTIMES:
            shown = repr(runtime)[:60]
            raise UploadError(
                f"bot.toml's runtime must be one of {runtimes.names()}, not {shown}: see /runtimes"
            )
        if runtimes.RUNTIMES[runtime].installed() is None:
            raise UploadError(
                f"bot.toml's runtime {runtime!r} is not installed on the league's machine: /runtimes lists "
                "the ones it offers"
            )
    team = data.get("team")
    if team is not None and (
        not isinstance(team, str) or not (team == "" or BOT_NAME_PATTERN.fullmatch(team))
    ):
        raise UploadError(
            "bot.toml's team must be a name of letters, digits, '.', '_' or '-' (at most 40), "
            'or "" for none'
        )
    return Manifest(tuple(command), BotProtocol(protocol), description, runtime, team)


def check_archive(archive: bytes | Path) -> CheckedArchive:
    """Every check of an upload (the file ``archive``, or its bytes), reading it once as a stream;
    nothing is written, and no file's bytes are kept but the manifest's.

    Raises:
        UploadError: one line saying what is wrong and what to do.
    """
    members: list[Member] = []
    # bot.toml at the root, and the first in a top folder (it counts only if that is the one top).
    manifests: dict[str, bytes] = {}
    with _opened(archive) as (handle, size):
        for member, chunks in _entries(handle, size):
            members.append(member)
            if chunks is None:
                continue
            nested = member.path.partition("/")[2] == MANIFEST and manifests.keys() <= {MANIFEST}
            if (member.path == MANIFEST or nested) and (member.size or 0) <= MAX_MANIFEST_BYTES:
                manifests[member.path] = b"".join(chunks)
            for _chunk in chunks:  # read through: the archive's own checks
                pass
    unpacked = sum(m.size or 0 for m in members)
    kinds: dict[str, bool] = {}
    for member in members:
        folder = member.size is None
        if member.path in kinds and not (folder and kinds[member.path]):
            raise UploadError(f"the archive holds {member.path!r} twice: pack it again")
        kinds[member.path] = folder
    for path in kinds:
        parent = path.rpartition("/")[0]
        while parent:
            if kinds.get(parent) is False:
                raise UploadError(f"the archive holds {parent!r} as a file and as a folder")
            parent = parent.rpartition("/")[0]
    # bot.toml at the root, or in the one folder everything is in (`tar czf bot.tgz mybot/`).
    prefix = ""
    if MANIFEST not in kinds:
        tops = {m.path.split("/")[0] for m in members}
        if len(tops) == 1 and f"{next(iter(tops))}/{MANIFEST}" in kinds:
            prefix = next(iter(tops)) + "/"
        else:
            raise UploadError(f"the archive holds no bot.toml at its root: see {HELP} for its keys")
    if kinds[prefix + MANIFEST]:
        raise UploadError("bot.toml is a folder: it must be the manifest file")
    stripped = tuple(
        Member(m.path[len(prefix) :], m.size, m.executable) for m in members if m.path != prefix[:-1]
    )
    manifest_size = next(m.size for m in stripped if m.path == MANIFEST) or 0
    if manifest_size > MAX_MANIFEST_BYTES:
        raise UploadError(
            f"bot.toml is {manifest_size} bytes, more than {MAX_MANIFEST_BYTES}: "
            f"keep it to its {len(MANIFEST_KEYS)} keys"
        )
    files = {m.path for m in stripped if m.size is not None}
    manifest = _manifest(manifests[prefix + MANIFEST], files)
    return CheckedArchive(stripped, manifest, unpacked, prefix)


def unpack(archive: bytes | Path, checked: CheckedArchive, target: Path) -> None:
    """Writes the checked members of ``archive`` under the new folder ``target`` as it reads them
    (the same checks again; never through a link).

    Raises:
        UploadError: the archive is not the one ``checked`` describes.
        OSError: ``target`` could not be written.
    """
    expected = {m.path: m for m in checked.members}
    target.mkdir(mode=0o700)
    root = os.open(target, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        with _opened(archive) as (handle, size):
            for member, chunks in _entries(handle, size):
                if member.path == checked.prefix[:-1]:
                    continue
                path = member.path[len(checked.prefix) :]
                if not member.path.startswith(checked.prefix) or expected.get(path) != Member(
                    path, member.size, member.executable
                ):
                    raise UploadError("the archive changed after it was checked: submit it again")
                _write(root, path, chunks, member.executable)
    finally:
        os.close(root)


def _write(root: int, path: str, chunks: Iterator[bytes] | None, executable: bool) -> None:
    """One member under the folder open at ``root``: its folders made as needed, then the folder
    or the file itself (created anew, never through a link)."""
    parts = path.split("/")
    fd = os.dup(root)
    try:
        for part in parts[:-1]:
            with contextlib.suppress(FileExistsError):
                os.mkdir(part, 0o700, dir_fd=fd)
            sub = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = sub
        if chunks is None:
            with contextlib.suppress(FileExistsError):
                os.mkdir(parts[-1], 0o700, dir_fd=fd)
            return
        mode = 0o700 if executable else 0o600
        out = os.open(parts[-1], os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode, dir_fd=fd)
        with os.fdopen(out, "wb") as written:
            for chunk in chunks:
                written.write(chunk)
    finally:
        os.close(fd)


def bot_spec(name: str, checked: CheckedArchive, target: Path) -> BotSpec:
    """The version's spec: its command with the archive's file names made paths under ``target``,
    its program a word its runtime maps (``python3`` with ``runtime = "python-sdk"``: the runtime
    finds it when the bot starts), else one of the archive's files, else a program of the system's
    folders (named without a path: found in :data:`PROGRAM_PATH`, never a user's shims; or by its
    path there), always sandboxed, its files the folder ``target``.

    A program anywhere else is refused: the sandbox would show the bot the folder it lives in.
    """
    files = {m.path for m in checked.members if m.size is not None}
    runtime = runtimes.RUNTIMES[checked.manifest.runtime] if checked.manifest.runtime else None
    words = []
    for i, word in enumerate(checked.manifest.command):
        clean = word[2:] if word.startswith("./") else word
        if clean in files:
            words.append(str(target / clean))
        elif i == 0 and runtime is not None and word in runtime.words:
            words.append(word)
        elif i == 0 and "/" not in word:
            found = shutil.which(word, path=PROGRAM_PATH)
            if found is None:
                raise UploadError(
                    f"bot.toml's program {word!r} is not installed on the league's machine ({PROGRAM_PATH}): "
                    "name a runtime that provides it (see /runtimes), or ship the program in the archive"
                )
            words.append(found)
        elif i == 0 and not _system_program(word):
            raise UploadError(
                f"bot.toml's program {word[:80]!r} is neither a file of the archive nor a program of the "
                f"league's machine in {', '.join(SYSTEM_DIRS[:3])}: ship it in the archive and name it by "
                'its path there (["./bot"])'
            )
        else:
            words.append(word)
    return BotSpec(
        name=name,
        command=tuple(words),
        workdir=target,
        files=(target,),
        sandbox=SandboxKind.BWRAP,
        protocol=checked.manifest.protocol,
        runtime=checked.manifest.runtime,
    )


def _system_program(word: str) -> bool:
    """Whether ``word`` is an absolute path in the system's folders (nothing else gets bound for it)."""
    path = Path(os.path.normpath(word))
    return path.is_absolute() and any(Path(d) in path.parents for d in SYSTEM_DIRS)


def first_lines(path: Path | None, count: int = LOG_LINES) -> str:
    """The first ``count`` lines of a log, each cut at :data:`LOG_LINE_CHARS` ('' when there is none)."""
    if path is None:
        return ""
    lines = []
    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            for _ in range(count):
                line = handle.readline(LOG_LINE_CHARS)
                if not line:
                    break
                if not line.endswith("\n"):  # cut short: the rest of the line is passed over
                    while (rest := handle.readline(CHUNK)) and not rest.endswith("\n"):
                        pass
                    line += " ...\n" if rest else ""
                lines.append(line)
    except OSError:
        return ""
    return "".join(lines)


def _bytes_under(folder: Path) -> int:
    """Bytes of the files under ``folder`` (not following links)."""
    total = 0
    for root, _dirs, files in os.walk(folder):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(root, name)).st_size
    return total


def _mib(size: int) -> str:
    return f"{size / (1 << 20):.1f}".removesuffix(".0") + " MiB"


def storage_refusal(store: LeagueStore, entrant: str, adding: int, cap: int) -> str | None:
    """Why ``adding`` more bytes of files would take ``entrant``'s versions over ``cap``, or None.

    An entrant's versions keep their files in the league's snapshot store (every version, retired
    or in error too: the league keeps its versions), so their bytes are capped per entrant.
    """
    folders = {v.spec.snapshot for v in store.versions(entrant=entrant) if v.spec.snapshot is not None}
    held = sum(_bytes_under(folder) for folder in folders)
    if held + adding <= cap:
        return None
    return (
        f"{entrant}'s versions would hold {_mib(held + adding)} of files with this one, more than the "
        f"{_mib(cap)} an entrant may keep: send a smaller bot, or ask the organiser for more room"
    )


def _forget(league: Path, snapshot: Path | None, log: Path | None) -> None:
    """What a failed submission left: its snapshot, unless a version plays that same one, and its
    check's log in the league's ``logs/``."""
    if snapshot is not None:
        with LeagueStore.open(league, read_only=True) as store:
            kept = any(v.spec.snapshot == snapshot for v in store.versions())
        if not kept:
            shutil.rmtree(snapshot, ignore_errors=True)
    if log is not None and (league / "logs") in log.parents:
        with contextlib.suppress(OSError):
            log.unlink()
            log.parent.rmdir()  # when it was the folder's only file


def submit_version(
    league: Path,
    portal: PortalStore,
    sid: int,
    name: str,
    archive: Path,
    checked: CheckedArchive,
    emit: Callable[[str], None],
    keep_bytes: int,
) -> None:
    """Unpacks a checked archive into the league's snapshot store, checks it in the sandbox, and
    adds it as ``name``'s next version when it passes (the submission's status says how it went).

    A submission that fails leaves no bytes: its scratch folder, its snapshot and its check's log
    go. ``keep_bytes`` caps what the entrant's versions keep (:func:`storage_refusal`).
    """
    account = portal.account(name)
    if account is None or account.revoked is not None:
        portal.set_submission(sid, ERROR, f"{name}'s account was revoked before its upload was checked")
        return
    portal.set_submission(sid, VALIDATING, "checking it in the sandbox (the bot test kit's quick levels)")
    league = league.absolute()
    scratch = Path(tempfile.mkdtemp(prefix="hearts-upload-"))
    snapshot: Path | None = None
    log: Path | None = None
    try:
        target = scratch / name
        unpack(archive, checked, target)
        with LeagueStore.open(league) as store:
            refused = storage_refusal(store, name, checked.unpacked_bytes, keep_bytes)
            if refused is not None:
                portal.set_submission(sid, ERROR, refused)
                return
            try:
                spec = commands.snapshot_files(store, bot_spec(name, checked, target))
            except LeagueError as exc:
                portal.set_submission(sid, ERROR, str(exc))
                return
            snapshot = spec.snapshot
            found = preflight(play_settings(store, (spec,)), league / "logs", (spec,))
            save_report(portal, sid, found.reports.get(spec.name))
            problems = found.problems
            if problems:
                problem = problems[0]
                log = problem.log
                message = f"it cannot play: {problem.cause}; fix: {problem.fix}"
                portal.set_submission(sid, ERROR, message, log=first_lines(problem.log))
                emit(f"submission {sid} of {name}: error: {message}")
                return
            update = bool(store.versions(entrant=name))
            try:
                # Kept: the entrant's version playing now goes on until this one is active.
                line = commands.add_version(store, spec, update=update, keep=True, team=checked.manifest.team)
            except LeagueError as exc:
                portal.set_submission(sid, ERROR, str(exc))
                return
            snapshot = None  # the new version's now
            warned = ", ".join(c.name for w in found.warnings for c in w.failed)
        version = line.split(":")[0]
        pending = "pending its validation game in the league"
        if warned:
            pending += f"; it plays, but fails {warned} (its kit report says why)"
        portal.set_submission(sid, VALIDATING, pending, version=version)
        emit(f"submission {sid} of {name}: {line}")
    except UploadError as exc:
        portal.set_submission(sid, ERROR, str(exc))
    except OSError as exc:
        portal.set_submission(sid, ERROR, f"the portal could not unpack it ({exc.strerror}): submit it again")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        _forget(league, snapshot, log)


def sync_statuses(league: Path, portal: PortalStore) -> None:
    """Submissions whose version the league has validated since become ``active`` or ``error``."""
    waiting = [s for s in portal.unfinished() if s.status == VALIDATING and s.version]
    if not waiting:
        return
    with LeagueStore.open(league, read_only=True) as store:
        versions = {v.id: v for v in store.versions()}
    for submission in waiting:
        version = versions.get(submission.version or "")
        if version is None or version.status not in (VERSION_ACTIVE, VERSION_ERROR):
            if version is not None and version.status not in ("pending",):
                portal.set_submission(
                    submission.id, ERROR, f"{version.id} is {version.status}: {version.note}"
                )
            continue
        if version.status == VERSION_ACTIVE:
            retired = retire_older(league, version.entrant, version.number)
            also = f"; {', '.join(retired)} retired" if retired else ""
            portal.set_submission(
                submission.id, ACTIVE, f"{version.id} passed its validation game and plays{also}"
            )
            continue
        log_path = None
        if "log: " in version.note:
            log_path = Path(version.note.rsplit("log: ", 1)[1].strip())
        note = version.note.split("; log: ")[0]
        portal.set_submission(
            submission.id,
            ERROR,
            f"{version.id} failed its validation game: {note}",
            log=first_lines(log_path),
        )


def retire_older(league: Path, entrant: str, number: int) -> list[str]:
    """Retires ``entrant``'s versions older than ``number`` still in play; their ids."""
    retired = []
    with LeagueStore.open(league) as store:
        for old in store.versions(entrant=entrant):
            if old.number < number and old.status in (VERSION_ACTIVE, "pending", "quarantined"):
                try:
                    commands.set_status(store, old.id, "retire")
                except LeagueError:
                    continue  # changed meanwhile (the organiser retired it)
                retired.append(old.id)
    return retired


def abandon_unchecked(portal: PortalStore) -> None:
    """Submissions a stopped portal never checked (its spool is emptied when it starts): error."""
    for submission in portal.unfinished():
        if submission.status == PENDING or (submission.status == VALIDATING and not submission.version):
            portal.set_submission(
                submission.id, ERROR, "the portal stopped before it was checked: submit it again"
            )
