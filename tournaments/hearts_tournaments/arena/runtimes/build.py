"""Building a runtime's folder on this machine: one builder per runtime, each filling a fresh folder.

A builder gets the empty folder and the path the bot will see it at (``/opt/hearts/runtimes/NAME``
in the sandbox) and returns a :class:`Built`: what it put there (the versions), the command words
it maps, and what outside the folder the programs need. It writes nothing else, and nothing it
copies holds a secret: packages, jars and modules, never a configuration, a cache or a token.

* ``python-sdk``: a virtual environment of this Python's own interpreter holding copies of the
  SDK, the core, the simulator, grpcio, protobuf and numpy exactly as this installation has them
  (offline; an editable install is copied from its sources), compiled to bytecode as the bot sees
  them.
* ``java-grpc``: the jars of grpc-java and protobuf-java (``recipes/java-grpc/pom.xml``), copied
  by ``mvn dependency:copy-dependencies`` from Maven Central into ``lib/``.
* ``node-grpc``: ``@grpc/grpc-js`` and ``@grpc/proto-loader`` (``recipes/node-grpc/``, a locked
  tree) installed by ``npm ci --omit=dev --ignore-scripts`` from the npm registry.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib import metadata, util
from pathlib import Path
from xml.etree import ElementTree

from hearts_tournaments.arena.sandbox import SYSTEM_DIRS, program_prefixes

#: The recipes of the runtimes that fetch their parts (a pom, a locked npm tree).
RECIPES = Path(__file__).parent / "recipes"
#: Seconds an install step (``mvn``, ``npm``, building the virtual environment) may take.
STEP_S = 1800
#: The distributions of ``python-sdk``; their dependencies come along (extras left out).
PYTHON_SDK_DISTRIBUTIONS = ("cancellation-hearts-sdk", "cancellation-hearts-sim", "numpy")
#: The project's own distributions and their import packages (hatch's ``packages``; a test holds
#: them to the pyproject files): copied from where this Python imports them, since an editable
#: install has no files of its own to copy.
PROJECT_PACKAGES = {
    "cancellation-hearts-core": ("hearts_core", "hearts_protocol", "cancellation_hearts"),
    "cancellation-hearts-sdk": ("hearts_client",),
}
#: Files of an installed distribution that are never copied: bytecode (compiled again for the
#: paths the bot sees), and where it was installed from (a path of this machine).
_SKIPPED = re.compile(r"(^|/)__pycache__/|\.pyc$|(^|/)direct_url\.json$")


class BuildError(Exception):
    """A runtime cannot be built here: one line naming what is missing and how to get it."""


@dataclass(frozen=True, slots=True)
class Built:
    """What a builder put in a runtime's folder.

    Attributes:
        versions: Each component and its version (``python``, ``grpcio``, ``java``, ...).
        programs: Each command word it maps to its program: a path inside the folder, or an
            absolute path of this machine (a system program: ``/usr/bin/java``).
        binds: Folders outside the system's that the programs need (an interpreter's prefix),
            bound read-only at the same paths.
        hidden: Folders inside those binds covered by an empty tmpfs (the interpreter's own
            site-packages: what else this machine installed there is not the runtime's).
    """

    versions: dict[str, str]
    programs: dict[str, str]
    binds: tuple[str, ...] = ()
    hidden: tuple[str, ...] = ()


def _run(argv: list[str], what: str, cwd: Path | None = None) -> str:
    """Runs one step of a build; its output on success, else :class:`BuildError` with its last lines."""
    try:
        done = subprocess.run(
            argv,
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=STEP_S,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except OSError as exc:
        raise BuildError(f"{what}: cannot run {argv[0]}: {exc.strerror}") from None
    except subprocess.TimeoutExpired:
        raise BuildError(f"{what}: {argv[0]} took more than {STEP_S} s") from None
    if done.returncode != 0:
        said = [line.strip() for line in (done.stdout + done.stderr).splitlines() if line.strip()]
        tail = "; ".join(said[-3:]) or f"exit {done.returncode}"
        raise BuildError(f"{what} failed: {tail}")
    return done.stdout


def _digest(*parts: str | bytes) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode() if isinstance(part, str) else part)
        digest.update(b"\0")
    return digest.hexdigest()


def _system(path: Path) -> bool:
    return any(path == Path(d) or Path(d) in path.parents for d in SYSTEM_DIRS)


# --- python-sdk -------------------------------------------------------------------------------


def base_interpreter() -> Path:
    """This Python's own interpreter: the one its virtual environment (if any) was made from."""
    return Path(os.path.realpath(getattr(sys, "_base_executable", sys.executable)))


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement_name(requirement: str) -> tuple[str, bool]:
    """A requirement's distribution name, and whether a marker makes it conditional."""
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    if match is None:  # pragma: no cover - metadata always names a distribution
        raise BuildError(f"cannot read the requirement {requirement!r}")
    return _normal(match.group(1)), ";" in requirement


def python_distributions() -> list[metadata.Distribution]:
    """:data:`PYTHON_SDK_DISTRIBUTIONS` and what they need, as this Python has them (extras left out).

    Raises:
        BuildError: one of them is not installed here.
    """
    found: dict[str, metadata.Distribution] = {}
    todo = [(_normal(n), False) for n in PYTHON_SDK_DISTRIBUTIONS]
    while todo:
        name, conditional = todo.pop()
        if name in found:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            if conditional:
                continue  # a marker this Python does not meet (another platform, an old version)
            hint = "`make sim`" if name == "cancellation-hearts-sim" else f"pip install {name}"
            raise BuildError(f"python-sdk needs {name}, which this Python does not have: {hint}") from None
        found[name] = dist
        for requirement in dist.requires or ():
            if re.search(r"\bextra\s*==", requirement):
                continue  # an extra's (the SDK's numpy and pettingzoo extras, grpcio's protobuf)
            todo.append(_requirement_name(requirement))
    return [found[n] for n in sorted(found)]


def _package_files(package: str) -> Iterator[tuple[Path, Path]]:
    """(source, path relative to site-packages) of every file of an importable package."""
    spec = util.find_spec(package)
    if spec is None:
        raise BuildError(f"python-sdk needs the package {package}, which this Python cannot import")
    roots = list(spec.submodule_search_locations or ())
    if not roots:
        origin = Path(spec.origin or "")
        yield origin, Path(origin.name)
        return
    for root in map(Path, roots):
        for path in sorted(root.rglob("*")):
            relative = path.relative_to(root)
            if path.is_file() and not _SKIPPED.search(relative.as_posix()):
                yield path, Path(package) / relative


def _record_files(dist: metadata.Distribution) -> Iterator[tuple[Path, Path]]:
    """(source, path relative to site-packages) of an installed distribution's files (its RECORD)."""
    for entry in dist.files or ():
        relative = Path(str(entry))
        if relative.parts[:1] == ("..",) or _SKIPPED.search(relative.as_posix()):
            continue  # scripts in bin/, bytecode, where it came from
        yield Path(str(dist.locate_file(entry))), relative


def _metadata_file(dist: metadata.Distribution) -> tuple[str, str]:
    """The dist-info folder name and METADATA text of a distribution."""
    name = f"{_normal(dist.metadata['Name']).replace('-', '_')}-{dist.version}.dist-info"
    return name, dist.read_text("METADATA") or f"Metadata-Version: 2.1\nName: {dist.metadata['Name']}\n"


def _python_files(dists: list[metadata.Distribution]) -> Iterator[tuple[Path, Path]]:
    for dist in dists:
        packages = PROJECT_PACKAGES.get(_normal(dist.metadata["Name"]))
        if packages is None:
            yield from _record_files(dist)
        else:
            for package in packages:
                yield from _package_files(package)


def python_sdk_versions() -> dict[str, str]:
    """What python-sdk would hold if built now: this Python's version and each distribution's
    (nothing when one is missing: the install will say which)."""
    try:
        dists = python_distributions()
    except BuildError:
        return {}
    return {"python": platform.python_version(), **{_normal(d.metadata["Name"]): d.version for d in dists}}


def python_sdk_fingerprint() -> str:
    """What ``python-sdk`` would be built from now: this interpreter, each distribution's version
    and RECORD (its files' hashes), and the project's packages' files (an editable install's
    sources change without a new version)."""
    parts: list[str | bytes] = [str(base_interpreter()), sys.version]
    for dist in python_distributions():
        name = _normal(dist.metadata["Name"])
        parts += [name, dist.version]
        if name in PROJECT_PACKAGES:
            for package in PROJECT_PACKAGES[name]:
                for source, relative in _package_files(package):
                    parts += [relative.as_posix(), source.read_bytes()]
        else:
            parts.append(dist.read_text("RECORD") or "")
    return _digest(*parts)


_PROBE = (
    "import json, platform, sys, sysconfig\n"
    "print(json.dumps({'prefix': sys.prefix, 'exec_prefix': sys.exec_prefix,"
    " 'purelib': sysconfig.get_path('purelib'), 'platlib': sysconfig.get_path('platlib'),"
    " 'version': platform.python_version()}))"
)


def build_python_sdk(folder: Path, inside: Path) -> Built:
    """A virtual environment of :func:`base_interpreter` in ``folder`` with the SDK's packages copied in.

    Raises:
        BuildError: a distribution is missing, or the interpreter cannot make a virtual environment.
    """
    dists = python_distributions()
    base = base_interpreter()
    _run([str(base), "-I", "-m", "venv", "--without-pip", str(folder)], "making its virtual environment")
    # pyvenv.cfg's `command` line names the temporary folder it was made in: drop it.
    config = folder / "pyvenv.cfg"
    config.write_text(
        "".join(
            line for line in config.read_text().splitlines(keepends=True) if not line.startswith("command")
        )
    )
    for script in (folder / "bin").iterdir():
        if script.name.startswith(("activate", "Activate")):
            script.unlink()  # they name this machine's path; a bot never activates anything
    python = folder / "bin" / "python3"
    site = Path(json.loads(_run([str(python), "-I", "-c", _PROBE], "reading its paths"))["purelib"])
    for source, relative in _python_files(dists):
        target = site / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)
    for dist in dists:
        name, text = _metadata_file(dist)
        if not (site / name).is_dir():  # an editable install: its METADATA, for versions
            (site / name).mkdir()
            (site / name / "METADATA").write_text(text)
    # Bytecode as the bot's interpreter would write it, with the paths the bot sees (tracebacks).
    seen_site = inside / site.relative_to(folder)
    _run(
        [str(python), "-I", "-m", "compileall", "-q", "-s", str(site), "-p", str(seen_site), str(site)],
        "compiling its packages",
    )
    base_info = json.loads(_run([str(base), "-I", "-c", _PROBE], "reading this Python's paths"))
    binds = sorted({p for p in (base_info["prefix"], base_info["exec_prefix"]) if not _system(Path(p))})
    hidden = sorted(
        {
            p
            for p in (base_info["purelib"], base_info["platlib"])
            if any(Path(b) in Path(p).parents for b in binds) and Path(p).is_dir()
        }
    )
    versions = {"python": base_info["version"]}
    versions.update({_normal(d.metadata["Name"]): d.version for d in dists})
    return Built(
        versions=versions,
        programs={"python3": "bin/python3", "python": "bin/python3"},
        binds=tuple(binds),
        hidden=tuple(hidden),
    )


# --- java-grpc --------------------------------------------------------------------------------

JAVA_POM = RECIPES / "java-grpc" / "pom.xml"


def _pom_property(name: str) -> str:
    namespace = {"m": "http://maven.apache.org/POM/4.0.0"}
    found = ElementTree.parse(JAVA_POM).getroot().find(f"m:properties/m:{name}", namespace)
    assert found is not None and found.text, name
    return found.text


def java_versions() -> dict[str, str]:
    """The versions the java-grpc recipe pins."""
    return {"grpc-java": _pom_property("grpc.version"), "protobuf-java": _pom_property("protobuf.version")}


def _program(name: str, what: str) -> Path:
    found = shutil.which(name)
    if found is None:
        raise BuildError(f"{what} needs {name}, which is not on PATH: install it and run the install again")
    return Path(found)


def _version_line(argv: list[str], what: str) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BuildError(f"{what}: cannot run {argv[0]}: {exc}") from None
    return (done.stdout + done.stderr).strip()


def _outside_system(program: Path) -> tuple[str, ...]:
    return tuple(str(p) for p in program_prefixes(str(program), None))


def build_java_grpc(folder: Path, inside: Path) -> Built:
    """``lib/`` with the jars of :data:`JAVA_POM`'s dependencies (mvn, from Maven Central).

    Raises:
        BuildError: no java or mvn, or Maven cannot fetch them.
    """
    java = _program("java", "java-grpc")
    mvn = _program("mvn", "java-grpc")
    with tempfile.TemporaryDirectory(prefix="hearts-runtime-java-") as scratch:
        shutil.copy2(JAVA_POM, Path(scratch) / "pom.xml")
        _run(
            [
                str(mvn), "-q", "-B", "-f", str(Path(scratch) / "pom.xml"), "dependency:copy-dependencies",
                f"-DoutputDirectory={folder / 'lib'}", "-DincludeScope=runtime",
            ],
            "mvn dependency:copy-dependencies (from Maven Central)",
        )  # fmt: skip
    said = _version_line([str(java), "-version"], "java-grpc")
    match = re.search(r'version "([^"]+)"', said)
    versions = {"java": match.group(1) if match else said.splitlines()[0] if said else "unknown"}
    versions.update(java_versions())
    return Built(versions=versions, programs={"java": str(java)}, binds=_outside_system(java))


# --- node-grpc --------------------------------------------------------------------------------

NODE_RECIPE = RECIPES / "node-grpc"
NODE_PACKAGES = ("@grpc/grpc-js", "@grpc/proto-loader")


def node_versions() -> dict[str, str]:
    """The versions the node-grpc recipe's lock pins."""
    lock = json.loads((NODE_RECIPE / "package-lock.json").read_text())
    return {name: lock["packages"][f"node_modules/{name}"]["version"] for name in NODE_PACKAGES}


def build_node_grpc(folder: Path, inside: Path) -> Built:
    """``node_modules/`` of the locked tree in :data:`NODE_RECIPE` (npm ci, from the npm registry).

    Install scripts are not run: nothing of the packages executes on this machine while installing.

    Raises:
        BuildError: no node or npm, or npm cannot fetch them.
    """
    node = _program("node", "node-grpc")
    npm = _program("npm", "node-grpc")
    for name in ("package.json", "package-lock.json"):
        shutil.copy2(NODE_RECIPE / name, folder / name)
    _run(
        [str(npm), "ci", "--omit=dev", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"],
        "npm ci (from the npm registry)",
        cwd=folder,
    )
    versions = {"node": _version_line([str(node), "--version"], "node-grpc").lstrip("v")}
    versions.update(node_versions())
    return Built(versions=versions, programs={"node": str(node)}, binds=_outside_system(node))


def recipe_fingerprint(*files: Path) -> Callable[[], str]:
    """A fingerprint of a runtime built from recipe files: their bytes."""

    def fingerprint() -> str:
        return _digest(*(f.read_bytes() for f in files))

    return fingerprint
