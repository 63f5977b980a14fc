"""Publishing standings: a rich table for the terminal, JSON, CSV and Markdown."""

from __future__ import annotations

import csv
import enum
import io
import json
from typing import Any

from rich.console import Console
from rich.table import Table

from hearts_tournaments.results import BOOTSTRAP_SAMPLES, BotStanding, Interval, Standings
from hearts_tournaments.schedule import Balance


class ReportFormat(enum.StrEnum):
    """The forms of ``hearts tournament report``."""

    TABLE = "table"
    JSON = "json"
    CSV = "csv"
    MARKDOWN = "markdown"


#: Columns of the CSV form, one row per bot in rank order.
CSV_COLUMNS = (
    "rank",
    "bot",
    "games",
    "seats",
    "mean_place",
    "mean_place_ci95_low",
    "mean_place_ci95_high",
    "wins",
    "points_per_hand",
    "points_per_hand_ci95_low",
    "points_per_hand_ci95_high",
    "mean_score",
    "rating_mu",
    "rating_sigma",
    "rating_ordinal",
    "faults",
    "failed_games",
    "quarantined",
)


def render(standings: Standings, fmt: ReportFormat, console: Console | None = None) -> str | None:
    """Renders the standings.

    Args:
        standings: What to publish.
        fmt: The form.
        console: Where the table form is printed (default: stdout).

    Returns:
        The text of the JSON, CSV and Markdown forms; None for the table, which is printed.
    """
    if fmt is ReportFormat.JSON:
        return json.dumps(standings.to_json(), indent=2) + "\n"
    if fmt is ReportFormat.CSV:
        return to_csv(standings)
    if fmt is ReportFormat.MARKDOWN:
        return to_markdown(standings)
    print_table(standings, console or _stdout_console())
    return None


def _stdout_console() -> Console:
    console = Console(highlight=False)
    if not console.is_terminal:
        # Piped or captured: no terminal width to fit, so do not wrap the columns at 80.
        console = Console(highlight=False, width=140)
    return console


def print_table(standings: Standings, console: Console) -> None:
    """Prints the standings, the head-to-head matrix and the notes as rich tables."""
    table = Table(title=f"Tournament {standings.name}: standings", title_justify="left")
    for header, justify in (
        ("#", "right"),
        ("bot", "left"),
        ("games", "right"),
        ("mean place (95% CI)", "right"),
        ("wins", "right"),
        ("points/hand (95% CI)", "right"),
        ("mean score", "right"),
        ("rating μ ± σ", "right"),
        ("faults", "right"),
        ("", "left"),
    ):
        table.add_column(header, justify=justify)  # type: ignore[arg-type]
    for line in standings.standings:
        table.add_row(
            str(line.rank),
            line.bot,
            str(line.games),
            _with_ci(line.mean_place, line.mean_place_ci, 2),
            _short(line.wins),
            _with_ci(line.points_per_hand, line.points_per_hand_ci, 2),
            _fixed(line.mean_score, 1),
            f"{line.rating_mu:.1f} ± {line.rating_sigma:.1f}",
            str(line.faults),
            _status(line),
        )
    console.print(table)
    bots = [line.bot for line in standings.standings]
    matrix = Table(title="Head-to-head (see below)", title_justify="left")
    matrix.add_column("")
    for bot in bots:
        matrix.add_column(bot, justify="right")
    for a in bots:
        cells = []
        for b in bots:
            share = standings.head_to_head[a][b].share if a != b else None
            cells.append("·" if a == b else "-" if share is None else f"{share:.0%}")
        matrix.add_row(a, *cells)
    console.print(matrix)
    for note in notes(standings):
        console.print(note, highlight=False, soft_wrap=True)


def notes(standings: Standings) -> list[str]:
    """The lines printed under the tables: coverage, method, balance, quarantines."""
    out = [
        f"{standings.games_played} of {standings.games_total} games played "
        f"({standings.deals_played} of {standings.deals} deals, table of {standings.table_size}, "
        f"{'every deal in every seat rotation' if standings.duplicate else 'one game per deal'})"
        + ("" if standings.complete else ": INCOMPLETE"),
        "Ranked by mean place (1 = best), ties by OpenSkill ordinal; 95% intervals: bootstrap "
        f"over deals ({BOOTSTRAP_SAMPLES} resamples).",
        "Head-to-head: the share of their shared games in which the row bot finished ahead of the "
        "column bot (a tie counts half).",
    ]
    out += ["Schedule: " + line for line in Balance.from_json(standings.balance).lines()]
    for q in standings.quarantine:
        out.append(
            f"{q.bot} was quarantined after {q.failed_games} failed games (the last: {q.after_game}); "
            "the referee played its later seats by the default rule"
        )
    return out


def to_csv(standings: Standings) -> str:
    """One row per bot, in rank order, with :data:`CSV_COLUMNS`."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for line in standings.standings:
        data = line.to_json()
        place = data["mean_place_ci95"] or [None, None]
        points = data["points_per_hand_ci95"] or [None, None]
        row: list[Any] = [
            data["rank"],
            data["bot"],
            data["games"],
            data["seats"],
            data["mean_place"],
            place[0],
            place[1],
            data["wins"],
            data["points_per_hand"],
            points[0],
            points[1],
            data["mean_score"],
            data["rating"]["mu"],
            data["rating"]["sigma"],
            data["rating"]["ordinal"],
            data["faults"],
            data["failed_games"],
            str(data["quarantined"]).lower(),
        ]
        writer.writerow("" if v is None else v for v in row)
    return buffer.getvalue()


def to_markdown(standings: Standings) -> str:
    """The standings, the head-to-head matrix and the notes in GitHub Markdown."""
    lines = [
        f"## Tournament {standings.name}",
        "",
        "| # | bot | games | mean place (95% CI) | wins | points/hand (95% CI) | mean score "
        "| rating μ ± σ | faults | |",
        "|--:|:--|--:|--:|--:|--:|--:|--:|--:|:--|",
    ]
    for line in standings.standings:
        lines.append(
            f"| {line.rank} | {line.bot} | {line.games} | {_with_ci(line.mean_place, line.mean_place_ci, 2)} "
            f"| {_short(line.wins)} | {_with_ci(line.points_per_hand, line.points_per_hand_ci, 2)} "
            f"| {_fixed(line.mean_score, 1)} | {line.rating_mu:.1f} ± {line.rating_sigma:.1f} "
            f"| {line.faults} | {_status(line)} |"
        )
    bots = [line.bot for line in standings.standings]
    lines += [
        "",
        "Head-to-head (see below):",
        "",
        "| | " + " | ".join(bots) + " |",
        "|:--|" + "--:|" * len(bots),
    ]
    for a in bots:
        cells = []
        for b in bots:
            share = standings.head_to_head[a][b].share if a != b else None
            cells.append("·" if a == b else "-" if share is None else f"{share:.0%}")
        lines.append(f"| {a} | " + " | ".join(cells) + " |")
    lines.append("")
    lines += [f"- {note}" for note in notes(standings)]
    return "\n".join(lines) + "\n"


def _with_ci(value: float | None, ci: Interval | None, digits: int) -> str:
    if value is None:
        return "-"
    if ci is None:
        return f"{value:.{digits}f}"
    return f"{value:.{digits}f} ({ci.low:.{digits}f}–{ci.high:.{digits}f})"


def _fixed(value: float | None, digits: int) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _short(value: float) -> str:
    """A count that may be fractional (shared wins): ``3`` or ``2.5``."""
    return f"{value:.0f}" if value == int(value) else f"{value:.2f}".rstrip("0")


def _status(line: BotStanding) -> str:
    if line.quarantined:
        return f"quarantined ({line.failed_games} failed games)"
    if line.failed_games:
        return f"{line.failed_games} failed games"
    return ""
