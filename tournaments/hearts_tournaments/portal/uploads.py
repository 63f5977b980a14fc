"""A submitted bot: the archive checked before anything runs, then made the entrant's next version.

:func:`check_archive` reads a ``.tar``/``.tar.gz``/``.tar.xz``/``.tar.bz2`` or ``.zip`` archive
from memory and refuses, with one line for the entrant, anything that is not a plain folder of a
bot's files: more than :data:`MAX_ARCHIVE_BYTES`, more than :data:`MAX_FILES` entries or
:data:`MAX_UNPACKED_BYTES` unpacked, an unpacked size over :data:`MAX_RATIO` times the archive's
(a bomb), an absolute path, a ``..``, a link, a device or any other special file, an encrypted
or sparse member, two entries at one path; and a ``bot.toml`` manifest that is missing, larger
than :data:`MAX_MANIFEST_BYTES`, not TOML or not as documented (docs/COMPETITION.md)::

    command = ["python3", "bot.py"]   # words naming the archive's files become their paths
    protocol = "stdio"                # or "grpc" (the SDK's flags are appended)
    description = "lowest legal card"

Nothing is written while checking. :func:`submit_version` then unpacks the checked members into
a private scratch folder (each file created anew, ``O_EXCL|O_NOFOLLOW``, no link ever made),
copies that into the league's content-addressed snapshot store with
:func:`hearts_tournaments.arena.snapshot.take` (through the league's own ``snapshot_files``), removes
the scratch folder, runs the pre-flight game in the sandbox as ``hearts league add`` does, and
only when it passes adds the snapshot as the entrant's next version (``pending`` until ``hearts
league run`` plays its validation game). The entrant's older versions play on until the new one
is active (:func:`sync_statuses`), then are retired: a submission that fails leaves the entrant
playing.
"""

from __future__ import annotations

import bz2
import contextlib
import io
import lzma
import os
import re
import shutil
import stat
import tarfile
import tempfile
import tomllib
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hearts_tournaments.arena.bots import BOT_NAME_PATTERN, BotProtocol, BotSpec
from hearts_tournaments.arena.sandbox import SandboxKind
from hearts_tournaments.league import commands
from hearts_tournaments.league.config import LeagueError
from hearts_tournaments.league.play import tournament_config
from hearts_tournaments.league.store import ACTIVE as VERSION_ACTIVE
from hearts_tournaments.league.store import ERROR as VERSION_ERROR
from hearts_tournaments.league.store import LeagueStore
from hearts_tournaments.portal.accounts import ACTIVE, ERROR, PENDING, VALIDATING, PortalStore
from hearts_tournaments.tournament.preflight import check_entrants

#: The most bytes of an uploaded archive.
MAX_ARCHIVE_BYTES = 8 * 1024 * 1024
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
#: Lines of a log shown to the entrant with an error.
LOG_LINES = 20
_KEYS = frozenset({"command", "protocol", "description", "team"})
_BAD_NAME = re.compile(r"[\x00-\x1f\\]")


class UploadError(Exception):
    """An upload refused: one line saying why and what to do."""


@dataclass(frozen=True, slots=True)
class Member:
    """A checked entry of an archive (``data`` None for a folder)."""

    path: str
    data: bytes | None
    executable: bool


@dataclass(frozen=True, slots=True)
class Manifest:
    """``bot.toml``, checked."""

    command: tuple[str, ...]
    protocol: BotProtocol
    description: str
    #: The entrant's declared team (None: the manifest names none; the team stays as it was).
    team: str | None = None


@dataclass(frozen=True, slots=True)
class CheckedArchive:
    """An archive that passed every check: its members (the manifest's folder at the root)."""

    members: tuple[Member, ...]
    manifest: Manifest
    unpacked_bytes: int


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
            raise UploadError(
                f"the archive unpacks to more than {MAX_UNPACKED_BYTES >> 20} MiB: send only what the "
                "bot runs"
            )
        if self.bytes > RATIO_FREE_BYTES and self.bytes > MAX_RATIO * self.size:
            raise UploadError(
                f"the archive unpacks to over {MAX_RATIO} times its size (an archive bomb?): it is refused"
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


def _decompressed(data: bytes) -> bytes:
    """A compressed tar's plain stream, decompressed at most to :data:`MAX_TAR_STREAM_BYTES`.

    Done before tarfile sees it, so that nothing in the stream (a huge pax header, a member's
    data) can make it decompress more than that.
    """
    decompressor: Any
    if data[:2] == b"\x1f\x8b":
        decompressor = zlib.decompressobj(wbits=31)
    elif data[:3] == b"BZh":
        decompressor = bz2.BZ2Decompressor()
    elif data[:6] == b"\xfd7zXZ\x00":
        decompressor = lzma.LZMADecompressor()
    else:
        return data
    try:
        plain = decompressor.decompress(data, MAX_TAR_STREAM_BYTES + 1)
    except (zlib.error, OSError, lzma.LZMAError, EOFError, ValueError) as exc:
        raise UploadError(f"the archive does not decompress ({_first(exc)}): pack it again") from None
    if len(plain) > MAX_TAR_STREAM_BYTES:
        raise UploadError(
            f"the archive unpacks to more than {MAX_UNPACKED_BYTES >> 20} MiB: send only what the bot runs"
        )
    return bytes(plain)


def _tar_members(data: bytes, tally: _Tally) -> list[Member]:
    out: list[Member] = []
    plain = _decompressed(data)
    try:
        with tarfile.open(fileobj=io.BytesIO(plain), mode="r:") as archive:
            for info in archive:
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
                        out.append(Member(path, None, False))
                    continue
                if not path:
                    raise UploadError("the archive holds a file with no name")
                handle = archive.extractfile(info)
                body = handle.read(info.size + 1) if handle is not None else b""
                if len(body) != info.size:
                    raise UploadError(f"the archive's entry {path!r} is cut short: pack it again")
                out.append(Member(path, body, bool(info.mode & 0o111)))
    except (tarfile.TarError, EOFError, OSError, ValueError) as exc:
        raise UploadError(
            f"the archive does not read as tar or zip ({_first(exc)}): send a .tar.gz or .zip"
        ) from None
    return out


def _zip_members(data: bytes, tally: _Tally) -> list[Member]:
    out: list[Member] = []
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            infos = archive.infolist()
            if len(infos) > MAX_FILES:
                raise UploadError(
                    f"the archive holds more than {MAX_FILES} entries: send only what the bot runs"
                )
            for info in infos:
                path = _clean_path(info.filename)
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
                        out.append(Member(path, None, False))
                    continue
                with archive.open(info) as handle:
                    body = handle.read(info.file_size + 1)
                if len(body) != info.file_size:
                    raise UploadError(f"the archive's entry {path!r} is not the size it says: pack it again")
                mode = (info.external_attr >> 16) & 0o111
                out.append(Member(path, body, bool(mode)))
    except (
        zipfile.BadZipFile,
        zipfile.LargeZipFile,
        EOFError,
        OSError,
        ValueError,
        NotImplementedError,
    ) as exc:
        raise UploadError(
            f"the archive does not read as zip ({_first(exc)}): send a .tar.gz or .zip"
        ) from None
    return out


def _manifest(text: bytes, names: set[str]) -> Manifest:
    if len(text) > MAX_MANIFEST_BYTES:
        raise UploadError(
            f"bot.toml is {len(text)} bytes, more than {MAX_MANIFEST_BYTES}: keep it to its few keys"
        )
    try:
        data = tomllib.loads(text.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UploadError(f"bot.toml is not valid TOML ({_first(exc)}): see docs/COMPETITION.md") from None
    unknown = sorted(set(data) - _KEYS)
    if unknown:
        raise UploadError(
            f"bot.toml has unknown keys {', '.join(unknown)}: it takes command, protocol, description, team"
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
    team = data.get("team")
    if team is not None and (
        not isinstance(team, str) or not (team == "" or BOT_NAME_PATTERN.fullmatch(team))
    ):
        raise UploadError(
            "bot.toml's team must be a name of letters, digits, '.', '_' or '-' (at most 40), "
            'or "" for none'
        )
    return Manifest(tuple(command), BotProtocol(protocol), description, team)


def check_archive(data: bytes) -> CheckedArchive:
    """Every check of an upload, in memory (nothing is written).

    Raises:
        UploadError: one line saying what is wrong and what to do.
    """
    if len(data) > MAX_ARCHIVE_BYTES:
        raise UploadError(f"the archive is {len(data)} bytes, more than {MAX_ARCHIVE_BYTES >> 20} MiB")
    if not data:
        raise UploadError("the upload is empty: send a .tar.gz or .zip of the bot's folder")
    tally = _Tally(len(data))
    members = _zip_members(data, tally) if data[:4] == b"PK\x03\x04" else _tar_members(data, tally)
    kinds: dict[str, bool] = {}
    for member in members:
        folder = member.data is None
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
            raise UploadError(
                "the archive holds no bot.toml at its root: see docs/COMPETITION.md for its keys"
            )
    if prefix:
        members = [
            Member(m.path[len(prefix) :], m.data, m.executable) for m in members if m.path != prefix[:-1]
        ]
    files = {m.path for m in members if m.data is not None}
    manifest_member = next(m for m in members if m.path == MANIFEST)
    if manifest_member.data is None:
        raise UploadError("bot.toml is a folder: it must be the manifest file")
    manifest = _manifest(manifest_member.data, files)
    return CheckedArchive(tuple(members), manifest, tally.bytes)


def unpack(checked: CheckedArchive, target: Path) -> None:
    """Writes the checked members under the new folder ``target`` (never through a link)."""
    target.mkdir(mode=0o700)
    root = os.open(target, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        for member in sorted(checked.members, key=lambda m: m.path):
            parts = member.path.split("/")
            fd = os.dup(root)
            try:
                for part in parts[:-1]:
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(part, 0o700, dir_fd=fd)
                    sub = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
                    os.close(fd)
                    fd = sub
                if member.data is None:
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(parts[-1], 0o700, dir_fd=fd)
                    continue
                mode = 0o700 if member.executable else 0o600
                out = os.open(
                    parts[-1], os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode, dir_fd=fd
                )
                try:
                    os.write(out, member.data)
                finally:
                    os.close(out)
            finally:
                os.close(fd)
    finally:
        os.close(root)


def bot_spec(name: str, checked: CheckedArchive, target: Path) -> BotSpec:
    """The version's spec: its command with the archive's file names made paths under ``target``
    and a program named without a path found in :data:`PROGRAM_PATH` (the system's own, never a
    user's shims), always sandboxed, its files the folder ``target``."""
    files = {m.path for m in checked.members if m.data is not None}
    words = []
    for i, word in enumerate(checked.manifest.command):
        clean = word[2:] if word.startswith("./") else word
        if clean in files:
            words.append(str(target / clean))
        elif i == 0 and "/" not in word:
            found = shutil.which(word, path=PROGRAM_PATH)
            if found is None:
                raise UploadError(
                    f"bot.toml's program {word!r} is not installed on the league's machine ({PROGRAM_PATH}): "
                    "use python3, node, java or ship the program in the archive"
                )
            words.append(found)
        else:
            words.append(word)
    return BotSpec(
        name=name,
        command=tuple(words),
        workdir=target,
        files=(target,),
        sandbox=SandboxKind.BWRAP,
        protocol=checked.manifest.protocol,
    )


def first_lines(path: Path | None, count: int = LOG_LINES) -> str:
    """The first ``count`` lines of a log ('' when there is none)."""
    if path is None:
        return ""
    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            return "".join(line for _, line in zip(range(count), handle, strict=False))
    except OSError:
        return ""


def submit_version(
    league: Path,
    portal: PortalStore,
    sid: int,
    name: str,
    checked: CheckedArchive,
    emit: Callable[[str], None],
) -> None:
    """Unpacks a checked archive into the league's snapshot store, checks it in the sandbox, and
    adds it as ``name``'s next version when it passes (the submission's status says how it went)."""
    portal.set_submission(sid, VALIDATING, "checking it in the sandbox (one hand against the referee)")
    league = league.absolute()
    scratch = Path(tempfile.mkdtemp(prefix="hearts-upload-"))
    try:
        target = scratch / name
        unpack(checked, target)
        with LeagueStore.open(league) as store:
            try:
                spec = commands.snapshot_files(store, bot_spec(name, checked, target))
            except LeagueError as exc:
                portal.set_submission(sid, ERROR, str(exc))
                return
            problems = check_entrants(tournament_config(store, (spec,)), league / "logs", (spec,))
            if problems:
                problem = problems[0]
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
        version = line.split(":")[0]
        portal.set_submission(sid, VALIDATING, "pending its validation game in the league", version=version)
        emit(f"submission {sid} of {name}: {line}")
    except UploadError as exc:
        portal.set_submission(sid, ERROR, str(exc))
    except OSError as exc:
        portal.set_submission(sid, ERROR, f"the portal could not unpack it ({exc.strerror}): submit it again")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


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
    """Submissions a stopped portal never checked (the archive was only in its memory): error."""
    for submission in portal.unfinished():
        if submission.status == PENDING or (submission.status == VALIDATING and not submission.version):
            portal.set_submission(
                submission.id, ERROR, "the portal stopped before it was checked: submit it again"
            )
