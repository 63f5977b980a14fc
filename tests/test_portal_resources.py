"""What one entrant or one anonymous client can take from the real portal (``hearts web LEAGUE
--submissions``): memory and the queue while two entrants flood, the disk a failed submission
or an entrant's versions keep, a body longer than its headers say, and the audit log's rows.
Each test plays the attack of issue 36."""

from __future__ import annotations

import os
import random
import select
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from hearts_tournaments.portal.accounts import PortalStore
from hearts_tournaments.portal.intake import MAX_UPLOAD_BYTES
from tests.helpers.portal import (
    LOWEST,
    MANIFEST,
    Answer,
    Client,
    audit_count,
    begin_upload,
    filler,
    good_archive,
    make_league,
    memory,
    tar_gz,
    upload_body,
    wait_status,
)
from tests.helpers.web_server import web_process, web_server

MIB = 1024 * 1024
#: A bot that cannot play: the sandbox check fails it.
BROKEN = "import sys\nprint('no luck today', file=sys.stderr)\nsys.exit(3)\n"


def bot_archive(code: str, extra: bytes = b"", seed: int = 0) -> bytes:
    files = [("bot.toml", MANIFEST.encode()), ("bot.py", f"{code}\n# {seed}\n".encode())]
    return tar_gz([*files, ("data.bin", extra)] if extra else files, level=6)


def files_under(folder: Path) -> dict[str, int]:
    """Every file under ``folder`` but the databases (they grow by rows), with its size."""
    found = {}
    for root, _dirs, files in os.walk(folder):
        for name in files:
            path = Path(root) / name
            if ".sqlite" not in name:
                found[str(path.relative_to(folder))] = path.stat().st_size
    return found


@pytest.mark.timeout(300)
def test_one_entrant_holds_at_most_its_share_of_the_queue(tmp_path: Path) -> None:
    """Two entrants within their hourly limits filled the 20-slot queue, and an honest entrant got
    503. An upload holds its place from its first byte until it is checked: two per entrant."""
    folder = tmp_path / "lg"
    tokens = make_league(folder, ("alice", "carol"))
    with web_server(folder, "--submissions") as url:
        body, kind = upload_body(good_archive())
        held = []
        for _ in range(2):  # alice's two uploads, their bodies arriving slowly
            upload = begin_upload(url, body, kind, token=tokens["alice"])
            upload.send(body[:100])
            held.append(upload)
        third = Client(url).api_upload(tokens["alice"], good_archive())
        assert third.status == 429 and "2 uploads of yours" in third.json()["error"], third
        honest = Client(url).api_upload(tokens["carol"], good_archive())
        assert honest.status == 202, honest
        for upload in held:
            upload.send(body[100:])
            assert upload.answer().status == 202
            upload.close()


@pytest.mark.timeout(900)
def test_two_entrants_flooding_leave_the_portals_memory_bounded(tmp_path: Path) -> None:
    """Two entrants within their hourly limits took the portal from 102 MB to 1,727 MB: accepted
    archives were held unpacked in memory until checked, several at once. Each flood archive here
    unpacks to 60 MiB; the portal's peak resident memory must grow by less than one of them."""
    folder = tmp_path / "lg"
    tokens = make_league(folder, ("alice", "bob", "carol"))
    data = filler(60 * MIB, 0)
    floods = {name: bot_archive(BROKEN, data, seed) for seed, name in enumerate(("alice", "bob"))}
    with web_process(folder, "--submissions") as (url, process):
        client = Client(url)
        # Warm up: one whole submission loads everything a check needs.
        sid = client.api_upload(tokens["carol"], good_archive()).json()["id"]
        wait_status(client, tokens["carol"], sid, {"validating"})
        for _ in range(100):
            if client.api_status(tokens["carol"], sid).json()["version"] is not None:
                break
            time.sleep(0.5)
        before = memory(process.pid)
        answers: dict[str, list[tuple[int, Any]]] = {"alice": [], "bob": []}

        def flood(name: str, turn: int) -> None:
            for _ in range(6):  # 12 an hour per entrant: its whole allowance, two at a time
                answer = Client(url).api_upload(tokens[name], floods[name])
                answers[name].append((answer.status, answer.json()))

        threads = [threading.Thread(target=flood, args=(n, t)) for n in ("alice", "bob") for t in (0, 1)]
        for thread in threads:
            thread.start()
        honest = Client(url).api_upload(tokens["carol"], bot_archive(LOWEST, seed=7))
        for thread in threads:
            thread.join()
        assert honest.status == 202, honest
        taken = [(n, body["id"]) for n, got in answers.items() for status, body in got if status == 202]
        refused = {body["error"] for got in answers.values() for status, body in got if status != 202}
        assert taken and refused <= {
            "2 uploads of yours are arriving or waiting to be checked: send the next once one is checked"
        }, refused
        for name, sid in taken:
            wait_status(client, tokens[name], sid, {"error"})
        honest_done = wait_status(client, tokens["carol"], honest.json()["id"], {"validating", "error"})
        assert honest_done["status"] == "validating", honest_done
        after = memory(process.pid)
    grown = after["peak"] - before["rss"]
    print(
        f"portal memory: {before['rss'] / MIB:.0f} MiB before the flood, peak {after['peak'] / MIB:.0f} MiB"
    )
    assert grown < 60 * MIB, f"the portal's peak grew by {grown / MIB:.0f} MiB during the flood"


@pytest.mark.timeout(600)
def test_a_submission_that_fails_its_check_leaves_no_bytes(tmp_path: Path) -> None:
    """A submission that failed its check kept its files in ``snapshots/`` (41 MiB each, no quota)."""
    folder = tmp_path / "lg"
    tokens = make_league(folder, ("alice",))
    with web_server(folder, "--submissions") as url:
        client = Client(url)
        before = files_under(folder)
        sid = client.api_upload(tokens["alice"], bot_archive(BROKEN, filler(8 * MIB, 1))).json()["id"]
        done = wait_status(client, tokens["alice"], sid, {"error", "active"})
        assert done["status"] == "error" and "it cannot play" in done["message"], done
        assert "no luck today" in "\n".join(done["log"])  # its log's first lines are kept with it
        after = files_under(folder)
    grown = {path: size for path, size in after.items() if before.get(path) != size}
    assert grown == {}, f"a failed submission left {grown}"


@pytest.mark.timeout(600)
def test_an_entrants_stored_bytes_are_capped(tmp_path: Path) -> None:
    """Each entrant's versions may keep at most ``--entrant-storage-mb`` of the league's disk."""
    folder = tmp_path / "lg"
    tokens = make_league(folder, ("alice", "bob"))
    with web_server(folder, "--submissions", "--entrant-storage-mb", "1") as url:
        client = Client(url)
        first = client.api_upload(tokens["alice"], bot_archive(LOWEST, random.randbytes(600 * 1024), 1))
        assert first.status == 202, first
        # The second is refused whether or not the first is checked yet: it counts from its arrival.
        second = client.api_upload(tokens["alice"], bot_archive(LOWEST, random.randbytes(600 * 1024), 2))
        assert second.status == 413, second
        why = second.json()["error"]
        assert "alice's versions would hold" in why and "more than the 1 MiB an entrant may keep" in why, why
        sid = first.json()["id"]
        for _ in range(400):
            state = client.api_status(tokens["alice"], sid).json()
            if state["version"] is not None or state["status"] == "error":
                break
            time.sleep(0.5)
        assert state["version"] == "alice@v1", state
        assert (
            client.api_upload(tokens["alice"], bot_archive(LOWEST, random.randbytes(600 * 1024), 3)).status
            == 413
        )
        assert (
            client.api_upload(tokens["bob"], bot_archive(LOWEST, random.randbytes(600 * 1024), 4)).status
            == 202
        )


def _chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


@pytest.mark.timeout(300)
def test_a_body_is_read_no_further_than_its_cap_whatever_its_headers(tmp_path: Path) -> None:
    """A chunked upload with a small ``Content-Length`` was spooled to /tmp whole (210 MiB held
    before the 400). The client here sends four times the cap and watches for the portal's answer."""
    folder = tmp_path / "lg"
    tokens = make_league(folder, ("alice",))
    with web_process(folder, "--submissions") as (url, process):
        body, kind = upload_body(b"")
        head, tail = body[: body.index(b"\r\n\r\n") + 4], body[body.index(b"\r\n\r\n") + 4 :]
        chunked = {"Content-Length": "100", "Transfer-Encoding": "chunked"}
        try:
            upload = begin_upload(url, head, kind, token=tokens["alice"], headers=chunked)
        except AssertionError as refused_head:
            # uvicorn's HTTP parser (httptools) refuses a head with both a Content-Length and
            # chunked before the portal sees it (a smuggling defence, RFC 9112 6.3): no byte of
            # the body is read, and the portal goes on serving.
            assert "Invalid HTTP request" in str(refused_head), refused_head
            assert Client(url).api_upload(tokens["alice"], good_archive()).status == 202
            return
        upload.send(_chunk(head))
        sock = upload.sock
        sock.setblocking(False)
        block = os.urandom(MIB)
        total, answered = 4 * MAX_UPLOAD_BYTES, False
        while upload.sent < total and not answered:
            readable, writable, _ = select.select([sock], [sock], [], 60)
            if readable:
                answered = True
            elif writable:
                try:
                    upload.sent += sock.send(_chunk(block[: total - upload.sent]))
                except (BrokenPipeError, ConnectionError):
                    answered = True
        sock.setblocking(True)
        sent = upload.sent
        try:
            if not answered:  # the whole body went: end it, as a client that meant it would
                upload.send(_chunk(tail) + b"0\r\n\r\n")
            answer: Answer | None = upload.answer()
        except ConnectionError:  # closed before its answer could be read
            answer = None
        upload.close()
        peak = memory(process.pid)["peak"]
        # What the client sent beyond the cap is at most the sockets' buffers, never the body.
        assert sent < MAX_UPLOAD_BYTES + 16 * MIB, (
            f"the portal read {sent / MIB:.0f} MiB of a body capped at {MAX_UPLOAD_BYTES / MIB:.0f} MiB"
        )
        capped = f"more than {MAX_UPLOAD_BYTES >> 20} MiB"
        # Both a Content-Length and chunked: uvicorn's HTTP parser (httptools) may refuse such a
        # request itself, before the portal sees it (a smuggling defence, RFC 9112 6.3): a 400
        # that read nothing further. Otherwise the portal stops at its cap with a 413.
        by_parser = answer is not None and answer.status == 400 and "Invalid HTTP request" in answer.body
        if answer is not None and not by_parser:
            assert answer.status == 413 and capped in answer.json()["error"], answer
        assert Client(url).api_upload(tokens["alice"], good_archive()).status == 202
    print(
        f"sent {sent / MIB:.1f} MiB before the portal stopped reading; its peak memory {peak / MIB:.0f} MiB"
    )
    with PortalStore(folder) as db:
        refused = [r for r in db.audit_log() if r["action"] == "submission_refused"]
    if by_parser:
        assert refused == [], refused  # the portal never saw it
    else:
        assert len(refused) == 1 and capped in refused[0]["detail"], refused


@pytest.mark.timeout(600)
def test_anonymous_refusals_cost_a_bounded_number_of_audit_rows(tmp_path: Path) -> None:
    """Each anonymous refusal added an audit row, even over the rate limit (1,200 requests:
    +1,200 rows of about 3 KB each)."""
    folder = tmp_path / "lg"
    tokens = make_league(folder, ("alice",))
    with PortalStore(folder) as db:
        db.add_invite()
        start = len(db.audit_log())
    sent = {"api": 300, "login": 100, "cross-site": 50, "register": 50}
    with web_server(folder, "--submissions") as url:
        client = Client(url)
        for _ in range(sent["api"]):
            assert client.api_upload(WRONG_TOKEN, b"x").status in (401, 429)
        csrf = client.csrf()
        for _ in range(sent["login"]):
            assert client.form("/login", {"csrf": csrf, "token": WRONG_TOKEN}).status in (401, 429)
        for _ in range(sent["cross-site"]):
            assert client.form("/login", {"csrf": "forged", "token": WRONG_TOKEN}).status == 403
        csrf = client.csrf("/register")
        for _ in range(sent["register"]):
            refused = client.form("/register", {"csrf": csrf, "invite": "inv_wrong", "name": "x"})
            assert refused.status in (400, 429)
        assert Client(url, source="127.0.0.2").login(tokens["alice"]).status == 303  # the portal serves on
    with PortalStore(folder) as db:
        rows = db.audit_log()[start:]
    anonymous = [r for r in rows if r["actor"] == "?"]
    assert len(anonymous) <= 8, f"{len(anonymous)} audit rows for {sum(sent.values())} anonymous refusals"
    actions = {r["action"] for r in anonymous}
    assert sum(audit_count(anonymous, action) for action in actions) == sum(sent.values())


WRONG_TOKEN = "chp_000000000000.wrong"
