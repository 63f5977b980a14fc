"""Runtimes the competition provides: what a bot names instead of shipping its language's gRPC stack.

A bot that names a runtime (``runtime = "python-sdk"`` in ``bot.toml`` or a tournament's
``[[bots]]``, ``hearts league add --runtime``) gets, read-only in its sandbox:

* the runtime's folder at ``/opt/hearts/runtimes/NAME`` (:data:`INSIDE`), built once on this
  machine by ``hearts runtime install NAME`` (:mod:`.build`) under :func:`runtimes_home`;
* what its programs need outside it (an interpreter's prefix, its own site-packages hidden);
* its environment (``PATH``, ``CLASSPATH``, ``NODE_PATH``) and its command words: the first word
  of the bot's command, when the runtime maps it (``python3``), becomes the runtime's program.

It gets nothing of the referee, the runner or the league: a bot with a runtime no longer sees this
Python's prefixes and the project's package folders (a command bot run by this very Python still
does, as a built-in bot does). :data:`RUNTIMES` is the one registry: the config and manifest keys,
``hearts runtime list``, ``hearts doctor``, the portal's ``/runtimes`` page and the docs' tables
are derived from it.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hearts_tournaments.arena.runtimes import build
from hearts_tournaments.arena.runtimes.build import BuildError, Built
from hearts_tournaments.arena.sandbox import SandboxError

#: Where a runtime's folder is bound in the sandbox: ``/opt/hearts/runtimes/NAME``.
INSIDE = Path("/opt/hearts/runtimes")
#: The environment variable naming where this machine keeps its runtimes.
HOME_VARIABLE = "HEARTS_RUNTIMES"
#: A runtime folder's record of what was built into it.
MANIFEST = "runtime.json"
#: The record's layout; a folder of another layout is built again.
FORMAT = 1


class RuntimeUnavailable(SandboxError):
    """A bot names a runtime that does not exist or is not installed here: one line with the fix."""


@dataclass(frozen=True, slots=True)
class Runtime:
    """One runtime of the registry.

    Attributes:
        name: What a bot names (``python-sdk``).
        summary: What it is, in one line.
        provides: What a bot gets, one phrase each.
        words: The command words it maps (the first word of a bot's command).
        env: The environment it sets, as templates: ``{root}`` is the runtime's folder as the
            bot sees it, ``{PATH}`` the bot's ``PATH`` without it, ``{classpath}`` the bot's own
            files as a Java class path (each folder, and the jars in it), ``{memory_mb}`` the
            bot's memory cap (``[limits]``).
        example: A ``bot.toml`` command that runs on it.
        needs: The programs its install needs on this machine.
        source: Where its install takes its parts from.
        lacking: A pattern of the error a bot's log shows when it needs this runtime and has not
            named it (``No module named 'hearts_client'``): the pre-flight check's fix then names
            it.
        build: Fills a fresh folder (:mod:`.build`).
        versions: What an install here would bring, before one is made (its recipe's pins, or
            this installation's versions).
        fingerprint: What it would be built from now; a folder built from something else is stale.
    """

    name: str
    summary: str
    provides: tuple[str, ...]
    words: tuple[str, ...]
    env: Mapping[str, str]
    example: str
    needs: tuple[str, ...]
    source: str
    lacking: str
    build: Callable[[Path, Path], Built] = field(repr=False)
    versions: Callable[[], dict[str, str]] = field(repr=False)
    fingerprint: Callable[[], str] = field(repr=False)

    @property
    def inside(self) -> Path:
        """Its folder as a sandboxed bot sees it."""
        return INSIDE / self.name

    @property
    def folder(self) -> Path:
        """Its folder on this machine."""
        return runtimes_home() / self.name

    def installed(self) -> Installed | None:
        """What is installed here, or None (never built, or built by another layout)."""
        return Installed.read(self.folder)

    def shown_env(self) -> dict[str, str]:
        """Its environment as a sandboxed bot gets it (``$PATH``: the bot's own; ``<bot files>``: its
        files as a class path)."""
        shown = {
            "root": str(self.inside),
            "PATH": "$PATH",
            "classpath": "<bot files>",
            "memory_mb": "<memory_mb>",
        }
        return {k: v.format(**shown) for k, v in self.env.items()}


@dataclass(frozen=True, slots=True)
class Installed:
    """A runtime's folder on this machine and its record (:data:`MANIFEST`).

    Attributes:
        name: The runtime.
        folder: Its folder here.
        fingerprint: What it was built from (see :attr:`Runtime.fingerprint`).
        built: What its builder put there.
    """

    name: str
    folder: Path
    fingerprint: str
    built: Built

    @classmethod
    def read(cls, folder: Path) -> Installed | None:
        """The runtime built in ``folder``, or None."""
        try:
            data = json.loads((folder / MANIFEST).read_text())
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            return None
        built = Built(
            versions=dict(data["versions"]),
            programs=dict(data["programs"]),
            binds=tuple(data.get("binds", ())),
            hidden=tuple(data.get("hidden", ())),
        )
        return cls(str(data["runtime"]), folder, str(data["fingerprint"]), built)

    def write(self) -> None:
        """Writes the record into the folder."""
        data = {
            "format": FORMAT,
            "runtime": self.name,
            "fingerprint": self.fingerprint,
            "versions": self.built.versions,
            "programs": self.built.programs,
            "binds": list(self.built.binds),
            "hidden": list(self.built.hidden),
        }
        (self.folder / MANIFEST).write_text(json.dumps(data, indent=2) + "\n")

    def program(self, word: str, root: Path | None = None) -> str | None:
        """The program ``word`` maps to (inside ``root``, default this machine's folder), or None."""
        path = self.built.programs.get(word)
        if path is None:
            return None
        return path if os.path.isabs(path) else str((root or self.folder) / path)


RUNTIMES: Mapping[str, Runtime] = {
    runtime.name: runtime
    for runtime in (
        Runtime(
            name="python-sdk",
            summary="The league's Python SDK and simulator, with grpcio, protobuf and numpy.",
            provides=(
                "the SDK, hearts_client (with the built-in bots, the sampler and the stdio bridge)",
                "the simulator, hearts_client.sim, on its native backend hearts_sim",
                "hearts_core (the rules) and the generated protocol code",
                "grpcio, protobuf and numpy, at the versions the referee runs",
            ),
            words=("python3", "python"),
            env={"PATH": "{root}/bin:{PATH}"},
            example='command = ["python3", "bot.py"]',
            needs=(),
            source="this installation of hearts (offline): the same files the referee imports",
            lacking=r"No module named '(hearts_(client|core|sim|protocol)|cancellation_hearts|grpc|google"
            r"|numpy)\b",
            build=build.build_python_sdk,
            versions=build.python_sdk_versions,
            fingerprint=build.python_sdk_fingerprint,
        ),
        Runtime(
            name="java-grpc",
            summary="grpc-java and protobuf-java on the class path of the machine's JVM.",
            provides=(
                "java, this machine's JVM",
                "grpc-java (grpc-netty-shaded, grpc-protobuf, grpc-stub) and protobuf-java, with their "
                "dependencies, as jars on CLASSPATH after the bot's own",
                "a heap sized from the bot's memory cap (-XX:MaxRAM), not the machine's memory",
            ),
            words=("java",),
            # The JVM sizes its heap from the machine's memory (a quarter of it): from the bot's cap
            # instead, so that it collects garbage rather than grow past the cap and be killed.
            env={"CLASSPATH": "{classpath}:{root}/lib/*", "JDK_JAVA_OPTIONS": "-XX:MaxRAM={memory_mb}m"},
            example='command = ["java", "org.example.Bot"]   # your main class; your jars are on CLASSPATH',
            needs=("java", "mvn"),
            source="Maven Central (mvn dependency:copy-dependencies)",
            lacking=r"(NoClassDefFoundError|ClassNotFoundException)\W+(io[./]grpc|com[./]google[./]protobuf)",
            build=build.build_java_grpc,
            versions=build.java_versions,
            fingerprint=build.recipe_fingerprint(build.JAVA_POM),
        ),
        Runtime(
            name="node-grpc",
            summary="@grpc/grpc-js and @grpc/proto-loader for the machine's Node.js.",
            provides=(
                "node, this machine's Node.js",
                "@grpc/grpc-js and @grpc/proto-loader (with protobufjs), which require() finds through "
                "NODE_PATH",
            ),
            words=("node",),
            env={"NODE_PATH": "{root}/node_modules"},
            example='command = ["node", "dist/main.js"]   # CommonJS: require() looks in NODE_PATH',
            needs=("node", "npm"),
            source="the npm registry (npm ci of a locked tree, install scripts not run)",
            lacking=r"Cannot find module '(@grpc/|protobufjs)",
            build=build.build_node_grpc,
            versions=build.node_versions,
            fingerprint=build.recipe_fingerprint(
                build.NODE_RECIPE / "package.json", build.NODE_RECIPE / "package-lock.json"
            ),
        ),
    )
}


def lacking(log: str) -> tuple[Runtime, str] | None:
    """The runtime that provides what a bot's log says it lacks, and the words saying so, or None."""
    for runtime in RUNTIMES.values():
        found = re.search(runtime.lacking, log)
        if found is not None:
            return runtime, found.group(0)
    return None


def runtimes_home() -> Path:
    """Where this machine keeps its runtimes: ``$HEARTS_RUNTIMES``, else
    ``share/cancellation-hearts/runtimes`` in this Python's environment (beside the installation
    whose SDK ``python-sdk`` copies)."""
    named = os.environ.get(HOME_VARIABLE)
    if named:
        return Path(named).absolute()
    return Path(sys.prefix) / "share" / "cancellation-hearts" / "runtimes"


def names() -> str:
    """The runtimes' names, for messages (``python-sdk, java-grpc, node-grpc``)."""
    return ", ".join(RUNTIMES)


def get(name: str) -> Runtime:
    """The runtime called ``name``.

    Raises:
        RuntimeUnavailable: there is none.
    """
    runtime = RUNTIMES.get(name)
    if runtime is None:
        raise RuntimeUnavailable(
            f"there is no runtime {name!r}: the runtimes are {names()} (`hearts runtime list`)"
        )
    return runtime


def installed(name: str) -> Installed:
    """The runtime ``name`` as installed here.

    Raises:
        RuntimeUnavailable: it does not exist or is not installed here.
    """
    runtime = get(name)
    found = runtime.installed()
    if found is None:
        raise RuntimeUnavailable(
            f"runtime {name!r} is not installed on this machine: `hearts runtime install {name}`"
            + (f" (it needs {', '.join(runtime.needs)})" if runtime.needs else "")
        )
    return found


@dataclass(frozen=True, slots=True)
class Provision:
    """What one bot gets of its runtime.

    Attributes:
        name: The runtime.
        root: Its folder as the bot sees it.
        installed: The runtime on this machine.
        binds: Read-only (source, inside) binds: the folder at :attr:`root` (sandboxed only).
        extra: Folders bound read-only at the same paths (sandboxed only).
        hidden: Folders covered by an empty tmpfs (sandboxed only).
        env: The bot's environment variables it sets, given the bot's ``PATH`` (see :meth:`environment`).
    """

    name: str
    root: Path
    installed: Installed
    binds: tuple[tuple[Path, Path], ...]
    extra: tuple[Path, ...]
    hidden: tuple[Path, ...]
    classpath: str

    def command(self, words: Sequence[str]) -> tuple[str, ...]:
        """``words`` with the program, when the runtime maps it, made the runtime's."""
        program = self.installed.program(words[0], self.root) if words else None
        return tuple(words) if program is None else (program, *words[1:])

    def environment(self, path: str, memory_mb: int) -> dict[str, str]:
        """The variables the runtime sets, for a bot whose ``PATH`` is ``path`` and whose memory
        cap is ``memory_mb``."""
        values = {
            "root": str(self.root),
            "PATH": path,
            "classpath": self.classpath,
            "memory_mb": str(memory_mb),
        }
        return {name: template.format(**values).strip(":") for name, template in get(self.name).env.items()}


def classpath(files: Sequence[Path]) -> str:
    """The bot's files as a Java class path: each folder and the jars in it, each jar itself."""
    parts: list[str] = []
    for path in files:
        if path.suffix == ".jar":
            parts.append(str(path))
        else:
            parts += [str(path), str(path / "*")]
    return ":".join(parts)


def provide(name: str, files: Sequence[Path] = (), sandboxed: bool = True) -> Provision:
    """What a bot naming ``name`` gets, its own files being ``files`` (as it sees them).

    Raises:
        RuntimeUnavailable: the runtime does not exist or is not installed here.
    """
    found = installed(name)
    runtime = get(name)
    root = runtime.inside if sandboxed else found.folder
    return Provision(
        name=name,
        root=root,
        installed=found,
        binds=((found.folder, root),) if sandboxed else (),
        extra=tuple(Path(p) for p in found.built.binds) if sandboxed else (),
        hidden=tuple(Path(p) for p in found.built.hidden) if sandboxed else (),
        classpath=classpath(files),
    )


# --- state and install ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class State:
    """A runtime on this machine: installed or not, up to date or not, and whether it can be built.

    Attributes:
        runtime: The runtime.
        installed: What is installed, or None.
        stale: Installed from something else than it would be built from now.
        missing: The programs its install needs that this machine lacks.
        problem: Why its fingerprint cannot be taken (a part it copies is missing), or None.
    """

    runtime: Runtime
    installed: Installed | None
    stale: bool
    missing: tuple[str, ...]
    problem: str | None

    @property
    def status(self) -> str:
        """``installed``, ``stale`` or ``missing``."""
        if self.installed is None:
            return "missing"
        return "stale" if self.stale else "installed"

    def to_json(self) -> dict[str, Any]:
        """The runtime and its state, as ``hearts runtime list --json`` and the portal give it."""
        runtime = self.runtime
        return {
            "name": runtime.name,
            "summary": runtime.summary,
            "provides": list(runtime.provides),
            "words": list(runtime.words),
            "env": runtime.shown_env(),
            "folder": str(runtime.inside),
            "example": runtime.example,
            "source": runtime.source,
            "status": self.status,
            "versions": dict(self.installed.built.versions) if self.installed else runtime.versions(),
        }


def markdown_table() -> str:
    """The runtimes as a Markdown table (docs/COMPETITION.md holds it): what each is, the same on
    every machine (the versions, which are a machine's, are in :meth:`State.to_json`)."""
    lines = [
        "| runtime | what a bot gets | command words | environment in the sandbox | installed from |",
        "|---|---|---|---|---|",
    ]
    for runtime in RUNTIMES.values():
        gets = "; ".join(runtime.provides)
        env = ", ".join(f"`{k}={v}`" for k, v in runtime.shown_env().items())
        words = ", ".join(f"`{w}`" for w in runtime.words)
        lines.append(f"| `{runtime.name}` | {gets} | {words} | {env} | {runtime.source} |")
    return "\n".join(lines)


def state(runtime: Runtime, staleness: bool = True) -> State:
    """``runtime`` on this machine; without ``staleness``, never called stale (its fingerprint,
    which reads every file it would copy, is not taken: what a public page needs)."""
    found = runtime.installed()
    missing = tuple(tool for tool in runtime.needs if shutil.which(tool) is None)
    stale, problem = False, None
    if staleness:
        try:
            stale = found is not None and found.fingerprint != runtime.fingerprint()
        except (BuildError, OSError) as exc:
            stale, problem = found is not None, str(exc)
    return State(runtime, found, stale, missing, problem)


def states(staleness: bool = True) -> list[State]:
    """Every runtime of the registry on this machine (see :func:`state`)."""
    return [state(r, staleness) for r in RUNTIMES.values()]


@contextlib.contextmanager
def _locked(home: Path) -> Iterator[None]:
    """One install at a time on this machine (several test workers, or two shells)."""
    home.mkdir(parents=True, exist_ok=True)
    with open(home / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def install(name: str, force: bool = False) -> tuple[Installed, bool]:
    """Builds runtime ``name`` here unless it is installed and up to date (or ``force``).

    The folder is built beside the old one and swapped in when complete, its files read-only
    (0755 folders, 0644 or 0755 files, owned by whoever installs). Bots playing on the old folder
    at that moment may fail: install while no tournament or league plays.

    Returns:
        The installed runtime, and whether it was built now.

    Raises:
        RuntimeUnavailable: there is no such runtime.
        BuildError: it cannot be built here (one line saying why).
    """
    runtime = get(name)
    home = runtimes_home()
    with _locked(home):
        fingerprint = runtime.fingerprint()
        found = runtime.installed()
        if found is not None and found.fingerprint == fingerprint and not force:
            return found, False
        fresh = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=home))
        try:
            built = runtime.build(fresh, runtime.inside)
            made = Installed(name, fresh, fingerprint, built)
            made.write()
            _read_only(fresh)
            old = home / f".{name}-old"
            shutil.rmtree(old, ignore_errors=True)
            if runtime.folder.exists():
                runtime.folder.rename(old)
            fresh.rename(runtime.folder)
            shutil.rmtree(old, ignore_errors=True)
        finally:
            shutil.rmtree(fresh, ignore_errors=True)
    done = runtime.installed()
    assert done is not None
    return done, True


def _read_only(folder: Path) -> None:
    """Readable by everyone (the sandbox's uid is nobody), writable by nobody but the owner's chmod."""
    for root, dirs, files in os.walk(folder):
        for name in files:
            path = Path(root) / name
            if not path.is_symlink():
                path.chmod(0o555 if os.access(path, os.X_OK) else 0o444)
        for name in dirs:
            path = Path(root) / name
            if not path.is_symlink():
                path.chmod(0o755)
    folder.chmod(0o755)
