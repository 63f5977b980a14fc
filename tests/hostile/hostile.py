"""A hostile tournament entrant: it plays legal cards, and meanwhile attacks what it can.

``hostile.py MODE [ARGS...] --server TARGET --token-file FILE``. Every finding is one line
``HOSTILE {json}`` on stdout (its log), for the test to check against what it must not see.

Modes:
    snoop PATH...   reads its argv, environment, every visible /proc/*/cmdline and environ,
                    its token file, every PATH given (config, database, records, other bots)
                    and lists every folder it can outside the system's.
    peek            the same without probes and without walking the filesystem.
    net PORT...     connects to 127.0.0.1:PORT for each port (TCP listeners of the host), then
                    to every port of 127.0.0.1 (the referee's TCP port among them).
    fork            leaves a daemonised child behind (double fork, setsid), then plays.
    forkhang        the same, then never answers (to be killed with the runner).
    log             writes far past any log cap, and fills its scratch folder.
    mem             at its first decision, allocates (and touches) 2 GB, 8 MB at a time.
    cpu             forks two children that burn CPU, reporting their CPU time.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hearts_client.bots.random_bot import RandomBot
from hearts_client.sdk import read_token, run
from hearts_core.cards import Card
from hearts_core.view import View

#: What a token (48 hex digits) or the test's admin-token canary looks like.
SECRET_SHAPES = re.compile(r"\b[0-9a-f]{48}\b|admin-canary-[0-9a-f]+")


def parent(pid: int) -> int | None:
    """A process's parent, or None."""
    text = read(f"/proc/{pid}/stat")
    try:
        return int(text.rsplit(")", 1)[1].split()[1]) if text else None
    except (IndexError, ValueError):
        return None


def report(kind: str, **fields: Any) -> None:
    """One finding on stdout."""
    print("HOSTILE " + json.dumps({"kind": kind, **fields}, default=str), flush=True)


def read(path: str, limit: int = 100_000) -> str | None:
    """A file's text, or None when it cannot be read."""
    try:
        with open(path, "rb") as handle:
            return handle.read(limit).decode("utf-8", "replace")
    except OSError:
        return None


def snoop(paths: Sequence[str], walk: bool = True) -> None:
    report("argv", argv=sys.argv)
    report("environ", environ=dict(os.environ))
    token_file = os.environ.get("HEARTS_TOKEN_FILE", "")
    report("token_file", path=token_file, text=read(token_file))
    pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
    cmdlines = {pid: read(f"/proc/{pid}/cmdline") for pid in pids}
    if not walk:
        # Unsandboxed it sees the whole machine: it keeps only the tournament's own processes
        # (the runner and its bots, its parent and siblings) and no other process's environment.
        family = {os.getppid()} | {pid for pid in pids if parent(pid) == os.getppid()}
        cmdlines = {pid: text for pid, text in cmdlines.items() if pid in family}
        report("processes", pids=sorted(cmdlines), cmdlines=cmdlines)
    else:
        environs = {pid: read(f"/proc/{pid}/environ") for pid in pids}
        report("processes", pids=pids, cmdlines=cmdlines, environs=environs)
    for path in paths:
        try:
            entries = os.listdir(path) if os.path.isdir(path) else None
            text = read(path) if entries is None else None
            opened = entries is not None or text is not None
            report("probe", path=path, opened=opened, entries=entries, text=text)
        except OSError as exc:
            report("probe", path=path, opened=False, error=str(exc))
    if not walk:
        return
    seen: dict[str, list[str]] = {}
    secrets: dict[str, list[str]] = {}
    system = ("/usr", "/proc", "/sys", "/dev", "/etc", "/lib", "/lib64", "/bin", "/sbin")
    for root, dirs, files in os.walk("/"):
        if root.startswith(system) or "site-packages" in root or "/lib/python" in root:
            dirs[:] = []
            continue
        seen[root] = sorted(files)
        for name in files:
            text = read(os.path.join(root, name), 1_000_000)
            if text is not None:
                for secret in set(SECRET_SHAPES.findall(text)):
                    secrets.setdefault(secret, []).append(os.path.join(root, name))
    report("filesystem", folders=seen)
    report("secrets_in_files", secrets=secrets)


def net(ports: Sequence[str]) -> None:
    for port in ports:
        connection = socket.socket()
        connection.settimeout(3)
        try:
            connection.connect(("127.0.0.1", int(port)))
            connection.sendall(b"hostile was here\n")
            report("connect", port=int(port), connected=True)
        except OSError as exc:
            report("connect", port=int(port), connected=False, error=str(exc))
        finally:
            connection.close()
    reachable = []
    for port in range(1, 65536):
        probe = socket.socket()
        probe.settimeout(0.05)
        # A connection to itself (the ephemeral port picked is the one dialled) is no listener.
        if probe.connect_ex(("127.0.0.1", port)) == 0 and probe.getsockname() != probe.getpeername():
            reachable.append(port)
        probe.close()
    report("scan", open=reachable)
    try:
        socket.getaddrinfo("example.com", 80)
        report("dns", resolved=True)
    except OSError as exc:
        report("dns", resolved=False, error=str(exc))


def fork() -> None:
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.execv(sys.executable, [sys.executable, __file__, "daemon"])
        os._exit(0)
    time.sleep(0.5)
    report("forked")


def daemon() -> None:
    """The daemonised child: sleeps for an hour, unless someone kills it."""
    for fd in (0, 1, 2):
        os.close(fd)
    time.sleep(3600)


def flood() -> None:
    scratch = Path(os.environ.get("TMPDIR", "/tmp")) / "filler"
    block = b"\0" * (1 << 20)
    filled = 0
    try:
        with scratch.open("wb") as handle:
            for _ in range(1024):  # 1 GB
                handle.write(block)
                handle.flush()
                filled += len(block)
    except OSError as exc:
        report("filled", bytes=filled, error=str(exc))
    else:
        report("filled", bytes=filled, error=None)
    line = b"x" * 1023 + b"\n"
    for _ in range(20 * 1024):  # 20 MB
        os.write(1, line)


def burn() -> None:
    for _ in range(2):
        if os.fork() == 0:
            start = time.process_time()
            last = start
            while True:
                now = time.process_time()
                if now - last >= 0.2:
                    report("cpu", seconds=round(now - start, 2), pid=os.getpid())
                    last = now


class Hostile(RandomBot):
    """Plays random legal cards; the ``mem`` mode allocates at its first decision."""

    def __init__(self, mode: str) -> None:
        super().__init__()
        self.mode = mode
        self.hoard: list[bytearray] = []

    def choose_pass(self, view: View) -> Sequence[Card]:
        self.attack()
        return super().choose_pass(view)

    def choose_play(self, view: View) -> Card:
        self.attack()
        return super().choose_play(view)

    def attack(self) -> None:
        if self.mode == "forkhang":
            time.sleep(3600)
        if self.mode == "cpu":
            time.sleep(60)  # while its children burn: the game goes on without it
            return
        if self.mode != "mem" or self.hoard:
            return
        for step in range(256):  # 2 GB
            chunk = bytearray(8 << 20)
            for offset in range(0, len(chunk), 4096):
                chunk[offset] = 1
            self.hoard.append(chunk)
            report("allocated", mb=(step + 1) * 8)
            time.sleep(0.02)


def main() -> None:
    if sys.argv[1:2] == ["daemon"]:
        daemon()
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("mode")
    parser.add_argument("args", nargs="*")
    parser.add_argument("--server", required=True)
    parser.add_argument("--token-file", required=True)
    args = parser.parse_args()
    token = read_token(None, args.token_file)
    attacks = {
        "snoop": lambda: snoop(args.args),
        "peek": lambda: snoop((), walk=False),
        "net": lambda: net(args.args),
        "fork": fork,
        "forkhang": fork,
        "log": flood,
        "cpu": burn,
    }
    if args.mode in attacks:
        attacks[args.mode]()
    run(Hostile(args.mode), args.server, token, name=f"hostile-{args.mode}")
    report("done")


if __name__ == "__main__":
    main()
