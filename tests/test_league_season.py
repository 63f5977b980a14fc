"""A season with an end: ``hearts league freeze`` closes submissions (the store's own commands,
the CLI and the portal), and ``hearts league final`` plays the finalists until the top places
are separated or its budget is spent, and signs what it established."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from hearts_tournaments.league import commands
from hearts_tournaments.league.config import LeagueConfig, LeagueError
from hearts_tournaments.league.store import LeagueStore
from tests.conftest import hearts
from tests.portal_helpers import Client, good_archive, make_league
from tests.web_server import web_server

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
