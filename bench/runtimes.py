#!/usr/bin/env python3
"""What each example language's bot weighs as a submission, with and without the runtime that spares
its dependencies, against the portal's caps; and what a bot on each runtime uses in the sandbox.

``sizes``: each variant's folder packed as ``hearts submit`` packs one (a .tar.gz, gzip level 9,
PAX; here without its skipped folders, so that ``node_modules`` counts), its unpacked bytes and its
entries (files and folders), and whether it fits :data:`~hearts_tournaments.portal.uploads.MAX_ARCHIVE_BYTES`,
``MAX_UNPACKED_BYTES`` and ``MAX_FILES``. The variants (the examples must be built:
``clients/build-all``; the runtimes installed: ``hearts runtime install --all``):

- python: an SDK bot on the simulator, vendoring the SDK, the core, the simulator, grpcio and
  protobuf (copied from the ``python-sdk`` runtime, without numpy) / on ``python-sdk``;
- java: the example's shaded jar (every dependency) / its jar alone on ``java-grpc``;
- typescript: ``dist/`` with the production ``node_modules`` / ``dist/`` alone on ``node-grpc``;
- go, rust, cpp: the binaries ``clients/*/build`` makes (Go's with its symbol table, C++'s linked to
  the system's shared gRPC); with ``--static``, also Go's ``CGO_ENABLED=0 go build -trimpath
  -ldflags="-s -w"`` and C++'s ``g++ -static ... -s`` (minutes of compiling: docs/COMPETITION.md's
  recipes, as written).

``sandbox``: one 6-seat game (target 60) with the Java and TypeScript examples and an SDK bot on
their runtimes in seat 0, started as the runner starts it (``BotProcess.start``, the default
limits), the other seats SDK random bots: the peak resident memory and processes of its sandbox,
as the watchdog sampled them.

    .venv/bin/python bench/runtimes.py sizes [--static] [--json]
    .venv/bin/python bench/runtimes.py sandbox [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.helpers.runtimes's bot

from hearts_client.bots import make_bot
from hearts_client.sdk import run_async
from hearts_core.rules import Rules
from hearts_server.logs import LogFormat, configure_logging
from hearts_server.server import make_server
from hearts_server.table import TableSettings
from hearts_tournaments.arena import runtimes
from hearts_tournaments.arena.bots import BotSpec
from hearts_tournaments.arena.entrants import BotProcess, SeatAccess
from hearts_tournaments.arena.sandbox import SandboxKind, Watchdog
from hearts_tournaments.portal.uploads import MAX_ARCHIVE_BYTES, MAX_FILES, MAX_UNPACKED_BYTES
from tests.helpers.runtimes import SIM_BOT

ROOT = Path(__file__).resolve().parent.parent
CLIENTS = ROOT / "clients"
#: The parts of python-sdk a vendoring bot copies (all but numpy, which the SDK does not need).
VENDORED = (
    "hearts_client",
    "hearts_core",
    "hearts_protocol",
    "cancellation_hearts",
    "hearts_sim",
    "grpc",
    "google",
)
JAVA_MAIN = "org.cancellationhearts.example.Bot"


def packed(folder: Path) -> dict[str, int]:
    """A folder as ``hearts submit`` packs it (nothing skipped): archive bytes, unpacked bytes, entries."""
    buffer = io.BytesIO()
    unpacked = entries = 0
    with tarfile.open(fileobj=buffer, mode="w:gz", format=tarfile.PAX_FORMAT) as archive:
        for root, dirs, files in os.walk(folder):
            dirs.sort()
            for name in sorted(dirs) + sorted(files):
                path = Path(root) / name
                info = archive.gettarinfo(str(path), path.relative_to(folder).as_posix())
                info.uid = info.gid = 0
                info.uname = info.gname = ""
                entries += 1
                if info.isreg():
                    unpacked += info.size
                    with path.open("rb") as handle:
                        archive.addfile(info, handle)
                else:
                    archive.addfile(info)
    return {"archive": len(buffer.getvalue()), "unpacked": unpacked, "entries": entries}


def _manifest(folder: Path, command: list[str], runtime: str | None) -> None:
    text = f"command = {json.dumps(command)}\n" + (f'runtime = "{runtime}"\n' if runtime else "")
    (folder / "bot.toml").write_text(text)


def _python(folder: Path, vendored: bool) -> None:
    (folder / "bot.py").write_text(SIM_BOT)
    if vendored:
        site = runtimes.installed("python-sdk").folder / "lib"
        (packages,) = site.glob("python3*/site-packages")
        for name in VENDORED:
            shutil.copytree(packages / name, folder / name, ignore=shutil.ignore_patterns("__pycache__"))
        if (packages / "typing_extensions.py").exists():
            shutil.copy2(packages / "typing_extensions.py", folder)
    _manifest(folder, ["python3", "bot.py"], None if vendored else "python-sdk")


def _java(folder: Path, fat: bool) -> None:
    target = CLIENTS / "java" / "target"
    if fat:
        shutil.copy2(target / "java-example-bot.jar", folder / "bot.jar")
        _manifest(folder, ["java", "-jar", "bot.jar"], None)
    else:
        shutil.copy2(target / "original-java-example-bot.jar", folder / "bot.jar")
        _manifest(folder, ["java", JAVA_MAIN], "java-grpc")


def _typescript(folder: Path, modules: bool) -> None:
    shutil.copytree(CLIENTS / "typescript" / "dist", folder / "dist")
    if modules:
        shutil.copytree(runtimes.installed("node-grpc").folder / "node_modules", folder / "node_modules")
    _manifest(folder, ["node", "dist/main.js"], None if modules else "node-grpc")


def _binary(source: Path) -> Callable[[Path], None]:
    def make(folder: Path) -> None:
        shutil.copy2(source, folder / "bot")
        _manifest(folder, ["./bot"], None)

    return make


def _static_go(work: Path) -> Path:
    out = work / "go-static"
    subprocess.run(
        ["go", "build", "-trimpath", "-ldflags=-s -w", "-o", str(out), "."],
        cwd=CLIENTS / "go", env={**os.environ, "CGO_ENABLED": "0"}, check=True, timeout=1800,
    )  # fmt: skip
    return out


def _static_cpp(work: Path) -> Path:
    proto = ROOT / "proto"
    gen = work / "gen"
    gen.mkdir()
    plugin = shutil.which("grpc_cpp_plugin") or "grpc_cpp_plugin"
    stems = [str(proto / "cancellation_hearts" / "v1" / f"{n}.proto") for n in ("game", "referee_service")]
    protoc = ["protoc", "-I", str(proto), f"--cpp_out={gen}", f"--grpc_out={gen}"]
    subprocess.run([*protoc, f"--plugin=protoc-gen-grpc={plugin}", *stems], check=True, timeout=600)
    libs = subprocess.run(
        ["pkg-config", "--static", "--libs", "grpc++", "protobuf"], capture_output=True, text=True, check=True
    ).stdout.split()
    out = work / "cpp-static"
    sources = [str(CLIENTS / "cpp" / n) for n in ("main.cc", "strategy.cc")]
    generated = [str(p) for p in sorted((gen / "cancellation_hearts" / "v1").glob("*.cc"))]
    compiler = ["g++", "-std=c++17", "-O2", "-static", "-s", f"-I{gen}"]
    subprocess.run(
        [*compiler, *sources, *generated, "-o", str(out), *libs],
        check=True,
        timeout=3600,
        capture_output=True,
    )
    return out


def sizes(static: bool) -> dict[str, Any]:
    """Every variant's figures, and the caps."""
    variants: dict[str, Callable[[Path], None]] = {
        "python vendored": lambda f: _python(f, True),
        "python on python-sdk": lambda f: _python(f, False),
        "java shaded jar": lambda f: _java(f, True),
        "java on java-grpc": lambda f: _java(f, False),
        "typescript with node_modules": lambda f: _typescript(f, True),
        "typescript on node-grpc": lambda f: _typescript(f, False),
        "go (clients/go/build)": _binary(CLIENTS / "go" / "bin" / "bot"),
        "rust (clients/rust/build)": _binary(CLIENTS / "rust" / "target" / "release" / "bot"),
        "cpp (clients/cpp/build, shared gRPC)": _binary(CLIENTS / "cpp" / "cmake-build" / "bot"),
    }
    out: dict[str, Any] = {
        "caps": {"archive": MAX_ARCHIVE_BYTES, "unpacked": MAX_UNPACKED_BYTES, "entries": MAX_FILES},
        "variants": {},
    }
    with tempfile.TemporaryDirectory(prefix="hearts-bench-runtimes-") as scratch:
        work = Path(scratch)
        if static:
            variants["go static, stripped"] = _binary(_static_go(work))
            variants["cpp static, stripped"] = _binary(_static_cpp(work))
        for index, (name, make) in enumerate(variants.items()):
            folder = work / f"bot{index}"
            folder.mkdir()
            make(folder)
            figures = packed(folder)
            figures["fits"] = (
                figures["archive"] <= MAX_ARCHIVE_BYTES
                and figures["unpacked"] <= MAX_UNPACKED_BYTES
                and figures["entries"] <= MAX_FILES
            )
            out["variants"][name] = figures
    return out


async def _one_game(spec: BotSpec, watchdog: Watchdog) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        socket = Path(tmp) / "referee.sock"
        server = make_server(Path(tmp) / "records", admin_token="bench", unix_socket=socket)
        await server.start()
        try:
            names = (spec.name, *("random",) * 5)
            table = server.registry.create(
                TableSettings(rules=Rules(players=6, target_score=60), bot_names=names, seed="bench")
            )
            address = f"unix:{socket}"
            others = [
                asyncio.create_task(run_async(make_bot("random", f"bench/{s.index}"), address, s.token))
                for s in table.seats[1:]
            ]
            process = await BotProcess.start(
                0, spec, SeatAccess(socket, table.seats[0].token, "bench"), Path(tmp) / "bot.log",
                sandbox=SandboxKind.BWRAP, watchdog=watchdog,
            )  # fmt: skip
            await table.done.wait()
            await asyncio.gather(*others)
            await process.stop()
            peak = process.peak_usage
            log = (Path(tmp) / "bot.log").read_text(errors="replace")
            if peak is None or "Traceback" in log or "Exception" in log:
                raise SystemExit(f"{spec.name} did not play as it should: {log[-2000:]}")
            return {
                "rss_mb": peak.rss_bytes >> 20,
                "processes": peak.processes,
                "cpu_s": round(peak.cpu_s, 2),
            }
        finally:
            await server.stop(grace=0.2)


def sandbox() -> dict[str, Any]:
    """Peak memory and processes of a bot on each runtime over one game."""
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="hearts-bench-runtimes-") as scratch:
        work = Path(scratch)
        bots = {
            "python on python-sdk": (lambda f: _python(f, False), ("python3", "bot.py"), "python-sdk"),
            "java on java-grpc": (
                lambda f: _java(f, False),
                ("java", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:-UsePerfData", JAVA_MAIN),
                "java-grpc",
            ),
            "typescript on node-grpc": (
                lambda f: _typescript(f, False),
                ("node", "dist/main.js"),
                "node-grpc",
            ),
        }
        with Watchdog() as watchdog:
            for index, (name, (make, command, runtime)) in enumerate(bots.items()):
                folder = work / f"bot{index}"
                folder.mkdir()
                make(folder)
                words = tuple(str(folder / w) if (folder / w).is_file() else w for w in command)
                spec = BotSpec(
                    name=f"bot{index}", command=words, workdir=folder, files=(folder,), runtime=runtime
                )
                out[name] = asyncio.run(_one_game(spec, watchdog))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("what", choices=("sizes", "sandbox"))
    parser.add_argument(
        "--static", action="store_true", help="Also build and measure the static Go and C++ bots."
    )
    parser.add_argument("--json", action="store_true", help="Print one JSON object.")
    args = parser.parse_args()
    configure_logging(LogFormat.JSON, "ERROR")
    if args.what == "sizes":
        figures = sizes(args.static)
        if args.json:
            print(json.dumps(figures))
            return
        caps = figures["caps"]
        print(f"caps: archive {caps['archive']:,} B, unpacked {caps['unpacked']:,} B, ", end="")
        print(f"{caps['entries']:,} entries")
        print(f"{'variant':<38} {'archive B':>12} {'unpacked B':>12} {'entries':>8}  fits")
        for name, f in figures["variants"].items():
            fits = "yes" if f["fits"] else "NO"
            print(f"{name:<38} {f['archive']:>12,} {f['unpacked']:>12,} {f['entries']:>8,}  {fits}")
        return
    figures = sandbox()
    if args.json:
        print(json.dumps(figures))
        return
    print(f"{'bot':<26} {'peak RSS':>9} {'processes':>10} {'CPU':>7}")
    for name, f in figures.items():
        print(f"{name:<26} {f['rss_mb']:>6} MB {f['processes']:>10} {f['cpu_s']:>6.1f}s")


if __name__ == "__main__":
    sys.exit(main())
