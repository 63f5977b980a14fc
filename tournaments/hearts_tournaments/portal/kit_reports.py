"""The bot test kit's report of each submission, kept for its submission page.

``LEAGUE/logs/ENTRANT/submission-ID.kit.json`` (in the league's private logs, beside the bot's
own logs): written once the upload's check has run, read by the entrant's submission page.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from hearts_tournaments.arena.folders import private_folder
from hearts_tournaments.kit.report import Report


def report_path(league: Path, entrant: str, sid: int) -> Path:
    """Where submission ``sid``'s report is kept."""
    return league / "logs" / entrant / f"submission-{sid}.kit.json"


def save_report(league: Path, entrant: str, sid: int, report: Report | None) -> None:
    """Keeps ``report`` for submission ``sid`` (private to the organiser, shown to its entrant)."""
    if report is None:
        return
    path = report_path(league, entrant, sid)
    private_folder(path.parent)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        json.dump(report.to_json(), out)


def load_report(league: Path, entrant: str, sid: int) -> Report | None:
    """Submission ``sid``'s report, or None (not checked yet, or refused before)."""
    try:
        return Report.from_json(json.loads(report_path(league, entrant, sid).read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError):
        return None
