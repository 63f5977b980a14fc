"""The round-robin schedule: balance within one where possible, exact answers where not,
neighbours spread, duplicate rotations, reproducibility."""

from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
import sys
from collections import Counter
from itertools import combinations, combinations_with_replacement
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bench.schedule import outside_band
from hearts_core.deal import derive_seed
from hearts_tournaments.cli.main import app
from hearts_tournaments.tournament.config import MAX_BOTS, MAX_DEALS, ConfigError, parse_config
from hearts_tournaments.tournament.schedule import (
    LABELS,
    SCHEDULE_DESIGN,
    Balance,
    Schedule,
    SeatingMode,
    game_positions,
    make_schedule,
    pair_feasibility,
    suggest_deals,
)
from hearts_tournaments.tournament.schedule.base import BASE_TABU_STEPS
from hearts_tournaments.tournament.schedule.tables import _necessary, _small_design, _tabu_base_blocks


def names(count: int) -> list[str]:
    return [f"bot{i}" for i in range(count)]


def pair_counts(schedule: Schedule) -> list[int]:
    """Deals each pair of bots shares, counted from the seatings alone (not from Balance)."""
    met = Counter(frozenset(pair) for s in schedule.seatings for pair in combinations(set(s.order), 2))
    return [met[frozenset(pair)] for pair in combinations(schedule.bots, 2)]


def neighbour_counts(schedule: Schedule, offset: int) -> Counter[tuple[str, str]]:
    """Games in which the second bot sits ``offset`` seats left of the first, from the games."""
    n = schedule.table_size
    return Counter((g.seats[s], g.seats[(s + offset) % n]) for g in schedule.games for s in range(n))


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
    (12, 6, 15, True),
    (16, 6, 16, False),
]


@pytest.mark.parametrize(("bots", "size", "deals", "duplicate"), COMBOS)
def test_every_pair_meets_and_every_seat_is_used_equally_often_within_one(
    bots: int, size: int, deals: int, duplicate: bool
) -> None:
    schedule = make_schedule(names(bots), size, deals, "1", duplicate)
    games_per_deal = size if duplicate else 1
    assert len(schedule.games) == deals * games_per_deal
    tables = [set(s.order) for s in schedule.seatings]
    per_bot = Counter(bot for table in tables for bot in table)
    assert max(per_bot.values()) - min(per_bot[b] for b in names(bots)) <= 1
    pairs = pair_counts(schedule)
    assert max(pairs) - min(pairs) <= 1
    for bot in names(bots):
        at = Counter(position for g in schedule.games for position, b in enumerate(g.seats) if b == bot)
        counts = [at[position] for position in range(size)]
        assert max(counts) - min(counts) <= 1, (bot, counts)
    balance = schedule.balance()
    assert balance.within_one
    assert balance.pair_max - balance.pair_min <= 1


@pytest.mark.parametrize("seed", ["1", "2", "3"])
def test_twelve_bots_at_six_seats_over_fifteen_deals_meet_three_or_four_times(seed: str) -> None:
    # The case: the old search gave 2..4 (seed 1) and 3..4 only for some seeds.
    schedule = make_schedule(names(12), 6, 15, seed)
    assert (min(pair_counts(schedule)), max(pair_counts(schedule))) == (3, 4)


def test_an_impossible_count_is_proven_so_and_gets_the_least_spread() -> None:
    # 50 bots at 8 seats over 132 deals: 6 bots sit at 22 deals and need 7 partners met 4
    # times, but the other 44 (at 21 deals) meet everyone exactly 3 times. The old search
    # gave 1..5; within one is impossible, so 2 is the best spread.
    feasibility = pair_feasibility(50, 8, 132)
    assert feasibility.impossible is not None and "no graph has these degrees" in feasibility.impossible
    schedule = make_schedule(names(50), 8, 132, "1")
    pairs = pair_counts(schedule)
    assert max(pairs) - min(pairs) == 2
    balance = schedule.balance()
    assert balance.pairs_impossible == feasibility.impossible
    assert "provably impossible" in " ".join(balance.lines())
    assert "the least possible" in " ".join(balance.lines())


def test_two_hundred_bots_at_eleven_seats_all_meet_two_to_four_times() -> None:
    # The old search: 0..6 with 3 pairs that never met. Within one is not proven impossible
    # here, and not found; the widened search reaches spread 2 with every pair meeting.
    schedule = make_schedule(names(200), 11, 1091, "1")
    pairs = pair_counts(schedule)
    assert min(pairs) >= 2 and max(pairs) - min(pairs) <= 2
    assert "not found, nor proven impossible" in schedule.balance().lines()[1]


@pytest.mark.parametrize(
    ("bots", "size", "deals", "reason"),
    [
        (8, 6, 5, "no graph has these degrees"),  # passed the old quick test
        (7, 6, 2, "fewer than"),  # a bot at one deal cannot meet all six others
        (16, 6, 8, "Fisher"),  # every pair exactly once needs 16 deals
        (22, 7, 22, "Bruck-Ryser-Chowla"),  # a symmetric (22, 7, 2) design
        (43, 7, 43, "Bruck-Ryser-Chowla"),  # a projective plane of order 6
        (111, 11, 111, "order 10"),  # Lam, Thiel and Swiercz
        (36, 6, 42, "affine plane of order 6"),
        (12, 6, 8, "intersections"),  # the exhaustive search agrees: see below
        # Fisher-type counts of the tables' intersections (undecided before: spread 2 was found).
        (18, 8, 9, "intersections"),  # every bot at 4 deals, pairs 1..2
        (10, 6, 8, "intersections"),
        (24, 11, 12, "intersections"),
        (21, 11, 5, "intersections"),
    ],
)
def test_provably_impossible_counts_say_why(bots: int, size: int, deals: int, reason: str) -> None:
    feasibility = pair_feasibility(bots, size, deals)
    assert feasibility.impossible is not None and reason in feasibility.impossible
    assert "provably impossible" in feasibility.line()


@pytest.mark.parametrize(
    ("bots", "size", "deals"), [(16, 6, 16), (31, 6, 31), (13, 6, 26), (12, 6, 15), (50, 8, 150)]
)
def test_possible_counts_are_not_called_impossible(bots: int, size: int, deals: int) -> None:
    # Designs that exist: (16, 6, 2) biplane, PG(2, 5), (13, 6, 5), ...
    assert pair_feasibility(bots, size, deals).impossible is None


def test_the_exhaustive_search_and_the_intersection_count_agree() -> None:
    # 12 bots at 6 seats over 8 deals: no choice of 4 deals out of 8 per bot fits.
    low, high = pair_feasibility(12, 6, 8).low, pair_feasibility(12, 6, 8).high
    assert _small_design(12, 6, 8, low, high)[0] == "impossible"
    assert _necessary(12, 6, 8).impossible is not None


@pytest.mark.parametrize(
    ("bots", "size", "deals", "band"),
    [
        (19, 9, 19, (4, 4)),  # the quadratic residues mod 19: a (19, 9, 4) difference set
        (19, 10, 19, (5, 5)),  # and their complement with 0
        (23, 11, 23, (5, 5)),  # the quadratic residues mod 23
        (14, 7, 27, (6, 7)),  # 1-rotational: residues mod 13 and one fixed bot, one table more
        (16, 8, 31, (7, 8)),
        (22, 11, 43, (10, 11)),
        (13, 6, 25, (4, 5)),  # a (13, 6, 5) design on two base blocks, one table left out
        (16, 7, 19, (3, 4)),  # the tabu search that scores every swap
    ],
)
def test_constructions_balance_counts_the_search_did_not(
    bots: int, size: int, deals: int, band: tuple[int, int]
) -> None:
    # Each of these was neither balanced nor proven impossible (spread 2) before.
    pairs = pair_counts(make_schedule(names(bots), size, deals, "1", duplicate=False))
    assert (min(pairs), max(pairs)) == band


def test_two_hundred_bots_at_eleven_seats_get_a_suggested_count_balanced_within_one() -> None:
    # No count within 3 * bots was found before; 1600 deals = 8 base blocks developed mod 200.
    assert suggest_deals(200, 11, 1091, "1") == 1600
    pairs = pair_counts(make_schedule(names(200), 11, 1600, "1"))
    assert max(pairs) - min(pairs) <= 1


@pytest.mark.timeout(900)
def test_the_largest_schedule_the_config_allows_is_built() -> None:
    # MAX_BOTS bots over MAX_DEALS deals at 11 seats, permuted (the slower seating): bounded
    # searches (bench/schedule.py --largest prints the time; well under a minute of CPU).
    schedule = make_schedule(names(MAX_BOTS), 11, MAX_DEALS, "1", True, SeatingMode.PERMUTE)
    assert len(schedule.games) == MAX_DEALS * 11
    balance = schedule.balance()
    assert set(balance.deals_per_bot.values()) == {MAX_DEALS * 11 // MAX_BOTS}
    assert balance.pair_spread <= 2


def brute_force_balanced(bots: int, size: int, deals: int) -> bool:
    """Whether any choice of tables has deals per bot and pairs both within one."""
    for tables in combinations_with_replacement(list(combinations(range(bots), size)), deals):
        per_bot = Counter(x for t in tables for x in t)
        if max(per_bot.values()) - min(per_bot.get(x, 0) for x in range(bots)) > 1:
            continue
        pairs = Counter(p for t in tables for p in combinations(t, 2))
        counts = [pairs[p] for p in combinations(range(bots), 2)]
        if max(counts) - min(counts) <= 1:
            return True
    return False


@pytest.mark.parametrize(
    ("bots", "size", "deals"),
    [(7, 6, d) for d in range(1, 6)] + [(8, 6, d) for d in range(1, 4)] + [(9, 7, d) for d in range(1, 4)],
)
def test_the_verdict_is_exact_where_every_schedule_can_be_tried(bots: int, size: int, deals: int) -> None:
    exists = brute_force_balanced(bots, size, deals)
    assert (pair_feasibility(bots, size, deals).impossible is None) == exists
    pairs = pair_counts(make_schedule(names(bots), size, deals, "1"))
    assert (max(pairs) - min(pairs) <= 1) == exists


def test_a_schedule_found_within_one_is_never_called_impossible() -> None:
    for size in (6, 7):
        for bots in range(size + 1, size + 4):
            for deals in (2, 3, 5, bots):
                schedule = make_schedule(names(bots), size, deals, "1")
                pairs = pair_counts(schedule)
                if max(pairs) - min(pairs) <= 1:
                    assert pair_feasibility(bots, size, deals).impossible is None, (bots, size, deals)
                else:
                    assert max(pairs) - min(pairs) == 2, (bots, size, deals)


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


@pytest.mark.parametrize("size", sorted(LABELS))
def test_permuted_games_still_give_every_bot_every_seat_and_vary_the_neighbours(size: int) -> None:
    layouts = game_positions(size, True, SeatingMode.PERMUTE)
    assert layouts[0] == tuple(range(size))
    for seat in range(size):
        assert sorted(layout[seat] for layout in layouts) == list(range(size))  # a Latin square
    for layout in layouts:
        assert sorted(layout) == list(range(size))
    for offset, most in ((1, 2), (2, 3)):
        met = Counter((layout[s], layout[(s + offset) % size]) for layout in layouts for s in range(size))
        # Over a deal's games every position has (nearly) every other as its left neighbour
        # once or twice, and never itself; rotations give one position all ``size`` times.
        assert all(met[(p, p)] == 0 for p in range(size))
        assert max(met.values()) <= most
        assert sum(1 for p in range(size) for q in range(size) if p != q and met[(p, q)]) >= size * (size - 3)


def test_permute_spreads_neighbours_that_rotate_keeps_fixed() -> None:
    rotate = make_schedule(names(12), 6, 15, "1", True, SeatingMode.ROTATE)
    permute = make_schedule(names(12), 6, 15, "1", True, SeatingMode.PERMUTE)
    assert [s.order for s in rotate.seatings] != [] and pair_counts(permute) == pair_counts(permute)
    for schedule in (rotate, permute):
        for seating in schedule.seatings:
            games = [g for g in schedule.games if g.deal == seating.deal]
            for position in range(6):
                assert Counter(g.seats[position] for g in games) == Counter(seating.order)
    # With rotations a bot's left neighbour in a deal is the same in all six games.
    for seating in rotate.seatings:
        games = [g for g in rotate.games if g.deal == seating.deal]
        lefts = {(g.seats[s], g.seats[(s + 1) % 6]) for g in games for s in range(6)}
        assert len(lefts) == 6
    for seating in permute.seatings:
        games = [g for g in permute.games if g.deal == seating.deal]
        lefts = {(g.seats[s], g.seats[(s + 1) % 6]) for g in games for s in range(6)}
        assert len(lefts) >= 25  # of the 30 ordered pairs of the table's six bots
    spread_rotate = max(neighbour_counts(rotate, 1).values())
    spread_permute = max(neighbour_counts(permute, 1).values())
    assert spread_permute < spread_rotate
    balance = permute.balance()
    assert balance.seating is SeatingMode.PERMUTE
    assert (balance.left_min, balance.left_max) == (
        min(neighbour_counts(permute, 1)[(a, b)] for a in permute.bots for b in permute.bots if a != b),
        spread_permute,
    )
    assert Schedule.from_json(permute.to_json()) == permute


def test_rotated_deals_balance_left_neighbours_across_deals() -> None:
    # 15 deals of 6 give 90 left-neighbour slots over 132 ordered pairs: each at most once.
    schedule = make_schedule(names(12), 6, 15, "1", True, SeatingMode.ROTATE)
    per_deal = Counter((s.order[p], s.order[(p + 1) % 6]) for s in schedule.seatings for p in range(6))
    assert max(per_deal.values()) == 1
    balance = schedule.balance()
    assert (balance.left_min, balance.left_max) == (0, 6)


@pytest.mark.parametrize(("bots", "size", "deals"), [(4, 6, 6), (5, 6, 5), (3, 7, 7), (4, 9, 4), (5, 11, 5)])
@pytest.mark.parametrize("duplicate", [True, False])
def test_copies_of_a_bot_do_not_sit_side_by_side(bots: int, size: int, deals: int, duplicate: bool) -> None:
    # Fewer bots than seats: a bot fills several seats; with at most size // 2 copies each
    # they fit apart, with and without duplicate deals (positions still within one).
    for seating in (SeatingMode.ROTATE, SeatingMode.PERMUTE):
        schedule = make_schedule(names(bots), size, deals, "1", duplicate, seating)
        for game in schedule.games:
            assert all(game.seats[p] != game.seats[(p + 1) % size] for p in range(size)), game
        balance = schedule.balance()
        assert balance.copies_adjacent == 0 and balance.within_one


def test_fewer_bots_than_seats_share_the_seats_evenly() -> None:
    schedule = make_schedule(["a", "b", "c", "d"], 6, 6, "1", True)
    for seating in schedule.seatings:
        held = Counter(seating.order)
        assert set(held) == {"a", "b", "c", "d"}
        assert sorted(held.values()) == [1, 1, 2, 2]
    balance = schedule.balance()
    assert set(balance.table_seats_per_bot.values()) == {9}  # 36 seats over 4 bots
    assert balance.within_one


@pytest.mark.parametrize("seating", list(SeatingMode))
@pytest.mark.parametrize("duplicate", [True, False])
def test_the_same_config_gives_the_same_schedule_and_deals(seating: SeatingMode, duplicate: bool) -> None:
    first = make_schedule(names(9), 6, 6, "league-7", duplicate, seating)
    again = make_schedule(names(9), 6, 6, "league-7", duplicate, seating)
    assert first == again
    assert first.seatings[2].seed == derive_seed("league-7", "deal", 2)
    other = make_schedule(names(9), 6, 6, "league-8", duplicate, seating)
    assert {s.seed for s in other.seatings}.isdisjoint({s.seed for s in first.seatings})
    assert first.games[0].bot_seeds != other.games[0].bot_seeds


def test_a_searched_schedule_is_reproducible() -> None:
    # Bounded by moves, not by a clock: the local search gives the same tables every time.
    first = make_schedule(names(12), 6, 15, "s")
    assert make_schedule(names(12), 6, 15, "s") == first


def test_the_schedule_and_its_balance_survive_storage() -> None:
    schedule = make_schedule(names(8), 6, 4, "1", True, SeatingMode.PERMUTE)
    assert Schedule.from_json(json.loads(json.dumps(schedule.to_json()))) == schedule
    balance = make_schedule(names(8), 6, 5, "1").balance()
    assert Balance.from_json(json.loads(json.dumps(balance.to_json()))) == balance


def test_a_balance_stored_by_an_older_version_still_reads() -> None:
    old = {
        "games": 12,
        "deals": 2,
        "deals_per_bot": {"a": 2, "b": 2},
        "table_seats_per_bot": {"a": 6, "b": 6},
        "pair_deals": {"min": 2, "max": 2},
        "seat_counts": {"a": [2] * 6, "b": [2] * 6},
        "left_neighbour": {"min": 1, "max": 2},
        "within_one": True,
    }
    balance = Balance.from_json(old)
    assert balance.seating is SeatingMode.ROTATE and balance.within_one
    assert (
        Schedule.from_json(
            {"bots": ["a", "b"], "table_size": 6, "duplicate": False, "seed": "1", "seatings": []}
        ).seating
        is SeatingMode.ROTATE
    )


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


CONFIG = """
[tournament]
table_size = 6
deals = {deals}
{extra}

{bots}
"""


def config_text(bots: int, deals: int, extra: str = "") -> str:
    entries = "\n".join(f'[[bots]]\nname = "b{i}"\nbuiltin = "random"\n' for i in range(bots))
    return CONFIG.format(deals=deals, extra=extra, bots=entries)


def test_the_seating_key_is_read_and_checked(tmp_path: Path) -> None:
    assert parse_config(config_text(3, 2), tmp_path).seating is SeatingMode.BALANCED  # permute before
    assert parse_config(config_text(3, 2, 'seating = "permute"'), tmp_path).seating is SeatingMode.PERMUTE
    for bad in ('"shuffle"', "1", "true"):
        with pytest.raises(ConfigError) as caught:
            parse_config(config_text(3, 2, f"seating = {bad}"), tmp_path)
        assert caught.value.key == "tournament.seating"
        assert str(caught.value).count("\n") == 0 and '"rotate", "permute" or "balanced"' in str(caught.value)


def test_the_schedule_command_prints_the_verdict_the_balance_the_time_and_a_suggestion(
    tmp_path: Path,
) -> None:
    config = tmp_path / "league.toml"
    config.write_text(config_text(8, 5))
    result = CliRunner().invoke(app, ["tournament", "schedule", str(config)])
    assert result.exit_code == 0, result.output
    out = result.stdout
    lines = out.splitlines()
    verdict = next(i for i, line in enumerate(lines) if "provably impossible" in line)
    first_game = next(i for i, line in enumerate(lines) if line.startswith("d000-r00"))
    assert verdict < first_game  # said before the games
    assert "8 bots at tables of 6 over 5 deals" in lines[verdict]
    assert "scheduled in" in out
    assert "every pair of bots shares a table on 2..4 deals" in out
    assert "left neighbour" in out
    better = suggest_deals(8, 6, 5)
    # The suggestion is a warning: on stderr, with the time the search took.
    assert better is not None and f"deals = {better} is balanced within one" in result.stderr
    assert make_schedule(names(8), 6, better, "1").balance().pair_spread <= 1
    assert "searched" in result.stderr
    summary = CliRunner().invoke(app, ["tournament", "schedule", str(config), "--no-games"])
    assert "d000-r00" not in summary.stdout and "provably impossible" in summary.stdout


def test_the_schedule_command_refuses_a_bad_seating_in_one_line(tmp_path: Path) -> None:
    config = tmp_path / "league.toml"
    config.write_text(config_text(3, 2, 'seating = "sideways"'))
    result = CliRunner().invoke(app, ["tournament", "schedule", str(config)])
    assert result.exit_code == 2
    assert result.stderr.strip().count("\n") == 0 and "tournament.seating" in result.stderr


def test_without_duplicate_copies_sit_apart_whenever_they_fit() -> None:
    # Every table size and several smaller bot counts, one game per deal: a bot with at most
    # size // 2 copies at a table never sits next to itself, and seat positions stay even.
    for size in range(6, 12):
        for bots in sorted({2, 3, size // 2, size - 1}):
            schedule = make_schedule(names(bots), size, 4, "1", duplicate=False)
            balance = schedule.balance()
            assert balance.within_one, (bots, size)
            if -(-size // bots) <= size // 2:
                assert balance.copies_adjacent == 0, (bots, size)
            else:
                # Two bots at an odd table: one of them has a copy too many to fit apart.
                assert balance.copies_adjacent == 4, (bots, size)


def test_the_schedule_is_the_same_in_another_process() -> None:
    # Nothing depends on set order or hash seeds: two interpreters with different hash seeds
    # build identical schedules (local search, exhaustive search, copies without duplicate,
    # the constructions and the tabu search).
    script = (
        "import json, sys\n"
        "from hearts_tournaments.tournament.schedule import SeatingMode, make_schedule\n"
        "out = [make_schedule([f'b{i}' for i in range(b)], n, t, 'x', d, SeatingMode(m)).to_json()\n"
        "       for b, n, t, d, m in [(12, 6, 15, True, 'permute'), (7, 6, 3, True, 'rotate'),\n"
        "                             (4, 6, 5, False, 'rotate'), (10, 6, 9, False, 'rotate'),\n"
        # Paley difference set, 1-rotational, one table left out, the tabu search.
        "                             (19, 9, 19, False, 'rotate'), (14, 7, 27, False, 'rotate'),\n"
        "                             (13, 6, 25, False, 'rotate'), (16, 7, 19, False, 'rotate'),\n"
        # The band search (design 2).
        "                             (14, 7, 28, True, 'balanced')]]\n"
        "json.dump(out, sys.stdout)\n"
    )
    runs = [
        subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        ).stdout
        for seed in ("1", "2")
    ]
    assert runs[0] == runs[1] and json.loads(runs[0])


#: Schedules made by design 1 (commit 106d9f3, the last before design 2), as the first 16 hex
#: digits of the SHA-256 of their stored JSON (keys sorted): a tournament stored then must be
#: rebuilt exactly, or ``verify`` reports its schedule as not the configuration's.
DESIGN_ONE = [
    ((12, 6, 15, True, "balanced"), "143c86dd98d8d21d"),
    ((20, 9, 12, True, "balanced"), "56f9c10dcf0c132d"),
    ((9, 9, 4, True, "permute"), "9349bd61f0cbd457"),
    ((14, 7, 10, True, "rotate"), "ba2d3bc7c40e38c9"),
    ((10, 6, 8, False, "balanced"), "21c8203be4513b4d"),
    ((4, 6, 3, True, "balanced"), "1677a654e6f814f1"),
]


@pytest.mark.parametrize(("case", "digest"), DESIGN_ONE, ids=[str(c[0][:3]) for c in DESIGN_ONE])
def test_design_one_rebuilds_the_schedules_stored_before_design_two(
    case: tuple[int, int, int, bool, str], digest: str
) -> None:
    bots, size, deals, duplicate, seating = case
    schedule = make_schedule(names(bots), size, deals, "golden", duplicate, SeatingMode(seating), design=1)
    stored = schedule.to_json()
    assert "design" not in stored  # stored as it was before designs were recorded
    assert hashlib.sha256(json.dumps(stored, sort_keys=True).encode()).hexdigest()[:16] == digest
    assert Schedule.from_json(stored) == schedule and schedule.design == 1


def test_the_band_search_leaves_fewer_neighbour_counts_outside_the_band() -> None:
    # 22 bots at 11 seats over 40 deals: a deal's layouts never seat 11 ordered pairs of its
    # table side by side, and the annealing alone leaves 71 pairs' left-neighbour counts (and
    # 179 two seats left) outside the band; design 2 fewer of both.
    old = make_schedule(names(22), 11, 40, "1", True, SeatingMode.BALANCED, design=1)
    new = make_schedule(names(22), 11, 40, "1", True, SeatingMode.BALANCED)
    assert new.design == SCHEDULE_DESIGN == 3 and new.to_json()["design"] == 3
    assert [set(s.order) for s in new.seatings] == [set(s.order) for s in old.seatings]  # same tables
    before, after = outside_band(old), outside_band(new)  # recounted from the games
    assert after[0] < before[0] and after[1] < before[1], (before, after)
    assert Schedule.from_json(json.loads(json.dumps(new.to_json()))) == new
    with pytest.raises(ValueError, match="design 4"):
        make_schedule(names(22), 11, 40, "1", design=4)


@pytest.mark.timeout(900)
def test_league_sized_pairs_come_within_one_where_the_base_block_annealing_stalls() -> None:
    # 200 bots at 11 seats over 1,600 deals: eight base blocks of 11 residues mod 200 whose
    # differences each occur 4 or 5 times, developed, give every pair 4 or 5 deals. From this
    # seed the annealing of design 2 found none and its local search left pairs 2..6 (and
    # left neighbours 2..8 games); design 3's tabu search finds the blocks.
    bots = names(200)
    schedule = make_schedule(bots, 11, 1600, "x")
    assert schedule.design == 3
    together = pair_counts(schedule)  # every pair, met or not
    assert (min(together), max(together)) == (4, 5) == (pair_feasibility(200, 11, 1600).low, 5)
    # A tournament stored by design 2 rebuilds its own schedule, as that design made it (the
    # first 16 hex digits of its stored JSON at commit 64993a4).
    old = make_schedule(bots, 11, 1600, "x", design=2)
    stored = json.dumps(old.to_json(), sort_keys=True).encode()
    assert hashlib.sha256(stored).hexdigest()[:16] == "8f0142443a384c42"
    old_together = pair_counts(old)
    assert (min(old_together), max(old_together)) == (2, 6)


@pytest.mark.parametrize(
    ("modulus", "sizes"),
    [
        (200, (11,) * 8),  # the league above: every difference 4 or 5 times
        (149, (10,) * 4 + (11,) * 4),  # 1-rotational sizes (a fixed bot in four blocks)
        (60, (6,) * 4),
    ],
)
def test_the_tabu_search_finds_base_blocks_whose_differences_are_within_one(
    modulus: int, sizes: tuple[int, ...]
) -> None:
    found = _tabu_base_blocks(modulus, sizes, random.Random(1), BASE_TABU_STEPS)
    assert found is not None
    assert sorted(len(block) for block in found) == sorted(sizes)
    assert all(len(set(block)) == len(block) and all(0 <= x < modulus for x in block) for block in found)
    differences = Counter((x - y) % modulus for block in found for x in block for y in block if x != y)
    per_residue = [differences[d] for d in range(1, modulus)]
    total = sum(size * (size - 1) for size in sizes)
    assert min(per_residue) == total // (modulus - 1) and max(per_residue) - min(per_residue) <= 1
