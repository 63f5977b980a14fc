"""The bot test kit's report of each submission, kept with it for its submission page.

The report is a column of the submission's row in ``portal.sqlite`` (the organiser's, shown to
its entrant only), not a file: a submission that fails leaves no bytes in the league folder, and
its report is what tells the entrant why. It is bounded: past :data:`MAX_REPORT_BYTES` of JSON
the evidence's log lines are cut to the failed checks' first :data:`LOG_LINES` (each at most
:data:`LOG_LINE_CHARS` characters), as a failed submission's log is.
"""

from __future__ import annotations

import dataclasses
import json

from hearts_tournaments.kit.report import Report, Status
from hearts_tournaments.portal.accounts import PortalStore

#: Bytes of a report's JSON kept at most (a report is about 3 KB; its evidence's log lines are
#: what could make it larger).
MAX_REPORT_BYTES = 64 * 1024
#: Log lines kept per failed check, and characters per line, when a report is cut.
LOG_LINES = 20
LOG_LINE_CHARS = 300


def save_report(portal: PortalStore, sid: int, report: Report | None) -> None:
    """Keeps ``report`` with submission ``sid``, cut to :data:`MAX_REPORT_BYTES` if need be."""
    if report is None:
        return
    text = json.dumps(report.to_json())
    if len(text.encode()) > MAX_REPORT_BYTES:
        text = json.dumps(_cut(report).to_json())
    portal.set_report(sid, text)


def load_report(portal: PortalStore, sid: int) -> Report | None:
    """Submission ``sid``'s report, or None (not checked yet, or refused before)."""
    text = portal.report(sid)
    if text is None:
        return None
    try:
        return Report.from_json(json.loads(text))
    except (ValueError, KeyError, TypeError):
        return None


def _cut(report: Report) -> Report:
    """``report`` with every check's evidence log kept to a few short lines (failed checks only)."""
    checks = tuple(
        dataclasses.replace(
            check,
            evidence=dataclasses.replace(
                check.evidence,
                log=tuple(line[:LOG_LINE_CHARS] for line in check.evidence.log[:LOG_LINES])
                if check.status is Status.FAILED
                else (),
                request=check.evidence.request if check.status is Status.FAILED else None,
            ),
        )
        for check in report.checks
    )
    return dataclasses.replace(report, checks=checks)
