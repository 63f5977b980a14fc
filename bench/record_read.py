#!/usr/bin/env python3
"""The cost of the one record reader: ``GameRecord.read`` strict and lenient against bare ``json.loads``.

Records are real games played in-process by random bots, each with a decision log shaped as the
referee writes it (one entry per decision: seat, hand, kind, time, play, ms): a typical
tournament game (8 seats to 150) and the largest a table plays (11 seats, target out of reach,
200 hands). Each text is read ``--repeat`` times every way; times are CPU time of this process
(time.process_time), so other work on the machine does not skew them.

``--json`` prints one JSON object: per case, ``bytes``, ``hands``, the ms per read of
``json_loads``, ``strict`` and ``lenient``, and the ms of ``replay`` of the read record (the
work every reader but the web's game list does next).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from hearts_client.bots import make_bot
from hearts_core.local import play_game
from hearts_core.record import GameRecord, record_json, state_to_record
from hearts_core.replay import replay
from hearts_core.rules import Rules


def _record(players: int, target: int, max_hands: int, seed: str) -> str:
    rules = Rules(players=players, target_score=target, max_hands=max_hands)
    state = play_game(rules, seed, [make_bot("random", f"{seed}/{i}") for i in range(players)])
    record = state_to_record(state, bots=[f"bot{i}" for i in range(players)], seed=seed)
    decisions: list[dict[str, Any]] = []
    at = 0.0
    for index, hand in enumerate(state.results):
        for seat in range(players):
            at += 0.7
            decisions.append({"seat": seat, "hand": index, "kind": "pass", "at": round(at, 3), "ms": 0.41})
        for play in range(len(hand.plays)):
            at += 0.7
            entry = {"seat": play % players, "hand": index, "kind": "play", "at": round(at, 3), "play": play}
            decisions.append({**entry, "ms": 0.38, "referee_ms": 0.05})
    record["decisions"] = decisions
    record["faults"] = []
    return record_json(record)


def _ms(read: Callable[[], object], repeat: int) -> float:
    start = time.process_time()
    for _ in range(repeat):
        read()
    return (time.process_time() - start) * 1000 / repeat


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=20, help="Reads of each record each way.")
    parser.add_argument("--json", action="store_true", help="Print one JSON object.")
    args = parser.parse_args()
    cases = {
        "typical_8_seats_to_150": _record(8, 150, 200, "typical"),
        "largest_11_seats_200_hands": _record(11, 100_000, 200, "largest"),
    }
    result: dict[str, dict[str, float | int]] = {}
    for name, text in cases.items():
        result[name] = {
            "bytes": len(text),
            "hands": len(GameRecord.read(text).hands),
            "json_loads": round(_ms(partial(json.loads, text), args.repeat), 2),
            "strict": round(_ms(partial(GameRecord.read, text), args.repeat), 2),
            "lenient": round(_ms(partial(GameRecord.read, text, lenient=True), args.repeat), 2),
            "replay": round(_ms(partial(replay, GameRecord.read(text)), args.repeat), 2),
        }
    if args.json:
        print(json.dumps(result))
        return
    for name, r in result.items():
        print(f"{name}: {r['bytes'] / 1e6:.2f} MB, {r['hands']} hands: json.loads {r['json_loads']} ms, "
              f"strict read {r['strict']} ms ({r['strict'] / r['json_loads']:.1f}x), "
              f"lenient {r['lenient']} ms, CPU per read; its replay {r['replay']} ms")  # fmt: skip


if __name__ == "__main__":
    main()
