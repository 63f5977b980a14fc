"""Content-addressed, read-only copies of bots' files: what plays is exactly what was checked.

A bot's ``files`` belong to its author, who may change them at any moment, or swap a checked
folder for a symlink to the league's database. So neither the league nor the tournament runner
ever binds an author's path into a sandbox. They copy the files once (a league at ``add``, a
tournament when it starts) into a store the organiser owns, ``FOLDER/snapshots/DIGEST/``, and
bind only that copy, read-only, at the path the bot expects (:func:`binds`).

The copy is taken through file descriptors, never following a symlink: each source is opened
with ``O_NOFOLLOW`` and its real path read back from ``/proc/self/fd``, so a path that is a
symlink, or that changed between the check and the copy, is refused. A source that is, holds
or lies inside a secret folder (the league or output folder) is refused, by path and by
inode. Symlinks inside a source are kept only when they point inside that same source (an
absolute one is made relative); one leading out is refused, as are devices, FIFOs and sockets.

The digest covers, per source, the path it is bound at and every entry's relative path, kind,
executable bit, and bytes (or link target). :func:`check` recomputes it from the copy before a
run uses a snapshot, so a copy changed since it was taken never plays.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import os
import re
import secrets
import shutil
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: The most bytes of one bot's files, in all.
MAX_BYTES = 512 * 1024 * 1024
#: The most files, folders and links of one bot's files.
MAX_ENTRIES = 200_000
#: Where snapshots live inside a league or output folder.
STORE = "snapshots"
#: The names of what :func:`take` makes in a store: copies (a digest in base32) and unfinished ones.
OWNED = re.compile(r"[a-z2-7]{52}|\.tmp-[0-9a-f]{16}")
_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC


class SnapshotError(Exception):
    """A bot's files cannot be snapshotted (one line: whose, what, and the fix)."""


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A bot's files as copied.

    Attributes:
        digest: sha256 over the targets and every entry (see the module docstring), in base32.
        folder: ``STORE_ROOT/DIGEST``: entry ``i`` of the sources is ``folder / str(i)``.
        targets: Where each entry is bound inside the sandbox (the paths the bot names).
    """

    digest: str
    folder: Path
    targets: tuple[Path, ...]


def binds(folder: Path, targets: Sequence[Path]) -> tuple[tuple[Path, Path], ...]:
    """The (source, inside) pairs that bind a snapshot's entries at their targets."""
    return tuple((folder / str(i), Path(t)) for i, t in enumerate(targets))


def take(
    who: str, sources: Sequence[Path], store: Path, secret: Sequence[Path], private: Sequence[Path] = ()
) -> Snapshot:
    """Copies ``sources`` into ``store`` (content-addressed), refusing anything that is not plainly theirs.

    Args:
        who: The bot, for messages.
        sources: Absolute files or folders, as the bot will see them (their targets).
        store: The snapshot store (created if missing); ``store/DIGEST`` is the copy.
        secret: Folders no bot may see (the league or output folder): a source that is, holds
            or lies inside one is refused.
        private: Folders a bot may see part of but not whole (a tournament's config folder): a
            source that is or holds one is refused.

    Raises:
        SnapshotError: a source is missing, a symlink, a secret folder's, too large, holds a
            link leading out or a special file.
    """
    store.mkdir(parents=True, exist_ok=True)
    hidden = _identities([*secret, *private])
    hidden_paths = [Path(os.path.realpath(s)) for s in secret]
    private_paths = [Path(os.path.realpath(s)) for s in private]
    work = store / f".tmp-{secrets.token_hex(8)}"
    work.mkdir(mode=0o700)
    digest = hashlib.sha256(b"cancellation-hearts/snapshot/v1\0")
    budget = _Budget(who)
    try:
        for i, source in enumerate(sources):
            digest.update(f"{i}\0{source}\0".encode())
            fd = _open_source(who, Path(source), hidden_paths, private_paths, hidden)
            try:
                _copy(who, fd, work / str(i), "", str(source), hidden, digest, budget)
            finally:
                os.close(fd)
        name = _name(digest)
        final = store / name
        if final.exists():
            shutil.rmtree(work)
        else:
            _freeze(work)
            os.rename(work, final)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    snapshot = Snapshot(name, final, tuple(Path(s) for s in sources))
    check(who, snapshot)
    return snapshot


def check(who: str, snapshot: Snapshot) -> None:
    """Recomputes a snapshot's digest from its copy.

    Raises:
        SnapshotError: the copy is missing or differs from what was taken.
    """
    digest = hashlib.sha256(b"cancellation-hearts/snapshot/v1\0")
    budget = _Budget(who)
    for i, target in enumerate(snapshot.targets):
        digest.update(f"{i}\0{target}\0".encode())
        path = snapshot.folder / str(i)
        try:
            fd = os.open(path, _READ)
        except OSError as exc:
            raise SnapshotError(f"bot {who!r}: its snapshot {path} is missing ({exc.strerror})") from None
        try:
            _copy(who, fd, None, "", str(target), {}, digest, budget)
        finally:
            os.close(fd)
    if _name(digest) != snapshot.digest:
        raise SnapshotError(
            f"bot {who!r}: its snapshot {snapshot.folder} was changed after it was taken: it will not "
            "play; add the bot again"
        )


def check_snapshot(who: str, folder: Path, targets: Sequence[Path]) -> None:
    """:func:`check` of the snapshot in ``folder`` (named by its digest), bound at ``targets``."""
    check(who, Snapshot(folder.name, folder, tuple(targets)))


def _name(digest: Any) -> str:
    """A digest as a folder name: base32, so that no long hex run (a token's shape) shows in the
    mount table a bot can read."""
    return base64.b32encode(digest.digest()).decode().rstrip("=").lower()


class _Budget:
    def __init__(self, who: str) -> None:
        self.who = who
        self.bytes = 0
        self.entries = 0

    def take(self, size: int) -> None:
        self.bytes += size
        self.entries += 1
        if self.bytes > MAX_BYTES or self.entries > MAX_ENTRIES:
            raise SnapshotError(
                f"bot {self.who!r}: its files exceed {MAX_BYTES >> 20} MiB or {MAX_ENTRIES} entries: "
                "give it only what it runs"
            )


def _identities(paths: Sequence[Path]) -> dict[tuple[int, int], Path]:
    out = {}
    for path in paths:
        with contextlib.suppress(OSError):
            st = os.stat(path)
            out[(st.st_dev, st.st_ino)] = Path(path)
    return out


def _open_source(
    who: str, source: Path, secret: list[Path], private: list[Path], hidden: dict[tuple[int, int], Path]
) -> int:
    """Opens a source without following a symlink, and checks where it really is."""
    if not source.is_absolute():
        raise SnapshotError(f"bot {who!r}: files {str(source)!r} is not an absolute path")
    try:
        fd = os.open(source, _READ)
    except OSError as exc:
        if exc.errno == 40:  # ELOOP: the last component is a symlink
            raise SnapshotError(
                f"bot {who!r}: files {str(source)!r} is a symlink: name the real file or folder"
            ) from None
        raise SnapshotError(f"bot {who!r}: files {str(source)!r} cannot be read ({exc.strerror})") from None
    real = Path(os.readlink(f"/proc/self/fd/{fd}"))
    problem = None
    if real != source:
        problem = f"is reached through a symlink (it is {real}): name the real path"
    for folder in secret:
        if real == folder or folder in real.parents or real in folder.parents:
            problem = f"is, holds or lies inside {folder}, which no bot may see: give it a folder of its own"
    for folder in private:
        if real == folder or real in folder.parents:
            problem = f"is or holds {folder}, which no bot may see whole: give it a folder of its own"
    st = os.fstat(fd)
    if (st.st_dev, st.st_ino) in hidden:
        problem = f"is {hidden[(st.st_dev, st.st_ino)]}, which no bot may see"
    if problem is not None:
        os.close(fd)
        raise SnapshotError(f"bot {who!r}: files {str(source)!r} {problem}")
    return fd


def _copy(
    who: str,
    fd: int,
    dest: Path | None,
    rel: str,
    root: str,
    hidden: dict[tuple[int, int], Path],
    digest: hashlib._Hash,
    budget: _Budget,
) -> None:
    """Hashes (and, given ``dest``, copies) the entry open at ``fd``, recursively for a folder."""
    st = os.fstat(fd)
    if (st.st_dev, st.st_ino) in hidden:
        where = os.path.join(root, rel)
        raise SnapshotError(
            f"bot {who!r}: files {root!r} holds {hidden[(st.st_dev, st.st_ino)]} (at {where}), which no "
            "bot may see: give the bot a folder of its own"
        )
    if stat.S_ISREG(st.st_mode):
        budget.take(st.st_size)
        executable = bool(st.st_mode & 0o111)
        digest.update(f"F\0{rel}\0{int(executable)}\0".encode())
        out = None if dest is None else os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            while chunk := os.read(fd, 1 << 20):
                digest.update(chunk)
                if out is not None:
                    os.write(out, chunk)
        finally:
            if out is not None:
                os.close(out)
        if dest is not None:
            os.chmod(dest, 0o555 if executable else 0o444)
            os.utime(dest, ns=(st.st_atime_ns, st.st_mtime_ns))
        return
    if not stat.S_ISDIR(st.st_mode):
        raise SnapshotError(
            f"bot {who!r}: {os.path.join(root, rel)} is a device, FIFO or socket: a bot's files are "
            "plain files, folders and links inside them"
        )
    budget.take(0)
    digest.update(f"D\0{rel}\0".encode())
    if dest is not None:
        dest.mkdir(mode=0o700)
    for name, kind in _entries(fd):
        child = f"{rel}/{name}" if rel else name
        if kind == "link":
            target = _inner_link(who, fd, name, child, root)
            budget.take(0)
            digest.update(f"L\0{child}\0{target}\0".encode())
            if dest is not None:
                os.symlink(target, dest / name)
            continue
        try:
            sub = os.open(name, _READ, dir_fd=fd)
        except OSError as exc:
            raise SnapshotError(
                f"bot {who!r}: {os.path.join(root, child)} cannot be read ({exc.strerror}): make it "
                "readable or leave it out of files"
            ) from None
        try:
            _copy(who, sub, None if dest is None else dest / name, child, root, hidden, digest, budget)
        finally:
            os.close(sub)
    if dest is not None:
        os.utime(dest, ns=(st.st_atime_ns, st.st_mtime_ns))


def _entries(fd: int) -> Iterator[tuple[str, str]]:
    """A folder's entries in name order, each "link" or "other" (without following links)."""
    with os.scandir(fd) as it:
        found = sorted((e.name, "link" if e.is_symlink() else "other") for e in it)
    yield from found


def _inner_link(who: str, fd: int, name: str, child: str, root: str) -> str:
    """The link's target, relative, when it stays inside its source; otherwise refused."""
    target = os.readlink(name, dir_fd=fd)
    if os.path.isabs(target):
        if not (target == root or target.startswith(root.rstrip("/") + "/")):
            raise SnapshotError(
                f"bot {who!r}: {os.path.join(root, child)} is a symlink to {target}, outside its files: "
                "copy what it points to into the folder instead"
            )
        resolved = os.path.relpath(target, root)
        target = os.path.relpath(resolved, os.path.dirname(child) or ".")
    inside = os.path.normpath(os.path.join(os.path.dirname(child), target))
    if inside == ".." or inside.startswith("../") or os.path.isabs(inside):
        raise SnapshotError(
            f"bot {who!r}: {os.path.join(root, child)} is a symlink to {target}, outside its files: copy "
            "what it points to into the folder instead"
        )
    return target


def _freeze(folder: Path) -> None:
    """Makes the copy's folders readable by all and writable by nobody but its owner's root-less
    ``rmtree`` (files are already read-only)."""
    for dirpath, _dirs, _files in os.walk(folder):
        os.chmod(dirpath, 0o755)
