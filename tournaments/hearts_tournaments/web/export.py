"""``hearts web export DIR OUT``: the same pages as a static site, for a finished run.

Pages are written as plain files with relative links (open ``OUT/index.html`` from disk or put
``OUT`` on any web server); sorting and filtering then happen in the browser, from the same
URL parameters the live server reads. Withheld and pending games are exported as the live
server shows them: listed, without records or replays.

The files are those the pages of :data:`~.registry.PAGES` enumerate, rendered as the live
server renders them.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from hearts_tournaments.web.app import STATIC
from hearts_tournaments.web.links import Links
from hearts_tournaments.web.pages import Site
from hearts_tournaments.web.registry import PAGES, ExportOptions
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
    options = ExportOptions(seat_views=seat_views)
    pages = records = 0
    failed: list[str] = []
    try:
        out.mkdir(parents=True, exist_ok=True)
        shutil.copytree(STATIC, out / "static", dirs_exist_ok=True)
        for entry in PAGES:
            if entry.export is None:
                continue
            for file in entry.export(source, options):
                reply = entry.render(site, top.at_depth(file.depth), file.params, file.query)
                path = out / file.path
                if reply.is_html:
                    if reply.status != 200:
                        failed.append(f"{file.path}: {reply.status}")
                    pages += 1
                elif reply.status == 200:
                    records += 1
                else:
                    continue  # a download the live server refuses too: no file
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(reply.body, encoding="utf-8")
    except OSError as exc:
        raise ExportError(f"cannot write {out}: {exc}") from None
    finally:
        source.close()
    return ExportSummary(pages, records, tuple(failed))
