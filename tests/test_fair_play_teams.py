"""Teams and links: entrants who may help each other never share a table, in tournaments (the
schedule) and leagues (matchmaking), whether they declared a team or the organiser linked them
(two accounts registered on the portal by one person)."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path

import pytest

from hearts_tournaments.league import commands
from hearts_tournaments.league.config import LeagueConfig, LeagueError
from hearts_tournaments.league.matchmaking import Candidate, choose_table
from hearts_tournaments.league.play import plan_block
from hearts_tournaments.league.store import LeagueStore
from hearts_tournaments.portal.accounts import PortalStore
from hearts_tournaments.tournament.config import ConfigError, parse_config
from hearts_tournaments.tournament.schedule import Schedule, make_schedule
from tests.helpers.cli import hearts
from tests.helpers.portal import (
    FAST,
    LOWEST,
    MANIFEST,
    Client,
    league_running,
    tar_gz,
    wait_blocks,
    wait_status,
)
from tests.helpers.web_server import web_server

BOTS = [f"b{i:02d}" for i in range(12)]
TEAMS = {"b00": "red", "b01": "red", "b02": "red", "b05": "blue", "b06": "blue"}


def _together(orders: list[tuple[str, ...]], teams: dict[str, str]) -> int:
    """Tables at which two bots of one team sit."""
    return sum(
        1
        for order in orders
        if any(
            teams.get(a) is not None and teams.get(a) == teams.get(b)
            for a, b in itertools.combinations(order, 2)
        )
    )


@pytest.mark.parametrize(("size", "deals", "duplicate"), [(6, 30, True), (8, 20, False), (6, 7, True)])
def test_the_schedule_never_seats_two_of_a_team_together(size: int, deals: int, duplicate: bool) -> None:
    schedule = make_schedule(BOTS, size, deals, "teams", duplicate, teams=TEAMS)
    assert _together([s.order for s in schedule.seatings], TEAMS) == 0
    assert _together([g.seats for g in schedule.games], TEAMS) == 0
    balance = schedule.balance()
    assert balance.teams == TEAMS and balance.teammates_met == 0
    # Without teams the same bots meet at some table: the constraint is doing the work.
    plain = make_schedule(BOTS, size, deals, "teams", duplicate)
    assert _together([s.order for s in plain.seatings], TEAMS) > 0
    # What it still balances: pairs of bots of different teams.
    lines = balance.lines()
    assert lines[1].startswith("every pair of bots of different teams shares a table on ")
    assert "teams: 2 team(s) of 5 bots; teammates never share a table" in lines
    stored = json.loads(json.dumps(schedule.to_json()))
    assert stored["teams"] == TEAMS
    again = Schedule.from_json(stored)
    assert again == schedule and again.balance().to_json() == balance.to_json()
    assert balance.to_json()["teams"] == TEAMS and balance.to_json()["teammates_met"] == 0


def test_pairs_across_teams_are_evened_out() -> None:
    schedule = make_schedule(BOTS, 6, 30, "teams", teams={"b00": "red", "b01": "red"})
    balance = schedule.balance()
    # 11 sides, 15 seats a bot a deal; pairs of different teams meet 6..8 times (mean 7.0).
    assert balance.pair_min >= 6 and balance.pair_max <= 8
    assert set(balance.deals_per_bot.values()) == {15}


def test_teams_of_one_and_no_teams_give_the_schedule_made_without_them() -> None:
    plain = make_schedule(BOTS, 6, 15, "same")
    assert make_schedule(BOTS, 6, 15, "same", teams={"b00": "solo", "b03": "other"}) == plain
    assert make_schedule(BOTS, 6, 15, "same", teams={}) == plain
    assert "teams" not in plain.to_json() and "teams" not in plain.balance().to_json()


def test_a_team_too_large_for_the_field_is_refused_in_one_line() -> None:
    with pytest.raises(ValueError, match=r"12 bots in 5 sides .* cannot fill a table of 6"):
        make_schedule(BOTS, 6, 4, "x", teams={b: f"t{i % 5}" for i, b in enumerate(BOTS)})


CONFIG = """
[tournament]
table_size = 6
deals = 2
duplicate = false
target_score = 30
output = "out"
{extra}
"""


def _bots(teams: dict[str, str]) -> str:
    lines = []
    for name in ("a", "b", "c", "d", "e", "f", "g"):
        team = f'team = "{teams[name]}"\n' if name in teams else ""
        lines.append(f'[[bots]]\nname = "{name}"\nbuiltin = "random"\n{team}')
    return "\n".join(lines)


def test_the_team_key_is_read_and_checked(tmp_path: Path) -> None:
    config = parse_config(CONFIG.format(extra="") + _bots({"a": "x", "b": "x"}), tmp_path)
    assert config.teams == {"a": "x", "b": "x"}
    with pytest.raises(ConfigError, match=r"bots\[0\].team: must be a team name"):
        parse_config(CONFIG.format(extra="") + _bots({"a": "no spaces"}), tmp_path)
    with pytest.raises(ConfigError, match=r"bots: the teams cannot be kept apart: 7 bots in 5 sides"):
        parse_config(CONFIG.format(extra="") + _bots({"a": "x", "b": "x", "c": "y", "d": "y"}), tmp_path)
    gauntlet = CONFIG.format(extra="") + '[gauntlet]\ncandidate = "a"\n' + _bots({"b": "x", "c": "x"})
    with pytest.raises(ConfigError, match="gauntlet: cannot be played with teams"):
        parse_config(gauntlet, tmp_path)


@pytest.mark.timeout(600)
def test_a_tournament_with_a_team_keeps_it_apart_and_verifies(tmp_path: Path) -> None:
    (tmp_path / "t.toml").write_text(CONFIG.format(extra="") + _bots({"a": "x", "b": "x"}))
    shown = hearts("tournament", "schedule", "t.toml", cwd=tmp_path, timeout=300)
    assert shown.returncode == 0, shown.stderr
    assert "teams: 1 team(s) of 2 bots; teammates never share a table" in shown.stdout
    games = [line.split()[1:] for line in shown.stdout.splitlines() if line.startswith("d0")]
    assert games and all(not {"a", "b"} <= set(seats) for seats in games)
    done = hearts("tournament", "run", "t.toml", "--progress", "never", cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr
    check = hearts("tournament", "verify", str(tmp_path / "out"))
    assert check.returncode == 0, check.stdout


def test_matchmaking_never_seats_two_of_one_side() -> None:
    sides = {"a": "a", "b": "a", "c": "a", "d": "d", "e": "d"}
    candidates = [
        Candidate(f"{name}@v{v}", name, blocks, 25.0 + blocks, 8.0, sides.get(name, name))
        for name, v, blocks in [(n, v, (i * 7 + v) % 5) for i, n in enumerate("abcdefghij") for v in (1, 2)]
    ]
    for block in range(200):
        seats = choose_table(candidates, 6, {}, random.Random(block))
        entrants = [seat.split("@")[0] for seat in seats]
        assert len({sides.get(e, e) for e in entrants}) == len(set(entrants)) == 6
    # Sides fewer than seats: every side sits once, copies fill the table.
    few = [c for c in candidates if c.entrant in "abcde"]
    seats = choose_table(few, 6, {}, random.Random(1))
    assert len({sides[s.split("@")[0]] for s in seats}) == 2
    with pytest.raises(ValueError, match="two entrants who may meet"):
        choose_table([c for c in candidates if c.entrant in "abc"], 6, {}, random.Random(1))


def test_league_teams_and_links_form_sides_that_plan_block_keeps_apart(tmp_path: Path) -> None:
    with commands.init_league(tmp_path / "lg", LeagueConfig(**FAST), bytes(32)) as store:  # type: ignore[arg-type]
        for name in "abcdefgh":
            spec = commands.make_spec(name, None, "random")
            commands.add_version(store, spec, team="red" if name in "ab" else None)
        commands.link(store, "c", "d")
        commands.link(store, "d", "e")  # through d, c and e are one side too
        assert store.sides()["e"] == "c" and store.sides()["b"] == "a" and store.sides()["f"] == "f"
        assert commands.apart(store)["sides"] == [["a", "b"], ["c", "d", "e"]]
        with pytest.raises(LeagueError, match="neither an entrant of the league nor a portal account"):
            commands.link(store, "a", "zed")
        assert commands.link(store, "a", "zed", accounts=["zed"]).startswith("a and zed linked")
        commands.link(store, "a", "zed", linked=False)
        with pytest.raises(LeagueError, match="are not linked"):
            commands.link(store, "a", "zed", linked=False)
        store._db.execute("UPDATE versions SET status = 'active'")  # as if validated
        # Five sides for six seats: each sits once (a copy fills the sixth seat).
        seats = plan_block(store, store.snapshot())
        assert seats is not None
        entrants = [s.split("@")[0] for s in seats]
        assert len(set(entrants) & set("ab")) == 1 and len(set(entrants) & set("cde")) == 1
        assert set("fgh") <= set(entrants) and len(set(entrants)) == 5
        commands.set_team(store, "b", "")  # b leaves the team: a and b may meet again
        assert store.sides()["b"] == "b"


def test_the_league_commands_for_teams_and_links(tmp_path: Path) -> None:
    folder = tmp_path / "lg"
    assert hearts("league", "init", str(folder), "--max-hands", "1").returncode == 0
    added = hearts("league", "add", str(folder), "ann", "--builtin", "random", "--team", "red")
    assert added.returncode == 0, added.stderr
    assert hearts("league", "add", str(folder), "ben", "--builtin", "heuristic").returncode == 0
    linked = hearts("league", "entrant", "link", str(folder), "ann", "ben")
    assert linked.returncode == 0 and linked.stdout.strip() == "ann and ben linked: never at one table"
    shown = hearts("league", "entrant", "links", str(folder))
    assert json.loads(shown.stdout) == {
        "teams": {"ann": "red"},
        "links": [["ann", "ben"]],
        "sides": [["ann", "ben"]],
    }
    unknown = hearts("league", "entrant", "link", str(folder), "ann", "nobody")
    assert unknown.returncode == 2 and unknown.stderr.count("\n") == 1
    assert "'nobody' is neither an entrant of the league nor a portal account" in unknown.stderr
    bad = hearts("league", "add", str(folder), "cy", "--builtin", "random", "--team", "a b")
    assert bad.returncode == 2 and "a team name is letters" in bad.stderr
    # Two entrants of one side only: nothing to play, said in one line.
    run = hearts("league", "run", str(folder), "--blocks", "1", timeout=600)
    assert run.returncode == 1 and "fewer than two active versions of entrants who may meet" in run.stderr
    assert hearts("league", "entrant", "unlink", str(folder), "ben", "ann").returncode == 0
    assert json.loads(hearts("league", "entrant", "links", str(folder)).stdout)["sides"] == []


@pytest.mark.timeout(900)
def test_two_accounts_registered_on_the_portal_and_linked_never_share_a_table(tmp_path: Path) -> None:
    """One person registers twice with two invite codes; the organiser links the accounts; both
    submit bots, and a third entrant declares a team in its bot.toml with the house bot's."""
    folder = tmp_path / "lg"
    with commands.init_league(folder, LeagueConfig(**FAST), bytes(range(32))) as store:  # type: ignore[arg-type]
        commands.add_version(store, commands.make_spec("house", None, "random"), team="blue")
        commands.add_version(store, commands.make_spec("extra", None, "heuristic"))
    with PortalStore(folder) as portal:
        codes = [portal.add_invite() for _ in range(3)]
        erin = portal.add_account("erin")
    with web_server(folder, "--submissions") as url:
        tokens = {}
        for name, code in zip(("sam", "sam2"), codes, strict=False):
            client = Client(url)
            made = client.form("/register", {"csrf": client.csrf("/register"), "invite": code, "name": name})
            assert made.status == 200, made.body
            tokens[name] = made.body.split('<pre id="token">', 1)[1].split("</pre>", 1)[0]
        linked = hearts("league", "entrant", "link", str(folder), "sam", "sam2")
        assert linked.returncode == 0, linked.stderr
        tokens["erin"] = erin
        with league_running(folder) as run:
            client = Client(url)
            for name, token in tokens.items():
                manifest = MANIFEST + ('team = "blue"\n' if name == "erin" else "")
                archive = tar_gz([("bot.toml", manifest.encode()), ("bot.py", LOWEST.encode())])
                sent = client.api_upload(token, archive)
                assert sent.status == 202, sent.body
                wait_status(client, token, sent.json()["id"], {"active"})
            wait_blocks(folder, 6, run)
    with LeagueStore.open(folder, read_only=True) as store:
        assert store.teams() == {"erin": "blue", "house": "blue"}
        assert store.links() == [("sam", "sam2")]
        tables = [{s.split("@")[0] for s in seats} for _, _, seats, _ in store.block_rows()]
    assert len(tables) >= 6
    assert all(not {"sam", "sam2"} <= table and not {"erin", "house"} <= table for table in tables)
    assert any("sam" in table for table in tables) and any("sam2" in table for table in tables)
    with PortalStore(folder) as portal:
        assert "linked" in [row["action"] for row in portal.audit_log()]
