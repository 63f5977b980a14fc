"""The real ``hearts`` command line in a subprocess, as a user runs it.

A test that plays through it (``hearts tournament run``, ``hearts league run``) starts the referee
and real bot processes in the sandbox: such a test belongs to the ``slow`` tier
(``tests/conftest.py``; ``tests/test_tiers.py`` checks it).
"""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import IO

#: The command, as ``hearts`` on PATH runs it, with this interpreter.
HEARTS = [sys.executable, "-m", "hearts_tournaments"]

Output = int | IO[bytes] | None


def hearts(
    *args: str,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    input: str | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """Runs ``hearts ARGS`` to its end (in ``cwd``, with ``env``), its output captured as text."""
    return subprocess.run(
        [*HEARTS, *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        input=input,
        timeout=timeout,
        check=False,
    )


def start_hearts(
    *args: str,
    env: Mapping[str, str] | None = None,
    stdout: Output = subprocess.DEVNULL,
    stderr: Output = subprocess.DEVNULL,
    own_group: bool = True,
) -> subprocess.Popen[bytes]:
    """Starts ``hearts ARGS``; with ``own_group``, in a process group of its own, so that killing
    the group (``os.killpg``) ends the bots it started with it (without, a test can check that
    killing the runner alone ends them)."""
    return subprocess.Popen(
        [*HEARTS, *args], env=env, stdout=stdout, stderr=stderr, start_new_session=own_group
    )


def interrupt(process: subprocess.Popen[str], timeout: float = 60) -> None:
    """Stops a serving command as its user does, with Ctrl-C (SIGINT); kills it if it lingers."""
    process.send_signal(signal.SIGINT)
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
