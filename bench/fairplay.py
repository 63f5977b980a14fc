#!/usr/bin/env python3
"""The cost of fair play: signing each stored game, and snapshotting a bot's files.

* Signing: a real tournament database in a temporary folder gets the same games stored again
  and again with and without a signer (Ed25519 signature, chain row, in the game's own
  transaction), and ``published.json`` rewritten after each, as the runner does; the difference
  per game is the cost. Verifying a signature is timed too. Games are real records: one 8-seat
  game to 150 played in-process by heuristic bots.
* Snapshots: copying and checking a bot's files as ``hearts league add`` and a tournament's start
  do, for a one-file bot, for the Python SDK's folder, and for a folder of ``--files-mb`` MB.

CPU time per stored game (the database's fsync waits are not CPU), wall time per snapshot;
``--json`` prints one JSON object with ``sign_ms_per_game``, ``store_ms_per_game``
(unsigned), ``verify_ms_per_game`` and ``snapshot_ms`` (per case: ``take`` and ``check``,
with ``files`` and ``bytes``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from hearts_client.bots import make_bot
from hearts_core.local import play_game
from hearts_core.record import record_json, state_to_record
from hearts_core.rules import Rules
from hearts_tournaments.arena import snapshot
from hearts_tournaments.arena.outcome import GameOutcome
from hearts_tournaments.results import signing
from hearts_tournaments.tournament.config import parse_config
from hearts_tournaments.tournament.folder import create_tournament

ROOT = Path(__file__).resolve().parent.parent


def _game() -> tuple[str, tuple[int, ...]]:
    rules = Rules(players=8)
    state = play_game(rules, "bench", [make_bot("heuristic", s) for s in range(8)])
    return record_json(state_to_record(state, seed="bench")), tuple(state.totals)


def _store_games(folder: Path, games: int, signed: bool) -> tuple[float, float]:
    """CPU ms per stored game (and per verified signature), into a real tournament database."""
    record, totals = _game()
    bots = "".join(f'[[bots]]\nname = "b{i}"\nbuiltin = "random"\n' for i in range(8))
    text = f"[tournament]\ntable_size = 8\ndeals = {games}\nduplicate = false\n{bots}"
    out = folder / ("signed" if signed else "plain")
    tournament = create_tournament(parse_config(text, folder), text, out)
    verify_ms = 0.0
    with tournament.store as store:
        if signed:
            store.sign_with(signing.load_signing_key(folder / "key"))
        scheduled = store.schedule().games
        outcomes = [
            GameOutcome.clean(
                g.key,
                g.seats,
                totals,
                places=tuple(range(1, 9)),
                game_id=f"{g.index:012x}",
                hands=10,
                record_json=record,
            )
            for g in scheduled
        ]
        start = time.process_time()
        for outcome in outcomes:
            store.add(outcome)
            store.publish(out)
        elapsed = time.process_time() - start
        if signed:
            rows, stored = store.signatures(), store.signed_games()
            key = signing.read_published(str(out / signing.PUBLISHED))
            start = time.process_time()
            problems = signing.verify_chain(stored, rows, store.ledger_id, key)
            verify_ms = (time.process_time() - start) * 1000 / len(outcomes)
            assert not problems, problems[:3]
    return elapsed * 1000 / len(outcomes), verify_ms


def _make_files(folder: Path, megabytes: int) -> Path:
    folder.mkdir()
    chunk = os.urandom(1 << 20)
    for i in range(megabytes):
        (folder / f"blob{i}.bin").write_bytes(chunk)
    return folder


def _snapshot(folder: Path, source: Path, repeat: int) -> dict[str, float | int]:
    store = folder / f"store-{source.name}"
    take = check = 0.0
    files = size = 0
    for path in [source] if source.is_file() else source.rglob("*"):
        if path.is_file() and not path.is_symlink():
            files += 1
            size += path.stat().st_size
    for _ in range(repeat):
        start = time.perf_counter()
        taken = snapshot.take("bench", [source], store, [folder / "secret"])
        take += time.perf_counter() - start
        start = time.perf_counter()
        snapshot.check("bench", taken)
        check += time.perf_counter() - start
        shutil.rmtree(taken.folder)
    return {"files": files, "bytes": size, "take": take * 1000 / repeat, "check": check * 1000 / repeat}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=300, help="Games stored each way.")
    parser.add_argument("--files-mb", type=int, default=64, help="Size of the large files case.")
    parser.add_argument("--json", action="store_true", help="Print one JSON object.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "secret").mkdir()
        plain, _ = _store_games(folder, args.games, signed=False)
        signed, verify_ms = _store_games(folder, args.games, signed=True)
        one = folder / "bot.py"
        one.write_text("print('a bot')\n" * 200)
        cases = {
            "one_file": _snapshot(folder, one, 20),
            "python_sdk": _snapshot(folder, ROOT / "clients" / "python" / "hearts_client", 5),
            f"{args.files_mb}_mb": _snapshot(folder, _make_files(folder / "big", args.files_mb), 2),
        }
    result = {
        "store_ms_per_game": round(plain, 3),
        "sign_ms_per_game": round(signed - plain, 3),
        "verify_ms_per_game": round(verify_ms, 3),
        "snapshot_ms": {
            k: {n: round(v, 2) if isinstance(v, float) else v for n, v in c.items()} for k, c in cases.items()
        },
    }
    if args.json:
        print(json.dumps(result))
        return
    print(f"storing a game, CPU: {plain:.2f} ms unsigned, {signed:.2f} ms signed (published.json "
          f"rewritten each time): signing adds {signed - plain:.2f} ms per game; "
          f"verifying one {verify_ms:.3f} ms")  # fmt: skip
    for name, case in cases.items():
        print(f"snapshot {name} ({case['files']} files, {int(case['bytes']) / 1e6:.1f} MB): take "
              f"{case['take']:.1f} ms, check {case['check']:.1f} ms")  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
