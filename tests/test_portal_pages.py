"""The portal's pages as a stranger meets them: the registration form checked by the browser itself
(Debian's Chromium driven by Playwright), JSON errors on every ``/api/`` path, Sign in / Register /
Help on the public pages, and the portal's own help page that its refusals point to.

The browser test is skipped without Chromium or Playwright, except under CI=true, where that fails.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hearts_tournaments.arena import runtimes
from hearts_tournaments.portal.accounts import PortalStore
from hearts_tournaments.portal.uploads import MAX_ARCHIVE_BYTES
from tests.helpers.browser import WAIT_MS
from tests.helpers.portal import LOWEST, Client, make_league, tar_gz, upload_body
from tests.helpers.web_server import web_server


@pytest.mark.timeout(600)
def test_the_browser_checks_a_name_and_a_refused_name_keeps_the_invite(browser: Any, tmp_path: Path) -> None:
    """The form's ``pattern`` did not compile under the ``v`` flag Chromium uses for it (an
    unescaped ``-`` in a class), so the browser checked nothing and sent ``bad name!``."""
    folder = tmp_path / "lg"
    make_league(folder, ("alice",))
    with PortalStore(folder) as db:
        code = db.add_invite()
    with web_server(folder, "--submissions") as url:
        page = browser.new_page(viewport={"width": 390, "height": 800})
        page.set_default_timeout(WAIT_MS)
        warnings: list[str] = []
        page.on("console", lambda message: warnings.append(message.text))
        page.goto(url + "/register")
        name = page.locator("#register input[name=name]")
        checked = {}
        for text in ("bad name!", "-dash", "x" * 41, "carol", "a-b.c_d"):
            name.fill(text)
            checked[text] = name.evaluate("e => e.validity.patternMismatch")
        assert checked == {"bad name!": True, "-dash": True, "x" * 41: True, "carol": False, "a-b.c_d": False}
        assert not [w for w in warnings if "pattern" in w], warnings
        # The browser refuses to send it: the page stays, nothing is posted.
        page.fill("#register input[name=invite]", code)
        name.fill("bad name!")
        page.click("#register button[type=submit]")
        assert page.url == url + "/register"
        # Sent anyway (another client), the portal refuses the name and the invite stays unspent.
        client = Client(url)
        csrf = client.csrf("/register")
        refused = client.form("/register", {"csrf": csrf, "invite": code, "name": "bad name!"})
        assert refused.status == 400, refused.body
        with PortalStore(folder) as db:
            assert db.open_invites() == 1
        made = client.form("/register", {"csrf": csrf, "invite": code, "name": "carol"})
        assert made.status == 200, made.body
    with PortalStore(folder) as db:
        assert db.open_invites() == 0 and db.account("carol") is not None


def _json_error(answer: Any, status: int) -> str:
    assert answer.status == status, (answer.status, answer.body)
    assert answer.headers.get("content-type", "").startswith("application/json"), answer.headers
    assert answer.body.count("\n") <= 1 and "<" not in answer.body, answer.body
    data = json.loads(answer.body)
    assert list(data) == ["error"] and isinstance(data["error"], str) and "\n" not in data["error"], data
    return str(data["error"])


@pytest.mark.timeout(600)
def test_api_errors_public_links_and_the_help_page(tmp_path: Path) -> None:
    folder = tmp_path / "lg"
    tokens = make_league(folder, ("alice",))
    with web_server(folder, "--submissions") as url:
        client = Client(url)
        # Every /api/ path answers JSON, known or not, whatever the method.
        _json_error(client.get("/api/nothing"), 404)
        _json_error(client.get("/api/submissions"), 405)
        _json_error(client.request("DELETE", "/api/submissions/1"), 405)
        _json_error(client.get("/api/submissions/1"), 401)
        bearer = {"Authorization": f"Bearer {tokens['alice']}"}
        _json_error(client.request("GET", "/api/submissions/999", headers=bearer), 404)
        _json_error(client.request("GET", "/api/x/y", headers=bearer), 404)

        # The public pages say where to sign in, register and read the rules of entry.
        for path in ("/", "/games", "/h2h", "/runtimes", "/login", "/no-such-page"):
            body = client.get(path).body
            for link in ('href="/login"', 'href="/register"', 'href="/help"'):
                assert link in body, (path, link)
        # Signed in, the portal's pages offer the entrant's own page instead, nowhere to sign in.
        client.login(tokens["alice"])
        for path in ("/me", "/runtimes", "/help"):
            body = client.get(path).body
            assert 'href="/me"' in body, path
            assert 'href="/login"' not in body and 'href="/register"' not in body, path

        # The portal's own help page: what an entrant needs and has not got (the docs folder).
        page = client.get("/help")
        assert page.status == 200
        for said in (
            "bot.toml",
            "command",
            "protocol",
            "runtime",
            "description",
            "stdio",
            "grpc",
            f"{MAX_ARCHIVE_BYTES >> 20} MiB",
            "decision",
            "hearts bot test",
            "hearts submit",
            "--check",
            *(str(state.to_json()["name"]) for state in runtimes.states(staleness=False)),
        ):
            assert said in page.body, said
        assert "COMPETITION.md" not in page.body

        # Its refusals point to it, not to a file entrants do not have.
        no_manifest = tar_gz([("bot.py", LOWEST.encode())])
        why = _json_error(client.api_upload(tokens["alice"], no_manifest), 400)
        assert "/help" in why and "COMPETITION.md" not in why, why
        bad_toml = tar_gz([("bot.toml", b"command = ["), ("bot.py", LOWEST.encode())])
        why = _json_error(client.api_upload(tokens["alice"], bad_toml), 400)
        assert "/help" in why and "COMPETITION.md" not in why, why
        # The form's refusal page links to it (alice signed in above).
        body, kind = upload_body(no_manifest, client.csrf("/me"))
        refused = client.request("POST", "/me/submit", body, {"Content-Type": kind})
        assert refused.status == 400 and 'href="/help"' in refused.body, refused.body
