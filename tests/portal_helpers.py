"""Shared by the portal tests and bench/portal.py: a league with accounts, archives, an HTTP client
that keeps the portal's session cookie by hand (it is ``Secure``: urllib's cookie jar would not
send it over plain HTTP to 127.0.0.1, as a browser does)."""

from __future__ import annotations

import contextlib
import http.client
import io
import json
import subprocess
import sys
import tarfile
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hearts_core.defaults import TablePolicy
from hearts_tournaments.league import commands
from hearts_tournaments.league.config import LeagueConfig
from hearts_tournaments.league.store import LeagueStore
from hearts_tournaments.portal.accounts import PortalStore
from hearts_tournaments.portal.client import multipart

ROOT = Path(__file__).resolve().parent.parent
LOWEST = (ROOT / "clients" / "stdio" / "lowest.py").read_text()
MANIFEST = 'command = ["python3", "bot.py"]\nprotocol = "stdio"\ndescription = "lowest legal card"\n'
#: Short games in the real sandbox: the tests are about the portal, not about play.
FAST = {
    "table_size": 6,
    "seed": "portal",
    "max_hands": 1,
    "policy": TablePolicy(decision_ms=5000),
    "bootstrap": 20,
}


def make_league(folder: Path, entrants: tuple[str, ...] = ("alice", "bob")) -> dict[str, str]:
    """A league with a built-in entrant ``house`` and accounts for ``entrants``; their tokens."""
    with commands.init_league(folder, LeagueConfig(**FAST), bytes(range(32))) as store:  # type: ignore[arg-type]
        commands.add_version(store, commands.make_spec("house", None, "random"))
    with PortalStore(folder) as portal:
        return {name: portal.add_account(name) for name in entrants}


def bot_folder(folder: Path) -> Path:
    """A small stdio Python bot with its bot.toml."""
    folder.mkdir(parents=True)
    (folder / "bot.py").write_text(LOWEST)
    (folder / "bot.toml").write_text(MANIFEST)
    return folder


def tar_gz(entries: list[tarfile.TarInfo | tuple[str, bytes]], level: int = 9) -> bytes:
    """A .tar.gz of ``entries``: (name, bytes) files, or prepared TarInfo headers (links, devices)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=level) as archive:
        for entry in entries:
            if isinstance(entry, tarfile.TarInfo):
                archive.addfile(entry)
            else:
                name, data = entry
                info = tarfile.TarInfo(name)
                info.size = len(data)
                info.mode = 0o644
                archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def good_archive() -> bytes:
    return tar_gz([("bot.toml", MANIFEST.encode()), ("bot.py", LOWEST.encode())])


@dataclass
class Answer:
    status: int
    body: str
    headers: dict[str, str]

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Client:
    """An HTTP client of the portal; ``cookie`` is the session cookie it keeps (None: none)."""

    url: str
    cookie: str | None = None
    extra: dict[str, str] = field(default_factory=dict)
    #: The address to connect from (127.0.0.2, ...: another client for the per-address limits).
    source: str | None = None

    def request(
        self, method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None
    ) -> Answer:
        sent = {**self.extra, **(headers or {})}
        if self.cookie is not None:
            sent["Cookie"] = f"hearts_portal={self.cookie}"
        parts = urllib.parse.urlsplit(self.url)
        source = None if self.source is None else (self.source, 0)
        connection = http.client.HTTPConnection(
            parts.hostname or "127.0.0.1", parts.port, timeout=120, source_address=source
        )
        try:
            connection.request(method, path, body=body, headers=sent)
            response = connection.getresponse()
            answer = Answer(
                response.status, response.read().decode("utf-8", "replace"), dict(response.getheaders())
            )
        finally:
            connection.close()
        for name, value in answer.headers.items():
            if name.lower() == "set-cookie" and value.startswith("hearts_portal="):
                self.cookie = value.split(";")[0].split("=", 1)[1] or None
        return answer

    def get(self, path: str) -> Answer:
        return self.request("GET", path)

    def form(self, path: str, fields: dict[str, str], headers: dict[str, str] | None = None) -> Answer:
        body = urllib.parse.urlencode(fields).encode()
        return self.request(
            "POST", path, body, {"Content-Type": "application/x-www-form-urlencoded", **(headers or {})}
        )

    def csrf(self, path: str = "/login") -> str:
        page = self.get(path).body
        return page.split('name="csrf" value="', 1)[1].split('"', 1)[0]

    def login(self, token: str) -> Answer:
        return self.form("/login", {"csrf": self.csrf(), "token": token})

    def upload(self, data: bytes, csrf: str | None, headers: dict[str, str] | None = None) -> Answer:
        body, kind = multipart("bot", "bot.tar.gz", data)
        if csrf is not None:
            body = (
                f"--{kind.split('=', 1)[1]}\r\n"
                f'Content-Disposition: form-data; name="csrf"\r\n\r\n{csrf}\r\n'.encode()
                + body
            )
        return self.request("POST", "/me/submit", body, {"Content-Type": kind, **(headers or {})})

    def api_upload(self, token: str, data: bytes) -> Answer:
        body, kind = multipart("bot", "bot.tar.gz", data)
        return self.request(
            "POST", "/api/submissions", body, {"Content-Type": kind, "Authorization": f"Bearer {token}"}
        )

    def api_status(self, token: str, sid: int) -> Answer:
        return self.request("GET", f"/api/submissions/{sid}", headers={"Authorization": f"Bearer {token}"})


def wait_status(
    client: Client, token: str, sid: int, wanted: set[str], timeout: float = 400
) -> dict[str, Any]:
    """Polls the API until the submission's status is one of ``wanted`` (the deadline only fails the test)."""
    deadline = time.monotonic() + timeout
    while True:
        data: dict[str, Any] = client.api_status(token, sid).json()
        if data["status"] in wanted:
            return data
        assert time.monotonic() < deadline, (
            f"submission {sid} still {data['status']} after {timeout} s: {data}"
        )
        time.sleep(0.5)


def blocks(folder: Path) -> int:
    with LeagueStore.open(folder, read_only=True) as store:
        return store.block_count()


@contextlib.contextmanager
def league_running(folder: Path) -> Iterator[subprocess.Popen[bytes]]:
    """``hearts league run FOLDER --forever`` in the background, stopped (SIGTERM) afterwards."""
    process = subprocess.Popen(
        [sys.executable, "-m", "hearts_tournaments", "league", "run", str(folder), "--forever"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=30)


def wait_blocks(folder: Path, count: int, process: subprocess.Popen[bytes], timeout: float = 400) -> None:
    deadline = time.monotonic() + timeout
    while blocks(folder) < count:
        assert process.poll() is None, "the league's run ended early"
        assert time.monotonic() < deadline, f"fewer than {count} blocks after {timeout} s"
        time.sleep(0.5)
