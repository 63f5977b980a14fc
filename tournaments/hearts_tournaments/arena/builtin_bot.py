"""``python -m hearts_tournaments.arena.builtin_bot NAME``: one built-in bot, with options, in one seat.

The tournament runner starts built-in bots this way rather than through ``hearts bot``: it
passes constructor options from the config (``options = { worlds = 4 }``), and it skips the
command line's imports, which matters when a tournament starts a process per seat per game.
It takes the same flags and environment variables as ``hearts bot``. It logs JSON lines on
stderr through the standard library alone (the SDK's events are stdlib records): importing
structlog, and through it rich, would cost every bot process a third of its start.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from collections.abc import Callable, Sequence
from typing import cast

from hearts_client.bot import Bot
from hearts_client.bots import BUILTIN_BOTS
from hearts_client.sdk import BotRunError, TokenError, read_token, run

PROG = "hearts_tournaments.arena.builtin_bot"


class JsonLines(logging.Formatter):
    """One JSON object per record: event, level, logger, timestamp (the referee's log keys)."""

    def format(self, record: logging.LogRecord) -> str:
        line = {
            "event": record.getMessage(),
            "level": record.levelname.lower(),
            "logger": record.name,
            "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs * 1000):06d}Z",
        }
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, default=repr)


def configure_json_logging(level: str = "INFO") -> None:
    """JSON lines on stderr for every logger (grpcio's and the SDK's included)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonLines())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the bot until its table is done.

    Returns:
        0 when the table finished, 1 when the referee refused the bot or could not be reached,
        2 on bad arguments.
    """
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__)
    parser.add_argument("name", choices=sorted(BUILTIN_BOTS), help="The built-in bot.")
    parser.add_argument("--server", default=os.environ.get("HEARTS_SERVER", "127.0.0.1:50051"))
    parser.add_argument("--token", default=os.environ.get("HEARTS_TOKEN"))
    parser.add_argument("--token-file", default=os.environ.get("HEARTS_TOKEN_FILE"))
    parser.add_argument("--seed", default=None, help="Seed of the bot's own random choices.")
    parser.add_argument("--name", dest="bot_name", default=os.environ.get("HEARTS_BOT_NAME"))
    parser.add_argument("--options", default="{}", help="Constructor options as a JSON object.")
    args = parser.parse_args(argv)
    try:
        token = read_token(args.token, args.token_file)
    except TokenError as exc:
        parser.error(str(exc))
    try:
        options = json.loads(args.options)
        if not isinstance(options, dict):
            raise ValueError("--options must be a JSON object")
        factory = cast(Callable[..., Bot], BUILTIN_BOTS[args.name])
        bot = factory(args.seed, **options)
    except (TypeError, ValueError) as exc:
        parser.error(f"bad --options: {exc}")
    configure_json_logging()
    try:
        run(bot, args.server, token, name=args.bot_name or args.name)
    except BotRunError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
