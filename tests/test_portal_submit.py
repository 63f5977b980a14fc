"""``hearts submit`` against the real portal while the real league plays; registration with an
invite code over HTTP; a league folder named relatively still binds its snapshots."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from hearts_tournaments.league.store import LeagueStore, spec_from_json
from hearts_tournaments.portal.accounts import PortalStore
from tests.helpers.cli import hearts
from tests.helpers.portal import Client, bot_folder, league_running, make_league, wait_blocks
from tests.helpers.web_server import web_server


def submit(url: str, token_file: Path, folder: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return hearts("submit", url, "--token-file", str(token_file), str(folder), *extra, timeout=600)


@pytest.mark.timeout(900)
def test_hearts_submit_packs_a_folder_and_waits_until_active(tmp_path: Path) -> None:
    folder = tmp_path / "lg"
    tokens = make_league(folder, ("alice",))
    token_file = tmp_path / "alice.token"
    token_file.write_text(tokens["alice"] + "\n")
    mine = bot_folder(tmp_path / "mybot")
    (mine / "__pycache__").mkdir()
    (mine / "__pycache__" / "junk.pyc").write_bytes(b"\0" * 10)
    with league_running(folder) as run, web_server(folder, "--submissions") as url:
        done = submit(url, token_file, mine)
        assert done.returncode == 0, done.stdout + done.stderr
        lines = done.stdout.splitlines()
        # The reply says where the submission stood when it was answered: still waiting its
        # turn, or already in its sandbox check on a fast (or idle) validator.
        first = r"submission 1: (pending|validating) \(\d+ bytes\); follow it at http://\S+/me"
        assert re.fullmatch(first, lines[0]), lines[0]
        assert lines[-1] == "submission 1: active: alice@v1 passed its validation game and plays"
        wait_blocks(folder, 1, run)
        with LeagueStore.open(folder, read_only=True) as store:
            version = store.resolve("alice@v1")
            assert version.status == "active"
            assert version.spec.snapshot is not None
            stored = sorted(p.name for p in (version.spec.snapshot / "0").iterdir())
        assert stored == ["bot.py", "bot.toml"]  # __pycache__ was not packed

        # A second version with a bot that cannot play: error, with the first lines of its log.
        broken = tmp_path / "broken"
        broken.mkdir()
        (broken / "bot.py").write_text("import sys\nprint('no luck today', file=sys.stderr)\nsys.exit(3)\n")
        (broken / "bot.toml").write_text('command = ["python3", "bot.py"]\nprotocol = "stdio"\n')
        failed = submit(url, token_file, broken)
        assert failed.returncode == 1, failed.stdout + failed.stderr
        assert "submission 2: error: it cannot play" in failed.stdout
        assert "no luck today" in failed.stdout  # the log's first lines
        with LeagueStore.open(folder, read_only=True) as store:
            assert [v.id for v in store.versions(entrant="alice")] == ["alice@v1"]  # not added
            assert store.resolve("alice@v1").status == "active"  # and v1 plays on
        # Each submission's page shows the bot test kit's report: the quick levels' checks, and
        # for the broken bot the check it failed, with the fix.
        browser = Client(url)
        browser.login(tokens["alice"])
        passed = browser.get("/me/submissions/1").body
        assert 'id="kit-report"' in passed and "session.rejection" in passed and "kit-failed" not in passed
        refused = browser.get("/me/submissions/2").body
        assert 'class="kit-failed"><td><code>process.starts</code>' in refused and "fix:" in refused

        # A new good version: v1 plays on until v2 is active, then is retired.
        (mine / "bot.py").write_text((mine / "bot.py").read_text() + "\n# v2\n")
        second = submit(url, token_file, mine)
        assert second.returncode == 0, second.stdout + second.stderr
        assert second.stdout.splitlines()[-1] == (
            "submission 3: active: alice@v2 passed its validation game and plays; alice@v1 retired"
        )
        with LeagueStore.open(folder, read_only=True) as store:
            assert {v.id: v.status for v in store.versions(entrant="alice")} == {
                "alice@v1": "retired",
                "alice@v2": "active",
            }
            events = [(v, kind) for _b, v, kind, _t in store.events() if v.startswith("alice")]
        assert events.index(("alice@v2", "active")) < events.index(("alice@v1", "retired"))

        # Refused before anything is sent, or by the portal: one line each, exit 2.
        linked = bot_folder(tmp_path / "linked")
        os.symlink(folder / "league.sqlite", linked / "db")
        refused = submit(url, token_file, linked)
        assert refused.returncode == 2 and "is a symlink" in refused.stderr
        assert refused.stderr.count("\n") == 1 and "Traceback" not in refused.stderr
        empty = tmp_path / "empty"
        empty.mkdir()
        nothing = submit(url, token_file, empty)
        assert nothing.returncode == 2 and "holds no bot.toml" in nothing.stderr
        wrong = tmp_path / "wrong.token"
        wrong.write_text("chp_000000000000.wrong\n")
        denied = submit(url, wrong, mine)
        assert denied.returncode == 2 and "refused it (401)" in denied.stderr
        assert denied.stderr.count("\n") == 1
        gone = submit("http://127.0.0.1:9", token_file, mine)
        assert gone.returncode == 2 and "cannot reach the portal" in gone.stderr
    with PortalStore(folder) as db:
        actions = [r["action"] for r in db.audit_log()]
    assert actions.count("submission_received") == 3 and "api_refused" in actions


@pytest.mark.timeout(300)
def test_registration_with_an_invite_code(tmp_path: Path) -> None:
    folder = tmp_path / "lg"
    make_league(folder, ())
    with web_server(folder, "--submissions") as url:
        closed = Client(url).get("/register")
        assert closed.status == 404 and "registration is closed" in closed.body
        with PortalStore(folder) as db:
            code = db.add_invite()
        client = Client(url)
        csrf = client.csrf("/register")
        made = client.form("/register", {"csrf": csrf, "invite": code, "name": "carol"})
        assert made.status == 200, made.body
        token = made.body.split('<pre id="token">', 1)[1].split("</pre>", 1)[0]
        # Registering signed carol in with a new session (and its own CSRF token, as a sign-in).
        again = client.form("/register", {"csrf": client.csrf("/register"), "invite": code, "name": "dave"})
        assert again.status in (400, 404)
        signed = Client(url)
        assert signed.login(token).status == 303
        assert ">carol<" in signed.get("/me").body


def test_a_relative_league_folder_binds_its_snapshots_by_absolute_path(tmp_path: Path) -> None:
    """`hearts league run lg` (a relative folder) bound `lg/snapshots/...` into a sandbox whose
    bwrap starts in another folder: "Can't find source path"."""
    spec = spec_from_json({"name": "a@v1", "command": ["x"], "snapshot": "d" * 52}, Path("lg"))
    assert spec.snapshot is not None and spec.snapshot.is_absolute()
    assert spec.snapshot == Path.cwd() / "lg" / "snapshots" / ("d" * 52)


@pytest.mark.timeout(300)
def test_submissions_a_stopped_portal_never_checked_are_errors(tmp_path: Path) -> None:
    """An accepted archive lives in the portal's memory until it is unpacked: after a restart
    its submission cannot go on, and says so (it never stays pending)."""
    folder = tmp_path / "lg"
    tokens = make_league(folder, ("alice",))
    with PortalStore(folder) as db:
        waiting = db.add_submission("alice", 100, "127.0.0.1")
        checking = db.add_submission("alice", 100, "127.0.0.1")
        db.set_submission(checking, "validating", "checking it in the sandbox")
    with web_server(folder, "--submissions") as url:
        client = Client(url)
        for sid in (waiting, checking):
            data = client.api_status(tokens["alice"], sid).json()
            assert data["status"] == "error" and "stopped before it was checked" in data["message"], data
