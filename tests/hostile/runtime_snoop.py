"""A hostile entrant on the ``python-sdk`` runtime: it reads what its runtime shows it, then plays.

``runtime_snoop.py PROBE... [w:PATH...] --server TARGET --token-file FILE``, submitted through the portal with
``runtime = "python-sdk"``. Every finding is one line ``HOSTILE {json}`` in its log:

* ``python``: its interpreter, ``sys.prefix`` and ``sys.path``, the simulator's backend;
* ``import``: each module it tries (the SDK's parts must import, the referee's, the runner's and the
  league's must not);
* ``walk``: every folder and file it can list outside the system's folders (the runtime, the
  interpreter's prefix, its own files, its scratch), and the paths among them naming a package of
  the referee, the runner or the league;
* ``probe``: each PROBE path (the league folder, its databases, another entrant's snapshot, the
  runner's packages and virtual environment): whether it could be listed or read;
* ``write``: each attempt to change the runtime (a file in its folder, its interpreter) and each
  ``w:PATH`` given (its interpreter's hidden site-packages).

Then it plays legal cards with the SDK's random bot, so that its version becomes active.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from typing import Any

#: Modules the runtime provides ...
PROVIDED = (
    "hearts_client",
    "hearts_client.sim",
    "hearts_core",
    "hearts_sim",
    "grpc",
    "google.protobuf",
    "numpy",
)
#: ... and modules of the referee, the runner and the league, which it must not.
FORBIDDEN = ("hearts_tournaments", "hearts_server")
#: Folders every sandboxed bot sees (the system's): not walked.
SYSTEM = ("/usr", "/proc", "/sys", "/dev", "/etc", "/lib", "/lib64", "/bin", "/sbin")


def report(kind: str, **fields: Any) -> None:
    print("HOSTILE " + json.dumps({"kind": kind, **fields}, default=str), flush=True)


def probe(path: str) -> None:
    try:
        if os.path.isdir(path):
            report("probe", path=path, opened=True, entries=sorted(os.listdir(path)))
        else:
            with open(path, "rb") as handle:
                report("probe", path=path, opened=True, bytes=len(handle.read(4096)))
    except OSError as exc:
        report("probe", path=path, opened=False, error=type(exc).__name__)


def main() -> None:
    flags = sys.argv.index("--server")
    given = sys.argv[1:flags]
    probes = [a for a in given if not a.startswith("w:")]
    from hearts_client.sim import BACKEND

    report("python", executable=sys.executable, prefix=sys.prefix, path=sys.path, backend=BACKEND)
    for name in (*PROVIDED, *FORBIDDEN):
        try:
            module = importlib.import_module(name)
            report("import", module=name, ok=True, file=getattr(module, "__file__", None))
        except ImportError as exc:
            report("import", module=name, ok=False, error=str(exc))
    folders: list[str] = []
    files = 0
    named: list[str] = []
    for root, dirs, names in os.walk("/"):
        if root.startswith(SYSTEM):
            dirs[:] = []
            continue
        folders.append(root)
        files += len(names)
        for name in (*dirs, *names):
            if name.startswith(FORBIDDEN) or name in ("league.sqlite", "portal.sqlite", "snapshots"):
                named.append(os.path.join(root, name))
    report("walk", folders=folders, files=files, named=named)
    for path in probes:
        probe(path)
    targets = [os.path.join(sys.prefix, "planted"), os.path.join(sys.prefix, "bin", "python3")]
    targets += [a[2:] for a in given if a.startswith("w:")]
    for target in targets:
        try:
            with open(target, "a") as handle:
                handle.write("# planted\n")
            report("write", path=target, written=True)
        except OSError as exc:
            report("write", path=target, written=False, error=type(exc).__name__)

    from hearts_client import main as play
    from hearts_client.bots.random_bot import RandomBot

    play(RandomBot(seed=1), sys.argv[flags:])


if __name__ == "__main__":
    main()
