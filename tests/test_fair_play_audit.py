"""The fair-play audit: its statistics, its reading of records, and colluding bots caught.

The colluding bots are the attack: ``tests/colluding/colluding_bot.py`` recognises its partner by
the name the referee announces and never throws points onto its tricks. In a real tournament (the
runner, the sandbox, the referee) ``hearts tournament audit`` must flag that pair and no other.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from bench.collusion import Field, play_game
from hearts_core.deal import derive_seed
from hearts_core.record import GameRecord
from hearts_core.replay import replay
from hearts_tournaments.arena.outcome import GameOutcome
from hearts_tournaments.league import commands
from hearts_tournaments.league.config import LeagueConfig
from hearts_tournaments.results.audit import AuditGame, audit, discard_chances
from hearts_tournaments.results.stats import holm, score_test
from hearts_tournaments.tournament.schedule import make_schedule
from tests.colluding import config, learned, run_tournament
from tests.helpers.cli import hearts

#: The organiser's deal secret: the same deals every run, so the tournament below is reproducible.
SECRET = "cd" * 32


def test_the_score_test_sees_a_marker_beyond_the_strata_and_nothing_else() -> None:
    rng = random.Random(3)
    strata = [i % 4 for i in range(4000)]
    clusters = [i // 40 for i in range(4000)]
    x = [rng.random() < 0.3 for _ in range(4000)]
    # The outcome depends on the stratum only, and the marker is more common in one stratum:
    # the raw means differ, the stratified test says nothing.
    x = [int(m or s == 3) for m, s in zip(x, strata, strict=True)]
    y = [float(rng.random() < 0.2 + 0.2 * s) for s in strata]
    null = score_test(y, x, strata, clusters)
    assert null.marked_mean > null.unmarked_mean + 0.1
    assert null.p > 0.05 and abs(null.difference) < 0.05
    assert abs(null.observed - null.expected) < 3 * (null.marked**0.5)
    # The outcome drops by 0.15 where marked: found, with its size.
    y2 = [float(rng.random() < 0.2 + 0.2 * s - 0.15 * m) for s, m in zip(strata, x, strict=True)]
    found = score_test(y2, x, strata, clusters)
    assert found.p < 1e-6 and found.statistic < 0
    assert -0.2 < found.difference < -0.1
    assert found.clusters == 100
    # With a margin, only a difference beyond it counts.
    assert score_test(y2, x, strata, clusters, margin=0.05).p < 0.01
    assert score_test(y2, x, strata, clusters, margin=0.25).p == 1.0
    assert score_test(y, x, strata, clusters, margin=0.05).p == 1.0
    with pytest.raises(ValueError, match="marked and unmarked"):
        score_test([1.0, 0.0], [1, 1], [0, 0], [0, 1])
    with pytest.raises(ValueError, match="parallel"):
        score_test([1.0], [1, 0], [0, 0], [0, 1])


def test_holm_multiplies_the_ordered_p_values_and_keeps_them_in_order() -> None:
    assert holm([0.01, 0.04, 0.03, 0.5]) == pytest.approx([0.04, 0.09, 0.09, 0.5])
    assert holm([]) == []
    assert holm([0.9, 0.9]) == [1.0, 1.0]


def _field(names: list[str], strategy: str | None) -> Field:
    kinds = {name: "heuristic" for name in names}
    kinds[names[-1]] = "random"
    if strategy is None:
        return Field(kinds)
    kinds[names[0]] = kinds[names[1]] = strategy
    return Field(kinds, (names[0], names[1]), names[2] if strategy == "rival" else "")


def test_the_chances_taken_during_play_are_those_the_audit_replays_from_the_record() -> None:
    """The bench measures the audit on chances taken from the simulator as it plays: they must be
    exactly those the audit reads from the game's record with the referee's engine."""
    names = [f"b{i}" for i in range(6)]
    for strategy in (None, "spare", "rival"):
        field = _field(names, strategy)
        for game in range(3):
            seed = f"replay-{strategy}-{game}"
            _, chances, record = play_game(names, field, seed, 100, random.Random(game), keep_record=True)
            assert record is not None and chances
            assert discard_chances(GameRecord.read(json.dumps(record))) == chances


def _simulated(strategy: str | None, deals: int = 24) -> list[AuditGame]:
    names = [f"b{i}" for i in range(6)]
    schedule = make_schedule(names, 6, deals, "audit", duplicate=False)
    field = _field(names, strategy)
    rng = random.Random(1)
    games = []
    for game in schedule.games:
        places, chances, _ = play_game(game.seats, field, derive_seed("audit", game.key), 100, rng)
        games.append(AuditGame(game.key, game.key, game.seats, places, tuple(chances)))
    return games


def test_a_simulated_colluding_pair_is_flagged_alone_and_the_honest_field_not_at_all() -> None:
    honest = audit(_simulated(None))
    assert honest.flagged == [] and len(honest.tests) == 30  # discards only: all meet every deal
    spared = audit(_simulated("spare"))
    assert [pair for pair, _ in spared.flagged] == [("b0", "b1")]
    evidence = spared.flagged[0][1][0]
    assert evidence.test == "discards" and evidence.result.difference < -0.15
    # Ganging up on a rival flags the pair and each of them with the rival, nobody else.
    ganged = audit(_simulated("rival"))
    assert {pair for pair, _ in ganged.flagged} <= {("b0", "b1"), ("b0", "b2"), ("b1", "b2")}
    assert {("b0", "b2"), ("b1", "b2")} & {pair for pair, _ in ganged.flagged}


@pytest.mark.timeout(1500)
def test_a_real_tournament_audit_flags_the_bots_that_recognise_each_other(tmp_path: Path) -> None:
    settings = 'table_size = 6\ndeals = 24\nduplicate = false\nseed = 5\ntarget_score = 100\noutput = "out"'
    out = run_tournament(
        tmp_path, config(settings + "\ndecision_ms = 5000", "spare"), {"HEARTS_DEAL_SECRET": SECRET}
    )
    # What the colluders learned: each other's seat, by name, at every game.
    seen = learned(out)
    assert len(seen) == 48 and all(len(entry["partner_seats"]) == 1 for entry in seen)

    text = hearts("tournament", "audit", str(out), timeout=600)
    assert text.returncode == 1, text.stderr
    lines = text.stdout.splitlines()
    assert lines[0].startswith(f"audit of {out}: 24 games of 6 bots; 30 tests")
    assert "FLAGGED: mallory and trent" in lines
    assert sum(line.startswith("FLAGGED") for line in lines) == 1

    shown = hearts("tournament", "audit", str(out), "--json", timeout=600)
    assert shown.returncode == 1
    report = json.loads(shown.stdout)
    assert report["schema_version"] == 1 and report["correction"] == "holm" and report["alpha"] == 0.05
    assert report["games"] == 24 and report["unit"] == "bot"
    assert [item["bots"] for item in report["flagged"]] == [["mallory", "trent"]]
    evidence = report["flagged"][0]["evidence"]
    assert {e["test"] for e in evidence} <= {"discards", "fares"}
    for e in evidence:
        assert {e["bot"], e["other"]} == {"mallory", "trent"}
        assert e["p_adjusted"] <= 0.05 and e["flagged"] is True and e["margin"] == 0.05
        assert e["marked_mean"] < e["unmarked_mean"] and e["observed"] < e["expected"]
        assert e["summary"].startswith(f"{e['bot']} threw points onto {e['other']}'s tricks")
    assert len(report["tests"]) == report["tests_made"] == 30
    assert report["tests_untested"] == 30  # fares: every bot at every table, never without

    # A stricter level than the evidence flags nothing; a folder that is no tournament is one line.
    strict = hearts("tournament", "audit", str(out), "--alpha", "0.001", timeout=600)
    assert strict.returncode == 0 and "no pair is flagged" in strict.stdout
    missing = hearts("tournament", "audit", str(tmp_path / "nowhere"))
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1 and "Traceback" not in missing.stderr


def test_the_league_audit_reads_the_stored_blocks_by_entrant(tmp_path: Path) -> None:
    """Blocks of simulated games stored as `run` stores them: the colluding entrants are flagged,
    whichever of their versions played."""
    folder = tmp_path / "lg"
    names = [f"e{i}" for i in range(6)]
    field = _field(names, "spare")
    with commands.init_league(folder, LeagueConfig(table_size=6, seed="audit"), bytes(32)) as store:
        for name in names:
            commands.add_version(store, commands.make_spec(name, None, "random"))
        commands.add_version(store, commands.make_spec("e0", None, "heuristic"), update=True, keep=True)
        rng = random.Random(2)
        for block in range(24):
            # Either version of e0 may sit: the audit counts both for the entrant.
            order = tuple(f"{n}@v{2 if n == 'e0' and block % 2 else 1}" for n in names)
            outcomes = []
            for rotation in range(6):
                seats = tuple(order[(s - rotation) % 6] for s in range(6))
                entrants = [seat.split("@")[0] for seat in seats]
                places, _, record = play_game(entrants, field, f"b{block}", 100, rng, keep_record=True)
                assert record is not None
                outcomes.append(_outcome(f"b{block:06d}-r{rotation:02d}", seats, places, json.dumps(record)))
            store.store_block(block, f"b{block}", order, 0, outcomes, {}, {}, [])
    shown = hearts("league", "audit", str(folder), "--json", timeout=600)
    assert shown.returncode == 1, shown.stderr
    report = json.loads(shown.stdout)
    assert report["unit"] == "entrant" and report["games"] == 144 and report["bots"] == names
    assert [item["bots"] for item in report["flagged"]] == [["e0", "e1"]]
    empty = tmp_path / "empty"
    with commands.init_league(empty, LeagueConfig(table_size=6), bytes(32)):
        pass
    nothing = hearts("league", "audit", str(empty))
    assert nothing.returncode == 0 and "0 games of 0 entrants" in nothing.stdout
    assert "no pair is flagged" in nothing.stdout


def _outcome(key: str, seats: tuple[str, ...], places: tuple[int, ...], record: str) -> GameOutcome:
    totals = tuple(replay(json.loads(record))["totals"])
    hands = len(json.loads(record)["hands"])
    return GameOutcome.clean(key, seats, totals, places=places, hands=hands, record_json=record)
