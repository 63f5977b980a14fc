"""``hearts doctor`` beyond isolation: what else a bot author or an organiser needs on this machine.

- the toolchain of each example bot (``clients/<language>``: what its ``build`` script needs);
- Chromium and Playwright, which the web tests drive;
- the SDK as installed (``cancellation-hearts-core`` and ``cancellation-hearts-sdk``);
- whether ``python`` from ``PATH`` starts inside the tournament's sandbox, and imports the SDK
  there (``command = ["python", "my_bot.py"]`` depends on it; a pyenv shim does not start);
- each runtime of :mod:`hearts_tournaments.arena.runtimes`: installed, stale or missing.

Each is a :class:`~hearts_tournaments.arena.sandbox.Feature` line, as the isolation features are.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from importlib import metadata, util
from pathlib import Path

from hearts_tournaments.arena import runtimes
from hearts_tournaments.arena.bots import BotSpec
from hearts_tournaments.arena.entrants import sandbox_extra
from hearts_tournaments.arena.sandbox import Feature, SandboxSpec, bot_environment, bwrap_argv, find_bwrap

#: The programs each example bot's build needs (as tests/test_language_bots.py requires them).
TOOLCHAINS: dict[str, tuple[str, ...]] = {
    "go": ("go",),
    "rust": ("cargo",),
    "java": ("java", "mvn"),
    "typescript": ("node", "npm"),
    "cpp": ("g++", "cmake"),
}
#: Where the web tests look for Chromium (Debian's package).
CHROMIUM = Path("/usr/bin/chromium")
#: Seconds a version query or the sandboxed ``python`` may take.
PROBE_S = 20
#: What the sandboxed ``python`` runs: it prints where it is, then imports the SDK.
_PYTHON_PROBE = "import sys; print(sys.executable, flush=True); import hearts_client"


def toolchain_features() -> list[Feature]:
    """One line per example bot's language: its tools on PATH, with the first one's version."""
    out = []
    for language, tools in TOOLCHAINS.items():
        missing = [t for t in tools if shutil.which(t) is None]
        if missing:
            detail = f"missing {', '.join(missing)}: its tests are skipped (fail under CI=true)"
        else:
            detail = f"{', '.join(tools)}: {_version(tools[0])}"
        out.append(Feature(f"toolchain {language}", not missing, detail, not missing))
    return out


def chromium_feature() -> Feature:
    """Chromium and Playwright for the web tests."""
    playwright = util.find_spec("playwright") is not None
    if not CHROMIUM.exists():
        detail = f"{CHROMIUM} missing: apt-get install -y chromium (the web browser tests need it)"
        return Feature("chromium", False, detail, False)
    if not playwright:
        return Feature("chromium", False, f"{CHROMIUM}, but no playwright: pip install -e '.[dev]'", False)
    return Feature("chromium", True, f"{CHROMIUM} ({_version(str(CHROMIUM))}), playwright installed", True)


def sdk_feature() -> Feature:
    """The SDK's two distributions, as this Python has them."""
    found = []
    for dist in ("cancellation-hearts-core", "cancellation-hearts-sdk"):
        try:
            found.append(f"{dist} {metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            return Feature(
                "sdk", False, f"{dist} is not installed: pip install ./proto/python ./clients/python", False
            )
    spec = util.find_spec("hearts_client")
    where = Path(spec.origin).parent if spec is not None and spec.origin else "?"
    return Feature("sdk", True, f"{', '.join(found)} (hearts_client at {where})", True)


def path_python_feature() -> Feature:
    """Whether ``python`` from PATH starts in the sandbox (as a bot's ``command`` would run it)."""
    name = "python on PATH"
    env = bot_environment({}, Path("/tmp"))
    found = shutil.which("python", path=env.get("PATH"))
    if found is None:
        return Feature(name, False, "no python on PATH: name the interpreter by its path in command", False)
    bwrap = find_bwrap()
    if bwrap is None:
        return Feature(name, False, f"{found}; no bwrap to try it in the sandbox", False)
    command = ("python", "-c", _PYTHON_PROBE)
    with tempfile.TemporaryDirectory(prefix="hearts-doctor-") as folder:
        spec = BotSpec(name="doctor", command=command, workdir=Path(folder))
        confined = SandboxSpec(
            command=command, socket=None, token_file=None, extra=sandbox_extra(spec, command, env.get("PATH"))
        )
        try:
            ran = subprocess.run(
                bwrap_argv(bwrap, confined),
                capture_output=True,
                text=True,
                env=env,
                timeout=PROBE_S,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return Feature(name, False, f"{found}: {exc}", False)
    inside = ran.stdout.strip()
    error = next(
        (line for line in reversed(ran.stderr.splitlines()) if line.strip()), f"exit {ran.returncode}"
    )
    if ran.returncode == 0:
        return Feature(name, True, f"{found} starts in the sandbox ({inside}) and imports the SDK", True)
    if inside:
        return Feature(
            name,
            False,
            f"{found} starts in the sandbox ({inside}) but cannot import the SDK ({error}): a bot "
            "needs the Python that has it, by its path",
            False,
        )
    return Feature(
        name,
        False,
        f"{found} does not start in the sandbox ({error}): in command, name the interpreter itself "
        '(e.g. "/usr/bin/python3" or a virtualenv\'s bin/python)',
        False,
    )


def runtime_features() -> list[Feature]:
    """One line per runtime a bot may name: installed (with its versions), stale or missing."""
    out = []
    for found in runtimes.states():
        name = found.runtime.name
        install = f"hearts runtime install {name}"
        if found.missing:
            install += f" (needs {', '.join(found.missing)}, missing here)"
        if found.installed is None:
            detail = f"missing: bots naming it cannot play here; {install}"
        elif found.stale:
            why = found.problem or "built from another installation than this one"
            detail = f"stale ({why}): {install}"
        else:
            versions = ", ".join(f"{k} {v}" for k, v in found.installed.built.versions.items())
            detail = f"{found.installed.folder} ({versions})"
        ok = found.status == "installed"
        out.append(Feature(f"runtime {name}", ok, detail, ok))
    return out


def more_features() -> tuple[Feature, ...]:
    """Everything :mod:`hearts doctor` checks besides isolation."""
    return (
        *toolchain_features(),
        chromium_feature(),
        sdk_feature(),
        path_python_feature(),
        *runtime_features(),
    )


def _version(program: str) -> str:
    flag = "-version" if Path(program).name == "java" else "--version"
    if Path(program).name == "go":
        flag = "version"
    try:
        out = subprocess.run([program, flag], capture_output=True, text=True, timeout=PROBE_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"version unknown: {exc}"
    text = (out.stdout.strip() or out.stderr.strip()).splitlines()
    return text[0] if text else f"exit {out.returncode}"
