"""Hostile game record files, shared by the reader's tests and the tests of every command that
reads a record: wrong types, absurd numbers, huge arrays, deep nesting, non-UTF-8, cut short."""

from __future__ import annotations

import json
from pathlib import Path

#: Hostile record files: (file name, content, what the one line must say).
HOSTILE: list[tuple[str, bytes, str]] = [
    ("wrong_type.json", json.dumps({"players": 6, "target_score": [1], "hands": []}).encode(),
     "target_score: must be a whole number, not a list"),
    ("wrong_list.json", json.dumps({"players": 6, "hands": [], "decisions": 5}).encode(),
     "decisions: must be a list, not a whole number"),
    ("absurd.json", json.dumps({"players": 6, "max_hands": 10**40, "hands": []}).encode(),
     "max_hands: must be 1 to 9007199254740992, not a 41-digit number"),
    ("absurd_seat.json",
     json.dumps({"players": 6, "hands": [], "faults": [{"seat": 10**30, "kind": "x", "detail": ""}]})
     .encode(),
     "faults[0].seat: must be 0 to 5, not a 31-digit number"),
    ("digits.json", ('{"players": ' + "9" * 5000 + ', "hands": []}').encode(),
     "a number of more than 4300 digits"),
    ("huge.json", json.dumps({"players": 6, "hands": [], "decisions": [0] * 2_000_001}).encode(),
     "decisions: must hold at most 2000000 entries, not 2000001"),
    ("deep.json", ('{"players": 6, "hands": [], "x": ' + "[" * 100_000 + "]" * 100_000 + "}").encode(),
     "nested too deeply to be a game record"),
    ("non_utf8.json", b'{"players": 6, "hands": [], "label": "\xff"}', "not UTF-8 text (byte 38)"),
    ("truncated.json", b'{"players": 6, "hands": [{"dealer": 0, "pass_dir', "the file ends too soon"),
    ("nan.json", b'{"players": 6, "hands": [], "started_at": NaN}', "NaN is not a JSON number"),
    ("infinite.json", b'{"players": 6, "hands": [], "started_at": 1e999}',
     "started_at: must be a finite number"),
]  # fmt: skip


def write_hostile(folder: Path) -> list[tuple[Path, str]]:
    """The hostile files in ``folder``, with what each one's line must say."""
    out = []
    for name, content, said in HOSTILE:
        path = folder / name
        path.write_bytes(content)
        out.append((path, said))
    return out
