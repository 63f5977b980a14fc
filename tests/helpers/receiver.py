"""A real webhook receiver on 127.0.0.1:0 in a thread: it keeps every POST it gets and answers
each with the next status of its script (the last one once the script is spent)."""

from __future__ import annotations

import contextlib
import http.server
import re
import textwrap
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: The competition guide, whose Notifications section tells a receiver how to check a signature.
COMPETITION = (Path(__file__).resolve().parents[2] / "docs" / "COMPETITION.md").read_text()


@dataclass
class Received:
    """One POST as the receiver got it."""

    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    url: str
    statuses: list[int]
    got: list[Received] = field(default_factory=list)
    arrived: threading.Condition = field(default_factory=threading.Condition)

    def wait(self, count: int, timeout: float = 120.0) -> list[Received]:
        """The POSTs once ``count`` have come (the timeout only fails the test)."""
        with self.arrived:
            assert self.arrived.wait_for(lambda: len(self.got) >= count, timeout), (
                f"{len(self.got)} of {count} deliveries came: {self.got}"
            )
            return list(self.got)


@contextlib.contextmanager
def receiver(*statuses: int) -> Iterator[Receiver]:
    """A receiver answering ``statuses`` in turn (default: 200)."""
    state = Receiver("", list(statuses) or [200])

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            with state.arrived:
                status = state.statuses[min(len(state.got), len(state.statuses) - 1)]
                state.got.append(Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                state.arrived.notify_all()
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=30)


def verified(secret: str, body: bytes, header: str) -> bool:
    """What docs/COMPETITION.md tells a receiver to do with ``X-Hearts-Signature``: its Python,
    run as written."""
    (code,) = re.findall(r"```python\n(.*?)```", COMPETITION.split("### Notifications", 1)[1], flags=re.S)
    assert len([line for line in code.splitlines() if line.strip()]) <= 5, code
    space: dict[str, Any] = {}
    exec(textwrap.dedent(code), space)
    return bool(space["genuine"](secret, body, header))
