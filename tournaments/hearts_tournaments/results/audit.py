"""The fair-play audit: from the stored game records, which pairs of bots play as if they were on
one side (docs/FAIR_PLAY.md has the statistics and why).

For every ordered pair of bots (A, B) two questions, each a stratified, cluster-robust score test
(:func:`hearts_tournaments.results.stats.score_test`):

* **discards**: when A cannot follow suit and holds a point card it may play, does it throw
  points onto a trick B is winning as often as onto the tricks of its other table-mates, in the
  same situation? The chances come from replaying each record with the engine
  (:func:`discard_chances`); the situation is what A may throw (the Black Maria, a high heart,
  the share of point cards among its legal cards) and where the trick stands (A plays last,
  the winner is a moon threat, the winner leads the game).
* **fares**: with B at its table, does A finish ahead of each other bot C as often as its record
  against that same C predicts? Each game gives one comparison per C at the table; the deals
  without B give the baseline. Duplicate deals make a deal's result free of card luck (A held
  every seat's cards), so deals with and without B compare A's play, not its cards.

Observations of one deal (or one league block: one deal in every rotation) are one cluster. Each
test lets a small difference pass (:data:`MARGINS`: bots of different styles shift each other's
play a little even when nobody colludes), and asks whether the difference is beyond it. The
p-values of all tests are adjusted together by Holm's method, and a pair is flagged when any of
its tests (either direction) is below ``alpha`` after adjustment: the chance that a field with no
collusion has any pair flagged is then at most ``alpha``, whatever the dependence between tests.
"""

from __future__ import annotations

import contextlib
import itertools
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hearts_client.bot import MOON_ALERT_POINTS
from hearts_core.cards import BLACK_MARIA, CARDS, HEARTS_MASK, POINT_MASK
from hearts_core.driver import play_through
from hearts_core.errors import HeartsError
from hearts_core.record import GameRecord, RecordFileError
from hearts_core.replay import RecordEnds, record_answers, rules_of
from hearts_core.state import Decision, DecisionKind, Play, State, winning_index
from hearts_tournaments.results.stats import ScoreTest, holm, score_test

#: The audit report's format version (its JSON's ``schema_version``).
AUDIT_SCHEMA = 1
#: The default level: the chance that an honest field has any pair flagged.
ALPHA = 0.05
#: The correction for many tests.
CORRECTION = "holm"
#: The discard test needs at least this many chances on the other's tricks and on the rest.
MIN_CHANCES = 20
#: The fares test needs at least this many deals with the other at A's table and without.
MIN_DEALS = 5
#: Either test needs observations in at least this many clusters (deals).
MIN_CLUSTERS = 10
#: A heart of this rank index (``card % 13``: 8 is the ten) or above is a high heart.
HIGH_HEART = 8
#: The two tests, in report order.
TESTS = ("discards", "fares")
#: The difference each test lets pass (its null hypothesis is ``|difference| <= margin``).
#: Honest bots of different styles shift each other's play and results a little: in simulated
#: honest fields (bench/collusion.py) the discard differences stayed within 0.03 and the fares
#: differences within 0.08, and with enough deals a test of no difference at all flags them.
#: A colluding pair that spares its partner differs by 0.4 in its discards.
MARGINS = {"discards": 0.05, "fares": 0.10}


@dataclass(frozen=True, slots=True)
class DiscardChance:
    """A play at which a seat, unable to follow suit, could throw a point card onto the trick.

    Attributes:
        seat: The seat that played.
        winner: The seat winning the trick when it played (whose trick the points would go to).
        points: The points it threw (0: it played no point card).
        situation: What else the choice may rightly depend on (:func:`discard_chance`).
    """

    seat: int
    winner: int
    points: int
    situation: int


def discard_chance(
    players: int,
    seat: int,
    legal: Iterable[int],
    trick: Sequence[tuple[int, int]],
    played: int,
    taken: Sequence[int],
    totals: Sequence[int],
) -> DiscardChance | None:
    """The discard chance of one play, or None when the play is not one.

    A chance is a play to a trick already led, by a seat void in the suit led that may play a
    point card (a heart or the Black Maria), while some seat is winning the trick. Its
    situation packs what a fair player's choice may depend on besides who is winning: what it
    may throw (bit 3: the Black Maria is among its legal cards; bit 4: a heart of ten or higher
    is; bits 5-7: the share of its legal cards that are point cards, in fifths: above 0, 1/4,
    1/2, 3/4, or all of them) and where the trick stands (bit 0: the seat plays last, so the
    points go to that winner for sure; bit 1: the winner is a moon threat, the one seat with
    visible points this hand, at least ``MOON_ALERT_POINTS`` of them; bit 2: the winner has
    the lowest game total of the other seats).

    Args:
        players: The table size.
        seat: The seat playing.
        legal: Its legal cards (card numbers).
        trick: The trick so far, ``(seat, card)`` in playing order.
        played: The card it played.
        taken: Per seat, the visible points it took this hand.
        totals: Per seat, the game totals before this hand.
    """
    if not trick:
        return None
    led = trick[0][1] // 13
    cards = list(legal)
    if any(card // 13 == led for card in cards):
        return None
    pointed = [card for card in cards if (1 << card) & POINT_MASK]
    if not pointed:
        return None
    index = winning_index([CARDS[card] for _, card in trick])
    if index is None:
        return None
    winner = trick[index][0]
    holders = [s for s, p in enumerate(taken) if p > 0]
    threat = len(holders) == 1 and holders[0] == winner and taken[winner] >= MOON_ALERT_POINTS
    others = [totals[s] for s in range(players) if s != seat]
    leads = totals[winner] <= min(others)
    share = len(pointed) / len(cards)
    fifth = 4 if share == 1.0 else 3 if share > 0.75 else 2 if share > 0.5 else 1 if share > 0.25 else 0
    high_heart = any((1 << card) & HEARTS_MASK and card % 13 >= HIGH_HEART for card in pointed)
    situation = (
        (len(trick) == players - 1)
        | threat << 1
        | leads << 2
        | (BLACK_MARIA in pointed) << 3
        | high_heart << 4
        | fifth << 5
    )
    points = 13 if played == BLACK_MARIA else 1 if (1 << played) & HEARTS_MASK else 0
    return DiscardChance(seat, winner, points, situation)


def discard_chances(record: GameRecord) -> list[DiscardChance]:
    """Every discard chance of a game, from its record replayed by the engine (plays the referee
    made for a seat left out).

    Raises:
        HeartsError: the record is not a legal game.
    """
    state = State(rules_of(record))
    answers = record_answers(state, record.hands)
    out: list[DiscardChance] = []
    # A play the referee made for a seat (a timeout, a retired seat) is not the bot's choice.
    by_referee = {
        (d.hand, d.play) for d in record.decisions or () if d.kind == "play" and (d.by_referee or d.bot_error)
    }

    def answer(decision: Decision) -> Any:
        given = answers(decision)
        mine = (decision.hand_index, len(state.plays)) not in by_referee
        if decision.kind is DecisionKind.PLAY and isinstance(given, Play) and mine:
            current = state.current
            trick = [(current.seat_of(i, state.players), card) for i, card in enumerate(current.cards)]
            chance = discard_chance(
                state.players,
                decision.seat,
                state.legal_plays(),
                trick,
                given.card,
                state.public_taken,
                state.totals,
            )
            if chance is not None:
                out.append(chance)
        return given

    with contextlib.suppress(RecordEnds):
        play_through(state, answer)
    return out


@dataclass(frozen=True, slots=True)
class AuditGame:
    """One game as the audit reads it.

    Attributes:
        key: The game's key (for messages).
        cluster: What it shares its cards with: its deal (a tournament) or its block (a league).
        bots: Who is audited in each seat (a bot, or a league's entrant).
        places: Each seat's finishing place.
        chances: Its discard chances.
    """

    key: str
    cluster: str
    bots: tuple[str, ...]
    places: tuple[int, ...]
    chances: tuple[DiscardChance, ...]


def audit_game(key: str, cluster: str, bots: Sequence[str], places: Sequence[int], record: str) -> AuditGame:
    """An :class:`AuditGame` from a stored game's record text.

    Raises:
        RecordFileError: the record does not read.
        HeartsError: it is not a legal game.
    """
    chances = discard_chances(GameRecord.read(record, name=f"the record of {key}"))
    return AuditGame(key, cluster, tuple(bots), tuple(places), tuple(chances))


def read_games(
    stored: Iterable[tuple[str, str, Sequence[str], Sequence[int], str]],
) -> tuple[list[AuditGame], list[str]]:
    """:func:`audit_game` of each ``(key, cluster, bots, places, record)``; a record that does
    not replay is left out with a line saying why."""
    games: list[AuditGame] = []
    skipped: list[str] = []
    for key, cluster, bots, places, record in stored:
        try:
            games.append(audit_game(key, cluster, bots, places, record))
        except (RecordFileError, HeartsError) as exc:
            skipped.append(f"{key}: left out, its record does not replay: {exc}")
    return games, skipped


@dataclass(frozen=True, slots=True)
class PairTest:
    """One test of one ordered pair.

    Attributes:
        test: ``discards`` or ``fares``.
        bot: A, whose play is tested.
        other: B.
        result: The score test.
        p_adjusted: Its p-value after Holm's adjustment over every test made.
        flagged: Whether ``p_adjusted`` is at most the audit's alpha.
    """

    test: str
    bot: str
    other: str
    result: ScoreTest
    p_adjusted: float
    flagged: bool

    def summary(self) -> str:
        """One sentence with the evidence."""
        r, a, b = self.result, self.bot, self.other
        tail = (
            f"t = {r.statistic:+.2f} beyond a difference of {r.margin:g}, over {r.clusters} deals, "
            f"p = {r.p:.2g}, after Holm's correction {self.p_adjusted:.2g}"
        )
        if self.test == "discards":
            return (
                f"{a} threw points onto {b}'s tricks at {r.observed:.0f} of {r.marked} chances "
                f"({r.marked_mean:.0%}) where its play at the same tables in the same situations "
                f"predicts {r.expected:.1f} ({r.expected / r.marked:.0%}; {r.unmarked_mean:.0%} onto "
                f"the other table-mates' {r.unmarked}): {tail}"
            )
        return (
            f"with {b} at its table {a} finished ahead of the other bots in {r.marked_mean:.1%} of "
            f"{r.marked} comparisons where its record against the same bots predicts "
            f"{r.expected / r.marked:.1%} ({r.unmarked_mean:.1%} in {r.unmarked} without {b}): {tail}"
        )

    def to_json(self) -> dict[str, Any]:
        """The test as the JSON report gives it."""
        r = self.result
        return {
            "test": self.test,
            "bot": self.bot,
            "other": self.other,
            "marked": r.marked,
            "unmarked": r.unmarked,
            "observed": round(r.observed, 6),
            "expected": round(r.expected, 6),
            "marked_mean": round(r.marked_mean, 6),
            "unmarked_mean": round(r.unmarked_mean, 6),
            "difference": round(r.difference, 6),
            "margin": r.margin,
            "t": round(r.statistic, 6),
            "clusters": r.clusters,
            "p": r.p,
            "p_adjusted": self.p_adjusted,
            "flagged": self.flagged,
            "summary": self.summary(),
        }


@dataclass(frozen=True, slots=True)
class AuditReport:
    """What the audit found.

    Attributes:
        source: What was audited (a folder), for the report's first line.
        unit: What the bots are (``bot`` in a tournament, ``entrant`` in a league).
        games: Games read.
        bots: The bots met in them, sorted.
        alpha: The level of the corrected tests.
        tests: Every test made, in the order of the bots' names.
        untested: Ordered pairs and tests left out for too little data, with why.
        skipped: Games left out, with why.
    """

    source: str
    unit: str
    games: int
    bots: tuple[str, ...]
    alpha: float
    tests: tuple[PairTest, ...]
    untested: int = 0
    skipped: tuple[str, ...] = field(default=())

    @property
    def flagged(self) -> list[tuple[tuple[str, str], list[PairTest]]]:
        """The pairs flagged, each with its significant tests, strongest evidence first."""
        pairs: dict[tuple[str, str], list[PairTest]] = defaultdict(list)
        for test in self.tests:
            if test.flagged:
                pairs[tuple(sorted((test.bot, test.other)))].append(test)  # type: ignore[index]
        ordered = sorted(pairs.items(), key=lambda item: min(t.p_adjusted for t in item[1]))
        return [(pair, sorted(found, key=lambda t: t.p_adjusted)) for pair, found in ordered]

    def to_json(self) -> dict[str, Any]:
        """The report as one JSON object."""
        return {
            "schema_version": AUDIT_SCHEMA,
            "source": self.source,
            "unit": self.unit,
            "games": self.games,
            "bots": list(self.bots),
            "alpha": self.alpha,
            "correction": CORRECTION,
            "tests_made": len(self.tests),
            "tests_untested": self.untested,
            "flagged": [
                {"bots": list(pair), "evidence": [t.to_json() for t in found]} for pair, found in self.flagged
            ],
            "tests": [t.to_json() for t in self.tests],
            "skipped": list(self.skipped),
        }

    def lines(self) -> list[str]:
        """The report as readable lines."""
        out = [
            f"audit of {self.source}: {self.games} games of {len(self.bots)} {self.unit}s; "
            f"{len(self.tests)} tests (discards and fares, per ordered pair with enough data; "
            f"{self.untested} left out), Holm-corrected at alpha {self.alpha:g}"
        ]
        out.extend(f"warning: {line}" for line in self.skipped)
        flagged = self.flagged
        if not flagged:
            out.append("no pair is flagged")
        for pair, found in flagged:
            out.append(f"FLAGGED: {pair[0]} and {pair[1]}")
            out.extend(f"  {t.test}: {t.summary()}" for t in found)
        rest = sorted((t for t in self.tests if not t.flagged), key=lambda t: t.p_adjusted)
        if rest:
            t = rest[0]
            out.append(
                f"closest unflagged: {t.test} of {t.bot} with {t.other}, p = {t.result.p:.2g} "
                f"(after correction {t.p_adjusted:.2g})"
            )
        return out


def audit(
    games: Sequence[AuditGame],
    alpha: float = ALPHA,
    source: str = "",
    unit: str = "bot",
    skipped: Sequence[str] = (),
) -> AuditReport:
    """Tests every ordered pair of bots of ``games`` (the module docstring) and flags pairs.

    Flagging goes in rounds. A bot that favours one partner makes every other table-mate look
    disfavoured beside it: so each round keeps, per bot A, only its flagged test with the
    largest difference, say of (A, B), and A's other tests are made again with B set apart (its
    tricks out of A's discard baseline, its presence a stratum of A's fares); every test is
    adjusted again, and so on until no new test is flagged. A field
    with nothing flagged in the first round is done after it, so the chance of any flag in a
    field without collusion is that of one round of Holm's method.

    Raises:
        ValueError: ``alpha`` is not between 0 and 1.
    """
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be between 0 and 1, not {alpha}")
    tables = _Tables(games)
    apart: dict[str, set[str]] = defaultdict(set)
    final: dict[tuple[str, str, str], ScoreTest] = {}
    current: dict[tuple[str, str, str], ScoreTest] = {}
    untested = 0
    stale = set(tables.bots)
    while True:
        for a in sorted(stale):
            for b in tables.bots:
                if b == a:
                    continue
                for test in TESTS:
                    key = (test, a, b)
                    if key in final:
                        continue
                    result = tables.test(test, a, b, apart[a])
                    if result is None:
                        current.pop(key, None)
                    else:
                        current[key] = result
        keys = sorted(current)
        adjusted = dict(zip(keys, holm([current[k].p for k in keys]), strict=True))
        new = [k for k in keys if adjusted[k] <= alpha and k not in final]
        if not new:
            break
        # Per bot, only its largest new finding is kept this round: the rest may be its shadow
        # (a small, steady shift onto everyone else), and are made again with that partner set
        # apart. Largest by the difference, not the p-value: a shadow can be as steady as the
        # finding that casts it, never as large.
        strongest: dict[str, tuple[str, str, str]] = {}
        for key in sorted(new, key=lambda k: (-abs(current[k].difference), k)):
            strongest.setdefault(key[1], key)
        stale = set()
        for key in strongest.values():
            final[key] = current[key]
            _, a, b = key
            apart[a].add(b)
            stale.add(a)
    untested = len(tables.bots) * (len(tables.bots) - 1) * len(TESTS) - len(keys)
    tests = tuple(
        PairTest(test, a, b, current[(test, a, b)], adjusted[(test, a, b)], adjusted[(test, a, b)] <= alpha)
        for test, a, b in sorted(keys, key=lambda k: (k[1], k[2], TESTS.index(k[0])))
    )
    return AuditReport(source, unit, len(games), tables.bots, alpha, tests, untested, tuple(skipped))


class _Tables:
    """Every bot's observations as arrays, and the two tests on them.

    Discard rows (per bot A): one per chance of A onto another bot's trick, with its outcome
    (threw points: 1), the trick's winner, the situation, the cluster and the game (whose
    table says who else sat there). Comparison rows (per bot A): one per game and other bot
    C at A's table, 1 when A finished ahead of C, 0.5 level, 0 behind.
    """

    def __init__(self, games: Sequence[AuditGame]) -> None:
        self.bots = tuple(sorted({bot for game in games for bot in game.bots}))
        index = {bot: i for i, bot in enumerate(self.bots)}
        clusters: dict[str, int] = {}
        #: ``present[g, k]``: bot k sits at game g's table.
        self.present = np.zeros((len(games), len(self.bots)), dtype=np.bool_)
        discards: dict[int, list[tuple[int, int, float, int, int]]] = defaultdict(list)
        comparisons: dict[int, list[tuple[int, int, float, int]]] = defaultdict(list)
        for g, game in enumerate(games):
            cluster = clusters.setdefault(game.cluster, len(clusters))
            seats = [index[bot] for bot in game.bots]
            self.present[g, seats] = True
            for chance in game.chances:
                actor, winner = seats[chance.seat], seats[chance.winner]
                if winner != actor:  # a bot's own copy (fewer bots than seats) is no one else
                    discards[actor].append((g, cluster, float(chance.points > 0), winner, chance.situation))
            for (sa, a), (sc, c) in itertools.permutations(enumerate(seats), 2):
                if a != c:
                    pa, pc = game.places[sa], game.places[sc]
                    comparisons[a].append((g, cluster, 1.0 if pa < pc else 0.5 if pa == pc else 0.0, c))
        self.index = index
        self.discards = {a: np.array(rows, dtype=np.float64).reshape(-1, 5) for a, rows in discards.items()}
        self.comparisons = {
            a: np.array(rows, dtype=np.float64).reshape(-1, 4) for a, rows in comparisons.items()
        }

    def test(self, test: str, a: str, b: str, apart: set[str]) -> ScoreTest | None:
        """One test of (a, b), ``apart`` the partners of a already flagged; None with too
        little data."""
        ia, ib = self.index[a], self.index[b]
        others = [self.index[o] for o in sorted(apart) if o != b]
        if test == "discards":
            rows = self.discards.get(ia)
            if rows is None:
                return None
            game, winner = rows[:, 0].astype(np.int64), rows[:, 3].astype(np.int64)
            keep = self.present[game, ib] & ~np.isin(winner, others)
            rows = rows[keep]
            x = (rows[:, 3] == ib).astype(np.int64)
            marked, unmarked = int(x.sum()), int(len(x) - x.sum())
            strata = rows[:, 4].astype(np.int64)
            least = MIN_CHANCES
        else:
            rows = self.comparisons.get(ia)
            if rows is None:
                return None
            rows = rows[rows[:, 3] != ib]
            game = rows[:, 0].astype(np.int64)
            x = self.present[game, ib].astype(np.int64)
            cluster = rows[:, 1]
            marked = len(np.unique(cluster[x == 1]))
            unmarked = len(np.unique(cluster[x == 0]))
            # The opponent, and which flagged partners of a sat at the table.
            strata = rows[:, 3].astype(np.int64)
            for k, other in enumerate(others):
                strata = strata + (self.present[game, other].astype(np.int64) << (20 + k))
            least = MIN_DEALS
        if marked < least or unmarked < least or len(np.unique(rows[:, 1])) < MIN_CLUSTERS:
            return None
        return score_test(rows[:, 2], x, strata, rows[:, 1].astype(np.int64), MARGINS[test])
