"""An entrant's page (``/me``): what its parts cost, read from a league's stored blocks.

It builds a league of ``--entrants`` entrants with ``--blocks`` blocks stored as ``hearts league
run`` stores them (in-process games of ``--hands`` hands, each seat's decision a hand timed;
:func:`tests.helpers.portal.played_league`), then times, for alice's version: its decision times
read from its newest records (bounded: :data:`~hearts_tournaments.league.profile.MAX_TIMED_GAMES`)
the first time and again from the cache, its faults likewise, its rating chart, its rank, and the
whole of what ``/me`` reads (:meth:`Portal.own`, which refits the official table), the first
time after a block and again.

Usage::

    bench/entrant_page.py [--entrants 22] [--blocks 300] [--hands 3] [--json]

Prints readable figures, or with ``--json`` one object.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hearts_tournaments.league import profile
from hearts_tournaments.league.play import league_table
from hearts_tournaments.league.store import LeagueStore
from hearts_tournaments.portal.app import Limits, Portal
from tests.helpers.portal import bot_folder, played_league


def timed(call: Callable[[], Any]) -> tuple[float, Any]:
    """Milliseconds ``call`` took, and what it returned."""
    start = time.perf_counter()
    value = call()
    return (time.perf_counter() - start) * 1000, value


def measure(entrants: int, blocks: int, hands: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        folder = root / "lg"
        built, _ = timed(
            lambda: played_league(folder, bot_folder(root / "bot"), entrants, blocks, max_hands=hands)
        )
        vid = "alice@v1"
        with LeagueStore.open(folder, read_only=True) as store:
            timing_cold, found = timed(lambda: profile.timing(store, vid))
            timing_warm, _ = timed(lambda: profile.timing(store, vid))
            faults_cold, _ = timed(lambda: profile.faults(store, vid))
            faults_warm, _ = timed(lambda: profile.faults(store, vid))
            chart, _ = timed(lambda: profile.rating_chart(store.history(vid)))
            table_ms, table = timed(lambda: league_table(store, everyone=True))
            entrant_of = {v.id: v.entrant for v in store.versions()}
            rank, _ = timed(lambda: profile.entrant_standing(table, entrant_of, "alice"))
            history = len(store.history(vid))
            record_bytes = sum(len(r) for _k, _b, _s, r in store.seat_games(vid, profile.MAX_TIMED_GAMES))
        portal = Portal(folder, Limits(), secure=True)
        profile.forget()
        own_cold, _ = timed(lambda: portal.own("alice"))
        own_warm, _ = timed(lambda: portal.own("alice"))
        portal.db.close()
    return {
        "entrants": entrants,
        "blocks": blocks,
        "hands": hands,
        "build_s": round(built / 1000, 1),
        "alice_blocks": history,
        "timed_games": found.games if found else 0,
        "timed_decisions": found.decisions if found else 0,
        "record_kib_read": round(record_bytes / 1024),
        "timing_cold_ms": round(timing_cold, 1),
        "timing_cached_ms": round(timing_warm, 3),
        "faults_cold_ms": round(faults_cold, 1),
        "faults_cached_ms": round(faults_warm, 3),
        "chart_ms": round(chart, 2),
        "rank_ms": round(rank, 3),
        "table_refit_ms": round(table_ms, 1),
        "own_first_ms": round(own_cold, 1),
        "own_cached_ms": round(own_warm, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entrants", type=int, default=22)
    parser.add_argument("--blocks", type=int, default=300)
    parser.add_argument("--hands", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    out = measure(args.entrants, args.blocks, args.hands)
    if args.json:
        print(json.dumps(out))
        return
    print(
        f"{out['entrants']} entrants, {out['blocks']} blocks of {out['hands']} hands "
        f"(built in {out['build_s']} s); alice played {out['alice_blocks']} blocks"
    )
    print(
        f"decision times: {out['timed_games']} games, {out['timed_decisions']} decisions, "
        f"{out['record_kib_read']} KiB of records: {out['timing_cold_ms']} ms, cached "
        f"{out['timing_cached_ms']} ms"
    )
    print(f"faults: {out['faults_cold_ms']} ms, cached {out['faults_cached_ms']} ms")
    print(
        f"chart: {out['chart_ms']} ms; rank: {out['rank_ms']} ms "
        f"(of a table refitted in {out['table_refit_ms']} ms)"
    )
    print(
        f"all /me reads (Portal.own, the table refitted each time): first after a block "
        f"{out['own_first_ms']} ms, then {out['own_cached_ms']} ms"
    )


if __name__ == "__main__":
    main()
