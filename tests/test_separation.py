"""Which neighbours in the ranking are separated, from the strength model, and how it is shown.

A field of 50 bots at tables of 8 (the size of a real competition) is played in-process with
the engine into a real store (``tests/helpers/web_store``): a pair of bots there shares only 3 or 4
deals, so paired differences over shared deals cannot separate neighbours, and the report
must say how many the strength model separates in one line, not one line per pair.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import random
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hearts_tournaments.cli.main import app
from hearts_tournaments.results.stats import (
    SEPARATION_FDR,
    Interval,
    benjamini_hochberg,
    bootstrap_plackett_luce,
    strength_difference,
)
from hearts_tournaments.tournament.results import PAIRED_MIN_DEALS, Separation, compute_standings
from hearts_tournaments.tournament.schedule import make_schedule
from tests.helpers.web_store import add_games, config_text, create
from tests.test_tournament_results import simulated

FIELD = 50
TABLE = 8
#: Every bot plays 12 deals (75 deals of 8 seats in every rotation: 600 games).
DEALS = 75
TARGET = 30


@pytest.fixture(scope="module")
def large_field(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 50-bot tournament: 10 heuristic bots and 40 random ones, played in-process."""
    folder = tmp_path_factory.mktemp("field") / "t"
    bots = [(f"h{i:02d}", "heuristic") for i in range(10)] + [(f"r{i:02d}", "random") for i in range(40)]
    text = config_text(bots, table_size=TABLE, deals=DEALS, duplicate=True, target_score=TARGET, seed="f50")
    games = create(folder, text)
    add_games(folder, games, dict(bots), TARGET)
    return folder


def separation_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if re.search(r"separat", line, re.I)]


def test_a_large_field_ends_with_at_most_one_separation_line(large_field: Path) -> None:
    result = CliRunner().invoke(app, ["tournament", "report", str(large_field)])
    assert result.exit_code == 0, result.output
    lines = separation_lines(result.output)
    assert len(lines) <= 1, "\n".join(lines[:5])
    (line,) = lines
    match = re.search(r"(\d+) of (\d+) neighbouring pairs in the ranking separated, at most 5% of", line)
    assert match is not None, line
    separated, pairs = int(match[1]), int(match[2])
    assert pairs == FIELD - 1
    # Heuristic bots are far better than random ones: the model tells at least that apart.
    assert separated >= 1
    if separated < pairs:
        assert re.search(r"play about [\d,]+ more deals|too close to separate", line), line


def test_the_json_lists_every_neighbour_and_the_tiers_follow_it(large_field: Path) -> None:
    result = CliRunner().invoke(app, ["tournament", "report", str(large_field), "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    separation = data["separation"]
    neighbours = separation["neighbours"]
    order = [s["bot"] for s in data["standings"]]
    assert [(n["a"], n["b"]) for n in neighbours] == list(itertools.pairwise(order))
    assert separation["separated"] == sum(n["separated"] for n in neighbours)
    # Benjamini-Hochberg across the neighbours' p-values decides, never beyond a pair's interval.
    assert separation["false_discovery_rate"] == SEPARATION_FDR
    assert [n["separated"] for n in neighbours] == benjamini_hochberg([n["p_value"] for n in neighbours])
    for n in neighbours:
        low, high = n["ci95"]
        assert low <= n["strength_difference"] <= high
        assert (n["p_value"] < 0.05) == (low > 0)
        assert not n["separated"] or low > 0
        # Three or four shared deals: too few for the paired view.
        assert n["shared_deals"] < PAIRED_MIN_DEALS and n["paired_separated"] is None
    tiers = [s["tier"] for s in data["standings"]]
    assert tiers[0] == 1
    for n, (upper, lower) in zip(neighbours, itertools.pairwise(tiers), strict=True):
        assert lower == upper + n["separated"]
    # Every heuristic bot ranks above every random one, and some rule divides them.
    kinds = [bot[0] for bot in order]
    assert kinds == sorted(kinds)
    boundary = kinds.index("r")
    assert tiers[boundary] > tiers[boundary - 1] or tiers[-1] > 1
    # Only one warning about separation, the summary; none per pair.
    assert [w for w in data["warnings"] if "separat" in w] == [separation["summary"]]


def test_the_table_draws_a_rule_between_tiers(large_field: Path) -> None:
    result = CliRunner().invoke(app, ["tournament", "report", str(large_field), "--format", "json"])
    data = json.loads(result.output)
    table = CliRunner().invoke(app, ["tournament", "report", str(large_field)]).output
    rows = [line for line in table.splitlines() if re.match(r"^│\s+\d+\s+│", line)]
    assert len(rows) == FIELD
    # Rich draws a rule ("├───┼") after the last row of each section (tier).
    rules = len(re.findall(r"^├", table.split("Tournament")[1].split("Head-to-head")[0], re.M))
    assert rules == data["separation"]["separated"] >= 1


def test_the_difference_keeps_the_covariance_of_the_two_strengths() -> None:
    # Two bots that always sit together and a shared luck per deal: their strengths move
    # together, so their difference is far narrower than the two intervals side by side.
    rng = random.Random(5)
    deals = []
    for _ in range(12):
        luck = rng.gauss(0, 2)
        games = []
        for _ in range(4):
            order = sorted(
                ["x", "y", "z", "w"], key=lambda b: {"x": luck - 0.3, "y": luck}.get(b, 0) + rng.gauss(0, 1)
            )
            games.append(tuple((bot, place + 1) for place, bot in enumerate(order)))
        deals.append(games)
    fit = bootstrap_plackett_luce(deals, 400, "cov")
    interval = strength_difference(fit, "x", "y")
    assert interval is not None
    x, y = fit.interval["x"], fit.interval["y"]
    assert x is not None and y is not None
    assert interval.low <= fit.strength["x"] - fit.strength["y"] <= interval.high
    # The same resamples, difference by difference.
    draws = [r["x"] - r["y"] for r in fit.replicates]
    assert len(draws) == fit.samples == 400
    assert interval.width < x.width + y.width
    assert strength_difference(bootstrap_plackett_luce(deals, 0), "x", "y") is None


def test_equal_bots_are_rarely_separated_and_unequal_ones_often() -> None:
    bots = [f"b{i}" for i in range(12)]
    schedule = make_schedule(bots, 6, 24, "1", duplicate=True)
    equal_separated = pairs = 0
    for trial in range(6):
        outcomes = simulated(schedule, random.Random(trial), dict.fromkeys(bots, 0.0))
        result = compute_standings(
            name="t",
            schedule=schedule,
            outcomes=outcomes,
            target_score=50,
            quarantine_after=3,
            balance=schedule.balance().to_json(),
            bootstrap_samples=200,
        )
        pairs += len(result.separations)
        equal_separated += sum(s.separated for s in result.separations)
    assert pairs == 6 * 11
    assert equal_separated / pairs <= 0.05
    skill = {bot: -40.0 * i for i, bot in enumerate(bots)}
    outcomes = simulated(schedule, random.Random(9), skill)
    result = compute_standings(
        name="t",
        schedule=schedule,
        outcomes=outcomes,
        target_score=50,
        quarantine_after=3,
        balance=schedule.balance().to_json(),
        bootstrap_samples=200,
    )
    # Each pair's own interval alone separates 6 or more; Benjamini-Hochberg across the 11
    # neighbours, which bounds the share of wrong verdicts, costs some of that power.
    assert sum(s.interval is not None and s.interval.low > 0 for s in result.separations) >= 6
    assert sum(s.separated for s in result.separations) >= 4


def test_more_deals_come_from_the_measured_widths() -> None:
    # Half-width 0.4 around a difference of 0.2: four times the deals halve it to 0.2.
    pair = Separation("a", "b", 0.2, Interval(-0.2, 0.6), False, 3, None)
    assert pair.more_deals_factor() == pytest.approx(4.0)
    tie = Separation("b", "c", 0.0, Interval(-0.3, 0.3), False, 3, None)
    assert tie.more_deals_factor() == math.inf
    done = Separation("c", "d", 1.0, Interval(0.5, 1.5), True, 3, None)
    assert done.more_deals_factor() is None
    schedule = make_schedule([f"b{i}" for i in range(4)], 4, 10, "1", duplicate=False)
    base = compute_standings(
        name="t",
        schedule=schedule,
        outcomes=[],
        target_score=50,
        quarantine_after=3,
        balance=schedule.balance().to_json(),
    )
    played = dataclasses.replace(base, deals_played=10, separations=(pair, done))
    assert played.more_deals() == 30  # 10 deals x (4 - 1)
    assert "play about 30 more deals to separate half of the other 1" in played.separation_line()
    assert "1 of 2 neighbouring pairs in the ranking separated, at most 5% of" in played.separation_line()
    ties = dataclasses.replace(played, separations=(tie, tie, pair))
    assert ties.more_deals() == -1
    assert "too close to separate at any practical number of deals" in ties.separation_line()
    assert dataclasses.replace(played, separations=(done,)).more_deals() is None
