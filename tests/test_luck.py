"""The luck correction: its terms have expectation zero whatever the bots do, they cancel where
the theory says, the cross-fitted adjustment keeps every mean, and the standings use it.

Unbiasedness is checked by simulation with deliberately odd bots (one always plays its highest
card, one dumps the Black Maria at the first chance, one plays well only when it was dealt a
good hand, one is random): over many independent deals the mean of every seat's terms must lie
within four standard errors of zero, at every table size. Each check is shown to have power:
the same data with a construction known to be wrong (comparing a seat with the other seats of
its deal instead of with itself; calling a deterministic bot random) fails it.
"""

from __future__ import annotations

import dataclasses
import json
import math
import random
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from hearts_client.sim import MOON, PASS, Game
from hearts_core.cards import Card
from hearts_core.deal import deal_hand
from hearts_core.record import GameRecord
from hearts_core.replay import replay
from hearts_core.rules import Rules
from hearts_tournaments.arena.outcome import GameOutcome
from hearts_tournaments.results.stats.adjust import Observation, adjust
from hearts_tournaments.results.stats.luck import (
    GameLuck,
    LuckError,
    LuckSettings,
    game_luck,
)
from hearts_tournaments.tournament.config import parse_config
from hearts_tournaments.tournament.folder import open_tournament
from hearts_tournaments.tournament.gauntlet import deal_advantages, gauntlet_schedule
from hearts_tournaments.tournament.luck_correction import LuckCorrection, outcome_terms
from hearts_tournaments.tournament.report import method_notes
from hearts_tournaments.tournament.results import LUCK_RATING_MODEL, Standings, compute_standings
from hearts_tournaments.tournament.schedule import Schedule, make_schedule
from tests.helpers.cli import hearts
from tests.helpers.shared import CAREFUL_AND_DICE, outcome

#: Standard errors a mean of terms may lie from zero (one check in about 16,000 fails by chance).
Z = 4.0
CONFIG = (
    "[tournament]\ntable_size = 6\nluck_correction = true\n"
    + CAREFUL_AND_DICE
    + """
[[bots]]
name = "dumper"
builtin = "heuristic"
"""
)
QS = int(Card.parse("QS"))

Policy = Callable[[Any, random.Random], int]


def _highest(game: Any, rng: random.Random) -> int:
    legal: list[int] = [a for a in game.legal_actions() if a < 52]
    return max(legal, key=lambda a: (a % 13, a)) if legal else int(game.legal_actions()[0])


def _maria_dumper(game: Any, rng: random.Random) -> int:
    legal: list[int] = game.legal_actions()
    return QS if QS in legal else rng.choice(legal)


def _random(game: Any, rng: random.Random) -> int:
    legal: list[int] = game.legal_actions()
    return rng.choice(legal)


def _heuristic(game: Any, rng: random.Random) -> int:
    action = game.policy_action("heuristic")
    assert action is not None
    return int(action)


def _moody(game: Any, rng: random.Random) -> int:
    """Plays well only when it holds few high spades and hearts: its play depends on the deal."""
    hand = game.hand(game.current_player)
    danger = sum(1 for c in hand if c >= 36 or (26 <= c < 39 and c % 13 >= 9))
    return _heuristic(game, rng) if danger < 3 else _random(game, rng)


ODD: tuple[Policy, ...] = (_highest, _maria_dumper, _moody, _random, _heuristic)


def play_record(
    players: int, seed: str, policies: Sequence[Policy], target: int = 40, rigged: bool = False
) -> GameRecord:
    """A whole game on the simulator, every seat by its policy, as a game record; each hand
    dealt as the referee deals it, or ``rigged``: seat 0 is given the highest cards of the
    hands (a deal that is not dealt fairly, which the deal terms must show)."""
    rules = Rules(players=players, target_score=target)
    rng = random.Random(seed)
    hands: list[dict[str, Any]] = []
    totals = [0] * players
    for index in range(rules.max_hands):
        dealt, kitty = deal_hand(rules, seed, index)
        deal = [[int(c) for c in h] for h in dealt]
        if rigged:
            cards = sorted((c for h in deal for c in h), key=lambda c: (-(c % 13), c))
            high, rest = cards[: len(deal[0])], cards[len(deal[0]) :]
            random.Random(f"{seed}/{index}").shuffle(rest)
            deal = [high] + [rest[i : i + len(high)] for i in range(0, len(rest), len(high))]
        game = Game.from_hands(
            players, deal, [int(c) for c in kitty], hand_index=index, totals=totals, seed=seed,
            target_score=target,
        )  # fmt: skip
        current: dict[str, Any] = {
            "dealer": game.dealer,
            "pass_direction": game.pass_direction,
            "deal": [[str(Card(c)) for c in h] for h in deal],
            "kitty": [str(c) for c in kitty],
            "passes": [[] for _ in range(players)],
            "plays": [],
        }
        hands.append(current)
        while game.hand_index == index and not game.is_over():
            seat = game.current_player
            action = policies[seat](game, rng)
            if game.phase == PASS:
                current["passes"][seat].append(str(Card(action)))
            elif game.phase == MOON:
                current["moon_choice"] = "self_minus_26" if action == 52 else "others_plus_26"
            else:
                current["plays"].append(str(Card(action)))
            game.apply_action(action)
        totals = [int(t) for t in game.totals()]
        if game.is_over():
            break
    data = {"players": players, "target_score": target, "max_hands": rules.max_hands, "hands": hands}
    assert replay(data)["error"] is None
    return GameRecord.from_json(data)


def _within(values: Sequence[float]) -> tuple[float, float]:
    """The mean and its standard error."""
    n = len(values)
    mean = sum(values) / n
    variance = sum((v - mean) ** 2 for v in values) / (n - 1)
    return mean, math.sqrt(variance / n)


@pytest.mark.timeout(600)
@pytest.mark.parametrize("players", range(6, 12))
def test_deal_terms_have_mean_zero_for_every_seat_whatever_the_bots_do(players: int) -> None:
    by_seat: dict[int, list[float]] = defaultdict(list)
    by_position: dict[int, list[float]] = defaultdict(list)
    rigged: list[float] = []
    for g in range(60):
        policies = [ODD[(g + s) % len(ODD)] for s in range(players)]
        record = play_record(players, f"odd-{players}-{g}", policies)
        for hand, terms in zip(record.hands, game_luck(record).hands, strict=True):
            leader = (hand.dealer + 1) % players
            for s in range(players):
                by_seat[s].append(terms.deal[s])
                by_position[(s - leader) % players].append(terms.deal[s])
        # The check's power: deals that favour seat 0 must show in its deal terms.
        unfair = play_record(players, f"rigged-{players}-{g}", policies, rigged=True)
        rigged += [terms.deal[0] for terms in game_luck(unfair).hands]
    for label, groups in (("seat", by_seat), ("position after the dealer", by_position)):
        for key, values in groups.items():
            mean, se = _within(values)
            assert abs(mean) <= Z * se, f"{players} players, {label} {key}: mean {mean:.3f}, se {se:.3f}"
    mean, se = _within(rigged)
    assert mean > Z * se, f"rigged deals went unnoticed: seat 0's mean deal term {mean:.3f}, se {se:.3f}"


@pytest.mark.timeout(600)
@pytest.mark.parametrize("players", [6, 8, 11])
def test_action_terms_have_mean_zero_at_known_random_seats(players: int) -> None:
    by_seat: dict[int, list[float]] = defaultdict(list)
    mislabelled: dict[int, list[float]] = defaultdict(list)
    for g in range(40):
        policies = [ODD[(g + s) % len(ODD)] for s in range(players)]
        record = play_record(players, f"act-{players}-{g}", policies)
        random_seats = {s: "random" for s in range(players) if policies[s] is _random}
        # Every seat's terms from the random seats' decisions.
        for hand in game_luck(record, known=random_seats).hands:
            for s in range(players):
                by_seat[s].append(hand.action[s])
        # The same decisions with the deterministic heuristic seats called random: biased.
        wrong = {s: "random" for s in range(players) if policies[s] is _heuristic}
        for hand in game_luck(record, known=wrong).hands:
            for s in wrong:
                mislabelled[s].append(hand.action[s])
    for seat, values in by_seat.items():
        mean, se = _within(values)
        assert abs(mean) <= Z * se, f"{players} players, seat {seat}: mean {mean:.3f}, se {se:.3f}"
    pooled = [v for values in mislabelled.values() for v in values]
    mean, se = _within(pooled)
    assert abs(mean) > Z * se, f"a deterministic bot called random went unnoticed ({mean:.3f}, se {se:.3f})"


def test_on_a_duplicate_deal_every_bot_gets_the_same_deal_terms() -> None:
    """Played in every rotation, a deal's first hand gives every bot the same sum of deal terms:
    duplicate already removed that luck, and the deal terms can add nothing to it."""
    players = 7
    bots = [ODD[s % len(ODD)] for s in range(players)]
    sums: dict[int, float] = defaultdict(float)
    for r in range(players):
        seats = [(s - r) % players for s in range(players)]  # the bot index at each seat
        record = play_record(players, "duplicate-deal", [bots[b] for b in seats])
        first = game_luck(record).hands[0]
        for s, b in enumerate(seats):
            sums[b] += first.deal[s]
    assert max(sums.values()) - min(sums.values()) < 1e-9, sums


def test_terms_are_deterministic_and_stored_exactly() -> None:
    record = play_record(8, "again", [ODD[s % len(ODD)] for s in range(8)])
    known = {3: "random"}
    first = game_luck(record, known=known)
    assert game_luck(record, known=known) == first
    assert GameLuck.from_json(first.to_json()).to_json() == first.to_json()
    assert [first.points(s) for s in range(8)] == [sum(h.scores[s] for h in first.hands) for s in range(8)]
    assert sum(first.points(s) for s in range(8)) == sum(
        sum(h["scores"]) for h in replay(record.to_json())["hands"]
    )


def test_a_record_that_does_not_replay_or_an_unknown_policy_is_one_clear_error() -> None:
    record = play_record(6, "broken", [_heuristic] * 6)
    data = record.to_json()
    data["hands"][0]["plays"][3] = data["hands"][0]["plays"][2]
    with pytest.raises(LuckError, match="hand 0 does not replay"):
        game_luck(GameRecord.from_json(data))
    with pytest.raises(LuckError, match="no action terms for policy 'heuristic'"):
        game_luck(record, known={0: "heuristic"})
    with pytest.raises(ValueError, match="rollouts must be at least 1"):
        LuckSettings(rollouts=0)


def test_the_adjustment_fits_each_cluster_from_the_others_only() -> None:
    rng = random.Random(5)
    skill = {"a": 1.0, "b": 2.0, "c": 3.0}
    observations = []
    for cluster in range(12):
        for bot in ("a", "b", "c"):
            w = rng.gauss(0, 3)
            observations.append(Observation(cluster, bot, skill[bot] + 0.8 * w + rng.gauss(0, 0.5), (w,)))
    adjusted = adjust(observations)
    # A cluster is adjusted with a coefficient fitted on the others: when its values move, its
    # adjusted values move by exactly as much.
    moved = [
        Observation(o.cluster, o.group, o.value + (5.0 if o.cluster == 0 else 0.0), o.covariates)
        for o in observations
    ]
    again = adjust(moved)
    for o, x, y in zip(observations, adjusted, again, strict=True):
        if o.cluster == 0:
            assert y - x == pytest.approx(5.0)
    # The coefficient is found: the adjusted spread is near the noise's, far below the raw one.
    residual = [x - skill[str(o.group)] for o, x in zip(observations, adjusted, strict=True)]
    assert _within(residual)[1] * math.sqrt(len(residual)) < 0.8
    # A useless covariate costs little, and with two clusters nothing is adjusted.
    useless = [Observation(o.cluster, o.group, o.value, (rng.gauss(0, 1),)) for o in observations]
    raw = [o.value - skill[str(o.group)] for o in useless]
    kept = [x - skill[str(o.group)] for o, x in zip(useless, adjust(useless), strict=True)]
    assert _within(kept)[1] < 1.1 * _within(raw)[1]
    two = [o for o in observations if o.cluster in (0, 1)]
    assert adjust(two) == [o.value for o in two]


def _tournament(deals: int, players: int = 6, duplicate: bool = False) -> tuple[Schedule, list[GameOutcome]]:
    """A round robin of a heuristic bot, a random bot and a Black Maria dumper, played on the
    simulator: its schedule and outcomes, each with its record."""
    policies = {"careful": _heuristic, "dice": _random, "dumper": _maria_dumper}
    schedule = make_schedule(list(policies), players, deals, "luck", duplicate=duplicate)
    outcomes = []
    for game in schedule.games:
        record = play_record(players, game.seed, [policies[b] for b in game.seats], target=40)
        totals = [sum(h["scores"][s] for h in replay(record.to_json())["hands"]) for s in range(players)]
        played = outcome(schedule, game.index, totals, hands=len(record.hands))
        outcomes.append(dataclasses.replace(played, record_json=record.to_text()))
    return schedule, outcomes


def test_corrected_standings_name_the_correction_and_keep_the_ranking_scale() -> None:
    schedule, outcomes = _tournament(deals=16)
    balance = schedule.balance().to_json()
    common: dict[str, Any] = {"name": "t", "schedule": schedule, "outcomes": outcomes, "target_score": 40}
    common |= {"quarantine_after": 3, "balance": balance, "bootstrap_samples": 100}
    raw = compute_standings(**common)
    luck = LuckCorrection.of(parse_config(CONFIG, Path(".")).bots)
    assert luck.known == (("dice", "random"),)
    fixed = compute_standings(**common, luck=luck)
    data = fixed.to_json()
    assert raw.to_json()["ranking"]["luck_correction"] is None
    assert data["ranking"]["luck_correction"]["known"] == {"dice": "random"}
    assert data["ranking"]["rating_model"] == LUCK_RATING_MODEL
    assert Standings.from_json(data).to_json() == data
    assert any("Luck-corrected" in line for line in method_notes(fixed))
    # The same bots in the same order, on the same scale: the strength difference of the best and
    # the worst is of the same size, and the means moved but not far.
    assert [s.bot for s in fixed.standings] == [s.bot for s in raw.standings]
    spread = [s.standings[0].strength - s.standings[-1].strength for s in (raw, fixed)]  # type: ignore[operator]
    assert 0.5 < spread[1] / spread[0] < 2
    for a, b in zip(raw.standings, fixed.standings, strict=True):
        assert a.mean_place != b.mean_place and abs(a.mean_place - b.mean_place) < 0.5  # type: ignore[operator]
        assert a.wins == b.wins and a.games == b.games


def test_a_gauntlets_corrected_advantages_never_change_as_later_deals_come() -> None:
    schedule = gauntlet_schedule("careful", ["dice", "dumper"], 6, 14, "g", duplicate=False)
    policies = {"careful": _heuristic, "dice": _random, "dumper": _maria_dumper}
    outcomes = []
    for game in schedule.games:
        record = play_record(6, game.seed, [policies[b] for b in game.seats], target=40)
        totals = [sum(h["scores"][s] for h in replay(record.to_json())["hands"]) for s in range(6)]
        played = outcome(schedule, game.index, totals, hands=len(record.hands))
        outcomes.append(dataclasses.replace(played, record_json=record.to_text()))
    luck = LuckCorrection((("dice", "random"),))
    terms = outcome_terms(outcomes, luck)
    every = deal_advantages(schedule, outcomes, "careful", terms)
    raw = deal_advantages(schedule, outcomes, "careful")
    assert len(every) == len(raw) == 14
    assert every[:2] == raw[:2] and every[2:] != raw[2:]  # the first two deals have nothing to fit from
    for deals in (5, 9):
        first = deal_advantages(schedule, outcomes[:deals], "careful", terms)
        assert first == every[:deals]


@pytest.mark.timeout(1800)
def test_a_luck_corrected_gauntlet_over_the_referee(tmp_path: Path) -> None:
    """The real thing: bots as processes, the real referee and database; the correction is
    computed from the stored records, stops the gauntlet, and is what report and verify show."""
    config = tmp_path / "gauntlet.toml"
    config.write_text(
        '[tournament]\nname = "g"\ntable_size = 6\ndeals = 40\nduplicate = false\nseed = 3\n'
        "target_score = 40\nconcurrency = 2\ndecision_ms = 10000\njoin_timeout_ms = 60000\n"
        "luck_correction = true\n"
        '[gauntlet]\ncandidate = "careful"\nh0 = 0.0\nh1 = 0.5\nmin_deals = 4\n' + CAREFUL_AND_DICE
    )
    out = tmp_path / "out"
    result = hearts("tournament", "run", str(config), "--output", str(out), timeout=1500)
    assert result.returncode == 0, result.stderr
    assert "gauntlet: H1 accepted" in result.stderr
    assert "Luck-corrected" in result.stdout
    data = json.loads(hearts("tournament", "report", str(out), "--format", "json").stdout)
    assert data["ranking"]["luck_correction"]["known"] == {"dice": "random"}
    assert data["gauntlet"]["verdict"] == "H1" and data["tournament"]["games_played"] < 40
    # The terms, from the records the referee wrote: every hand's scores are the game's, and the
    # random bot's cards moved every seat's.
    tournament = open_tournament(out, read_only=True)
    with tournament.store:
        stored = tournament.store.outcomes(records=True)
        schedule = tournament.store.schedule()
    terms = outcome_terms(stored, LuckCorrection.of(tournament.config.bots))
    for o in stored:
        luck = terms[o.key]
        assert [luck.points(s) for s in range(6)] == list(o.totals)
        assert any(h.action[s] != 0 for h in luck.hands for s in range(6))
    advantages = deal_advantages(schedule, stored, "careful", terms)
    assert data["gauntlet"]["mean_advantage"] == pytest.approx(sum(advantages) / len(advantages), abs=1e-6)
    # The raw figures on request, not kept; verify recomputes the corrected ones from the records.
    raw = json.loads(
        hearts("tournament", "report", str(out), "--format", "json", "--no-luck-correction").stdout
    )
    assert raw["ranking"]["luck_correction"] is None
    assert raw["standings"][0]["mean_place"] != data["standings"][0]["mean_place"]
    kept = json.loads((out / "standings.json").read_text())
    assert kept["report"]["ranking"]["luck_correction"] is not None
    verified = hearts("tournament", "verify", str(out), timeout=600)
    assert verified.returncode == 0, verified.stdout + verified.stderr
