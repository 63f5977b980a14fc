"""Notifications an entrant subscribes to, against the real portal (``hearts web --submissions``)
over a league whose versions the real ``hearts league run`` validated: the Atom feed (signed in,
and by its secret URL without cookies), a webhook delivered to a real receiver on 127.0.0.1 with
a signature the test checks, and a rival's feed and notices out of reach."""

from __future__ import annotations

import html
import json
import re
import textwrap
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from hearts_tournaments.league import commands
from hearts_tournaments.league.store import LeagueStore
from tests.helpers.cli import hearts
from tests.helpers.portal import MANIFEST, Client, make_league, tar_gz, wait_status
from tests.helpers.receiver import receiver, verified

DOC = (Path(__file__).resolve().parent.parent / "docs" / "COMPETITION.md").read_text()
ATOM = "{http://www.w3.org/2005/Atom}"


def league_with_versions(folder: Path) -> dict[str, str]:
    """A league with accounts alice and bob, each with a built-in version validated by a real
    ``hearts league run`` (one block), and the season frozen: their tokens."""
    tokens = make_league(folder, ("alice", "bob"))
    with LeagueStore.open(folder) as store:
        commands.add_version(store, commands.make_spec("alice", None, "random"))
        commands.add_version(store, commands.make_spec("bob", None, "random"))
    done = hearts("league", "run", str(folder), "--blocks", "1", timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    frozen = hearts("league", "freeze", str(folder))
    assert frozen.returncode == 0, frozen.stdout + frozen.stderr
    return tokens


def parse_feed(body: str) -> tuple[ET.Element, list[dict[str, str]]]:
    """The feed's root and its entries (id, title, updated, link, content, category), checked
    to hold what Atom 1.0 requires."""
    root = ET.fromstring(body)
    assert root.tag == f"{ATOM}feed"
    for tag in ("id", "title", "updated"):
        assert (root.findtext(f"{ATOM}{tag}") or "").strip(), tag
    assert root.find(f"{ATOM}author/{ATOM}name") is not None
    entries = []
    for entry in root.findall(f"{ATOM}entry"):
        link = entry.find(f"{ATOM}link")
        category = entry.find(f"{ATOM}category")
        found = {
            "id": entry.findtext(f"{ATOM}id") or "",
            "title": entry.findtext(f"{ATOM}title") or "",
            "updated": entry.findtext(f"{ATOM}updated") or "",
            "content": entry.findtext(f"{ATOM}content") or "",
            "link": "" if link is None else link.get("href", ""),
            "event": "" if category is None else category.get("term", ""),
        }
        assert all(found.values()), found
        entries.append(found)
    assert [e["updated"] for e in entries] == sorted((e["updated"] for e in entries), reverse=True)
    assert len({e["id"] for e in entries}) == len(entries)
    return root, entries


@pytest.mark.timeout(900)
def test_the_feed_lists_a_version_going_active_and_its_secret_url_needs_no_cookie(tmp_path: Path) -> None:
    from tests.helpers.web_server import web_server

    folder = tmp_path / "lg"
    tokens = league_with_versions(folder)
    with web_server(folder, "--submissions") as url:
        anonymous = Client(url)
        assert anonymous.get("/me/feed.atom").status == 401
        alice = Client(url)
        assert alice.login(tokens["alice"]).status == 303
        answer = alice.get("/me/feed.atom")
        assert answer.status == 200, answer.body
        assert answer.headers["content-type"].startswith("application/atom+xml")
        _root, entries = parse_feed(answer.body)
        events = [(e["event"], e["title"]) for e in entries]
        assert ("version.active", "alice@v1 is active: it plays") in events, events
        assert events[0][0] == "season.frozen", events  # newest first: the freeze came after
        assert not [e for e in entries if "bob" in e["title"] + e["content"]], entries
        active = next(e for e in entries if e["event"] == "version.active")
        assert "passed its validation game" in active["content"]
        assert active["link"] == f"{url}/me"

        # The feed URL: made by the form (CSRF), shown once, read without any cookie.
        page = alice.get("/me").body
        assert 'id="notifications"' in page and "Make a feed URL" in page
        refused = alice.form("/me/feed", {"csrf": "wrong"})
        assert refused.status == 403
        made = alice.form("/me/feed", {"csrf": alice.csrf("/me")})
        assert made.status == 200, made.body
        feed_url = made.body.split('<pre id="feed-url">', 1)[1].split("</pre>", 1)[0]
        assert feed_url.startswith(f"{url}/feed/alice/") and feed_url.endswith(".atom")
        path = feed_url[len(url) :]
        reader = Client(url)
        read = reader.get(path)
        assert read.status == 200 and reader.cookie is None, read.body
        assert [e["id"] for e in parse_feed(read.body)[1]] == [e["id"] for e in entries]
        assert "New feed URL" in alice.get("/me").body
        token = path.removeprefix("/feed/alice/").removesuffix(".atom")
        # A wrong token, or alice's token on bob's feed: 404, nothing of the feed.
        assert reader.get(f"/feed/alice/{token[:-1]}x.atom").status == 404
        rival = reader.get(f"/feed/bob/{token}.atom")
        assert rival.status == 404 and "<feed" not in rival.body
        assert reader.get("/feed/nobody/x.atom").status == 404
        # Bob's own feed has his activation and not alice's.
        bob = Client(url)
        bob.login(tokens["bob"])
        bob_events = [e["title"] for e in parse_feed(bob.get("/me/feed.atom").body)[1]]
        assert "bob@v1 is active: it plays" in bob_events and not [t for t in bob_events if "alice" in t]
        # A new feed URL ends the old one.
        again = alice.form("/me/feed", {"csrf": alice.csrf("/me")})
        assert again.status == 200
        assert reader.get(path).status == 404

        # Without --dev-webhooks, a webhook to this machine is refused (one line); a form
        # without its CSRF token is refused before anything.
        assert alice.form("/me/webhook", {"url": "https://93.184.215.14/x"}).status == 403
        local = alice.form("/me/webhook", {"csrf": alice.csrf("/me"), "url": "http://127.0.0.1:9/hook"})
        assert local.status == 400 and "only https:// is accepted" in local.body, local.body
        private = alice.form("/me/webhook", {"csrf": alice.csrf("/me"), "url": "https://192.168.1.1/hook"})
        assert private.status == 400 and "private, loopback or reserved address" in private.body
        assert 'id="my-webhook"' not in alice.get("/me").body
        # The help page says it in short, its signature check the docs' own.
        help_page = anonymous.get("/help").body
        assert 'id="notifications"' in help_page and f"{url}/feed/NAME/TOKEN.atom" in help_page
        code = textwrap.dedent(
            re.findall(r"```python\n(.*?)```", DOC.split("### Notifications", 1)[1], flags=re.S)[0]
        )
        assert code.strip() in html.unescape(help_page)


@pytest.mark.timeout(900)
def test_a_webhook_gets_its_own_entrants_notices_signed(tmp_path: Path) -> None:
    from tests.helpers.web_server import web_server

    folder = tmp_path / "lg"
    tokens = make_league(folder, ("alice", "bob"))
    with LeagueStore.open(folder) as store:
        commands.add_version(store, commands.make_spec("alice", None, "random"))
        commands.add_version(store, commands.make_spec("bob", None, "random"))
    with (
        receiver() as got,
        receiver() as rival,
        web_server(folder, "--submissions", "--dev-webhooks") as url,
    ):
        alice = Client(url)
        alice.login(tokens["alice"])
        made = alice.form("/me/webhook", {"csrf": alice.csrf("/me"), "url": got.url})
        assert made.status == 200, made.body
        secret = made.body.split('<pre id="webhook-secret">', 1)[1].split("</pre>", 1)[0]
        assert secret.startswith("whsec_")
        assert f'<code id="my-webhook">{got.url}</code>' in alice.get("/me").body
        assert secret not in alice.get("/me").body  # shown once
        bob = Client(url)
        bob.login(tokens["bob"])
        bob_made = bob.form("/me/webhook", {"csrf": bob.csrf("/me"), "url": rival.url})
        bob_secret = bob_made.body.split('<pre id="webhook-secret">', 1)[1].split("</pre>", 1)[0]
        assert bob_secret != secret
        # A bot that cannot play fails the portal's check in the real sandbox: told.
        broken = tar_gz([("bot.toml", MANIFEST.encode()), ("bot.py", b"import sys\nsys.exit(3)\n")])
        sent = alice.api_upload(tokens["alice"], broken)
        assert sent.status == 202, sent.body
        wait_status(alice, tokens["alice"], sent.json()["id"], {"error"})
        refused = got.wait(1)
        # The real league validates both versions; then the season freezes.
        done = hearts("league", "run", str(folder), "--blocks", "1", timeout=600)
        assert done.returncode == 0, done.stdout + done.stderr
        got.wait(2)
        assert hearts("league", "freeze", str(folder)).returncode == 0
        posts = got.wait(3)
        assert posts[:1] == refused
        payloads = [json.loads(p.body) for p in posts]
        assert [(p["event"], p["entrant"], p["version"]) for p in payloads] == [
            ("version.error", "alice", None),
            ("version.active", "alice", "alice@v1"),
            ("season.frozen", "alice", None),
        ]
        assert payloads[0]["detail"].startswith("it cannot play"), payloads[0]
        assert payloads[1]["detail"] == "passed its validation game" and payloads[1]["account"] == "alice"
        for post in posts:
            assert post.path == "/hook" and post.headers["content-type"] == "application/json"
            assert verified(secret, post.body, post.headers["x-hearts-signature"])
            assert post.headers["x-hearts-delivery"].startswith("alice:")
        # The receiver has them; the portal records each once the answer is read: wait for that.
        deadline = time.monotonic() + 60
        while (page := alice.get("/me").body).count('data-status="delivered"') < 3:
            assert time.monotonic() < deadline, page
            time.sleep(0.2)
        assert page.count('data-status="delivered"') == 3
        # The feed tells the refused submission too.
        titles = [e["title"] for e in parse_feed(alice.get("/me/feed.atom").body)[1]]
        assert f"submission {sent.json()['id']} failed its check: it was not added" in titles, titles
        # Bob's receiver has his own, signed with his secret; nothing of alice's.
        bobs = rival.wait(2)
        assert [(json.loads(p.body)["event"], json.loads(p.body)["version"]) for p in bobs] == [
            ("version.active", "bob@v1"),
            ("season.frozen", None),
        ]
        assert all(json.loads(p.body)["account"] == "bob" for p in bobs)
        assert all(verified(bob_secret, p.body, p.headers["x-hearts-signature"]) for p in bobs)
        assert not verified(secret, bobs[0].body, bobs[0].headers["x-hearts-signature"])
        # Removing the webhook: nothing more is sent.
        removed = alice.form("/me/webhook", {"csrf": alice.csrf("/me"), "url": ""})
        assert removed.status == 303
        assert 'id="my-webhook"' not in alice.get("/me").body
    assert len(got.got) == 3 and len(rival.got) == 2
