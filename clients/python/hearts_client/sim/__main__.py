"""``python -m hearts_client.sim``: the simulator's command line.

``replay FILE...`` replays game records and conformance vectors through the simulator (the
selected backend, see ``BACKEND``) and prints each outcome as one JSON line, exactly the lines
``hearts replay`` prints for the same files. Files are read as ``hearts replay`` reads them: one
that cannot be read as a record gets one line on stderr naming the file, the field and why, and
the others are still replayed (exit 2); a record whose revealed seed does not match its
commitment or its deals is reported on stderr (exit 1).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

PROG = "python -m hearts_client.sim"


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 200 else text[:197] + "..."


def replay_files(files: list[Path]) -> int:
    """Replays each file, printing its outcome line; returns the exit status.

    Files are read as ``hearts replay`` reads them (:func:`hearts_core.replay.read_for_replay`):
    a problem a replay judges is the outcome's verdict, any other is the file's one error line.
    """
    from hearts_client.sim import replay_outcome
    from hearts_core.record import RecordFileError
    from hearts_core.replay import read_for_replay, verify_seed

    status = 0
    for path in files:
        try:
            record = read_for_replay(path)
        except RecordFileError as exc:
            print(f"{PROG} replay: {exc}", file=sys.stderr)
            status = 2
            continue
        try:
            line = json.dumps(replay_outcome(record.to_json()), separators=(",", ":"))
        except (ValueError, RecursionError, OverflowError) as exc:  # the native replay's own refusal
            print(f"{PROG} replay: {path}: not a valid game record: {_short(exc)}", file=sys.stderr)
            status = 2
            continue
        print(line)
        for problem in verify_seed(record):
            print(f"{PROG} replay: {path}: {problem}", file=sys.stderr)
            status = max(status, 1)
    return status


def main(argv: list[str] | None = None) -> int:
    """Runs the command line; returns the exit status."""
    from hearts_client.sim import BACKEND

    parser = argparse.ArgumentParser(
        prog=PROG, description=f"The Cancellation Hearts simulator (backend: {BACKEND})."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    replay = commands.add_parser(
        "replay",
        help="replay game records / conformance vectors through the simulator",
        description="Replay game records and conformance vector files through the simulator and print "
        "each outcome as one JSON line, exactly as `hearts replay` does.",
    )
    replay.add_argument(
        "files", nargs="+", type=Path, metavar="FILE", help="game records or conformance vector files"
    )
    args = parser.parse_args(argv)
    return replay_files(args.files)


if __name__ == "__main__":
    sys.exit(main())
