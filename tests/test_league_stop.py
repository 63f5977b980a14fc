"""``hearts league run`` stopped by SIGTERM, as a service manager or ``docker stop`` stops it: one
line on stderr, exit 130, no traceback, whatever it was doing (validating, playing a block)."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from hearts_tournaments.league import commands
from hearts_tournaments.league.config import LeagueConfig
from hearts_tournaments.league.store import LeagueStore

SECRET = bytes(range(32))
LOWEST = Path(__file__).resolve().parent.parent / "clients" / "stdio" / "lowest.py"
FAST = {"table_size": 6, "seed": "stop", "max_hands": 1, "sandbox": "none", "bootstrap": 20}


def _stopped_after(folder: Path, said: str) -> tuple[int, str, str]:
    """Starts ``hearts league run FOLDER --forever``, sends SIGTERM once a stdout line holds ``said``;
    its exit status, stdout and stderr."""
    process = subprocess.Popen(
        [sys.executable, "-m", "hearts_tournaments", "league", "run", str(folder), "--forever"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    seen = []
    try:
        for line in process.stdout:
            seen.append(line)
            if said in line:
                process.send_signal(signal.SIGTERM)
                break
        out, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return process.returncode, "".join(seen) + out, err


@pytest.mark.timeout(600)
def test_sigterm_stops_a_run_with_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "lg"
    with commands.init_league(folder, LeagueConfig.from_json(FAST), SECRET) as store:
        for name, bot in (("a", "random"), ("b", "heuristic")):
            commands.add_version(store, commands.make_spec(name, None, bot))
        # A bot process too: a block's end then stops processes, and so does SIGTERM.
        command = f"{sys.executable} {LOWEST}"
        commands.add_version(store, commands.make_spec("low", command, None, protocol="stdio"))
    # Stopped while it plays blocks, twice; then while a new version's validation is on.
    for said in ("stored:", "stored:"):
        status, out, err = _stopped_after(folder, said)
        assert status == 130, (status, out, err)
        assert "Traceback" not in err and "CancelledError" not in err, err
        assert err.count("\n") == 1 and err.startswith("stopped: "), err
    # Stopped as a block's bot processes start, just after a validation: a process killed then
    # exited after the event loop closed, and asyncio's warning about it reached stderr.
    for name in ("c", "d", "e"):
        with LeagueStore.open(folder) as store:
            commands.add_version(store, commands.make_spec(name, None, "random"))
        status, out, err = _stopped_after(folder, f"{name}@v1: active")
        assert status == 130, (status, out, err)
        assert "Traceback" not in err and "CancelledError" not in err, err
        assert err.count("\n") == 1 and err.startswith("stopped: "), err
