"""The round-robin schedule: balance within one, duplicate rotations, reproducibility."""

from __future__ import annotations

from collections import Counter
from itertools import combinations

import pytest

from hearts_core.deal import derive_seed
from hearts_tournaments.schedule import Schedule, make_schedule, suggest_deals


def names(count: int) -> list[str]:
    return [f"bot{i}" for i in range(count)]


# (bots, table size, deals, duplicate): more bots than seats, as many, and fewer.
COMBOS = [
    (2, 6, 3, True),
    (3, 6, 4, True),
    (4, 6, 5, False),
    (5, 6, 3, True),
    (6, 6, 2, False),
    (7, 6, 7, True),
    (7, 6, 6, False),
    (8, 6, 4, True),
    (9, 6, 6, False),
    (10, 8, 5, True),
    (12, 11, 1, True),
    (13, 7, 13, False),
    (8, 7, 8, False),
]


@pytest.mark.parametrize(("bots", "size", "deals", "duplicate"), COMBOS)
def test_every_pair_meets_and_every_seat_is_used_equally_often_within_one(
    bots: int, size: int, deals: int, duplicate: bool
) -> None:
    schedule = make_schedule(names(bots), size, deals, "1", duplicate)
    games_per_deal = size if duplicate else 1
    assert len(schedule.games) == deals * games_per_deal
    # Counted independently of Balance: deals per bot, pairs per deal, seats per position.
    tables = [set(s.order) for s in schedule.seatings]
    per_bot = Counter(bot for table in tables for bot in table)
    assert max(per_bot.values()) - min(per_bot[b] for b in names(bots)) <= 1
    pairs = [sum(1 for t in tables if a in t and b in t) for a, b in combinations(names(bots), 2)]
    assert max(pairs) - min(pairs) <= 1
    for bot in names(bots):
        at = Counter(position for g in schedule.games for position, b in enumerate(g.seats) if b == bot)
        counts = [at[position] for position in range(size)]
        assert max(counts) - min(counts) <= 1, (bot, counts)
    balance = schedule.balance()
    assert balance.within_one
    assert balance.pair_max - balance.pair_min <= 1


@pytest.mark.parametrize(("bots", "size", "deals", "duplicate"), COMBOS)
def test_a_deal_is_played_in_every_rotation_of_its_seating(
    bots: int, size: int, deals: int, duplicate: bool
) -> None:
    schedule = make_schedule(names(bots), size, deals, "1", duplicate)
    for seating in schedule.seatings:
        games = [g for g in schedule.games if g.deal == seating.deal]
        assert {g.seed for g in games} == {seating.seed}
        if not duplicate:
            assert [g.seats for g in games] == [seating.order]
            continue
        assert sorted(g.rotation for g in games) == list(range(size))
        # Every bot of the table holds every seat's cards: for each position, the bots that sat
        # there over the rotations are the table's bots, each as often as it has seats.
        for position in range(size):
            assert Counter(g.seats[position] for g in games) == Counter(seating.order)
    assert len({s.seed for s in schedule.seatings}) == deals
    keys = [g.key for g in schedule.games]
    assert len(set(keys)) == len(keys)


def test_fewer_bots_than_seats_share_the_seats_evenly() -> None:
    schedule = make_schedule(["a", "b", "c", "d"], 6, 6, "1", True)
    for seating in schedule.seatings:
        held = Counter(seating.order)
        assert set(held) == {"a", "b", "c", "d"}
        assert sorted(held.values()) == [1, 1, 2, 2]
        # Copies of a bot do not sit side by side when they need not.
        order = seating.order
        assert all(order[p] != order[(p + 1) % 6] for p in range(6))
    balance = schedule.balance()
    assert set(balance.table_seats_per_bot.values()) == {9}  # 36 seats over 4 bots
    assert balance.within_one


def test_the_same_config_gives_the_same_schedule_and_deals() -> None:
    first = make_schedule(names(9), 6, 6, "league-7", True)
    again = make_schedule(names(9), 6, 6, "league-7", True)
    assert first == again
    assert first.seatings[2].seed == derive_seed("league-7", "deal", 2)
    other = make_schedule(names(9), 6, 6, "league-8", True)
    assert {s.seed for s in other.seatings}.isdisjoint({s.seed for s in first.seatings})
    assert first.games[0].bot_seeds != other.games[0].bot_seeds


def test_the_schedule_survives_storage() -> None:
    schedule = make_schedule(names(8), 6, 4, "1", True)
    assert Schedule.from_json(schedule.to_json()) == schedule


def test_an_unbalanceable_deal_count_is_reported_with_one_that_works() -> None:
    # 7 bots at 6 seats over 2 deals: the two bots left out never meet, the others meet twice.
    schedule = make_schedule(names(7), 6, 2, "1", True)
    assert not schedule.balance().within_one
    better = suggest_deals(7, 6, 2)
    assert better == 6
    assert make_schedule(names(7), 6, better, "1", True).balance().within_one


def test_bad_schedules_are_refused() -> None:
    with pytest.raises(ValueError):
        make_schedule(["solo"], 6, 1, "1")
    with pytest.raises(ValueError):
        make_schedule(["a", "a"], 6, 1, "1")
    with pytest.raises(ValueError):
        make_schedule(["a", "b"], 6, 0, "1")
