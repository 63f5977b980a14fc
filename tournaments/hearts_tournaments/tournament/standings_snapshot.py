"""Standings snapshots: the published standings of a set of stored games, kept in a file so
that a report or a web page never waits for the strength bootstrap.

Computing the standings of a large tournament takes seconds (the bootstrap refits the
strength model a thousand times: 5.7 s for 1,200 games of 50 bots), so they are computed
once per set of games and kept in ``standings.json`` in the tournament folder, beside the
database, with the **fingerprint** of the games they are of (the database's creation time
and the keys of its games in the order stored; games are only ever added). A snapshot is used
only when its fingerprint is the store's: otherwise it is stale, and a reader either waits
for a fresh computation (``hearts tournament report``) or shows the stale one, says so, and
has a fresh one computed in the background (the live web pages).

The runner keeps the snapshot fresh while it plays (from
:data:`~hearts_tournaments.tournament.runner.BACKGROUND_SNAPSHOT_GAMES` stored games on): after each
stored game it asks its :class:`Refresher`, which computes in a separate process at low
priority (the referee's clock times the bots; a computation in the runner's own process would
hold its interpreter lock), never more than one at a time, and resting between two for a
multiple of the time the last took, so the snapshots cost a bounded share of the machine.

A snapshot is a cache, never evidence: ``hearts tournament verify`` recomputes the standings
from the records and reports a snapshot that differs.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import structlog

from hearts_core.record import write_text_durably
from hearts_tournaments.tournament.folder import SNAPSHOT_NAME, Tournament, open_tournament
from hearts_tournaments.tournament.luck_correction import LuckCorrection
from hearts_tournaments.tournament.results import Standings, compute_standings
from hearts_tournaments.tournament.store import Store

#: Bumped when the snapshot's form changes (2: the report's verdicts named by their questions; 3:
#: separation by Benjamini-Hochberg across the neighbours, each neighbour's p-value kept);
#: a snapshot of another version is ignored.
SNAPSHOT_VERSION = 3
#: After a background computation that took T seconds, the next starts no sooner than this
#: many times T later: snapshots take at most about 1 / (1 + REST) of one core.
REST = 3.0
#: Seconds added to a refresher's pause before a reader decides no runner refreshes a snapshot.
RUNNER_MARGIN_S = 15.0
#: The background computation's niceness (the bots run at 10, the referee at 0).
NICE = 15

log = structlog.get_logger(__name__)


def fingerprint(store: Store, keys: Sequence[str] | None = None) -> str:
    """The fingerprint of the games stored in ``store`` (or of ``keys``, read from it before)."""
    digest = hashlib.sha256(f"v{SNAPSHOT_VERSION}\n{store.meta('created_at')}\n".encode())
    for key in store.keys() if keys is None else keys:
        digest.update(key.encode())
        digest.update(b"\n")
    return digest.hexdigest()


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Standings and the fingerprint of the games they are of.

    Attributes:
        fingerprint: Of the games (see :func:`fingerprint`).
        standings: Their standings.
        seconds: How long computing them took.
        written_at: When the snapshot was saved (``time.time()``; 0 before).
    """

    fingerprint: str
    standings: Standings
    seconds: float = 0.0
    written_at: float = 0.0

    def refreshed_elsewhere(self, now: float) -> bool:
        """Whether a runner is probably keeping this snapshot fresh: it was saved within the
        rest a :class:`Refresher` takes after a computation this long (plus a margin)."""
        return now - self.written_at < (1 + REST) * self.seconds + RUNNER_MARGIN_S


def snapshot_path(folder: Path) -> Path:
    """Where the snapshot of the tournament in ``folder`` is kept."""
    return folder / SNAPSHOT_NAME


def save_snapshot(folder: Path, snapshot: Snapshot) -> None:
    """Writes the snapshot (atomically: a reader sees the old one or the new one, mode 0600).

    Raises:
        OSError: if it cannot be written.
    """
    data = {
        "snapshot_version": SNAPSHOT_VERSION,
        "fingerprint": snapshot.fingerprint,
        "seconds": round(snapshot.seconds, 3),
        "written_at": time.time(),
        "report": snapshot.standings.to_json(),
    }
    write_text_durably(snapshot_path(folder), json.dumps(data, separators=(",", ":")))


def load_snapshot(folder: Path) -> Snapshot | None:
    """The snapshot kept in ``folder``, or None when there is none (or none this version reads)."""
    try:
        data = json.loads(snapshot_path(folder).read_text(encoding="utf-8"))
        if data.get("snapshot_version") != SNAPSHOT_VERSION:
            return None
        return Snapshot(
            str(data["fingerprint"]),
            Standings.from_json(data["report"]),
            float(data["seconds"]),
            float(data["written_at"]),
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def compute_snapshot(folder: Path) -> Snapshot:
    """Computes the standings of the games stored in ``folder`` now, and saves them.

    Raises:
        StoreError, ConfigError: if the folder holds no readable tournament.
    """
    tournament = open_tournament(folder, read_only=True)
    with tournament.store:
        snapshot = fresh_snapshot(tournament)
    try:
        save_snapshot(folder, snapshot)
    except OSError as exc:
        log.warning("standings_snapshot_not_written", folder=str(folder), error=str(exc))
    return snapshot


def _child(folder: str, parent: int) -> int:
    """The background process: dies with its parent, runs below the bots, computes, saves."""
    with contextlib.suppress(OSError, AttributeError):
        import ctypes
        import signal

        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: never outlive the parent
    if os.getppid() != parent:
        return 1
    with contextlib.suppress(OSError):
        os.nice(NICE)
    compute_snapshot(Path(folder))
    return 0


class Refresher:
    """Keeps a folder's snapshot fresh in the background, one computation at a time.

    :meth:`poke` says the games changed; a thread then starts a computation in a fresh
    Python process (``python -m hearts_tournaments.tournament.standings_snapshot``: never a fork
    of a process with gRPC threads) unless one is running, and after it rests :data:`REST` times
    as long as it took before the next. Nothing here ever blocks the caller.

    Args:
        folder: The tournament folder.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._wanted = threading.Event()
        self._stop = threading.Event()
        self._process: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()
        self.computations = 0
        self._finished = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="standings-refresher", daemon=True)
        self._thread.start()

    @property
    def busy(self) -> bool:
        """Whether a computation is running or wanted."""
        return self._wanted.is_set() or self._process is not None

    def poke(self) -> None:
        """Asks for a fresh snapshot (coalesced with any request not started yet)."""
        self._wanted.set()

    def _loop(self) -> None:
        command = [sys.executable, "-m", __name__, str(self.folder), str(os.getpid())]
        while not self._stop.is_set():
            self._wanted.wait()
            if self._stop.is_set():
                return
            self._wanted.clear()
            started = time.monotonic()
            with self._lock:
                if self._stop.is_set():
                    return
                try:
                    process = subprocess.Popen(
                        command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
                    )
                except OSError as exc:
                    log.warning("standings_snapshot_failed", folder=str(self.folder), error=str(exc))
                    return
                self._process = process
            _, errors = process.communicate()
            with self._lock:
                self._process = None
            self.computations += 1
            self._finished.set()
            if process.returncode and not self._stop.is_set():
                tail = errors.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
                log.warning(
                    "standings_snapshot_failed",
                    folder=str(self.folder),
                    exitcode=process.returncode,
                    error=tail[0],
                )
            self._stop.wait(REST * (time.monotonic() - started))

    def wait_computed(self, timeout: float) -> bool:
        """Waits until a computation finishes (since the last call); False on timeout."""
        finished = self._finished.wait(timeout)
        self._finished.clear()
        return finished

    def close(self) -> None:
        """Stops: a computation under way is ended (the snapshot on disk stays as it was)."""
        self._stop.set()
        self._wanted.set()
        with self._lock:
            if self._process is not None and self._process.poll() is None:
                self._process.kill()
        self._thread.join()


def fresh_snapshot(tournament: Tournament, luck_correction: bool | None = None) -> Snapshot:
    """The standings computed from the games stored now, with the fingerprint of those games.

    Args:
        tournament: The tournament.
        luck_correction: Correct them for luck (None: as the config says).
    """
    store = tournament.store
    config = tournament.config
    started = time.monotonic()
    outcomes = store.outcomes(records=False)
    corrected = config.luck_correction if luck_correction is None else luck_correction
    luck = LuckCorrection.of(config.bots) if corrected else None
    standings = compute_standings(
        name=config.name,
        schedule=store.schedule(),
        outcomes=outcomes,
        target_score=config.target_score,
        quarantine_after=config.quarantine_after,
        balance=store.balance(),
        gauntlet=config.gauntlet,
        luck=luck,
        # One record at a time: a league's records together would take gigabytes.
        luck_terms={o.key: luck.terms(o.seats, store.record(o.key) or "", o.key) for o in outcomes}
        if luck is not None
        else None,
    )
    return Snapshot(fingerprint(store, [o.key for o in outcomes]), standings, time.monotonic() - started)


if __name__ == "__main__":
    sys.exit(_child(sys.argv[1], int(sys.argv[2])))
