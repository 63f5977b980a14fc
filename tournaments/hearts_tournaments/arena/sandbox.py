"""The sandbox a tournament's bot runs in: bubblewrap namespaces, rlimits and a resource watchdog.

With ``sandbox = "bwrap"`` (the default) a bot is started as::

    prlimit --nofile=N --fsize=B --core=0 --cpu=S -- bwrap --unshare-all ... -- COMMAND

so that it has its own mount, PID, IPC, UTS, cgroup, user and network namespaces (no network
at all: the only way out is the referee's Unix socket, bound at :data:`INSIDE_SOCKET`), sees
no other process, runs with no capabilities as uid 65534, and sees only:

* the system's runtime, read-only: ``/usr``, ``/bin``, ``/sbin``, ``/lib*``, ``/etc`` (minus
  the shadow files and ``/etc/ssh``), a fresh ``/proc`` and a minimal ``/dev``;
* for a built-in bot, or a command run by this very Python: this Python's prefixes (the
  interpreter, the virtual environment) and the project's installed package folders, read-only,
  at the same paths (never the repository root); for a bot naming a runtime instead, the
  runtime's folder at ``/opt/hearts/runtimes/NAME`` and what its programs need
  (:mod:`hearts_tournaments.arena.runtimes`); for any other bot, neither;
* the bot's own files (:func:`hearts_tournaments.arena.entrants.bot_files`), read-only, same paths;
* its seat token at :data:`INSIDE_TOKEN` (read-only) and the referee's socket;
* a private size-capped tmpfs at :data:`INSIDE_SCRATCH`: its home, temp folder and cwd.

A :class:`Watchdog` thread samples every sandbox's processes (``/proc``) every
:data:`SAMPLE_S` and kills the whole sandbox past its memory (resident size), CPU time or
process-count budget: the memory cap is enforced this way on every machine (cgroup memory
limits are reported by ``hearts doctor`` but not used).

With ``sandbox = "none"`` a bot runs as a plain process, with the same allow-listed
environment, token file and rlimits, but sees the whole machine: for trusted bots only.
"""

from __future__ import annotations

import contextlib
import enum
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import util
from pathlib import Path
from typing import Any

#: Where the bot finds the referee's Unix socket and its seat token, inside the sandbox.
INSIDE_SOCKET = Path("/run/hearts/referee.sock")
INSIDE_TOKEN = Path("/run/hearts/token")
#: The bot's private writable folder inside the sandbox: HOME, TMPDIR and cwd.
INSIDE_SCRATCH = Path("/tmp")
#: The uid and gid a sandboxed bot runs as (nobody).
SANDBOX_UID = 65534
#: Seconds between two samples of the sandboxes' processes.
SAMPLE_S = 0.15
#: The project's packages, bound into the sandbox where they are installed (editable or not);
#: names this installation does not have are skipped.
PROJECT_PACKAGES = (
    "hearts_core",
    "hearts_protocol",
    "hearts_server",
    "hearts_client",
    "hearts_tournaments",
    "cancellation_hearts",
)
#: System folders bound read-only (or re-created as the same symlinks) when they exist.
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
#: Files and folders of /etc hidden from the bot (they may hold secrets).
HIDDEN_ETC_FILES = ("/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-")
HIDDEN_ETC_DIRS = ("/etc/ssh", "/etc/sudoers.d")
#: Environment variables passed from the runner's environment to a bot; nothing else is.
PASSED_ENV = ("PATH", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TZ")
#: The message for a machine without bubblewrap.
INSTALL_HINT = (
    "bubblewrap (bwrap) is not installed, and bots run in its sandbox by default: "
    '`apt-get install bubblewrap` (or `make run`), or set sandbox = "none" for trusted bots only'
)


class SandboxKind(enum.StrEnum):
    """How a bot's process is isolated."""

    BWRAP = "bwrap"
    NONE = "none"


class SandboxError(Exception):
    """The sandbox cannot be set up (bwrap missing, bad files): one clear line."""


@dataclass(frozen=True, slots=True)
class Limits:
    """What one bot may use in one game (the ``[limits]`` table of a tournament config).

    Attributes:
        memory_mb: Resident memory of all the bot's processes together.
        cpu_s: CPU seconds per game, per process (rlimit) and for all its processes together.
        processes: Processes at once.
        open_files: Open files per process.
        file_mb: Largest file it may write.
        scratch_mb: Size of its private scratch folder (sandboxed bots).
        log_bytes: Bytes of its stdout and stderr kept in its log file per game.
    """

    memory_mb: int = 1024
    cpu_s: int = 300
    processes: int = 64
    open_files: int = 1024
    file_mb: int = 64
    scratch_mb: int = 64
    log_bytes: int = 4_000_000

    def to_json(self) -> dict[str, int]:
        """The limits as a plain table."""
        return {name: getattr(self, name) for name in LIMIT_KEYS}


#: The keys of ``[limits]``, in order.
LIMIT_KEYS = ("memory_mb", "cpu_s", "processes", "open_files", "file_mb", "scratch_mb", "log_bytes")


def find_bwrap() -> str | None:
    """The bwrap executable on PATH, or None."""
    return shutil.which("bwrap")


def require_bwrap() -> str:
    """The bwrap executable.

    Raises:
        SandboxError: if it is not installed.
    """
    path = find_bwrap()
    if path is None:
        raise SandboxError(INSTALL_HINT)
    return path


def runtime_paths() -> tuple[Path, ...]:
    """Folders a bot may read besides the system's: this Python and the project's packages.

    The interpreter's prefixes (``sys.base_prefix``, ``sys.prefix``) and the folder of each
    installed project package (:data:`PROJECT_PACKAGES`), so that a Python bot, built-in or
    not, imports the SDK as it is installed here. Paths under a system folder are left out.
    """
    paths: list[Path] = []
    for prefix in {sys.base_prefix, sys.prefix, sys.exec_prefix}:
        paths.append(Path(prefix).resolve())
    for name in PROJECT_PACKAGES:
        try:
            spec = util.find_spec(name)
        except (ImportError, ValueError):
            continue
        if spec is None:
            continue
        for location in spec.submodule_search_locations or ():
            paths.append(Path(location).resolve())
    return _outermost(p for p in paths if not _under_system(p) and p.exists())


def _under_system(path: Path) -> bool:
    return any(path == Path(d) or Path(d) in path.parents for d in SYSTEM_DIRS)


def _outermost(paths: Iterable[Path]) -> tuple[Path, ...]:
    """The paths with any path inside another left out, sorted."""
    unique = sorted(set(paths))
    return tuple(p for p in unique if not any(q != p and q in p.parents for q in unique))


def program_prefix(program: str, env_path: str | None) -> Path | None:
    """The folder to bind so that ``program`` runs, when it lives outside the system folders.

    ``/opt/node/bin/node`` gives ``/opt/node``; a program under ``/usr`` gives None.
    """
    found = shutil.which(program, path=env_path) if "/" not in program else program
    if found is None:
        return None
    return _prefix(Path(found).resolve())


def program_prefixes(program: str, env_path: str | None) -> tuple[Path, ...]:
    """The folders to bind so that ``program`` runs: its prefix where PATH (or the command) names
    it, and where it really is, when either lives outside the system folders.

    A virtualenv's ``/home/me/env/bin/python`` is a link to the base interpreter: the base's
    prefix alone would not show the virtualenv (its ``pyvenv.cfg``, its packages), nor the name
    the command runs; ``/home/me/env`` is bound too.
    """
    found = shutil.which(program, path=env_path) if "/" not in program else program
    if found is None:
        return ()
    named = Path(os.path.abspath(found))
    prefixes = [_prefix(Path(os.path.realpath(named.parent)) / named.name), _prefix(named.resolve())]
    return tuple(dict.fromkeys(p for p in prefixes if p is not None))


def _prefix(path: Path) -> Path | None:
    if _under_system(path):
        return None
    folder = path.parent
    return folder.parent if folder.name == "bin" and folder.parent != Path("/") else folder


@dataclass(frozen=True, slots=True)
class SandboxSpec:
    """Everything :func:`bwrap_argv` needs to confine one bot.

    Attributes:
        command: The bot's command, as it runs inside (absolute paths for its files).
        socket: The referee's Unix socket on this machine (bound at :data:`INSIDE_SOCKET`), or
            None for a bot that gets no socket at all (a stdio bot: its pipes are its only way out).
        token_file: The seat's token file on this machine (bound at :data:`INSIDE_TOKEN`), or
            None (a stdio bot never sees its seat's token).
        files: The bot's own files and folders, bound read-only at the same paths.
        binds: Read-only (source, inside) binds laid over the rest: a snapshot of the bot's files
            (:mod:`hearts_tournaments.arena.snapshot`) in their place, outermost first.
        extra: More folders bound read-only (this Python, a program's prefix).
        limits: The bot's limits (the scratch size).
        hidden: Folders covered by an empty read-only tmpfs once everything is bound (what a
            runtime's interpreter prefix holds that is not the runtime's: its site-packages).
    """

    command: tuple[str, ...]
    socket: Path | None
    token_file: Path | None
    files: tuple[Path, ...] = ()
    extra: tuple[Path, ...] = ()
    limits: Limits = field(default_factory=Limits)
    binds: tuple[tuple[Path, Path], ...] = ()
    hidden: tuple[Path, ...] = ()


def bwrap_argv(bwrap: str, spec: SandboxSpec) -> list[str]:
    """The bwrap command line that runs ``spec.command`` confined."""
    argv = [
        bwrap,
        "--unshare-all",  # mount, PID, IPC, UTS, cgroup, user and network namespaces
        "--unshare-user",
        "--uid",
        str(SANDBOX_UID),
        "--gid",
        str(SANDBOX_UID),
        "--disable-userns",
        "--cap-drop",
        "ALL",
        "--die-with-parent",
        "--new-session",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
    ]
    # The scratch tmpfs first: a bot's files under /tmp on this machine are bound on top of it.
    scratch = str(INSIDE_SCRATCH)
    size = str(spec.limits.scratch_mb * 1024 * 1024)
    argv += ["--size", size, "--perms", "1777", "--tmpfs", scratch]
    argv += ["--size", size, "--perms", "1777", "--tmpfs", "/dev/shm"]
    for name in SYSTEM_DIRS:
        path = Path(name)
        if path.is_symlink():
            argv += ["--symlink", os.readlink(path), name]
        elif path.is_dir():
            argv += ["--ro-bind", name, name]
    for name in HIDDEN_ETC_FILES:
        if Path(name).exists():
            argv += ["--ro-bind", "/dev/null", name]
    for name in HIDDEN_ETC_DIRS:
        if Path(name).is_dir():
            argv += ["--tmpfs", name]
    # Every source absolute, here where paths cross into bwrap: the user may have typed them
    # relative (the default output folder runs/NAME is), and bwrap runs them from its own cwd.
    for path in _outermost(tuple(Path(os.path.abspath(p)) for p in (*spec.extra, *spec.files))):
        argv += ["--ro-bind", str(path), str(path)]
    for source, inside in sorted(spec.binds, key=lambda bind: len(bind[1].parts)):
        argv += ["--ro-bind", os.path.abspath(source), str(inside)]
    for path in spec.hidden:
        argv += ["--size", "4096", "--perms", "0555", "--tmpfs", str(path), "--remount-ro", str(path)]
    argv += ["--dir", str(INSIDE_TOKEN.parent)]
    if spec.token_file is not None:
        argv += ["--ro-bind", os.path.abspath(spec.token_file), str(INSIDE_TOKEN)]
    if spec.socket is not None:
        argv += ["--bind", os.path.abspath(spec.socket), str(INSIDE_SOCKET)]
    # The root and /dev are tmpfs of bwrap's own, with no size cap: read-only once set up.
    argv += ["--remount-ro", "/dev", "--remount-ro", "/"]
    argv += ["--chdir", scratch, "--", *spec.command]
    return argv


#: The scheduling priority (``nice`` value) every bot runs at, below the referee's. The referee's
#: clock times each bot from writing its request to reading its answer: bots busy on the CPU
#: (each within its limits) must not delay the referee, or they would lengthen every other bot's
#: measured time. With 32 bot processes on 2 cores this took the p99 of the referee's own time
#: per decision from 8.6 ms to 3.9 ms (bench/referee.py).
BOT_NICENESS = 10


def nice_prefix() -> list[str]:
    """``nice -n BOT_NICENESS`` (coreutils), or [] where there is no ``nice``."""
    nice = shutil.which("nice")
    return [nice, "-n", str(BOT_NICENESS)] if nice is not None else []


#: Sets rlimits, then execs the rest of its argv: where there is no ``prlimit``. (Not a
#: ``preexec_fn``: forking the runner, which has grpc's threads, to run Python before exec can
#: abort the child.)
_SET_RLIMITS = (
    "import os, resource as r, sys\n"
    "n, f, c = (int(a) for a in sys.argv[1:4])\n"
    "r.setrlimit(r.RLIMIT_NOFILE, (n, n))\n"
    "r.setrlimit(r.RLIMIT_FSIZE, (f, f))\n"
    "r.setrlimit(r.RLIMIT_CORE, (0, 0))\n"
    "r.setrlimit(r.RLIMIT_CPU, (c, c + 1))\n"
    "os.execvp(sys.argv[4], sys.argv[4:])\n"
)


def rlimit_prefix(limits: Limits) -> list[str]:
    """``nice -n 10 prlimit ... --`` setting a bot's priority and per-process rlimits (where
    prlimit is missing, a small Python that sets them and execs the command).

    The soft CPU limit sends SIGXCPU, the hard one (a second later) SIGKILL.
    """
    file_bytes = limits.file_mb * 1024 * 1024
    prlimit = shutil.which("prlimit")
    if prlimit is None:
        return [
            *nice_prefix(),
            sys.executable,
            "-c",
            _SET_RLIMITS,
            str(limits.open_files),
            str(file_bytes),
            str(limits.cpu_s),
        ]
    return [
        *nice_prefix(),
        prlimit,
        f"--nofile={limits.open_files}:{limits.open_files}",
        f"--fsize={file_bytes}:{file_bytes}",
        "--core=0:0",
        f"--cpu={limits.cpu_s}:{limits.cpu_s + 1}",
        "--",
    ]


def bot_environment(
    bot_env: Mapping[str, str], home: Path, base: Mapping[str, str] | None = None
) -> dict[str, str]:
    """A bot's whole environment: an allow-list of the runner's (:data:`PASSED_ENV`) and ``bot_env``.

    Never the runner's environment itself, which may hold ``HEARTS_ADMIN_TOKEN`` or any secret.
    """
    source = os.environ if base is None else base
    env = {name: source[name] for name in PASSED_ENV if name in source}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    env.update(HOME=str(home), TMPDIR=str(home), PYTHONDONTWRITEBYTECODE="1")
    env.update(bot_env)
    return env


# --- processes -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ProcSample:
    """One process as ``/proc/PID/stat`` shows it."""

    pid: int
    ppid: int
    cpu_ticks: int
    rss_pages: int


_STAT_TAIL = re.compile(rb"\)\s+(.*)$", re.DOTALL)
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
_PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")


def sample_processes() -> dict[int, ProcSample]:
    """Every process of the machine: parent, CPU time and resident size."""
    out: dict[int, ProcSample] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as stat:
                text = stat.read()
        except OSError:
            continue
        tail = _STAT_TAIL.search(text)
        if tail is None:
            continue
        fields = tail.group(1).split()
        # After "pid (comm)": state ppid ... utime(12) stime(13) ... rss(22), 0-based from state.
        try:
            out[int(name)] = ProcSample(
                pid=int(name),
                ppid=int(fields[1]),
                cpu_ticks=int(fields[11]) + int(fields[12]),
                rss_pages=int(fields[21]),
            )
        except (IndexError, ValueError):
            continue
    return out


def process_tree(root: int, processes: Mapping[int, ProcSample]) -> list[ProcSample]:
    """``root`` and all its descendants (a sandbox's whole PID namespace descends from it)."""
    children: dict[int, list[int]] = {}
    for sample in processes.values():
        children.setdefault(sample.ppid, []).append(sample.pid)
    tree: list[ProcSample] = []
    todo = [root]
    while todo:
        pid = todo.pop()
        if pid in processes:
            tree.append(processes[pid])
            todo.extend(children.get(pid, ()))
    return tree


def kill_tree(root: int) -> int:
    """SIGKILLs ``root`` and every descendant, outermost first; returns how many were signalled.

    Killing a PID namespace's first process kills the whole namespace, so a sandbox's
    daemonised children go with it.
    """
    killed = 0
    for _ in range(2):  # a second pass catches a child forked while the first one ran
        tree = process_tree(root, sample_processes())
        if not tree:
            break
        for sample in tree:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(sample.pid, signal.SIGKILL)
                killed += 1
    return killed


@dataclass(frozen=True, slots=True)
class Usage:
    """What a sandbox's processes use together at one sample."""

    processes: int
    rss_bytes: int
    cpu_s: float

    @classmethod
    def of(cls, tree: Sequence[ProcSample]) -> Usage:
        """The total of a process tree."""
        return cls(
            processes=len(tree),
            rss_bytes=sum(s.rss_pages for s in tree) * _PAGE_BYTES,
            cpu_s=sum(s.cpu_ticks for s in tree) / _CLOCK_TICKS,
        )

    def over(self, limits: Limits) -> str | None:
        """Why this usage breaks ``limits``, or None."""
        if self.rss_bytes > limits.memory_mb * 1024 * 1024:
            return f"memory {self.rss_bytes // (1024 * 1024)} MB over the cap of {limits.memory_mb} MB"
        if self.cpu_s > limits.cpu_s:
            return f"CPU {self.cpu_s:.1f} s over the budget of {limits.cpu_s} s"
        if self.processes > limits.processes:
            return f"{self.processes} processes over the cap of {limits.processes}"
        return None


class Watch:
    """One watched sandbox: its root process, its limits and, once killed, why."""

    def __init__(self, root: int, limits: Limits) -> None:
        self.root = root
        self.limits = limits
        self.killed: str | None = None
        #: The largest usage seen (for logs and tests).
        self.peak = Usage(0, 0, 0.0)
        #: CPU seconds used before the current game (a warm bot's budget is per game) ...
        self.cpu_offset = 0.0
        #: ... and in all, at the last sample.
        self.last_cpu = 0.0

    def rebase(self) -> None:
        """Starts a new game's CPU budget (a process that plays several games)."""
        self.cpu_offset = self.last_cpu


class Watchdog:
    """A thread that samples every watched sandbox and kills one past its limits.

    One thread for the whole runner: ``/proc`` is read once per sample, whatever the number of
    bots. Use as a context manager, or :meth:`start` and :meth:`stop`.
    """

    def __init__(self, interval_s: float = SAMPLE_S) -> None:
        self.interval_s = interval_s
        self._watches: dict[int, Watch] = {}
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Watchdog:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        """Starts sampling (idempotent)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="sandbox-watchdog", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        """Stops sampling."""
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(5)
            self._thread = None

    def watch(self, root: int, limits: Limits) -> Watch:
        """Watches the process tree of ``root`` from now on."""
        watch = Watch(root, limits)
        with self._lock:
            self._watches[root] = watch
        return watch

    def forget(self, watch: Watch) -> None:
        """Stops watching."""
        with self._lock:
            self._watches.pop(watch.root, None)

    def check(self) -> None:
        """Samples once and kills every sandbox past its limits."""
        with self._lock:
            watches = list(self._watches.values())
        if not watches:
            return
        processes = sample_processes()
        for watch in watches:
            if watch.killed is not None:
                continue
            usage = Usage.of(process_tree(watch.root, processes))
            watch.peak = Usage(
                max(watch.peak.processes, usage.processes),
                max(watch.peak.rss_bytes, usage.rss_bytes),
                max(watch.peak.cpu_s, usage.cpu_s),
            )
            watch.last_cpu = usage.cpu_s
            this_game = Usage(usage.processes, usage.rss_bytes, usage.cpu_s - watch.cpu_offset)
            reason = this_game.over(watch.limits)
            if reason is not None:
                watch.killed = reason
                kill_tree(watch.root)

    def _run(self) -> None:
        while not self._stopping.wait(self.interval_s):
            try:
                self.check()
            except Exception:  # the watchdog must outlive a bad sample
                continue


# --- what the machine offers (hearts doctor) --------------------------------------------------


@dataclass(frozen=True, slots=True)
class Feature:
    """One isolation feature of this machine."""

    name: str
    available: bool
    detail: str
    used: bool

    def to_json(self) -> dict[str, Any]:
        """The feature as a JSON object."""
        return {"name": self.name, "available": self.available, "detail": self.detail, "used": self.used}

    def line(self) -> str:
        """One line for the terminal."""
        state = "yes" if self.available else "no"
        use = "used" if self.used else "not used"
        return f"{self.name + ':':<22} {state:<4} {use:<9} {self.detail}"


def machine_features() -> tuple[Feature, ...]:
    """Which isolation features this machine offers and which the runner uses."""
    features: list[Feature] = []
    bwrap = find_bwrap()
    version = _bwrap_version(bwrap) if bwrap else ""
    features.append(
        Feature(
            "bubblewrap",
            bwrap is not None,
            f"{bwrap} ({version})" if bwrap else "missing: apt-get install bubblewrap",
            bwrap is not None,
        )
    )
    userns, userns_detail = _user_namespaces()
    features.append(Feature("user namespaces", userns, userns_detail, userns and bwrap is not None))
    sandbox_ok, sandbox_detail = _sandbox_works(bwrap)
    features.append(Feature("sandbox start", sandbox_ok, sandbox_detail, sandbox_ok))
    version_name, memory_ok, cgroup_detail = _cgroups()
    features.append(
        Feature(
            "cgroup memory limit",
            memory_ok,
            f"cgroup {version_name}: {cgroup_detail}; the runner caps memory with its watchdog instead",
            False,
        )
    )
    features.append(
        Feature(
            "memory watchdog",
            True,
            f"samples every sandbox's resident size, CPU time and processes every {int(SAMPLE_S * 1000)} ms",
            True,
        )
    )
    prlimit = shutil.which("prlimit")
    features.append(
        Feature(
            "rlimits",
            True,
            f"open files, file size, core 0, CPU seconds via {prlimit or 'preexec (no prlimit found)'}",
            True,
        )
    )
    landlock = _landlock()
    features.append(Feature("landlock", landlock[0], landlock[1], False))
    return tuple(features)


def runner_choice(features: Sequence[Feature]) -> dict[str, str]:
    """What the tournament runner uses on this machine, from :func:`machine_features`."""
    by_name = {f.name: f for f in features}
    works = by_name["sandbox start"].available
    return {
        "sandbox": "bwrap" if works else "none possible only (bwrap missing or not working)",
        "memory_cap": "watchdog",
        "rlimits": "prlimit" if shutil.which("prlimit") else "preexec",
    }


def _bwrap_version(bwrap: str) -> str:
    try:
        out = subprocess.run([bwrap, "--version"], capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"version unknown: {exc}"
    return out.stdout.strip() or out.stderr.strip()


def _user_namespaces() -> tuple[bool, str]:
    limit = _read("/proc/sys/user/max_user_namespaces")
    if limit is None or limit.strip() == "0":
        return False, f"max_user_namespaces = {limit.strip() if limit else 'unknown'}"
    unprivileged = _read("/proc/sys/kernel/unprivileged_userns_clone")
    detail = f"max_user_namespaces = {limit.strip()}"
    if unprivileged is not None:
        detail += f", unprivileged_userns_clone = {unprivileged.strip()}"
    if os.geteuid() == 0:
        detail += " (the runner is root)"
    return True, detail


def _sandbox_works(bwrap: str | None) -> tuple[bool, str]:
    if bwrap is None:
        return False, "no bwrap"
    argv = [
        bwrap, "--unshare-all", "--unshare-user", "--disable-userns", "--cap-drop", "ALL",
        "--die-with-parent", "--proc", "/proc", "--dev", "/dev",
    ]  # fmt: skip
    for name in SYSTEM_DIRS:
        path = Path(name)
        if path.is_symlink():
            argv += ["--symlink", os.readlink(path), name]
        elif path.is_dir():
            argv += ["--ro-bind", name, name]
    argv += ["--", "true"]
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, str(exc)
    if out.returncode != 0:
        return False, (out.stderr.strip().splitlines() or [f"exit {out.returncode}"])[-1]
    return True, "a process starts with every namespace unshared and no network"


def _cgroups() -> tuple[str, bool, str]:
    if Path("/sys/fs/cgroup/cgroup.controllers").exists():
        own = _read("/proc/self/cgroup") or ""
        relative = next((line[3:] for line in own.splitlines() if line.startswith("0::")), "/").strip()
        folder = Path("/sys/fs/cgroup") / relative.lstrip("/")
        controllers = (_read(str(folder / "cgroup.controllers")) or "").split()
        writable = os.access(folder, os.W_OK) and os.access(folder / "cgroup.subtree_control", os.W_OK)
        ok = "memory" in controllers and writable
        return "v2", ok, f"memory controller {'delegated' if ok else 'not delegated'} at {folder}"
    memory = Path("/sys/fs/cgroup/memory")
    if memory.is_dir():
        ok = os.access(memory, os.W_OK)
        return "v1", ok, f"memory hierarchy at {memory} {'writable' if ok else 'read-only'}"
    return "none", False, "no cgroup memory controller mounted"


def _landlock() -> tuple[bool, str]:
    lsm = _read("/sys/kernel/security/lsm")
    if lsm is None:
        return False, "unknown (no /sys/kernel/security/lsm); not used"
    active = "landlock" in lsm.split(",")
    return active, f"LSMs: {lsm.strip()}; not used (mount namespaces already hide the files)"


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text()
    except OSError:
        return None
