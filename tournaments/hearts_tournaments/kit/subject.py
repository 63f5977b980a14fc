"""The bot under test, as ``hearts bot test`` is given it: its command, protocol, files and runtime."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from hearts_tournaments.arena import runtimes
from hearts_tournaments.arena.bots import BOT_NAME_PATTERN, BotProtocol, BotSpec
from hearts_tournaments.kit.run import KitError


def bot_under_test(
    command: Sequence[str],
    *,
    protocol: BotProtocol = BotProtocol.GRPC,
    files: Sequence[Path] = (),
    runtime: str | None = None,
    name: str | None = None,
    workdir: Path | None = None,
) -> BotSpec:
    """The spec the kit tests: ``command`` run from ``workdir`` (default: here), as a tournament's
    ``command`` entrant with these ``protocol``, ``files`` and ``runtime``.

    Raises:
        KitError: no command, a bad name, files that do not exist, or a runtime this installation
            does not provide.
    """
    if not command:
        raise KitError("give the bot's command after --, e.g. hearts bot test -- python3 bot.py")
    base = (workdir or Path.cwd()).absolute()
    shown = name or _name_of(command, base)
    if BOT_NAME_PATTERN.fullmatch(shown) is None:
        raise KitError(f"--name {shown!r}: use letters, digits, '_', '.' and '-' (at most 40)")
    resolved = tuple((base / f).resolve() for f in files)
    for path in resolved:
        if not path.exists():
            raise KitError(f"--files {path}: no such file or folder")
    check_runtime(runtime)
    return BotSpec(
        name=shown,
        command=tuple(command),
        workdir=base,
        files=resolved or None,
        protocol=protocol,
        runtime=runtime,
    )


def check_runtime(runtime: str | None) -> None:
    """Refuses a runtime this installation does not provide (the registry's one check,
    :func:`hearts_tournaments.arena.runtimes.installed`), as a tournament and the portal do.

    Raises:
        KitError: for a name that is not a runtime, or one not installed here.
    """
    if runtime is not None:
        try:
            runtimes.installed(runtime)
        except runtimes.RuntimeUnavailable as exc:
            raise KitError(f"--runtime {runtime!r}: {exc}") from None


def _name_of(command: Sequence[str], base: Path) -> str:
    """A name for the bot: its script's or program's name (``bot.py`` → ``bot``)."""
    words = [w for w in command if (base / w).is_file()] or [command[0]]
    stem = Path(words[-1] if len(words) > 1 else words[0]).stem
    if stem in ("bot", "main", "run") and len(Path(words[0]).parts) > 1:
        stem = Path(words[0]).parent.name or stem  # clients/go/bot → go
    clean = re.sub(r"[^A-Za-z0-9_.-]", "-", stem).strip("-.") or "bot"
    return clean[:40]
