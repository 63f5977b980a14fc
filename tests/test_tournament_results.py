"""Standings, the database and quarantine, on hand-written game outcomes (no server needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hearts_tournaments.outcome import GameOutcome, quarantined
from hearts_tournaments.report import ReportFormat, render
from hearts_tournaments.results import Standings, compute_standings
from hearts_tournaments.schedule import Schedule, make_schedule
from hearts_tournaments.store import Store, StoreError

BOTS = ["ace", "bee", "cat"]


def outcome(
    schedule: Schedule, index: int, totals: list[int], retired: tuple[int, ...] = (), hands: int = 4
) -> GameOutcome:
    game = schedule.games[index]
    low = min(totals)
    return GameOutcome(
        key=game.key,
        game_id=f"g{index}",
        seats=game.seats,
        totals=tuple(totals),
        places=tuple(1 + sum(1 for o in totals if o < t) for t in totals),
        winners=tuple(s for s, t in enumerate(totals) if t == low),
        hands=hands,
        faults=tuple(5 if s in retired else 0 for s in range(len(totals))),
        retired=tuple(s in retired for s in range(len(totals))),
        absent=(False,) * len(totals),
        crashed=(False,) * len(totals),
        never_answered=(False,) * len(totals),
        record_json="{}",
    )


def standings_of(schedule: Schedule, outcomes: list[GameOutcome], limit: int = 3) -> Standings:
    return compute_standings(
        name="t",
        schedule=schedule,
        outcomes=outcomes,
        target_score=50,
        quarantine_after=limit,
        balance=schedule.balance().to_json(),
    )


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
    assert ace.rating_mu > bee.rating_mu > cat.rating_mu
    data = result.to_json()
    assert data["schema_version"] == 1 and [s["bot"] for s in data["standings"]] == ["ace", "bee", "cat"]
    # The same games in another finishing order give the same standings.
    assert standings_of(schedule, list(reversed(outcomes))).to_json() == data
    markdown = render(result, ReportFormat.MARKDOWN)
    assert markdown is not None and "| 1 | ace |" in markdown


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
