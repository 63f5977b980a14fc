"""Shared by the portal tests and bench/portal.py: a league with accounts, archives, an HTTP client
that keeps the portal's session cookie by hand (it is ``Secure``: urllib's cookie jar would not
send it over plain HTTP to 127.0.0.1, as a browser does)."""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import io
import json
import random
import socket
import subprocess
import sys
import tarfile
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import uvicorn

from hearts_core.defaults import TablePolicy
from hearts_tournaments.league import commands
from hearts_tournaments.league.config import LeagueConfig
from hearts_tournaments.league.store import LeagueStore
from hearts_tournaments.portal.accounts import PortalStore
from hearts_tournaments.portal.client import multipart
from tests.helpers.web_server import stop
from tests.helpers.web_store import play_league

if TYPE_CHECKING:
    from hearts_tournaments.portal.app import Portal

ROOT = Path(__file__).resolve().parents[2]
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


def make_league(
    folder: Path, entrants: tuple[str, ...] = ("alice", "bob"), house: str = "random"
) -> dict[str, str]:
    """A league with a built-in entrant ``house`` (playing the built-in bot ``house``) and accounts
    for ``entrants``; their tokens."""
    with commands.init_league(folder, LeagueConfig(**FAST), bytes(range(32))) as store:  # type: ignore[arg-type]
        commands.add_version(store, commands.make_spec("house", None, house))
    with PortalStore(folder) as portal:
        return {name: portal.add_account(name) for name in entrants}


def bot_folder(folder: Path) -> Path:
    """A small stdio Python bot with its bot.toml."""
    folder.mkdir(parents=True)
    (folder / "bot.py").write_text(LOWEST)
    (folder / "bot.toml").write_text(MANIFEST)
    return folder


def tar_gz(entries: Sequence[tarfile.TarInfo | tuple[str, bytes]], level: int = 9) -> bytes:
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


def filler(size: int, seed: int) -> bytes:
    """``size`` bytes that gzip shrinks about 40 times (no archive bomb): 16 random bytes a KiB."""
    rng = random.Random(seed)
    return b"".join(rng.randbytes(16) + bytes(1008) for _ in range(size // 1024))


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
        body, kind = upload_body(data, csrf)
        return self.request("POST", "/me/submit", body, {"Content-Type": kind, **(headers or {})})

    def api_upload(self, token: str, data: bytes) -> Answer:
        body, kind = multipart("bot", "bot.tar.gz", data)
        return self.request(
            "POST", "/api/submissions", body, {"Content-Type": kind, "Authorization": f"Bearer {token}"}
        )

    def api_status(self, token: str, sid: int) -> Answer:
        return self.request("GET", f"/api/submissions/{sid}", headers={"Authorization": f"Bearer {token}"})


class RawUpload:
    """A POST sent by hand over one connection: its headers first, with ``Expect: 100-continue``
    (uvicorn answers ``100 Continue`` once the route starts reading the body, after everything it
    checks before), then its body in parts, then the answer read."""

    def __init__(self, url: str, path: str, headers: dict[str, str], source: str | None = None) -> None:
        parts = urllib.parse.urlsplit(url)
        bound = None if source is None else (source, 0)
        self.sock = socket.create_connection(
            (parts.hostname or "127.0.0.1", parts.port or 80), timeout=120, source_address=bound
        )
        head = f"POST {path} HTTP/1.1\r\nHost: {parts.netloc}\r\nExpect: 100-continue\r\n"
        head += "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        self.sock.sendall(head.encode() + b"\r\n")
        self.buffer = b""
        self.sent = 0

    def continued(self) -> Answer | None:
        """Waits for the portal's first answer: None for ``100 Continue``, else its final answer."""
        status, headers = self._head()
        if status == 100:
            return None
        return self._rest(status, headers)

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)
        self.sent += len(data)

    def answer(self) -> Answer:
        """The final answer (after a ``100 Continue``, if one came)."""
        status, headers = self._head()
        while status == 100:
            status, headers = self._head()
        return self._rest(status, headers)

    def close(self) -> None:
        self.sock.close()

    def _head(self) -> tuple[int, dict[str, str]]:
        while b"\r\n\r\n" not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError(f"the portal closed the connection before answering: {self.buffer!r}")
            self.buffer += chunk
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        return int(lines[0].split()[1]), headers

    def _rest(self, status: int, headers: dict[str, str]) -> Answer:
        length = int(headers.get("content-length", "0"))
        while len(self.buffer) < length:
            chunk = self.sock.recv(65536)
            if not chunk:
                break
            self.buffer += chunk
        body, self.buffer = self.buffer[:length], self.buffer[length:]
        return Answer(status, body.decode("utf-8", "replace"), headers)


def begin_upload(
    url: str,
    body: bytes,
    kind: str,
    token: str | None = None,
    cookie: str | None = None,
    headers: dict[str, str] | None = None,
) -> RawUpload:
    """An upload to the API (with ``token``) or the form (with the session ``cookie``) whose headers
    are sent and whose body the portal has begun to read (its ``100 Continue`` came): send the body
    next."""
    sent = {"Content-Type": kind, "Content-Length": str(len(body))}
    if token is not None:
        path, sent["Authorization"] = "/api/submissions", f"Bearer {token}"
    else:
        path, sent["Cookie"] = "/me/submit", f"hearts_portal={cookie}"
    upload = RawUpload(url, path, {**sent, **(headers or {})})
    refused = upload.continued()
    assert refused is None, refused
    return upload


def upload_body(data: bytes, csrf: str | None = None) -> tuple[bytes, str]:
    """The multipart body of an upload of ``data`` (with the form's CSRF field first, if given)."""
    body, kind = multipart("bot", "bot.tar.gz", data)
    if csrf is not None:
        body = (
            f"--{kind.split('=', 1)[1]}\r\n"
            f'Content-Disposition: form-data; name="csrf"\r\n\r\n{csrf}\r\n'.encode()
            + body
        )
    return body, kind


def memory(pid: int) -> dict[str, int]:
    """A process's resident memory now (``rss``) and at its peak (``peak``), in bytes (/proc)."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            fields["rss" if name == "VmRSS" else "peak"] = int(value.split()[0]) * 1024
    return fields


def audit_count(rows: list[dict[str, Any]], action: str) -> int:
    """How many times ``action`` is in the audit log: refusals are counted in one row (``count``)."""
    total = 0
    for row in rows:
        if row["action"] == action:
            try:
                detail = json.loads(row["detail"])
            except ValueError:
                detail = None
            total += int(detail.get("count", 1)) if isinstance(detail, dict) else 1
    return total


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
def portal_in_process(folder: Path) -> Iterator[tuple[str, Portal]]:
    """The portal over the league in ``folder`` served in this process, as ``hearts web FOLDER
    --submissions`` serves it (uvicorn on 127.0.0.1, a free port; its worker and notifier
    started): its base URL and its state, whose ``clock`` a test may replace. Stopped afterwards."""
    from hearts_tournaments.portal.app import make_portal_app

    app, portal = make_portal_app(folder)
    sock = socket.create_server(("127.0.0.1", 0))
    sock.setblocking(False)
    config = uvicorn.Config(
        app, log_config=None, access_log=False, lifespan="off", timeout_graceful_shutdown=1
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])), daemon=True)
    portal.worker.start()
    portal.notifier.start()
    thread.start()
    try:
        deadline = time.monotonic() + 120
        while not server.started:
            assert thread.is_alive(), "the portal's server ended before it started"
            assert time.monotonic() < deadline, "the portal's server did not start in 120 s"
            time.sleep(0.05)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}", portal
    finally:
        server.should_exit = True
        thread.join(timeout=60)
        sock.close()
        portal.notifier.stop()
        portal.worker.stop()
        assert not thread.is_alive(), "the portal's server did not stop"


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
        stop(process, 60)


def wait_blocks(folder: Path, count: int, process: subprocess.Popen[bytes], timeout: float = 400) -> None:
    deadline = time.monotonic() + timeout
    while blocks(folder) < count:
        assert process.poll() is None, "the league's run ended early"
        assert time.monotonic() < deadline, f"fewer than {count} blocks after {timeout} s"
        time.sleep(0.5)


def played_league(
    folder: Path,
    bot: Path,
    entrants: int = 22,
    blocks: int = 30,
    ms: Callable[[str], float] = lambda vid: 12.5,
    faults: dict[str, int] | None = None,
    max_hands: int = 1,
) -> dict[str, str]:
    """A league of ``entrants`` entrants: built-in ``e00``, ``e01``... and ``alice``, whose version is
    the bot folder ``bot`` (:func:`bot_folder`: its ``bot.toml`` has a description), with
    ``blocks`` blocks stored as ``run`` stores them (:func:`tests.helpers.web_store.play_league`:
    in-process games of ``max_hands`` hands, decisions timed ``ms(version)``, ``faults`` per
    version); the tokens of
    accounts for every entrant."""
    config = LeagueConfig(table_size=6, seed="entrant", max_hands=max_hands, bootstrap=20)
    with commands.init_league(folder, config, bytes(range(32))) as store:
        names = [f"e{i:02d}" for i in range(entrants - 1)]
        for i, name in enumerate(names):
            commands.add_version(
                store, commands.make_spec(name, None, "heuristic" if i % 3 == 0 else "random")
            )
        spec = commands.make_spec("alice", "python3 bot.py", None, files=[bot], workdir=bot, protocol="stdio")
        commands.add_version(store, spec)
        play_league(store, blocks, ms, faults)
    with PortalStore(folder) as portal:
        return {name: portal.add_account(name) for name in [*names, "alice"]}
