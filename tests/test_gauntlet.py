"""Gauntlets: the schedule, the candidate's paired deal advantages, the verdict, the config
section, and a whole gauntlet over the real referee that stops early."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from hearts_tournaments.results.stats import SprtSettings, SprtVerdict
from hearts_tournaments.tournament.config import GAUNTLET_KEYS, ConfigError, parse_config
from hearts_tournaments.tournament.gauntlet import (
    GauntletSpec,
    deal_advantages,
    gauntlet_schedule,
    gauntlet_verdict,
)
from hearts_tournaments.tournament.results import compute_standings
from tests.conftest import ROOT
from tests.helpers.cli import hearts
from tests.helpers.shared import CAREFUL_AND_DICE, outcome

FIELD = ["f1", "f2", "f3"]


def test_the_candidate_sits_at_every_deal_and_the_field_takes_turns() -> None:
    schedule = gauntlet_schedule("cand", FIELD, 6, 4, "1", duplicate=True)
    assert len(schedule.games) == 24
    for seating in schedule.seatings:
        assert seating.order.count("cand") == 1
        assert sorted(set(seating.order) - {"cand"}) == FIELD  # five field seats from three bots
    balance = schedule.balance()
    assert all(len(set(c)) == 1 for c in balance.seat_counts.values())  # rotations: every seat alike
    single = gauntlet_schedule("cand", FIELD, 6, 6, "1", duplicate=False)
    assert sorted(g.seats.index("cand") for g in single.games) == list(range(6))  # it moves round
    with pytest.raises(ValueError):
        gauntlet_schedule("cand", ["cand", "f1"], 6, 2, "1")


def test_advantages_are_paired_per_deal_and_count_complete_deals_only() -> None:
    schedule = gauntlet_schedule("cand", FIELD, 6, 3, "1", duplicate=True)
    outcomes = []
    for game in schedule.games:
        # The candidate always first; the field's seats in seat order behind it.
        totals = [0 if bot == "cand" else 10 + seat for seat, bot in enumerate(game.seats)]
        outcomes.append(outcome(schedule, game.index, totals, hands=5))
    # The field's five seats take places 2..6: mean 4; the candidate's 1: advantage 3.
    assert deal_advantages(schedule, outcomes, "cand") == [3.0, 3.0, 3.0]
    # Deal 1 missing a game: only deal 0 counts, although deal 2 is complete.
    partial = [o for o in outcomes if o.key != schedule.games[7].key]
    assert deal_advantages(schedule, partial, "cand") == [3.0]


def test_a_clearly_better_candidate_is_accepted_and_reported() -> None:
    spec = GauntletSpec("cand", SprtSettings(h0=0.0, h1=0.5, min_deals=4))
    schedule = gauntlet_schedule("cand", FIELD, 6, 10, "1", duplicate=False)
    outcomes = []
    for game in schedule.games:
        # First or second, alternately: a clear, noisy advantage.
        lead = 0 if game.deal % 2 else 11
        totals = [lead if bot == "cand" else 10 + seat for seat, bot in enumerate(game.seats)]
        outcomes.append(outcome(schedule, game.index, totals, hands=5))
    result = gauntlet_verdict(schedule, outcomes, spec)
    assert result.verdict is SprtVerdict.H1 and result.stopped_at == 4
    standings = compute_standings(
        name="g",
        schedule=schedule,
        outcomes=outcomes[:6],
        target_score=50,
        quarantine_after=3,
        balance=schedule.balance().to_json(),
        bootstrap_samples=50,
        gauntlet=spec,
    )
    section = standings.to_json()["gauntlet"]
    assert section["candidate"] == "cand" and section["verdict"] == "H1" and section["stopped_at"] == 4
    assert section["deals"] == 6 and section["mean_advantage"] > 2
    assert standings.gauntlet is not None and "H1 accepted after 4 deals" in standings.gauntlet.line()


BOTS = CAREFUL_AND_DICE


def test_the_gauntlet_section_reads_and_its_mistakes_name_the_key() -> None:
    text = '[tournament]\ntable_size = 6\n[gauntlet]\ncandidate = "careful"\nh1 = 0.5\nmin_deals = 4\n' + BOTS
    config = parse_config(text, Path("."))
    assert config.gauntlet == GauntletSpec("careful", SprtSettings(h0=0.0, h1=0.5, min_deals=4))
    for section, key in [
        ('candidate = "nobody"', "gauntlet.candidate"),
        ("h1 = 0.5", "gauntlet.candidate"),
        ('candidate = "careful"\nelo = 5', "gauntlet.elo"),
        ('candidate = "careful"\nh1 = "big"', "gauntlet.h1"),
        ('candidate = "careful"\nh0 = 1.0\nh1 = 0.5', "gauntlet"),
        ('candidate = "careful"\nalpha = 0.7', "gauntlet"),
    ]:
        with pytest.raises(ConfigError) as caught:
            parse_config(f"[tournament]\ntable_size = 6\n[gauntlet]\n{section}\n" + BOTS, Path("."))
        assert caught.value.key == key, str(caught.value)


def test_a_gauntlet_over_the_referee_stops_early_with_h1(tmp_path: Path) -> None:
    config = tmp_path / "gauntlet.toml"
    config.write_text(
        '[tournament]\nname = "g"\ntable_size = 6\ndeals = 40\nduplicate = false\nseed = 3\n'
        "target_score = 40\nconcurrency = 2\ndecision_ms = 10000\njoin_timeout_ms = 60000\n"
        '[gauntlet]\ncandidate = "careful"\nh0 = 0.0\nh1 = 0.5\nmin_deals = 4\n' + BOTS
    )
    result = hearts("tournament", "run", str(config), "--output", str(tmp_path / "out"), timeout=900)
    assert result.returncode == 0, result.stderr
    assert "gauntlet: H1 accepted" in result.stderr
    report = hearts("tournament", "report", str(tmp_path / "out"), "--format", "json")
    data = json.loads(report.stdout)
    section = data["gauntlet"]
    assert section["verdict"] == "H1" and section["candidate"] == "careful"
    assert data["tournament"]["games_played"] < 40
    assert section["stopped_at"] <= data["tournament"]["deals_played"]
    assert "stopped by the gauntlet's test" in result.stdout


def test_the_documented_gauntlet_reads_with_every_key(tmp_path: Path) -> None:
    doc = (ROOT / "docs" / "TOURNAMENTS.md").read_text()
    example = next(b for b in re.findall(r"```toml\n(.*?)```", doc, flags=re.S) if "[gauntlet]" in b)
    config = parse_config(example, tmp_path)
    assert config.gauntlet is not None and config.gauntlet.candidate == "mine"
    for key in GAUNTLET_KEYS:
        assert re.search(rf"^{key} = ", example, flags=re.M), f"docs/TOURNAMENTS.md lacks gauntlet.{key}"
    defaults = SprtSettings()
    assert config.gauntlet.sprt == defaults  # the example shows the defaults
