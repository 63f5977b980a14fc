"""The hostile-upload suite, against the real portal (``hearts web LEAGUE --submissions``) while the
real ``hearts league run --forever`` plays: every hostile archive, token, cookie and form post is
refused with one line, nothing is written outside the league's snapshot store, and the league
plays on.
"""

from __future__ import annotations

import base64
import io
import json
import os
import secrets
import tarfile
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from itsdangerous import TimestampSigner

from hearts_tournaments.league import commands
from hearts_tournaments.league.store import LeagueStore
from hearts_tournaments.portal.accounts import PortalStore
from hearts_tournaments.portal.uploads import MAX_FILES, UploadError, check_archive
from tests.helpers.portal import (
    MANIFEST,
    Client,
    audit_count,
    good_archive,
    league_running,
    make_league,
    tar_gz,
    wait_blocks,
    wait_status,
)
from tests.helpers.web_server import web_server


def _link(name: str, target: str, kind: bytes = tarfile.SYMTYPE) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = target
    return info


def _device(name: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = tarfile.CHRTYPE
    info.devmajor, info.devminor = 1, 3  # /dev/null
    return info


def _many_files(count: int) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=1) as archive:
        info = tarfile.TarInfo("bot.toml")
        info.size = len(MANIFEST)
        archive.addfile(info, io.BytesIO(MANIFEST.encode()))
        for i in range(count):
            archive.addfile(tarfile.TarInfo(f"f/{i}"))
    return buffer.getvalue()


def _pax_bomb() -> bytes:
    """A small bot.toml whose pax header carries 100 MiB: no member is large, the stream is."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", format=tarfile.PAX_FORMAT, compresslevel=1) as archive:
        info = tarfile.TarInfo("bot.toml")
        info.size = len(MANIFEST)
        info.pax_headers = {"comment": "x" * (100 * 1024 * 1024)}
        archive.addfile(info, io.BytesIO(MANIFEST.encode()))
    return buffer.getvalue()


def _zip_of_many(count: int) -> bytes:
    """A zip whose central directory (read whole by zipfile) lists ``count`` empty files."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("bot.toml", MANIFEST)
        for i in range(count):
            archive.writestr(str(i), b"")
    return buffer.getvalue()


def _zip(entries: list[tuple[str, bytes, int]]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data, mode in entries:
            info = zipfile.ZipInfo(name)
            info.external_attr = mode << 16
            archive.writestr(info, data)
    return buffer.getvalue()


@pytest.fixture(scope="module")
def portal(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    root = tmp_path_factory.mktemp("hostile")
    folder = root / "lg"
    tokens = make_league(folder, ("alice", "bob", "eve"))
    with LeagueStore.open(folder) as store:  # two built-ins: the league plays from the start
        commands.add_version(store, commands.make_spec("rival", None, "heuristic"))
    with PortalStore(folder) as db:
        db.revoke("eve")
    with (
        league_running(folder) as run,
        web_server(folder, "--submissions", "--upload-limit", "1000", "--login-limit", "100") as url,
    ):
        wait_blocks(folder, 1, run)
        yield {"folder": folder, "url": url, "tokens": tokens, "run": run, "root": root}


HOSTILE = {
    "path traversal": (lambda t: tar_gz([("bot.toml", MANIFEST.encode()), ("../../evil.txt", b"x")]), "'..'"),
    "absolute path": (
        lambda t: tar_gz([("bot.toml", MANIFEST.encode()), (f"{t}/evil.txt", b"x")]),
        "absolute path",
    ),
    "symlink to the league database": (
        lambda t: tar_gz([("bot.toml", MANIFEST.encode()), _link("db", t + "/lg/league.sqlite")]),
        "a link",
    ),
    "hard link": (
        lambda t: tar_gz([("bot.toml", MANIFEST.encode()), _link("db", "bot.toml", tarfile.LNKTYPE)]),
        "a link",
    ),
    "device file": (lambda t: tar_gz([("bot.toml", MANIFEST.encode()), _device("null")]), "a device"),
    "archive bomb (ratio)": (
        lambda t: tar_gz([("bot.toml", MANIFEST.encode()), ("zeros", bytes(20 * 1024 * 1024))], level=9),
        "archive bomb",
    ),
    "archive bomb (size)": (
        lambda t: tar_gz([("bot.toml", MANIFEST.encode()), ("zeros", bytes(65 * 1024 * 1024))], level=1),
        "unpacks to more than 64 MiB",
    ),
    "archive bomb (a pax header)": (lambda t: _pax_bomb(), "a tar header over 64 KiB"),
    "100,000 tiny files": (lambda t: _many_files(100_000), f"more than {MAX_FILES} entries"),
    "zip of 50,000 entries": (lambda t: _zip_of_many(50_000), f"more than {MAX_FILES} entries"),
    "oversized manifest": (
        lambda t: tar_gz([("bot.toml", (MANIFEST + "#" * 5000 + "\n").encode()), ("bot.py", b"")]),
        "bot.toml is",
    ),
    "no manifest": (lambda t: tar_gz([("bot.py", b"print(1)")]), "no bot.toml"),
    "manifest with unknown keys": (
        lambda t: tar_gz([("bot.toml", MANIFEST.encode() + b'sandbox = "none"\n')]),
        "unknown keys sandbox",
    ),
    "manifest not TOML": (lambda t: tar_gz([("bot.toml", b"command = [")]), "not valid TOML"),
    "zip with a symlink": (
        lambda t: _zip([("bot.toml", MANIFEST.encode(), 0o100644), ("db", t.encode(), 0o120777)]),
        "a link",
    ),
    "zip with '..'": (
        lambda t: _zip([("bot.toml", MANIFEST.encode(), 0o100644), ("../x", b"x", 0o100644)]),
        "'..'",
    ),
    "not an archive": (lambda t: secrets.token_bytes(3000), "does not read as tar or zip"),
}


@pytest.mark.timeout(900)
def test_hostile_archives_are_refused_with_one_line(portal: dict[str, Any]) -> None:
    folder: Path = portal["folder"]
    root = str(portal["root"])
    client = Client(portal["url"])
    token = portal["tokens"]["alice"]
    store = folder / "snapshots"
    before_store = sorted(os.listdir(store)) if store.exists() else []
    before_root = sorted(os.listdir(portal["root"]))
    db_bytes = (folder / "league.sqlite").stat().st_size
    played = _blocks(folder)
    for case, (make, said) in HOSTILE.items():
        data = make(root)
        answer = client.api_upload(token, data)
        assert answer.status in (400, 413), (case, answer.status, answer.body)
        why = answer.json()["error"]
        assert said in why, (case, why)
        assert "\n" not in why and "Traceback" not in why, (case, why)
        with pytest.raises(UploadError):  # the same check, in process
            check_archive(data)
    assert not (portal["root"] / "evil.txt").exists() and not Path("/evil.txt").exists()
    assert sorted(os.listdir(portal["root"])) == before_root
    assert (sorted(os.listdir(store)) if store.exists() else []) == before_store  # nothing stored
    assert (folder / "league.sqlite").stat().st_size >= db_bytes and not (
        folder / "league.sqlite"
    ).is_symlink()
    with PortalStore(folder) as db:
        assert db.submissions("alice") == []  # none got as far as a submission
        refused = [r for r in db.audit_log() if r["action"] == "submission_refused"]
        assert len(refused) == len(HOSTILE)
    # The league played on meanwhile, and goes on playing.
    wait_blocks(folder, played + 1, portal["run"])
    # A good archive is still taken, checked in the sandbox and made alice's version.
    sid = client.api_upload(token, good_archive()).json()["id"]
    done = wait_status(client, token, sid, {"active", "error"})
    assert done["status"] == "active", done
    assert done["version"] == "alice@v1"


def _blocks(folder: Path) -> int:
    with LeagueStore.open(folder, read_only=True) as store:
        return store.block_count()


@pytest.mark.timeout(600)
def test_wrong_revoked_and_rival_tokens(portal: dict[str, Any]) -> None:
    client = Client(portal["url"])
    tokens = portal["tokens"]
    for token in ("chp_000000000000.nothing", "nonsense", tokens["eve"], tokens["alice"] + "x"):
        answer = client.api_upload(token, good_archive())
        assert answer.status == 401 and "wrong, rotated or revoked" in answer.json()["error"], token
        login = Client(portal["url"])
        refused = login.login(token)
        assert refused.status == 401 and "wrong, rotated or revoked" in refused.body
        assert login.get("/me").status == 303  # no session was made
    # bob's token acts as bob only: alice's submissions are not his to see.
    sid = client.api_upload(tokens["alice"], tar_gz([("bot.toml", b'command = ["nothere"]\n')])).json()["id"]
    wait_status(client, tokens["alice"], sid, {"error"})
    rival = client.api_status(tokens["bob"], sid)
    assert rival.status == 404 and "no submission of yours" in rival.json()["error"]
    bob = Client(portal["url"])
    assert bob.login(tokens["bob"]).status == 303
    assert bob.get(f"/me/submissions/{sid}").status == 404
    assert bob.get(f"/me/submissions/{sid}.json").status == 404
    assert bob.get("/me/files/house@v1").status == 403
    with LeagueStore.open(portal["folder"], read_only=True) as store:
        key, _block, _v, data = next(g for g in store.games() if g[1] is not None)
    seat = data["seats"].index(next(s for s in data["seats"] if s.startswith(("house", "rival"))))
    rival_log = bob.get(f"/me/log/{key}/{seat}")
    assert rival_log.status == 403 and "not your bot's" in rival_log.body
    # The public pages show no bot log at all while the portal serves the league.
    public = Client(portal["url"]).get(f"/bot/{data['seats'][seat].replace('@', '%40')}")
    assert public.status == 200 and f"{key}-s" not in public.body


@pytest.mark.timeout(300)
def test_forged_cookie_and_cross_site_posts(portal: dict[str, Any]) -> None:
    url = portal["url"]
    # A cookie signed with another key, claiming to be alice's session.
    with PortalStore(portal["folder"]) as db:
        selector = db.account("alice").selector  # type: ignore[union-attr]
    claim = base64.b64encode(json.dumps({"who": "alice", "sel": selector, "csrf": "x"}).encode())
    forged = TimestampSigner(secrets.token_hex(32)).sign(claim).decode()
    intruder = Client(url, cookie=forged)
    assert intruder.get("/me").status == 303
    assert intruder.get("/me/submissions/1.json").status == 401
    assert intruder.upload(good_archive(), "x").status == 401
    # An unsigned cookie, edited by hand.
    assert Client(url, cookie=claim.decode()).get("/me").status == 303

    alice = Client(url)
    assert alice.login(portal["tokens"]["alice"]).status == 303
    before = len(_submissions(portal["folder"]))
    csrf = alice.csrf("/me")
    # A cross-site form post: the browser sends the cookie (were it not SameSite) but not the token.
    assert alice.upload(good_archive(), None).status == 403
    assert alice.upload(good_archive(), "wrong").status == 403
    other_site = alice.upload(good_archive(), csrf, {"Origin": "http://evil.example"})
    assert other_site.status == 403 and "posted from http://evil.example" in other_site.body
    assert alice.form("/logout", {"csrf": "wrong"}).status == 403
    assert len(_submissions(portal["folder"])) == before  # none was taken
    # Sign-in itself is a protected form too.
    fresh = Client(url)
    fresh.csrf()
    assert fresh.form("/login", {"csrf": "wrong", "token": portal["tokens"]["alice"]}).status == 403
    # The session cookie: HttpOnly, SameSite=Strict, Secure.
    signin = Client(url)
    answer = signin.form("/login", {"csrf": signin.csrf(), "token": portal["tokens"]["alice"]})
    cookie = answer.headers["set-cookie"].lower()
    page = signin.get("/me")
    assert page.headers["x-frame-options"] == "DENY"  # the forms cannot be clicked through a frame
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    assert "httponly" in cookie and "samesite=strict" in cookie and "secure" in cookie


def _submissions(folder: Path) -> list[Any]:
    with PortalStore(folder) as db:
        return db.submissions()


@pytest.mark.timeout(300)
def test_rate_limits(tmp_path: Path) -> None:
    folder = tmp_path / "lg"
    tokens = make_league(folder, ("alice", "bob"))
    limits = ("--upload-limit", "2", "--upload-address-limit", "3", "--login-limit", "3")
    with web_server(folder, "--submissions", *limits) as url:
        for _ in range(3):
            assert Client(url).login("chp_000000000000.wrong").status == 401
        limited = Client(url).login(tokens["alice"])  # even the right token: the failures are this address's
        assert limited.status == 429 and "too many failed sign-ins from 127.0.0.1" in limited.body
        # Another address has a budget of its own ...
        assert Client(url, source="127.0.0.2").login(tokens["alice"]).status == 303
        # ... and guesses at one account's token are counted across addresses, without ever
        # refusing the account's own token.
        guess = tokens["alice"].split(".")[0] + ".wrong"
        for source in ("127.0.0.3", "127.0.0.4", "127.0.0.5"):
            assert Client(url, source=source).login(guess).status == 401
        per_account = Client(url, source="127.0.0.6").login(guess)
        assert per_account.status == 429 and "for this account" in per_account.body
        assert Client(url, source="127.0.0.7").login(tokens["alice"]).status == 303
        client = Client(url, source="127.0.0.8")  # an address with no failed sign-ins
        bad = tar_gz([("bot.py", b"")])
        assert client.api_upload(tokens["alice"], bad).status == 400
        assert client.api_upload(tokens["alice"], bad).status == 400
        third = client.api_upload(tokens["alice"], good_archive())
        assert third.status == 429 and "too many uploads" in third.json()["error"]
        # Per address: bob's first upload from this address is its fourth; from another, fine.
        assert client.api_upload(tokens["bob"], bad).status == 400
        crowded = client.api_upload(tokens["bob"], bad)
        assert crowded.status == 429 and "3 per address" in crowded.json()["error"]
        assert Client(url, source="127.0.0.9").api_upload(tokens["bob"], bad).status == 400
    with PortalStore(folder) as db:
        rows = db.audit_log()
    assert audit_count(rows, "login_failed") == 6 and audit_count(rows, "login_limited") == 2
    assert {r["address"] for r in rows if r["action"] == "login"} == {"127.0.0.2", "127.0.0.7"}
