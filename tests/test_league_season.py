"""A season with an end: ``hearts league freeze`` closes submissions (the store's own commands,
the CLI and the portal), and ``hearts league final`` plays the finalists until the top places
are separated or its budget is spent, and signs what it established."""

from __future__ import annotations

import dataclasses
import json
import math
import random
import subprocess
from pathlib import Path

import pytest

from hearts_tournaments.arena.outcome import GameOutcome
from hearts_tournaments.league import commands
from hearts_tournaments.league.config import LeagueConfig, LeagueError
from hearts_tournaments.league.final import (
    Boundary,
    FinalStatus,
    final_settings,
    final_status,
    plan_final_block,
    status_of,
)
from hearts_tournaments.league.store import LeagueStore
from hearts_tournaments.results.stats import Interval
from tests.helpers.cli import hearts
from tests.helpers.portal import Client, good_archive, make_league
from tests.helpers.web_server import web_server

SECRET = bytes(range(32))
FAST = {"table_size": 6, "seed": "season", "max_hands": 1, "sandbox": "none", "bootstrap": 50}
#: 2026-12-24T18:00:00Z.
CHRISTMAS = 1798135200.0


def _one_line(done: subprocess.CompletedProcess[str], said: str) -> None:
    assert done.returncode == 2, done
    err = done.stderr
    assert said in err and err.count("\n") == 1 and "Traceback" not in err, err


def test_a_freeze_refuses_new_versions_from_its_time_on(tmp_path: Path) -> None:
    now = [CHRISTMAS - 3600]
    with commands.init_league(tmp_path / "lg", LeagueConfig.from_json(FAST), SECRET) as store:
        store.clock = lambda: now[0]
        commands.add_version(store, commands.make_spec("a", None, "random"))
        said = commands.freeze(store, CHRISTMAS)
        assert said.startswith("the season freezes at 2026-12-24T18:00:00Z"), said
        assert commands.closed(store) is None
        commands.add_version(store, commands.make_spec("b", None, "random"))  # an hour before: taken
        now[0] = CHRISTMAS
        assert commands.closed(store) == (
            "the season froze at 2026-12-24T18:00:00Z: no new version is accepted since then "
            "(the versions active then play the final)"
        )
        for update in (False, True):
            with pytest.raises(LeagueError, match="froze at 2026-12-24T18:00:00Z"):
                commands.add_version(
                    store, commands.make_spec("a" if update else "c", None, "heuristic"), update
                )
        assert [v.id for v in store.versions()] == ["a@v1", "b@v1"]
        # A refused command is not logged: the league's command log replays to the same state.
        assert [c["op"] for _, c in store.commands()] == ["add", "freeze", "add"]
        assert commands.unfreeze(store).startswith("the season is open again")
        commands.add_version(store, commands.make_spec("c", None, "heuristic"))
        with pytest.raises(LeagueError, match="not frozen"):
            commands.unfreeze(store)


def test_the_cli_freezes_at_a_time_and_refuses_add_in_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "lg"
    commands.init_league(folder, LeagueConfig.from_json(FAST), SECRET).close()
    _one_line(hearts("league", "freeze", str(folder), "--at", "next tuesday"), "is not an ISO 8601 time")
    _one_line(hearts("league", "freeze", str(folder), "--at", "2000-01-01T00:00:00"), "has no time zone")
    done = hearts("league", "freeze", str(folder), "--at", "2000-01-01T01:00:00+01:00")
    assert done.returncode == 0 and "froze at 2000-01-01T00:00:00Z" in done.stdout, done
    _one_line(
        hearts("league", "add", str(folder), "x", "--builtin", "random"), "froze at 2000-01-01T00:00:00Z"
    )
    assert hearts("league", "unfreeze", str(folder)).returncode == 0
    assert hearts("league", "add", str(folder), "x", "--builtin", "random").returncode == 0


@pytest.mark.timeout(300)
def test_the_portal_refuses_submissions_once_frozen_and_says_since_when(tmp_path: Path) -> None:
    folder = tmp_path / "lg"
    tokens = make_league(folder, ("alice",))
    with LeagueStore.open(folder) as store:
        commands.freeze(store, commands.parse_time("2999-01-01T00:00:00Z"))
    with web_server(folder, "--submissions") as url:
        client = Client(url)
        client.login(tokens["alice"])
        page = client.get("/me").body
        assert "Submissions close at 2999-01-01 00:00:00 UTC" in page and 'id="submit"' in page
        with LeagueStore.open(folder) as store:
            commands.freeze(store, commands.parse_time("2000-01-01T00:00:00Z"))
        refused = client.api_upload(tokens["alice"], good_archive())
        assert refused.status == 403, refused.body
        assert json.loads(refused.body) == {
            "error": "the season froze at 2000-01-01T00:00:00Z: no new version is accepted since then "
            "(the versions active then play the final)"
        }
        page = client.get("/me").body
        assert 'id="frozen"' in page and "froze at 2000-01-01T00:00:00Z" in page and 'id="submit"' not in page
    with LeagueStore.open(folder, read_only=True) as store:
        assert [v.id for v in store.versions()] == ["house@v1"]


def _outcome(key: str, seats: tuple[str, ...], places: tuple[int, ...]) -> GameOutcome:
    return GameOutcome.clean(key, seats, (0,) * len(seats), places=places)


def _deal(
    number: int, order: list[str], rng: random.Random, strengths: dict[str, float]
) -> list[GameOutcome]:
    """A block of len(order) rotations whose finishing orders follow Plackett-Luce of ``strengths``."""
    games = []
    for r in range(len(order)):
        seats = tuple(order[(s - r) % len(order)] for s in range(len(order)))
        left = list(range(len(seats)))
        places = [0] * len(seats)
        for place in range(1, len(seats) + 1):
            weights = [math.exp(strengths[seats[i]]) for i in left]
            pick = rng.choices(left, weights)[0]
            places[pick] = place
            left.remove(pick)
        games.append(_outcome(f"b{number}-r{r}", seats, tuple(places)))
    return games


def test_the_final_seats_the_contenders_and_names_the_established_places() -> None:
    """Known strengths: a far ahead, b and c close, d and e far behind; the top 2 asked. Everyone
    plays until everyone has an interval; from then on each deal seats exactly the finalists on
    a boundary not yet separated, until the top 2 are separated, in the true order."""
    strengths = {"a": 3.0, "b": 1.0, "c": 0.3, "d": -2.0, "e": -2.0}
    finalists = list(strengths)
    rng = random.Random(7)
    blocks: dict[int, list[GameOutcome]] = {}
    played: dict[str, int] = {}
    status: FinalStatus | None = None
    focused = 0
    while status is None or not status.decided:
        assert len(blocks) < 80, status and status.to_json()
        order = plan_final_block(status, finalists, played, 6, rng)
        if status is None or not status.fitted:
            assert set(order) == set(finalists), order
        else:
            assert set(order) == set(status.contenders()), (order, status.contenders())
            focused += 1
        for v in set(order):
            played[v] = played.get(v, 0) + 1
        blocks[len(blocks)] = _deal(len(blocks), list(order), rng, strengths)
        status = final_status(blocks, finalists, 2, 200, "final")
    assert focused > 0
    assert status.order[:3] == ("a", "b", "c") and status.established() == [1, 2]
    assert all(b.interval is not None and b.interval.low > 0 for b in status.boundaries)
    report = status.to_json()
    assert [p["version"] for p in report["places"]] == list(status.order)
    assert report["decided"] and report["established"] == [1, 2]


def test_established_places_follow_the_separated_boundaries() -> None:
    ci = Interval(0.1, 0.5)
    status = FinalStatus(
        3,
        ("a", "b", "c", "d"),
        {"a": 1.0, "b": 0.5, "c": 0.4, "d": 0.0},
        {v: ci for v in "abcd"},
        (
            Boundary(1, "a", "b", 0.5, Interval(0.2, 0.8), True),
            Boundary(2, "b", "c", 0.1, Interval(-0.2, 0.4), False),
            Boundary(3, "c", "d", 0.4, Interval(0.1, 0.7), True),
        ),
        10,
    )
    assert status.established() == [1] and not status.decided
    assert status.contenders() == ["b", "c"]
    seats = plan_final_block(status, ["a", "b", "c", "d"], {}, 6, random.Random(1))
    assert sorted(seats) == ["b", "b", "b", "c", "c", "c"]
    uniform = plan_final_block(status, ["a", "b", "c", "d"], {}, 6, random.Random(1), adaptive=False)
    assert set(uniform) == {"a", "b", "c", "d"}


@pytest.mark.timeout(1200)
def test_a_final_after_the_freeze_stops_once_separated_and_signs_its_report(tmp_path: Path) -> None:
    folder = tmp_path / "lg"
    with commands.init_league(folder, LeagueConfig.from_json(FAST), SECRET) as store:
        for name, bot in (("h", "heuristic"), ("r1", "random"), ("r2", "random")):
            commands.add_version(store, commands.make_spec(name, None, bot))
    assert hearts("league", "run", str(folder), "--blocks", "1", timeout=600).returncode == 0
    _one_line(hearts("league", "final", str(folder), "--top", "1"), "the season is not frozen")
    assert hearts("league", "freeze", str(folder), "--at", "2000-01-01T00:00:00Z").returncode == 0
    _one_line(hearts("league", "final", str(folder), "--top", "3"), "fewer than the finalists")
    budget = 16
    done = hearts("league", "final", str(folder), "--top", "1", "--budget", str(budget), timeout=1100)
    assert done.returncode == 0, done
    report = json.loads((folder / "final.json").read_text())
    assert report["finalists"] == ["h@v1", "r1@v1", "r2@v1"] and report["first_block"] == 1
    assert report["decided"] and report["established"] == [1], report
    assert report["places"][0]["version"] == "h@v1" and report["deals"] < budget
    assert f"final decided after {report['deals']} deals" in done.stdout
    # Signed with every result: published.json holds the report, and verify checks its signature.
    published = json.loads((folder / "published.json").read_text())
    assert published["final"] == report
    checked = hearts("league", "verify", str(folder), "--public-key", str(folder / "published.json"))
    assert checked.returncode == 0, checked
    # The season's run is over; the final stays as it is when asked again.
    refused = hearts("league", "run", str(folder), "--blocks", "1")
    assert refused.returncode != 0 and "its final began" in refused.stderr, refused
    again = hearts("league", "final", str(folder), "--top", "1", "--budget", str(budget))
    assert again.returncode == 0 and json.loads((folder / "final.json").read_text()) == report


@pytest.mark.timeout(1200)
def test_a_luck_corrected_final_fits_the_corrected_places_and_keeps_its_choice(tmp_path: Path) -> None:
    folder = tmp_path / "lg"
    with commands.init_league(folder, LeagueConfig.from_json(FAST), SECRET) as store:
        for name, bot in (("h", "heuristic"), ("r1", "random"), ("r2", "random")):
            commands.add_version(store, commands.make_spec(name, None, bot))
    assert hearts("league", "run", str(folder), "--blocks", "1", timeout=600).returncode == 0
    assert hearts("league", "freeze", str(folder), "--at", "2000-01-01T00:00:00Z").returncode == 0
    # Top 2: r1 and r2 are equally strong, so the final plays its whole budget.
    budget = 4
    final = ["league", "final", str(folder), "--top", "2", "--budget", str(budget)]
    done = hearts(*final, "--luck-correction", timeout=1100)
    assert done.returncode == 0, done
    report = json.loads((folder / "final.json").read_text())
    assert report["luck_correction"] == {"policy": "heuristic", "rollouts": 8, "seed": "luck"}
    assert report["deals"] == budget
    # The report's strengths are the corrected fit of the stored deals, not the raw one.
    with LeagueStore.open(folder, read_only=True) as store:
        settings = final_settings(store)
        assert settings is not None and settings.luck is not None
        corrected = status_of(store, settings)
        raw = status_of(store, dataclasses.replace(settings, luck=None))
    shown = {p["version"]: p["strength"] for p in report["places"]}
    assert shown == {v: round(s, 6) for v, s in corrected.strength.items()}
    # r1 and r2 are the built-in random bot, a known policy: their decisions' action terms move
    # the fit (each finalist's deal terms cancel over a deal's rotations).
    assert max(abs(corrected.strength[v] - raw.strength[v]) for v in raw.strength) > 1e-3
    assert json.loads((folder / "published.json").read_text())["final"] == report
    # One final, one way of correcting: asked again without the flag, it says so in one line.
    _one_line(hearts(*final), "began with --luck-correction")
