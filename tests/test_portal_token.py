"""The token page after registration: it says how to keep the token in a file for ``hearts submit
--token-file``, and it signs the new entrant in (its answer's cookie opens ``/me``)."""

from __future__ import annotations

import html
from pathlib import Path

import pytest

from hearts_tournaments.portal.accounts import PortalStore
from tests.helpers.portal import Client, make_league
from tests.helpers.web_server import web_server


@pytest.mark.timeout(300)
def test_the_token_page_names_the_file_command_and_signs_the_entrant_in(tmp_path: Path) -> None:
    folder = tmp_path / "lg"
    make_league(folder, ("alice",))
    with PortalStore(folder) as db:
        code = db.add_invite()
    with web_server(folder, "--submissions") as url:
        client = Client(url)
        assert client.get("/me").status in (302, 303, 307)  # nobody signed in yet
        made = client.form("/register", {"csrf": client.csrf("/register"), "invite": code, "name": "carol"})
        assert made.status == 200, made.body
        text = html.unescape(made.body)
        token = text.split('<pre id="token">', 1)[1].split("</pre>", 1)[0].strip()
        with PortalStore(folder) as db:
            assert db.authenticate(token) is not None
        # The file command, ready to paste, and how hearts submit reads it.
        assert "(umask 077; cat > ~/.comp-token)" in text
        assert f"hearts submit --token-file ~/.comp-token {url} mybot/" in text
        # Signed in by that answer: its cookie opens /me, no token typed again.
        assert client.cookie is not None
        mine = client.get("/me")
        assert mine.status == 200 and "carol" in mine.body, (mine.status, mine.body[:300])
        # A stranger's cookie-less client is still sent to sign in.
        assert Client(url).get("/me").status in (302, 303, 307)
