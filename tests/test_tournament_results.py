"""Standings, the database and quarantine, on hand-written game outcomes (no server needed)."""

from __future__ import annotations

import itertools
import json
import random
import re
from collections.abc import Mapping
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from hearts_tournaments.arena.outcome import GameOutcome
from hearts_tournaments.cli.main import app
from hearts_tournaments.results.store import StoreError
from hearts_tournaments.tournament.config import demo_config_text, parse_config
from hearts_tournaments.tournament.quarantine import quarantined
from hearts_tournaments.tournament.report import CSV_COLUMNS, ReportFormat, render
from hearts_tournaments.tournament.results import (
    FEW_DEALS,
    SCHEMA_VERSION,
    Standings,
    compute_standings,
    deal_warnings,
)
from hearts_tournaments.tournament.schedule import Schedule, make_schedule
from hearts_tournaments.tournament.store import Store
from tests.conftest import ROOT
from tests.helpers.shared import outcome

BOTS = ["ace", "bee", "cat"]


def standings_of(
    schedule: Schedule, outcomes: list[GameOutcome], limit: int = 3, samples: int = 200
) -> Standings:
    return compute_standings(
        name="t",
        schedule=schedule,
        outcomes=outcomes,
        target_score=50,
        quarantine_after=limit,
        balance=schedule.balance().to_json(),
        bootstrap_samples=samples,
    )


def simulated(
    schedule: Schedule, rng: random.Random, skill: Mapping[str, float], bot_deal: float = 30.0
) -> list[GameOutcome]:
    """Games of a synthetic model: total = seat luck of the deal (shared by its rotations)
    + the bot's skill (lower is better) + a bot-and-deal effect + the game's own noise."""
    luck: dict[tuple[int, int], float] = {}
    style: dict[tuple[int, str], float] = {}
    outcomes = []
    for game in schedule.games:
        totals = []
        for seat, bot in enumerate(game.seats):
            seat_luck = luck.setdefault((game.deal, seat), rng.gauss(0, 40))
            bot_luck = style.setdefault((game.deal, bot), rng.gauss(0, bot_deal))
            totals.append(round(1000 + 10 * (seat_luck + skill[bot] + bot_luck + rng.gauss(0, 30))))
        outcomes.append(outcome(schedule, game.index, totals))
    return outcomes


def test_shared_wins_are_split_and_places_are_averaged_over_seats() -> None:
    schedule = make_schedule(BOTS, 6, 2, "1", duplicate=False)
    seats = schedule.games[0].seats
    # The two lowest totals tie: a shared win, half each.
    totals = [10, 20, 30, 40, 50, 60]
    totals[seats.index("bee")] = 10
    totals[next(s for s, b in enumerate(seats) if b == "ace")] = 10
    first = outcome(schedule, 0, totals)
    result = standings_of(schedule, [first])
    wins = {line.bot: line.wins for line in result.standings}
    assert sum(wins.values()) == pytest.approx(1)
    winners = [seats[s] for s in first.winners]
    assert all(wins[bot] == pytest.approx(winners.count(bot) / len(winners)) for bot in BOTS)
    for line in result.standings:
        mine = [first.places[s] for s, b in enumerate(seats) if b == line.bot]
        assert line.mean_place == pytest.approx(sum(mine) / len(mine))
        assert line.seats == len(mine) and line.games == 1
        assert line.mean_place_ci is None  # one deal: no interval
    assert [line.rank for line in result.standings] == [1, 2, 3]
    places = [line.mean_place for line in result.standings]
    assert places == sorted(places)  # type: ignore[type-var]


def test_head_to_head_shares_add_up_and_intervals_need_two_deals() -> None:
    schedule = make_schedule(BOTS, 6, 3, "1", duplicate=True)
    outcomes = []
    for game in schedule.games:
        # ace always lowest, cat always highest: a clear order.
        totals = [{"ace": 5, "bee": 20, "cat": 40}[bot] + seat for seat, bot in enumerate(game.seats)]
        outcomes.append(outcome(schedule, game.index, totals))
    result = standings_of(schedule, outcomes)
    assert [line.bot for line in result.standings] == ["ace", "bee", "cat"]
    h2h = result.head_to_head
    for a in BOTS:
        for b in BOTS:
            if a != b:
                assert h2h[a][b].games == len(schedule.games)
                assert (h2h[a][b].share or 0) + (h2h[b][a].share or 0) == pytest.approx(1)
    assert h2h["ace"]["cat"].share == 1
    ace, bee, cat = result.standings
    assert ace.mean_place_ci is not None and cat.mean_place_ci is not None
    assert not ace.mean_place_ci.overlaps(cat.mean_place_ci)
    assert ace.strength is not None and bee.strength is not None and cat.strength is not None
    assert ace.strength > bee.strength > cat.strength
    assert ace.openskill_mu > bee.openskill_mu > cat.openskill_mu
    data = result.to_json()
    assert data["schema_version"] == 2 and [s["bot"] for s in data["standings"]] == ["ace", "bee", "cat"]
    # The same games in another finishing order give the same standings.
    assert standings_of(schedule, list(reversed(outcomes))).to_json() == data
    markdown = render(result, ReportFormat.MARKDOWN)
    assert markdown is not None and "| 1 | ace |" in markdown


def test_standings_before_any_game_is_played() -> None:
    schedule = make_schedule(BOTS, 6, 2, "1", duplicate=True)
    result = standings_of(schedule, [])
    assert all(line.strength is None and line.mean_place is None for line in result.standings)
    assert result.warnings() == []
    assert render(result, ReportFormat.MARKDOWN) is not None
    assert json.loads(render(result, ReportFormat.JSON) or "")["tournament"]["games_played"] == 0


def test_a_bot_is_quarantined_at_its_limit_of_failed_games() -> None:
    schedule = make_schedule(BOTS, 6, 4, "1", duplicate=False)
    outcomes = []
    for game in schedule.games:
        cat_seats = tuple(s for s, b in enumerate(game.seats) if b == "cat")
        outcomes.append(outcome(schedule, game.index, [10, 20, 30, 40, 50, 60], retired=cat_seats))
    held = quarantined(outcomes, limit=3)
    assert list(held) == ["cat"]
    assert held["cat"].after_game == outcomes[2].key and held["cat"].failed_games == 3
    line = standings_of(schedule, outcomes).by_bot("cat")
    assert line.quarantined and line.failed_games == 4 and line.games == 4


def test_the_store_keeps_each_game_once(tmp_path: Path) -> None:
    schedule = make_schedule(BOTS, 6, 2, "1", duplicate=False)
    with Store.create(tmp_path, "[tournament]\n", tmp_path, "t", schedule) as store:
        first = outcome(schedule, 0, [1, 2, 3, 4, 5, 6])
        store.add(first)
        with pytest.raises(StoreError):
            store.add(first)
        assert store.finished_keys() == {first.key}
    with pytest.raises(StoreError):
        Store.create(tmp_path, "[tournament]\n", tmp_path, "t", schedule)
    with Store.open(tmp_path) as store:
        assert store.outcomes() == [first]
        assert store.schedule() == schedule
        assert store.config_text == "[tournament]\n"


def test_mean_place_intervals_cover_the_truth_at_two_deals() -> None:
    # Three equal bots in two seats each: by symmetry every true mean place is 3.5. The old
    # intervals (percentiles of a bootstrap over two deals: about the range of the two deal
    # means) held it about half the time; t intervals over deals hold it about 95%.
    schedule = make_schedule(BOTS, 6, 2, "1", duplicate=True)
    rng = random.Random(2)
    trials, covered = 150, 0
    for _ in range(trials):
        result = standings_of(schedule, simulated(schedule, rng, dict.fromkeys(BOTS, 0.0)), samples=0)
        for line in result.standings:
            assert line.mean_place_ci is not None
            covered += line.mean_place_ci.contains(3.5)
    assert covered / (3 * trials) >= 0.9


def test_a_bot_at_a_single_deal_has_no_interval_and_is_ranked_last() -> None:
    bots = ["b0", "b1", "b2", "b3", "b4", "b5", "b6"]
    schedule = make_schedule(bots, 6, 2, "1", duplicate=True)
    deals = schedule.balance().deals_per_bot
    lucky = next(bot for bot in bots if deals[bot] == 1)
    outcomes = []
    for game in schedule.games:
        # The bot at one deal wins every game with its single seat.
        totals = [0 if bot == lucky else 10 + 5 * seat for seat, bot in enumerate(game.seats)]
        outcomes.append(outcome(schedule, game.index, totals))
    result = standings_of(schedule, outcomes)
    line = result.by_bot(lucky)
    assert line.deals == 1 and line.too_few_deals and line.mean_place == 1.0
    assert line.mean_place_ci is None and line.strength_ci is None and line.points_per_hand_ci is None
    ranked_first = [s for s in result.standings if not s.too_few_deals]
    assert result.standings[: len(ranked_first)] == tuple(ranked_first)
    assert line.rank > len(ranked_first)
    data = result.to_json()
    entry = next(s for s in data["standings"] if s["bot"] == lucky)
    assert entry["too_few_deals"] is True and entry["mean_place_ci95"] is None
    assert any(lucky in w and "too few deals" in w for w in data["warnings"])
    console = Console(record=True, width=200)
    render(result, ReportFormat.TABLE, console)
    text = console.export_text()
    assert "1.00 (too few deals)" in text and "ranked last: too few deals" in text
    single = ", ".join(sorted(b for b in bots if deals[b] == 1))
    assert deal_warnings(schedule.balance())[0].startswith(single)


def test_paired_differences_separate_bots_whose_marginal_intervals_overlap() -> None:
    # Large luck shared by everyone at a deal moves ace and bee together; ace is a little
    # better than bee on every deal. Their marginal intervals overlap, the paired one does not.
    schedule = make_schedule(BOTS, 6, 6, "1", duplicate=True)
    rng = random.Random(4)
    outcomes = simulated(schedule, rng, {"ace": -40.0, "bee": 0.0, "cat": 0.0}, bot_deal=0.0)
    deal_bonus = {d: rng.gauss(0, 120) for d in range(6)}
    outcomes = [
        outcome(
            schedule,
            schedule.games[i].index,
            [
                t + (round(10 * deal_bonus[schedule.games[i].deal]) if b == "cat" else 0)
                for t, b in zip(o.totals, o.seats, strict=True)
            ],
        )
        for i, o in enumerate(outcomes)
    ]
    result = standings_of(schedule, outcomes)
    ace, bee = result.by_bot("ace"), result.by_bot("bee")
    assert ace.mean_place_ci is not None and bee.mean_place_ci is not None
    assert ace.mean_place_ci.overlaps(bee.mean_place_ci)
    pair = result.pairing("ace", "bee")
    d = pair.difference
    sign = 1 if pair.a == "ace" else -1  # ace minus bee
    assert d.interval is not None and d.mean is not None and d.below_zero is not None
    assert sign * d.mean < 0 and pair.separated
    assert (d.below_zero if pair.a == "ace" else 1 - d.below_zero) > 0.99
    data = result.to_json()
    published = next(p for p in data["paired"] if {p["a"], p["b"]} == {"ace", "bee"})
    assert published["separated"] is True and published["deals"] == 6
    assert published["likelihood_of_superiority"] == round(d.below_zero, 6)
    markdown = render(result, ReportFormat.MARKDOWN)
    assert markdown is not None and "Paired differences" in markdown and "| ace − bee | 6 |" in markdown


def test_the_report_is_byte_identical_for_the_same_games() -> None:
    schedule = make_schedule(BOTS, 6, 4, "7", duplicate=True)
    outcomes = simulated(schedule, random.Random(8), {"ace": -5.0, "bee": 0.0, "cat": 5.0})
    first = render(standings_of(schedule, outcomes), ReportFormat.JSON)
    shuffled = list(outcomes)
    random.Random(1).shuffle(shuffled)
    assert render(standings_of(schedule, shuffled), ReportFormat.JSON) == first
    assert first is not None
    data = json.loads(first)
    assert data["ranking"]["key"] == "strength" and data["ranking"]["bootstrap_samples"] == 200
    csv_text = render(standings_of(schedule, outcomes), ReportFormat.CSV)
    assert csv_text is not None and csv_text.splitlines()[0] == ",".join(CSV_COLUMNS)
    assert len(csv_text.splitlines()) == 1 + len(BOTS)


def test_too_few_deals_are_warned_before_and_after_play() -> None:
    few = make_schedule(BOTS, 6, 3, "1", duplicate=True)
    (warning,) = deal_warnings(few.balance())
    assert "as few as 3 deals" in warning and "4.30" in warning
    assert deal_warnings(make_schedule(BOTS, 6, FEW_DEALS, "1", duplicate=True).balance()) == []
    # Equal bots on three deals: the order is not established, and the standings say so.
    result = standings_of(few, simulated(few, random.Random(3), dict.fromkeys(BOTS, 0.0)))
    (warning,) = result.warnings()
    assert "of 2 neighbouring pairs in the ranking separated, at most 5% of" in warning
    assert any(line.startswith("Warning: ") for line in render_notes(result))


def render_notes(result: Standings) -> list[str]:
    console = Console(record=True, width=300)
    render(result, ReportFormat.TABLE, console)
    return console.export_text().splitlines()


def test_the_demo_plays_enough_deals_for_intervals() -> None:
    config = parse_config(demo_config_text(), Path("."), default_name="demo")
    schedule = make_schedule(config.bot_names, config.table_size, config.deals, config.seed, config.duplicate)
    assert deal_warnings(schedule.balance()) == []


def test_the_schedule_check_warns_about_too_few_deals(tmp_path: Path) -> None:
    config = tmp_path / "small.toml"
    bots = "".join(f'[[bots]]\nname = "{b}"\nbuiltin = "random"\n' for b in BOTS)
    config.write_text(f"[tournament]\ntable_size = 6\ndeals = 2\n{bots}")
    result = CliRunner().invoke(app, ["tournament", "schedule", str(config)])
    assert result.exit_code == 0, result.stderr
    assert "warning: a bot plays as few as 2 deals" in result.stderr
    config.write_text(f"[tournament]\ntable_size = 6\ndeals = {FEW_DEALS}\n{bots}")
    result = CliRunner().invoke(app, ["tournament", "schedule", str(config)])
    assert result.exit_code == 0 and "warning" not in result.stderr


def test_with_many_bots_the_tables_show_neighbours_and_the_json_every_pair() -> None:
    bots = [f"b{i:02d}" for i in range(12)]
    schedule = make_schedule(bots, 6, 30, "1", duplicate=False)
    skill = {bot: float(i) for i, bot in enumerate(bots)}
    result = standings_of(schedule, simulated(schedule, random.Random(6), skill), samples=50)
    data = result.to_json()
    assert len(data["paired"]) == 12 * 11 // 2
    markdown = render(result, ReportFormat.MARKDOWN)
    assert markdown is not None and "bots ranked next to each other sharing at least 6 deals" in markdown
    rows = [line for line in markdown.splitlines() if line.startswith("| b") and " − " in line]
    order = [line.bot for line in result.standings]
    enough = [(a, b) for a, b in itertools.pairwise(order) if result.pairing(a, b).difference.clusters >= 6]
    assert 0 < len(rows) == len(enough) <= 11


def test_the_documented_json_report_has_the_fields_of_the_real_one() -> None:
    doc = (ROOT / "docs" / "TOURNAMENTS.md").read_text()
    (block,) = re.findall(r"```json\n(.*?)```", doc, flags=re.S)
    documented = json.loads(block)
    schedule = make_schedule(BOTS, 6, 4, "1", duplicate=True)
    real = standings_of(schedule, simulated(schedule, random.Random(1), dict.fromkeys(BOTS, 0.0))).to_json()
    assert documented["schema_version"] == real["schema_version"] == SCHEMA_VERSION
    assert documented.keys() == real.keys()
    for key in ("tournament", "ranking"):
        assert documented[key].keys() == real[key].keys()
    assert documented["standings"][0].keys() == real["standings"][0].keys()
    assert documented["paired"][0].keys() == real["paired"][0].keys()
