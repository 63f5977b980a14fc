"""``hearts web export DIR OUT``: the same pages as a static site, for a finished run.

Pages are written as plain files with relative links (open ``OUT/index.html`` from disk or put
``OUT`` on any web server); sorting and filtering then happen in the browser, from the same
URL parameters the live server reads. Withheld and pending games are exported as the live
server shows them: listed, without records or replays.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from hearts_tournaments.web.app import STATIC
from hearts_tournaments.web.links import Links
from hearts_tournaments.web.pages import Page, Site
from hearts_tournaments.web.source import LogPolicy, TournamentSource


@dataclass(frozen=True, slots=True)
class ExportSummary:
    """What an export wrote."""

    pages: int
    records: int
    failed: tuple[str, ...]


class ExportError(Exception):
    """The output folder cannot be written (the message says why)."""


def export_site(
    folder: Path, out: Path, *, seat_views: bool = True, logs: LogPolicy = LogPolicy.RELEASED
) -> ExportSummary:
    """Writes the pages of the tournament in ``folder`` under ``out``.

    Args:
        folder: The tournament folder (opened read-only).
        out: The site's folder (created; files of an earlier export are replaced).
        seat_views: Also write every seat's view of every replay.
        logs: Whose bot logs the pages show.

    Raises:
        NotATournament: if ``folder`` holds no tournament.
        ExportError: if ``out`` cannot be written.
    """
    source = TournamentSource(folder, logs, live=False)
    site = Site(source, live=False)
    top = Links(static_site=True, root="")
    nested = top.at_depth(1)
    pages = records = 0
    failed: list[str] = []

    def write(path: Path, page: Page) -> None:
        nonlocal pages
        if page.status != 200:
            failed.append(f"{path.relative_to(out)}: {page.status}")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(page.html, encoding="utf-8")
        pages += 1

    try:
        out.mkdir(parents=True, exist_ok=True)
        shutil.copytree(STATIC, out / "static", dirs_exist_ok=True)
        write(out / "index.html", site.leaderboard(top, {}))
        write(out / "games.html", site.games(top, {}))
        write(out / "h2h.html", site.h2h(top))
        for bot in source.bots():
            write(out / "bot" / f"{bot}.html", site.bot(nested, bot))
        rows = source.games()
        for deal in sorted({r.deal for r in rows}):
            write(out / "deal" / f"{deal}.html", site.deal(nested, deal))
        for row in rows:
            if not row.released:
                continue
            status, text = site.record_text(row.key)
            if status == 200:
                (out / "game").mkdir(parents=True, exist_ok=True)
                (out / "game" / f"{row.key}.json").write_text(text, encoding="utf-8")
                records += 1
            write(out / "game" / f"{row.key}.html", site.game(nested, row.key))
            if seat_views:
                for seat in range(len(row.seats)):
                    write(out / "game" / f"{row.key}-seat{seat}.html", site.game(nested, row.key, seat))
    except OSError as exc:
        raise ExportError(f"cannot write {out}: {exc}") from None
    finally:
        source.close()
    return ExportSummary(pages, records, tuple(failed))
