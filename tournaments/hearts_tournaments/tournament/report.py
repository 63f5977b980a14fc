"""Publishing standings: a rich table for the terminal, JSON, CSV and Markdown."""

from __future__ import annotations

import csv
import enum
import io
import json
from itertools import pairwise
from typing import Any

from rich.console import Console
from rich.table import Table

from hearts_tournaments.results.stats import SEPARATION_FDR
from hearts_tournaments.tournament.results import (
    DIFFERED,
    NO_CLEAR_DIFFERENCE,
    PAIRED_MIN_DEALS,
    PAIRED_QUESTION,
    TIER_QUESTION,
    BotStanding,
    Interval,
    Pairing,
    Standings,
)
from hearts_tournaments.tournament.schedule import Balance


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
    "deals",
    "too_few_deals",
    "strength",
    "strength_ci95_low",
    "strength_ci95_high",
    "mean_place",
    "mean_place_ci95_low",
    "mean_place_ci95_high",
    "wins",
    "points_per_hand",
    "points_per_hand_ci95_low",
    "points_per_hand_ci95_high",
    "mean_score",
    "field_strength",
    "openskill_mu",
    "openskill_sigma",
    "faults",
    "failed_games",
    "quarantined",
    "bot_errors",
    "tier",
    "never_played",
)

#: What a missing interval says.
TOO_FEW_DEALS = "too few deals"
#: The mark of a bot that never made a decision of its own (its places are the referee's).
NEVER_PLAYED = "NEVER PLAYED"
#: Above this many bots the tables show only the paired differences of bots ranked next to
#: each other (the JSON has every pair).
ALL_PAIRS_UP_TO = 10

#: The standings' columns: header and alignment.
_COLUMNS = (
    ("#", "right"),
    ("tier", "right"),
    ("bot", "left"),
    ("games", "right"),
    ("deals", "right"),
    ("strength (95% CI)", "right"),
    ("mean place (95% CI)", "right"),
    ("wins", "right"),
    ("points/hand (95% CI)", "right"),
    ("field", "right"),
    ("faults", "right"),
    ("", "left"),
)
#: The paired differences' columns.
_PAIR_COLUMNS = (
    ("bots", "left"),
    ("deals", "right"),
    ("mean place difference (95% CI)", "right"),
    ("P(first is better)", "right"),
    ("differed on shared deals?", "left"),
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
        console = Console(highlight=False, width=160)
    return console


def _row(line: BotStanding) -> list[str]:
    return [
        str(line.rank),
        "-" if line.tier is None else str(line.tier),
        line.bot,
        str(line.games),
        str(line.deals),
        _with_ci(line.strength, line.strength_ci, 2, signed=True),
        _with_ci(line.mean_place, line.mean_place_ci, 2),
        _short(line.wins),
        _with_ci(line.points_per_hand, line.points_per_hand_ci, 2),
        _fixed(line.field_strength, 2, signed=True),
        str(line.faults),
        _status(line),
    ]


def _pair_row(pair: Pairing) -> list[str]:
    d = pair.difference
    los = "-" if d.below_zero is None else _probability(d.below_zero)
    verdict = DIFFERED if pair.separated else "" if d.interval is None else NO_CLEAR_DIFFERENCE
    shown = _with_ci(d.mean, d.interval, 2, signed=True)
    return [f"{pair.a} − {pair.b}", str(d.clusters), shown, los, verdict]


def _shown_pairs(standings: Standings) -> tuple[list[Pairing], str]:
    """The pairs the tables show, and the title's qualifier.

    In a large field only neighbours in the ranking that share enough deals for a paired
    difference to say something (in a field of 50 at tables of 8 a pair shares 3 or 4 deals).
    """
    if len(standings.standings) <= ALL_PAIRS_UP_TO:
        return list(standings.pairings), ""
    order = [line.bot for line in standings.standings]
    shown = [standings.pairing(a, b) for a, b in pairwise(order)]
    return (
        [p for p in shown if p.difference.clusters >= PAIRED_MIN_DEALS],
        f", bots ranked next to each other sharing at least {PAIRED_MIN_DEALS} deals "
        "(the JSON has every pair)",
    )


def print_table(standings: Standings, console: Console) -> None:
    """Prints the standings, the paired differences, the head-to-head matrix and the notes."""
    table = Table(title=f"Tournament {standings.name}: standings", title_justify="left")
    for header, justify in _COLUMNS:
        table.add_column(header, justify=justify)  # type: ignore[arg-type]
    lines = standings.standings
    for line, below in zip(lines, [*lines[1:], None], strict=True):
        # A rule between two tiers: the bots above it are separated from those below.
        boundary = below is not None and line.tier is not None and below.tier != line.tier
        table.add_row(*_row(line), end_section=boundary)
    console.print(table)
    shown, which = _shown_pairs(standings)
    if shown:
        pairs = Table(
            title=f"Paired differences over shared deals{which} (first − second; negative: the first is "
            "better)",
            title_justify="left",
        )
        for header, justify in _PAIR_COLUMNS:
            pairs.add_column(header, justify=justify)  # type: ignore[arg-type]
        for pair in shown:
            pairs.add_row(*_pair_row(pair))
        console.print(pairs)
    bots = [line.bot for line in standings.standings]
    matrix = Table(
        title="Head-to-head: how often the row bot finished ahead of the column bot", title_justify="left"
    )
    matrix.add_column("")
    for bot in bots:
        matrix.add_column(bot, justify="right")
    for a in bots:
        matrix.add_row(a, *_meetings(standings, a, bots))
    console.print(matrix)
    for note in notes(standings):
        console.print(note, highlight=False, soft_wrap=True)


def _meetings(standings: Standings, a: str, bots: list[str]) -> list[str]:
    cells = []
    for b in bots:
        share = standings.head_to_head[a][b].share if a != b else None
        cells.append("·" if a == b else "-" if share is None else f"{share:.0%}")
    return cells


def method_notes(standings: Standings) -> list[str]:
    """How the standings are ranked and what their intervals are (the report's notes and the web
    leaderboard's, from this one place)."""
    return [
        "Ranked by strength: a batch Plackett-Luce fit of every game's finishing order (log-strength "
        "against the mean bot; exp(a - b) is the odds that a finishes ahead of b), 95% t interval "
        f"with the standard error of a bootstrap over deals ({standings.bootstrap_samples} resamples); "
        "ties by mean place.",
        verdicts_note(),
        "Mean place (1 = best) and points/hand: 95% Student-t intervals over deals (a deal and its "
        f"rotations are one unit); '{TOO_FEW_DEALS}' below 2 deals, and such a bot is ranked last.",
    ] + ([str(standings.luck["method"])] if standings.luck is not None else [])


def verdicts_note() -> str:
    """Which question each of the standings' two verdicts answers: the one place every form
    (the notes under the tables, the Markdown, the web leaderboard) says it."""
    return (
        f'Two verdicts, two questions. The tier answers "{TIER_QUESTION}": from the strength '
        "model, which weighs every game of both bots against every opponent, neighbours in the "
        "ranking share a tier unless the model tells their order apart (a rule between rows in the "
        "table: the order across it is established), by Benjamini-Hochberg across the neighbours' "
        f"tests: on average at most {SEPARATION_FDR:.0%} of the rules are wrong. "
        "The paired line answers "
        f'"{PAIRED_QUESTION}": from their places deal by deal over those deals alone, '
        f"model-free, '{DIFFERED}' or '{NO_CLEAR_DIFFERENCE}' at 95%, each pair on its own. The two "
        "may disagree without contradicting each other: two bots in one tier may have differed on "
        "the deals they shared, and bots in different tiers may show no clear difference on few "
        "shared deals."
    )


def notes(standings: Standings) -> list[str]:
    """The lines printed under the tables: coverage, method, balance, quarantines, warnings."""
    gauntlet = standings.gauntlet
    stopped = gauntlet is not None and gauntlet.decided
    out = [
        f"{standings.games_played} of {standings.games_total} games played "
        f"({standings.deals_played} of {standings.deals} deals, table of {standings.table_size}, "
        f"{'every deal in every seat rotation' if standings.duplicate else 'one game per deal'})"
        + ("" if standings.complete else ": stopped by the gauntlet's test" if stopped else ": INCOMPLETE"),
        *method_notes(standings),
        "Field: the mean strength of the opponents a bot sat with (the schedule's residual "
        "imbalance; strength accounts for it, mean place does not).",
        "Paired differences: mean place of the first minus the second, deal by deal over the deals "
        "both played, with its t interval, the likelihood that the first is better and the paired "
        "verdict (above).",
        "Head-to-head: the share of their shared games in which the row bot finished ahead of the "
        "column bot (a tie counts half).",
    ]
    if gauntlet is not None:
        out.append(gauntlet.line())
    out += ["Schedule: " + line for line in Balance.from_json(standings.balance).lines()]
    for q in standings.quarantine:
        out.append(
            f"{q.bot} was quarantined after {q.failed_games} failed games (the last: {q.after_game}); "
            "the referee played its later seats by the default rule"
        )
    for line in standings.standings:
        if line.never_played:
            out.append(
                f"{line.bot} never played a decision of its own ({NEVER_PLAYED}): the referee's default "
                "rule played all its seats, so its places say nothing about the bot; it is ranked last "
                "(see its logs)"
            )
    out += ["Warning: " + line for line in standings.warnings()]
    return out


def to_csv(standings: Standings) -> str:
    """One row per bot, in rank order, with :data:`CSV_COLUMNS`."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for line in standings.standings:
        data = line.to_json()
        strength = data["strength_ci95"] or [None, None]
        place = data["mean_place_ci95"] or [None, None]
        points = data["points_per_hand_ci95"] or [None, None]
        row: list[Any] = [
            data["rank"],
            data["bot"],
            data["games"],
            data["seats"],
            data["deals"],
            str(data["too_few_deals"]).lower(),
            data["strength"],
            strength[0],
            strength[1],
            data["mean_place"],
            place[0],
            place[1],
            data["wins"],
            data["points_per_hand"],
            points[0],
            points[1],
            data["mean_score"],
            data["field_strength"],
            data["openskill"]["mu"],
            data["openskill"]["sigma"],
            data["faults"],
            data["failed_games"],
            str(data["quarantined"]).lower(),
            data.get("bot_errors", 0),
            data["tier"],
            str(data.get("never_played", False)).lower(),
        ]
        writer.writerow("" if v is None else v for v in row)
    return buffer.getvalue()


def to_markdown(standings: Standings) -> str:
    """The standings, the paired differences, the head-to-head matrix and the notes in GitHub
    Markdown."""
    lines = [
        f"## Tournament {standings.name}",
        "",
        "| " + " | ".join(h for h, _ in _COLUMNS) + " |",
        "|" + "".join("--:|" if j == "right" else ":--|" for _, j in _COLUMNS),
    ]
    lines += ["| " + " | ".join(_row(line)) + " |" for line in standings.standings]
    shown, which = _shown_pairs(standings)
    if shown:
        lines += [
            "",
            f"Paired differences over shared deals{which} (first − second; negative: the first is better):",
            "",
            "| " + " | ".join(h for h, _ in _PAIR_COLUMNS) + " |",
            "|" + "".join("--:|" if j == "right" else ":--|" for _, j in _PAIR_COLUMNS),
        ]
        lines += ["| " + " | ".join(_pair_row(pair)) + " |" for pair in shown]
    bots = [line.bot for line in standings.standings]
    lines += [
        "",
        "Head-to-head: how often the row bot finished ahead of the column bot:",
        "",
        "| | " + " | ".join(bots) + " |",
        "|:--|" + "--:|" * len(bots),
    ]
    lines += [f"| {a} | " + " | ".join(_meetings(standings, a, bots)) + " |" for a in bots]
    lines.append("")
    lines += [f"- {note}" for note in notes(standings)]
    return "\n".join(lines) + "\n"


def interval_text(low: float, high: float, digits: int = 2, signed: bool = False, unit: str = "") -> str:
    """An interval as every page and report writes it: ``(-3.35 to -1.36)``, never with a dash
    between two numbers that may carry their own minus signs."""
    form = f"{{:{'+' if signed else ''}.{digits}f}}"
    return f"({form.format(low)}{unit} to {form.format(high)}{unit})"


def _with_ci(value: float | None, ci: Interval | None, digits: int, signed: bool = False) -> str:
    if value is None:
        return "-"
    shown = f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"
    if ci is None:
        return f"{shown} ({TOO_FEW_DEALS})"
    return f"{shown} {interval_text(ci.low, ci.high, digits, signed)}"


def _probability(p: float) -> str:
    """A probability as a percentage, never rounded to a certainty it is not."""
    if 0 < p < 0.001:
        return "<0.1%"
    if 0.999 < p < 1:
        return ">99.9%"
    return f"{p:.1%}"


def _fixed(value: float | None, digits: int, signed: bool = False) -> str:
    if value is None:
        return "-"
    return f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"


def _short(value: float) -> str:
    """A count that may be fractional (shared wins): ``3`` or ``2.5``."""
    return f"{value:.0f}" if value == int(value) else f"{value:.2f}".rstrip("0")


def _status(line: BotStanding) -> str:
    parts = []
    if line.never_played:
        parts.append(f"{NEVER_PLAYED}: ranked last (the referee played all its seats)")
    if line.too_few_deals and line.games:
        parts.append("ranked last: too few deals")
    if line.quarantined:
        parts.append(f"quarantined ({line.failed_games} failed games)")
    elif line.failed_games:
        parts.append(f"{line.failed_games} failed games")
    if line.bot_errors:
        parts.append(f"{line.bot_errors} bot errors (answers its SDK made for it)")
    return "; ".join(parts)
