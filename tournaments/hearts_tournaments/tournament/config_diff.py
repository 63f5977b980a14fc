"""What changed in a tournament's config file since the tournament was created.

``resume`` plays the configuration stored in the database, whatever the file says now; when the
file was edited, :func:`config_changes` names each key that differs (``tournament.deals: 4 ->
6``, ``bots[hanger]: added``) so the organiser is told instead of silently ignored.
"""

from __future__ import annotations

import difflib
import tomllib
from collections.abc import Iterator
from typing import Any

#: At most this many changes are named; the rest are counted.
MAX_SHOWN = 12


def config_changes(stored: str, current: str) -> list[str]:
    """One line per difference between the stored config text and the file's current text.

    Compared as TOML values (comments and layout do not count), bots by name; when either text
    is not valid TOML, the changed lines of the text are named instead. Empty: no change.
    """
    if stored == current:
        return []
    try:
        old, new = tomllib.loads(stored), tomllib.loads(current)
    except tomllib.TOMLDecodeError:
        return _text_changes(stored, current)
    old_bots, new_bots = _bots(old.pop("bots", None)), _bots(new.pop("bots", None))
    changes = list(_diff(old, new, ""))
    if old_bots is None or new_bots is None:
        changes.extend(_diff({"bots": old.get("bots")}, {"bots": new.get("bots")}, ""))
    else:
        for name in old_bots.keys() | new_bots.keys():
            if name not in new_bots:
                changes.append(f"bots[{name}]: removed")
            elif name not in old_bots:
                changes.append(f"bots[{name}]: added")
            else:
                changes.extend(_diff(old_bots[name], new_bots[name], f"bots[{name}]"))
        if [n for n in old_bots if n in new_bots] != [n for n in new_bots if n in old_bots]:
            changes.append("bots: reordered")
    changes.sort()
    if len(changes) > MAX_SHOWN:
        changes = [*changes[:MAX_SHOWN], f"... and {len(changes) - MAX_SHOWN} more"]
    return changes


def _bots(value: Any) -> dict[str, dict[str, Any]] | None:
    """The ``[[bots]]`` tables by name, or None when they are not a list of named tables."""
    if not isinstance(value, list) or not all(
        isinstance(b, dict) and isinstance(b.get("name"), str) for b in value
    ):
        return None
    named = {b["name"]: b for b in value}
    return named if len(named) == len(value) else None


def _diff(old: Any, new: Any, where: str) -> Iterator[str]:
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(old.keys() | new.keys()):
            path = f"{where}.{key}" if where else key
            if key not in new:
                yield f"{path}: removed (was {_shown(old[key])})"
            elif key not in old:
                yield f"{path}: added ({_shown(new[key])})"
            else:
                yield from _diff(old[key], new[key], path)
    elif old != new or type(old) is not type(new):
        yield f"{where}: {_shown(old)} -> {_shown(new)}"


def _shown(value: Any) -> str:
    text = repr(value) if not isinstance(value, bool) else str(value).lower()
    return text if len(text) <= 60 else text[:57] + "..."


def _text_changes(stored: str, current: str) -> list[str]:
    lines = [
        line
        for line in difflib.unified_diff(stored.splitlines(), current.splitlines(), lineterm="", n=0)
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]
    return lines[:MAX_SHOWN] + (
        [f"... and {len(lines) - MAX_SHOWN} more lines"] if len(lines) > MAX_SHOWN else []
    )
