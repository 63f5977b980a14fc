"""Accounts and sessions under attack, against the real portal (``hearts web LEAGUE --submissions``):
names taken from an entrant or an account, sign-out, a token ended while an upload arrives, a
body that never arrives, and guessed Bearer tokens. Each test plays the attack of issue 36."""

from __future__ import annotations

import subprocess
import urllib.parse
from collections.abc import Callable
from pathlib import Path

import pytest

from hearts_tournaments.league.store import LeagueStore
from hearts_tournaments.portal.accounts import PortalStore
from tests.helpers.cli import hearts
from tests.helpers.portal import (
    Answer,
    Client,
    RawUpload,
    begin_upload,
    good_archive,
    make_league,
    upload_body,
)
from tests.helpers.web_server import web_server

WRONG = "chp_000000000000.wrong"


def _one_line_refusal(done: subprocess.CompletedProcess[str], said: str) -> None:
    assert done.returncode == 2, done
    assert said in done.stderr and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, (
        done.stderr
    )


@pytest.mark.timeout(600)
def test_a_name_an_entrant_or_an_account_holds_ignoring_case_cannot_be_registered(tmp_path: Path) -> None:
    """The invite took over the organiser's entrant: ``/register`` with the name ``house`` made an
    account whose uploads became ``house@v2`` and retired the organiser's ``house@v1``; and
    ``ALICE`` beside ``alice`` was accepted."""
    folder = tmp_path / "lg"
    make_league(folder, ("alice",))  # and the organiser's built-in entrant "house"
    with web_server(folder, "--submissions") as url:
        with PortalStore(folder) as db:
            code = db.add_invite()
        client = Client(url)
        csrf = client.csrf("/register")
        for name in ("house", "HOUSE", "alice", "Alice"):
            refused = client.form("/register", {"csrf": csrf, "invite": code, "name": name})
            assert refused.status == 400 and "is taken" in refused.body, (name, refused.status, refused.body)
        # The refusals did not spend the invite.
        made = client.form("/register", {"csrf": csrf, "invite": code, "name": "carol"})
        assert made.status == 200, made.body
    with PortalStore(folder) as db:
        assert [a.name for a in db.accounts()] == ["alice", "carol"]
        assert db.open_invites() == 0
    with LeagueStore.open(folder, read_only=True) as store:
        assert [v.id for v in store.versions(entrant="house")] == ["house@v1"]
    # The organiser is held to it too: an account named as an account or an entrant but for case,
    # an entrant named as an account but for case.
    _one_line_refusal(hearts("league", "entrant", "add", str(folder), "ALICE"), "is taken")
    _one_line_refusal(hearts("league", "entrant", "add", str(folder), "House"), "is taken")
    _one_line_refusal(hearts("league", "add", str(folder), "Carol", "--builtin", "random"), "is taken")
    assert hearts("league", "add", str(folder), "HOUSE", "--builtin", "random").returncode == 2
    # An account's own entrant, and an account for the organiser's own entrant, are the same name.
    own = hearts("league", "add", str(folder), "carol", "--builtin", "random")
    assert own.returncode == 0, own.stderr
    given = hearts("league", "entrant", "add", str(folder), "house")
    assert given.returncode == 0, given.stderr


@pytest.mark.timeout(300)
def test_signing_out_ends_the_session_for_every_copy_of_its_cookie(tmp_path: Path) -> None:
    """The cookie was the whole session: a copy still opened ``/me`` for 8 hours after sign-out."""
    folder = tmp_path / "lg"
    tokens = make_league(folder, ("alice",))
    with web_server(folder, "--submissions") as url:
        first = Client(url)
        assert first.login(tokens["alice"]).status == 303
        copy = Client(url, cookie=first.cookie)
        other = Client(url)  # another session of the same account (another browser)
        assert other.login(tokens["alice"]).status == 303
        assert copy.get("/me").status == 200
        csrf = first.csrf("/me")
        assert first.form("/logout", {"csrf": csrf}).status == 303
        assert first.get("/me").status == 303
        assert copy.get("/me").status == 303  # the copy is refused ...
        assert copy.get("/me/submissions/1.json").status == 401
        assert copy.upload(good_archive(), csrf).status == 401
        assert copy.form("/logout", {"csrf": csrf}).status in (303, 403)
        assert other.get("/me").status == 200  # ... the other session lives on
        with PortalStore(folder) as db:
            db.rotate("alice")  # and rotating the token ends every session
        assert other.get("/me").status == 303
    with PortalStore(folder) as db:
        assert db.submissions() == []


def _halves(
    upload: RawUpload, body: bytes, meanwhile: Callable[[PortalStore], object], folder: Path
) -> Answer:
    """Sends half the body, does ``meanwhile`` to the portal's database, sends the rest: the answer."""
    upload.send(body[: len(body) // 2])
    with PortalStore(folder) as db:
        meanwhile(db)
    upload.send(body[len(body) // 2 :])
    answer = upload.answer()
    upload.close()
    return answer


@pytest.mark.timeout(300)
def test_an_upload_whose_token_or_session_ends_while_it_arrives_is_refused(tmp_path: Path) -> None:
    """The token was checked before the body was read: an upload finished after revocation (or
    rotation) was accepted, and became the revoked entrant's next version."""
    folder = tmp_path / "lg"
    tokens = make_league(folder, ("alice", "bob"))
    with web_server(folder, "--submissions") as url:
        body, kind = upload_body(good_archive())
        upload = begin_upload(url, body, kind, token=tokens["alice"])  # the token was taken
        late = _halves(upload, body, lambda db: db.revoke("alice"), folder)
        assert late.status == 401 and "revoked" in late.json()["error"], late

        bob = Client(url)
        assert bob.login(tokens["bob"]).status == 303
        body, kind = upload_body(good_archive(), bob.csrf("/me"))
        upload = begin_upload(url, body, kind, cookie=bob.cookie)
        late = _halves(upload, body, lambda db: db.rotate("bob"), folder)
        assert late.status == 401 and "session ended" in late.body, late
    with PortalStore(folder) as db:
        assert db.submissions() == []
        refused = [r for r in db.audit_log() if r["action"] == "submission_refused"]
        assert len(refused) == 2, refused


@pytest.mark.timeout(300)
def test_a_body_not_arrived_in_time_is_refused(tmp_path: Path) -> None:
    """Nothing bounded how long a body took: an upload (or a sign-in form) half sent held its
    connection, and its token's check, for as long as the sender liked."""
    folder = tmp_path / "lg"
    tokens = make_league(folder, ("alice",))
    with web_server(folder, "--submissions", "--body-timeout", "2") as url:
        body, kind = upload_body(good_archive())
        upload = begin_upload(url, body, kind, token=tokens["alice"])
        upload.send(body[: len(body) // 2])  # and nothing more: the portal answers when its time is up
        slow = upload.answer()
        upload.close()
        assert slow.status == 408 and "within 2 s" in slow.json()["error"], slow

        client = Client(url)
        form = urllib.parse.urlencode({"csrf": client.csrf(), "token": tokens["alice"]}).encode()
        signin = RawUpload(
            url,
            "/login",
            {
                "Cookie": f"hearts_portal={client.cookie}",
                "Content-Type": "application/x-www-form-urlencoded",
                "Content-Length": str(len(form)),
            },
        )
        assert signin.continued() is None
        signin.send(form[:10])
        slow = signin.answer()
        signin.close()
        assert slow.status == 408 and "within 2 s" in slow.body, slow
        # The portal serves on, and a whole upload is taken.
        assert Client(url).api_upload(tokens["alice"], good_archive()).status == 202
    with PortalStore(folder) as db:
        assert len(db.submissions()) == 1


@pytest.mark.timeout(300)
def test_bearer_failures_are_limited_and_never_lock_out_the_right_token(tmp_path: Path) -> None:
    """Bearer authentication had no failure limit (200 wrong tokens at 290/s, never a 429), while
    the sign-in form's per-account limit let anyone who knew a token's selector lock its owner out."""
    folder = tmp_path / "lg"
    tokens = make_league(folder, ("alice",))
    with web_server(folder, "--submissions", "--login-limit", "5") as url:
        client = Client(url)
        statuses = [client.api_status(WRONG, 1).status for _ in range(7)]
        assert statuses == [401] * 5 + [429] * 2, statuses
        limited = client.api_upload(WRONG, good_archive())
        assert limited.status == 429 and "too many failed sign-ins from" in limited.json()["error"]
        # From an address over its limit even a right token waits: the failures are its own.
        assert client.api_status(tokens["alice"], 1).status == 429
        # Guesses at alice's token (its selector is all a guesser needs to aim at her), each
        # from another address, are counted together: the form's and the API's ...
        guess = tokens["alice"].split(".")[0] + ".wrong"
        tried = [Client(url, source=f"127.0.0.{i}").api_status(guess, 1).status for i in range(2, 6)]
        tried.append(Client(url, source="127.0.0.6").login(guess).status)
        tried.append(Client(url, source="127.0.0.7").api_status(guess, 1).status)
        tried.append(Client(url, source="127.0.0.8").login(guess).status)
        assert tried == [401] * 5 + [429] * 2, tried
        # ... and never refuse alice herself, by Bearer or by the form, from her own address.
        alice = Client(url, source="127.0.0.20")
        mine = alice.api_status(tokens["alice"], 1)
        assert mine.status == 404 and "no submission of yours" in mine.json()["error"]
        assert alice.login(tokens["alice"]).status == 303
        assert alice.get("/me").status == 200
