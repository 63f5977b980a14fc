"""The portal's accounts: tokens shown once and stored hashed, rotation, revocation, invites, audit."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from hearts_tournaments.portal.accounts import PORTAL_DB, PortalError, PortalStore
from tests.helpers.cli import hearts


def league(tmp_path: Path) -> Path:
    folder = tmp_path / "lg"
    assert hearts("league", "init", str(folder)).returncode == 0
    return folder


def test_entrant_commands_print_a_token_once_and_store_it_hashed(tmp_path: Path) -> None:
    folder = league(tmp_path)
    added = hearts("league", "entrant", "add", str(folder), "alice")
    assert added.returncode == 0, added.stderr
    token = added.stdout.splitlines()[-1]
    assert token.startswith("chp_")
    with PortalStore(folder) as portal:
        account = portal.authenticate(token)
        assert account is not None and account.name == "alice"
        assert portal.authenticate(token + "x") is None
        assert portal.authenticate("chp_" + "0" * 12 + ".nope") is None
    raw = (folder / PORTAL_DB).read_bytes()
    secret = token.split(".", 1)[1]
    assert secret.encode() not in raw and token.encode() not in raw
    assert (folder / PORTAL_DB).stat().st_mode & 0o077 == 0

    again = hearts("league", "entrant", "add", str(folder), "alice")
    assert (
        again.returncode == 2 and again.stderr.count("\n") == 1 and "has an account already" in again.stderr
    )

    rotated = hearts("league", "entrant", "rotate", str(folder), "alice")
    assert rotated.returncode == 0, rotated.stderr
    new = rotated.stdout.splitlines()[-1]
    with PortalStore(folder) as portal:
        assert portal.authenticate(token) is None  # the old token stopped working
        live = portal.authenticate(new)
        assert live is not None and portal.session_valid("alice", live.selector)
        old_selector = token[4:16]
        assert not portal.session_valid("alice", old_selector)

    assert hearts("league", "entrant", "revoke", str(folder), "alice").returncode == 0
    with PortalStore(folder) as portal:
        assert portal.authenticate(new) is None
    twice = hearts("league", "entrant", "revoke", str(folder), "alice")
    assert twice.returncode == 2 and "revoked already" in twice.stderr
    missing = hearts("league", "entrant", "rotate", str(folder), "bob")
    assert (
        missing.returncode == 2 and "no account 'bob'" in missing.stderr and "Traceback" not in missing.stderr
    )
    bad = hearts("league", "entrant", "add", str(folder), "../x")
    assert bad.returncode == 2 and "a name is letters" in bad.stderr
    nowhere = hearts("league", "entrant", "add", str(tmp_path / "none"), "x")
    assert nowhere.returncode == 2 and "holds no league" in nowhere.stderr

    listed = [
        json.loads(line) for line in hearts("league", "entrant", "list", str(folder)).stdout.splitlines()
    ]
    assert [(r["entrant"], r["revoked"]) for r in listed] == [("alice", True)]
    actions = [
        json.loads(line)["action"]
        for line in hearts("league", "entrant", "audit", str(folder)).stdout.splitlines()
    ]
    assert actions == ["account_added", "token_rotated", "account_revoked"]


def test_an_invite_code_makes_one_account(tmp_path: Path) -> None:
    folder = league(tmp_path)
    made = hearts("league", "invite", str(folder))
    assert made.returncode == 0, made.stderr
    code = made.stdout.splitlines()[-1]
    with PortalStore(folder) as portal:
        assert portal.open_invites() == 1
        token = portal.register(code, "carol", "127.0.0.1")
        assert portal.authenticate(token) is not None
        assert portal.open_invites() == 0
        for wrong in (code, code[:-2] + "xx", "inv_nothing"):
            try:
                portal.register(wrong, "dave", "127.0.0.1")
            except PortalError as exc:
                assert "wrong or used" in str(exc)
            else:
                raise AssertionError(f"{wrong!r} registered an account")
        assert portal.account("dave") is None
    with sqlite3.connect(folder / PORTAL_DB) as db:
        assert code.split(".", 1)[1] not in json.dumps(
            db.execute("SELECT * FROM invites").fetchall(), default=str
        )
