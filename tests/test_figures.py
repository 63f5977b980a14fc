"""docs/FIGURES.md says what the benches print, where recomputing them is cheap."""

from __future__ import annotations

import json
import re

import pytest

from bench.schedule import measure
from bench.strength import Z95, pool
from hearts_client.bots.ismcts import search_settings
from hearts_tournaments.tournament.schedule import SeatingMode
from tests.conftest import ROOT

FIGURES = (ROOT / "docs" / "FIGURES.md").read_text()


def section(title: str) -> str:
    """The text under the figure's heading ``### title``, up to the next heading."""
    (match,) = re.findall(rf"^### {re.escape(title)}\n(.*?)(?=^#|\Z)", FIGURES, flags=re.M | re.S)
    return str(match)


def what(title: str) -> str:
    """What the figure measures: its section's first paragraph."""
    return " ".join(section(title).strip().split("\n\n")[0].split())


def row(title: str) -> str:
    """The figure itself: its section's list items (each on one line), joined by "; "."""
    items: list[str] = []
    for line in section(title).splitlines():
        if line.startswith("- "):
            items.append(line[2:])
        elif line.startswith("  ") and items:
            items[-1] += " " + line.strip()
    return "; ".join(items)


def command(title: str) -> str:
    """The command that prints the figure: its section's ``Command:`` line."""
    (line,) = [line for line in section(title).splitlines() if line.startswith("Command: ")]
    return line


def test_every_figure_has_its_command() -> None:
    titles = re.findall(r"^### (.+)$", FIGURES, flags=re.M)
    assert len(titles) == len(set(titles)) >= 48, titles
    for title in titles:
        assert row(title) or "|" in section(title), f"{title}: no figure"
        assert re.search(r"`(?:[A-Z_]+=\S+ )?(?:nice -n 10 )?python bench/\w+\.py", command(title)), title


def test_the_prose_under_the_figures_quotes_the_schedule_grid_row() -> None:
    within, impossible, neither = map(int, re.findall(r"\d+", row("Schedule grid"))[:3])
    prose = re.search(
        r"reached in (\d+) of the (\d+) cases of the schedule grid and proven\s+impossible in (\d+);"
        r"\s+(\d+) are\s+neither",
        FIGURES,
    )
    assert prose is not None, "the prose no longer quotes the grid"
    assert [int(x) for x in prose.groups()] == [within, within + impossible + neither, impossible, neither]
    cases = re.search(r"schedule grid \((\d+) cases", what("Schedule grid"), flags=re.I)
    assert cases is not None and int(cases.group(1)) == within + impossible + neither


def test_the_schedule_row_of_12_bots_at_6_seats_is_what_bench_schedule_measures() -> None:
    cell = row("Schedule: pairs and neighbours")
    first = cell.split(";")[0]  # "12 bots/6 seats/15 deals: 3..4, 0..6 / 3..5 / 4..5, 0.3 s"
    spans = re.findall(r"(\d+)\.\.(\d+)", first)
    seatings = [SeatingMode(m) for m in re.findall(r"`(\w+)`", what("Schedule: pairs and neighbours"))]
    figures = [measure(12, 6, 15, mode) for mode in seatings]
    assert [int(x) for x in spans[0]] == figures[0]["pairs"]
    assert [[int(a), int(b)] for a, b in spans[1:]] == [f["left_neighbour_games"] for f in figures]


def test_the_strength_coverage_row_quotes_the_json_the_bench_printed() -> None:
    # Real games take minutes: the bench's --json output of the command in the row is kept in
    # bench/figures/, and the row must quote its coverage at every deal count.
    assert "bench/intervals.py --model engine --measure strength --trials 300" in command(
        "Coverage of the strength intervals"
    )
    printed = json.loads((ROOT / "bench" / "figures" / "intervals_engine_strength.json").read_text())
    assert (printed["model"], printed["measure"]) == ("engine", "strength")
    assert {c["trials"] for c in printed["coverage"]} == {300}
    shown = [
        float(x) for x in re.findall(r"(\d+\.\d)%", row("Coverage of the strength intervals").split("(")[0])
    ]
    measured = [round(100 * c["new_coverage"], 1) for c in printed["coverage"]]
    assert [c["deals"] for c in printed["coverage"]] == [2, 4, 6, 12]
    assert shown == measured
    assert all(93.0 <= x <= 97.0 for x in measured), measured


def test_the_strength_coverage_on_other_fields_quotes_the_json_the_bench_printed() -> None:
    title = "Coverage of the strength intervals on other fields"
    fields = ["heuristic,random,heuristic"]
    shown: dict[str, list[float]] = {}
    for item in row(title).split("; "):
        named = re.match(r"`([a-z,]+)`: (.*)", item)
        if named:
            fields.append(named.group(1))
            shown[named.group(1)] = [float(x) for x in re.findall(r"(\d+\.\d)%", named.group(2))]
    assert fields[1:] == ["heuristic,random,random", "random,random,random"]
    measured: dict[str, list[float]] = {}
    for field in fields:
        name = "" if field == fields[0] else "_" + field.replace(",", "-")
        kept = ROOT / "bench" / "figures" / f"intervals_engine_strength{name}.json"
        printed = json.loads(kept.read_text())
        assert (printed["model"], printed["measure"]) == ("engine", "strength")
        assert ",".join(printed["bots"]) == field
        assert [(c["deals"], c["trials"]) for c in printed["coverage"]] == [(d, 300) for d in (2, 4, 6, 12)]
        measured[field] = [round(100 * c["new_coverage"], 1) for c in printed["coverage"]]
        assert field == fields[0] or shown[field] == measured[field]
        assert field == fields[0] or f"--bots {field}" in command(title)
    spread = re.search(r"spread over the three fields: (.*?): within", row(title))
    assert spread is not None
    columns = list(zip(*measured.values(), strict=True))
    expected = " / ".join(f"{min(c):.1f}–{max(c):.1f}%" for c in columns)
    assert spread.group(1) == expected


def test_the_league_convergence_row_quotes_the_json_the_bench_printed() -> None:
    title = "League: blocks to a rank correlation of 0.9"
    items = row(title).split("; ")
    for kind, seeds, item in (("synthetic", "abcde", items[0]), ("real", "abc", items[1])):
        assert item.startswith(f"{kind}: ")
        now, before = item.split("(lower end: ")
        printed = [
            json.loads((ROOT / "bench" / "figures" / f"league_{kind}_{s}.json").read_text()) for s in seeds
        ]
        lower = [
            json.loads((ROOT / "bench" / "figures" / f"league_{kind}_lower_end_{s}.json").read_text())
            for s in seeds
        ]
        assert all(p["entrants"] == 50 and p["table_size"] == 8 for p in printed + lower)
        # What is published is the table's order, and it converges as the strength does.
        assert [int(x) for x in re.findall(r"\d+", now)] == [p["published_blocks_to_target"] for p in printed]
        assert [p["published_blocks_to_target"] for p in printed] == [p["blocks_to_target"] for p in printed]
        assert [int(x) for x in re.findall(r"\d+", before)] == [
            p["published_blocks_to_target"] for p in lower
        ]
    at_10 = re.findall(r"(\d\.\d\d)–(\d\.\d\d)", items[2])
    for (low, high), kind, seeds, suffix in (
        (at_10[0], "synthetic", "abcde", ""),
        (at_10[1], "real", "abc", ""),
        (at_10[2], "synthetic", "abcde", "_lower_end"),
        (at_10[3], "real", "abc", "_lower_end"),
    ):
        runs = [
            json.loads((ROOT / "bench" / "figures" / f"league_{kind}{suffix}_{s}.json").read_text())
            for s in seeds
        ]
        first = [p["points"][0] for p in runs]
        assert {f["blocks"] for f in first} == {10}
        assert (low, high) == (
            f"{min(f['published'] for f in first):.2f}",
            f"{max(f['published'] for f in first):.2f}",
        )
    spread = max(
        x["spread"]
        for kind, seeds in (("synthetic", "abcde"), ("real", "abc"))
        for s in seeds
        for x in json.loads((ROOT / "bench" / "figures" / f"league_{kind}_{s}.json").read_text())["points"]
    )
    assert f"blocks per entrant within {spread}" in row(title)


def test_the_scheduled_position_bias_row_quotes_the_json_the_bench_printed() -> None:
    assert "bench/seating.py --deals 40 --scheduled" in command("Position bias as scheduled")
    printed = json.loads((ROOT / "bench" / "figures" / "seating_scheduled.json").read_text())
    assert printed["scheduled"] is True
    rows = {(r["table_size"], r["seating"]): r for r in printed["rows"]}
    cell = row("Position bias as scheduled")
    quoted = re.findall(
        r"(\d+)(?: seats)?:? ([\d.]+) → ([\d.]+) \((?:spread )?([\d.]+), (?:noise )?([\d.]+)\)", cell
    )
    assert [int(q[0]) for q in quoted] == [6, 7, 9, 11]
    for size, rotate, permute, spread, noise in quoted:
        before, after = rows[(int(size), "rotate")], rows[(int(size), "permute")]
        assert [rotate, permute] == [f"{before['bias']:.2f}", f"{after['bias']:.2f}"]
        assert [spread, noise] == [f"{after['spread']:.2f}", f"{after['noise']:.2f}"]
        assert after["bias"] < 0.15  # the aim: the default seating at noise level


def test_the_nine_seat_position_bias_row_quotes_the_json_the_bench_printed() -> None:
    cell = row("Position bias at 9 seats")
    for name, kept in (("one order", "seating_9_fixed.json"), ("as scheduled", "seating_9_scheduled.json")):
        printed = json.loads((ROOT / "bench" / "figures" / kept).read_text())
        biases = {r["seating"]: r["bias"] for r in printed["rows"] if r["table_size"] == 9}
        shown = re.search(rf"{name}: ([\d.]+) / ([\d.]+) / ([\d.]+)", cell)
        assert shown is not None, cell
        assert list(shown.groups()) == [f"{biases[m.value]:.2f}" for m in SeatingMode]


def _kept_strength_runs(field: str, seeds: list[str]) -> list[str]:
    """The kept ``bench/strength.py --json`` outputs of ismcts against ``field``, one per seed."""
    return [str(ROOT / "bench" / "figures" / f"strength_ismcts_{field}_{s}.json") for s in seeds]


#: The fresh seeds of the ismcts row, 100 deals each: ``fresh-1207-01`` and on (the runs of the
#: version before, ``fresh-1204-``, stay kept for docs/design/MONTECARLO.md).
FRESH = "fresh-1207-"


def test_the_ismcts_strength_row_quotes_the_pooled_runs_the_bench_printed() -> None:
    # Each 100-deal run takes minutes; their --json output is kept in bench/figures/ and pooled
    # here by the bench's own --pool code, as the row says.
    assert (
        f"bench/strength.py --bot ismcts --field heuristic --players 8 --hands 100 --seed {FRESH}01 "
        "--jobs 1 --safety-limit none --json" in command("Ismcts against a heuristic field")
    )
    kept = sorted((ROOT / "bench" / "figures").glob(f"strength_ismcts_heuristic_{FRESH}*.json"))
    seeds = [path.stem.removeprefix("strength_ismcts_heuristic_") for path in kept]
    assert seeds and seeds[0] == f"{FRESH}01"
    files = [str(path) for path in kept]
    runs = [json.loads(path.read_text()) for path in kept]
    assert all(r["hands"] == 100 and r["safety_limit"] is None for r in runs)
    # The row is of the bot as it is: every run played ismcts's current search settings.
    assert all(r["ismcts"] == search_settings() for r in runs)
    pooled = pool(files)
    assert pooled["hands"] == 100 * len(files) and pooled["safety_stop"]["cut_short"] == 0  # type: ignore[index]
    ci = pooled["ci95"]
    assert isinstance(ci, dict) and isinstance(pooled["ratio"], float)
    cell = row("Ismcts against a heuristic field")
    assert (
        f"{pooled['hands']:,} fresh deals ({len(files)} seeds of 100, `{seeds[0]}` to `{seeds[-1]}`" in cell
    )
    bot, field = (
        f"{pooled[k]:.2f} ({ci[n][0]:.2f}–{ci[n][1]:.2f})"
        for k, n in (("bot_points_per_hand", "bot"), ("field_points_per_hand", "field"))
    )
    assert f"ismcts {bot}; heuristic in the same seats {field}" in cell
    ratio, (low, high) = pooled["ratio"], ci["ratio"]
    assert f"**{ratio:.3f}× ({low:.3f}–{high:.3f})**" in cell
    # The one-sided 95% bound: the same standard error, the one-sided quantile.
    one_sided = ratio + 1.6448536269514722 * (high - ratio) / Z95
    assert f"one-sided 95% upper bound {one_sided:.3f}" in cell
    # The aim: at most 0.4x, read as the two-sided 95% interval's upper end.
    assert ("aim met" in cell) == (high <= 0.40) and ("aim not established" in cell) == (high > 0.40)


def test_the_ismcts_against_montecarlo_row_quotes_the_pooled_runs() -> None:
    seeds = ["fresh-1201", "fresh-1202", "fresh-1203"]
    files = _kept_strength_runs("montecarlo", seeds)
    pooled = pool(files)
    ci = pooled["ci95"]
    assert isinstance(ci, dict) and pooled["hands"] == 1200
    cell = row("Ismcts against a montecarlo field")

    def signed(x: object) -> str:
        assert isinstance(x, float)
        return f"{x:.2f}".replace("-", "−")

    low, high = ci["difference"]
    assert f"difference **{signed(pooled['difference'])} ({signed(low)} – {signed(high)})**" in cell
    assert high < 0  # the aim: clearly fewer points than montecarlo in the same seats
    per_seed = [pool([f])["difference"] for f in files]
    assert "per seed " + " / ".join(signed(d) for d in per_seed) in cell


LUCK_TRIALS = "--trials 200 --strength-trials 20 --json"
#: The luck correction's kept runs: file, and the command's fields and pool.
LUCK_RUNS = {
    "luck_builtins.json": "--fields builtins6 builtins8 --pool-deals 40 " + LUCK_TRIALS,
    "luck_levels.json": "--fields levels8 heuristic10 --pool-deals 30 " + LUCK_TRIALS,
}


def test_the_luck_correction_figure_quotes_the_json_the_bench_printed() -> None:
    # Real games take minutes: the --json output of the section's two commands is kept in
    # bench/figures/, and the figure must quote its widths, coverage and cost.
    fields = []
    for name, arguments in LUCK_RUNS.items():
        assert f"bench/luck.py {arguments}" in command("Luck correction")
        printed = json.loads((ROOT / "bench" / "figures" / name).read_text())
        assert printed["trials"] == 200 and printed["strength_trials"] == 20
        fields += printed["fields"]
    cell = row("Luck correction")
    coverage = []
    for field in fields:
        at = {r["mode"]: r for r in field["rows"] if r["deals"] == 24}
        ratios = " / ".join(f"×{at[m]['strength_width_ratio']:.2f}" for m in ("single", "duplicate"))
        assert f"`{field['field']}` {ratios}" in cell
        kinds = ("place", "points", "strength")
        coverage += [r[f"{k}_corrected"]["coverage"] for r in field["rows"] for k in kinds]
    assert f"{100 * min(coverage):.1f}–{100 * max(coverage):.1f}%" in cell
    cost = sorted(1000 * f["luck_cpu_s_per_game"]["mean"] for f in fields)
    assert f"{cost[0]:.0f}–{cost[1]:.0f} ms" in cell and f"{cost[2]:.0f}–{cost[3]:.0f} ms" in cell
    assert ("not reached" in cell) == all(r["strength_width_ratio"] > 0.5 for f in fields for r in f["rows"])


def _shares(rows: list[dict[str, object]], part: str, whole: str) -> str:
    return " / ".join(f"{r[part]} of {r[whole]}" for r in rows)


@pytest.mark.parametrize(
    ("title", "arguments", "bots", "deals", "trials"),
    [
        ("Separation verdicts", "--bots 16 --trials 10 --json", 16, [4, 12, 24], 10),
        (
            "Separation verdicts, 48 bots",
            "--bots 48 --trials 4 --deals-per-bot 12 24 --json",
            48,
            [12, 24],
            4,
        ),
    ],
)
def test_the_separation_rows_quote_the_json_the_bench_printed(
    title: str, arguments: str, bots: int, deals: list[int], trials: int
) -> None:
    # Real games take minutes: the --json output of the section's command is kept in
    # bench/figures/, and the row must quote its verdicts field by field and deal count by count.
    assert f"bench/separation.py {arguments}" in command(title)
    printed = json.loads((ROOT / "bench" / "figures" / f"separation_{bots}.json").read_text())
    assert printed["bots"] == bots and printed["bootstrap_samples"] == 1000
    assert "benjamini-hochberg" in printed["rule"]
    fields = {f["field"]: f["rows"] for f in printed["fields"]}
    assert list(fields) == ["spread", "close", "equal"]
    cell = row(title)
    for name, rows in fields.items():
        assert [r["deals_per_bot"] for r in rows] == deals and {r["trials"] for r in rows} == {trials}
        power = " / ".join("-" if r["power"] is None else f"{r['power']:.0%}" for r in rows)
        assert (
            f"`{name}`: wrong {_shares(rows, 'wrong', 'separated')} (each pair alone: "
            f"{_shares(rows, 'per_pair_wrong', 'per_pair_separated')}); equal neighbours separated "
            f"{_shares(rows, 'equal_separated', 'equal_pairs')}; power {power}"
        ) in cell, name
    every = [r for rows in fields.values() for r in rows]
    total = {k: sum(r[k] for r in every) for k in every[0] if isinstance(every[0][k], int)}
    assert (
        f"all: wrong {total['wrong']} of {total['separated']}, each pair alone {total['per_pair_wrong']} "
        f"of {total['per_pair_separated']}; paired view, equal neighbours differed "
        f"{total['paired_equal_differed']} of {total['paired_equal_pairs']}"
    ) in cell


@pytest.mark.parametrize(
    ("title", "arguments", "kept", "deals"),
    [
        (
            "Separation verdicts on a close field",
            "--trials 40 --deals-per-bot 24",
            "separation_16_close",
            [24],
        ),
        (
            "Separation verdicts on a close field, more deals",
            "--trials 10 --deals-per-bot 48 96",
            "separation_16_close_more",
            [48, 96],
        ),
    ],
)
def test_the_close_field_separation_rows_quote_the_json_the_bench_printed(
    title: str, arguments: str, kept: str, deals: list[int]
) -> None:
    assert f"bench/separation.py --bots 16 {arguments} --field close --json" in command(title)
    printed = json.loads((ROOT / "bench" / "figures" / f"{kept}.json").read_text())
    (field,) = printed["fields"]
    rows = field["rows"]
    assert (field["field"], [r["deals_per_bot"] for r in rows], printed["bots"]) == ("close", deals, 16)
    power = " / ".join(f"{r['power']:.0%} ({r['right_separated']} of {r['unequal_pairs']})" for r in rows)
    assert (
        f"wrong {_shares(rows, 'wrong', 'separated')} (each pair alone: "
        f"{_shares(rows, 'per_pair_wrong', 'per_pair_separated')}); equal neighbours separated "
        f"{_shares(rows, 'equal_separated', 'equal_pairs')}; power {power}; paired view, equal "
        f"neighbours differed {_shares(rows, 'paired_equal_differed', 'paired_equal_pairs')}"
    ) in row(title)
