"""A snapshot of a bot's files sent to another machine, and unpacked there as the same snapshot.

A league's versions play their snapshots (:mod:`.snapshot`), taken once at ``add`` into the
league folder, which a Ray node does not have. The driver packs each snapshot a game needs
(:func:`pack`: a tar of the copy, in memory, once per run) and the node unpacks it
(:func:`unpack`) into a store of its own under the same digest, then checks it again
(:func:`.snapshot.check_snapshot`): a copy changed on the way, or unpacked wrongly, never plays.

The tar is read with the standard library's ``data`` filter (no absolute paths, no links
leading out, no devices, no special mode bits), so even a tampered pack cannot write outside
its folder; and only the copy's own entries travel: never the store around it.
"""

from __future__ import annotations

import io
import os
import shutil
import tarfile
from dataclasses import dataclass
from pathlib import Path

from hearts_tournaments.arena.snapshot import OWNED, SnapshotError


@dataclass(frozen=True, slots=True)
class PackedSnapshot:
    """One snapshot's copy as bytes, named by its digest.

    Attributes:
        digest: The snapshot's digest (its folder's name in a store).
        data: A tar of the copy's entries (``0``, ``1``, ... as in the store).
    """

    digest: str
    data: bytes


def pack(folder: Path) -> PackedSnapshot:
    """The snapshot copy in ``folder`` (``STORE/DIGEST``) as a :class:`PackedSnapshot`.

    Links are kept as links (a snapshot's links point inside it); nothing is followed.

    Raises:
        SnapshotError: ``folder`` is not a snapshot copy, or cannot be read.
    """
    if not OWNED.fullmatch(folder.name) or folder.name.startswith("."):
        raise SnapshotError(f"{folder} is not a snapshot's copy: it cannot be shipped")
    buffer = io.BytesIO()
    try:
        with tarfile.open(fileobj=buffer, mode="w") as tar:
            for entry in sorted(os.listdir(folder)):
                tar.add(folder / entry, arcname=entry, recursive=True)
    except OSError as exc:
        raise SnapshotError(f"cannot read the snapshot {folder} to ship it: {exc}") from None
    return PackedSnapshot(folder.name, buffer.getvalue())


def unpack(packed: PackedSnapshot, store: Path) -> Path:
    """Writes ``packed`` into ``store/DIGEST`` (made once; a copy already there is kept).

    The caller checks the copy against its digest and targets before it plays
    (:func:`.snapshot.check_snapshot`).

    Returns:
        The copy's folder.

    Raises:
        SnapshotError: the pack is not a snapshot (a bad digest, or a tar the data filter refuses).
    """
    if not OWNED.fullmatch(packed.digest) or packed.digest.startswith("."):
        raise SnapshotError(f"a shipped snapshot has no digest for a name: {packed.digest[:60]!r}")
    folder = store / packed.digest
    if folder.exists():
        return folder
    store.mkdir(parents=True, exist_ok=True, mode=0o700)
    work = store / f".tmp-{os.urandom(8).hex()}"
    work.mkdir(mode=0o700)
    try:
        with tarfile.open(fileobj=io.BytesIO(packed.data), mode="r") as tar:
            tar.extractall(work, filter="data")
    except (tarfile.TarError, OSError) as exc:
        shutil.rmtree(work, ignore_errors=True)
        raise SnapshotError(f"the shipped snapshot {packed.digest} cannot be unpacked: {exc}") from None
    # As the store's own copies: files read-only (executable or not), folders written by nobody.
    for dirpath, _dirs, files in os.walk(work):
        for name in files:
            path = os.path.join(dirpath, name)
            if not os.path.islink(path):
                os.chmod(path, 0o555 if os.stat(path).st_mode & 0o111 else 0o444)
        os.chmod(dirpath, 0o755)
    os.rename(work, folder)
    return folder
