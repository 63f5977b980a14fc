"""The real ``hearts web`` in a subprocess, and a tiny HTTP client, for the web tests."""

from __future__ import annotations

import contextlib
import selectors
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Generous: the machine is shared and may be slow.
START_TIMEOUT_S = 120.0


@dataclass(frozen=True, slots=True)
class Reply:
    """An HTTP answer."""

    status: int
    body: str
    headers: dict[str, str]


def get(url: str, timeout: float = 60.0) -> Reply:
    """GETs ``url``; an error status is an answer too, not an exception."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return Reply(response.status, response.read().decode("utf-8"), dict(response.headers))
    except urllib.error.HTTPError as exc:
        return Reply(exc.code, exc.read().decode("utf-8"), dict(exc.headers))


@contextlib.contextmanager
def web_server(folder: Path, *extra: str) -> Iterator[str]:
    """Runs ``hearts web FOLDER --port 0`` and yields its base URL; stops it afterwards."""
    with web_process(folder, *extra) as (url, _process):
        yield url


@contextlib.contextmanager
def web_process(folder: Path, *extra: str) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """:func:`web_server`, yielding its process too (its pid, for what it holds in memory).

    Its log goes to a temporary file, not a pipe: a pipe nobody reads fills up after 64 KiB of
    log lines, and the server then blocks on its next line.
    """
    command = [sys.executable, "-m", "hearts_tournaments", "--log-format", "json", "web", str(folder)]
    with tempfile.TemporaryFile(mode="w+") as log:
        process = subprocess.Popen(
            [*command, "--port", "0", *extra], stdout=subprocess.PIPE, stderr=log, text=True
        )
        assert process.stdout is not None
        try:
            selector = selectors.DefaultSelector()
            selector.register(process.stdout, selectors.EVENT_READ)
            deadline = time.monotonic() + START_TIMEOUT_S
            line = ""
            while not line and time.monotonic() < deadline and process.poll() is None:
                if selector.select(timeout=1.0):
                    line = process.stdout.readline()
            if not line.startswith("web listening on "):
                process.kill()
                process.communicate(timeout=30)
                log.seek(0)
                raise AssertionError(f"hearts web did not start: {line!r} {log.read()}")
            yield line.split()[-1], process
        finally:
            stop(process, 30)
            process.stdout.close()


def stop(process: subprocess.Popen[Any], grace: float) -> None:
    """SIGTERM, and SIGKILL after ``grace`` seconds, unless it has ended already."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=30)
