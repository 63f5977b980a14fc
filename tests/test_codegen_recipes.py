"""The code-generation recipes of docs/PROTOCOL.md ("Generating the code") work as written.

Each recipe runs as an author runs it: in an empty folder holding a copy of ``proto/`` and
nothing else of the repository, the doc's blocks run verbatim from that folder (each found by
its ``<!-- recipe NAME -->`` marker, so that the text tested is the text published), a minimal
bot of ``tests/codegen/<language>/`` is written where the doc says the author's bot goes, the
doc's build block builds it, and the bot, started by the doc's command for its language, plays a
game at a real referee without a fault. A missing toolchain skips (fails under ``CI=true``).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from hearts_server.server import RefereeServer
from tests.conftest import ROOT
from tests.helpers.toolchains import absent
from tests.test_language_bots import Launch, assert_fault_free, play_a_game, scratch_env

DOC = ROOT / "docs" / "PROTOCOL.md"
SECTION = "## Generating the code"
BOTS = ROOT / "tests" / "codegen"
#: A marker names the block after it; ``> PATH`` makes the block a file written at PATH.
MARKER = re.compile(r"<!-- recipe ([\w.-]+)(?: > (\S+))? -->\n```\w*\n(.*?)```", re.S)


@dataclass(frozen=True)
class Block:
    """One marked block of the doc: commands, or a file's text when ``path`` is set."""

    text: str
    path: str | None


@dataclass(frozen=True)
class Recipe:
    """One language's recipe: the blocks that generate, the bot's files, the blocks that build."""

    language: str  # its subsection, and its row in the doc's table of commands
    tools: tuple[str, ...]
    generate: tuple[str, ...]
    bot: dict[str, str]  # a file under tests/codegen/ -> where the author's bot goes
    build: tuple[str, ...]
    uses: str  # how the doc says to use the generated code; the bot uses it so
    budget_s: int  # on a loaded machine with warm package caches
    #: Added to the author's environment. What the test proves (the doc's blocks, run as
    #: written, generate code a bot builds on and plays a clean game with) does not depend on
    #: how hard the compiler optimises, so a build that takes minutes may be told not to.
    env: tuple[tuple[str, str], ...] = ()


GO_USES = 'pb "example.com/mybot/cancellation_hearts/v1"'
TS_USES = (
    "protoLoader.loadSync('cancellation_hearts/v1/referee_service.proto', "
    "{ longs: String, enums: String, defaults: true, oneofs: true, includeDirs: [PROTO_DIR] })"
)
#: Cheapest first.
RECIPES = {
    "go": Recipe(
        language="Go",
        tools=("go", "protoc"),
        generate=("go-setup", "go-generate"),
        bot={"go/main.go": "main.go"},
        build=("go-build",),
        uses=GO_USES,
        budget_s=600,
    ),
    "go-buf": Recipe(
        language="Go",
        tools=("go", "buf"),
        generate=("go-setup", "go-buf-config", "go-buf-generate"),
        bot={"go/main.go": "main.go"},
        build=("go-build",),
        uses=GO_USES,
        budget_s=600,
    ),
    "typescript": Recipe(
        language="TypeScript",
        tools=("node", "npm"),
        generate=("typescript-setup",),
        bot={"typescript/main.ts": "src/main.ts"},
        build=("typescript-build",),
        uses=TS_USES,
        budget_s=600,
    ),
    "python": Recipe(
        language="Python",
        tools=("python3",),
        generate=("python-generate",),
        bot={"python/bot.py": "bot.py"},
        build=(),
        uses="from cancellation_hearts.v1 import game_pb2, referee_service_pb2, referee_service_pb2_grpc",
        budget_s=600,
    ),
    "cpp": Recipe(
        language="C++",
        tools=("g++", "pkg-config", "protoc", "grpc_cpp_plugin"),
        generate=("cpp-generate",),
        bot={"cpp/bot.cc": "bot.cc"},
        build=("cpp-build",),
        uses='#include "cancellation_hearts/v1/referee_service.grpc.pb.h"',
        budget_s=900,
    ),
    "java": Recipe(
        language="Java",
        tools=("java", "mvn"),
        generate=("java-pom",),
        bot={"java/Bot.java": "src/main/java/Bot.java"},
        build=("java-build",),
        uses="import org.cancellationhearts.v1.RefereeServiceGrpc;",
        budget_s=900,
    ),
    "rust": Recipe(
        language="Rust",
        tools=("cargo",),
        generate=("rust-setup", "rust-build-script"),
        bot={"rust/main.rs": "src/main.rs"},
        build=("rust-build",),
        uses='tonic::include_proto!("cancellation_hearts.v1")',
        budget_s=2400,
        # `cargo build --release` as written, unoptimised: tonic, hyper and tokio build in about
        # half the CPU time.
        env=(("CARGO_PROFILE_RELEASE_OPT_LEVEL", "0"),),
    ),
}


def section() -> str:
    text = DOC.read_text()
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    return text[start : end if end >= 0 else len(text)]


def blocks() -> dict[str, Block]:
    found: dict[str, Block] = {}
    for match in MARKER.finditer(section()):
        name, path, text = match.groups()
        assert name not in found, f"two blocks are marked {name!r} in {DOC}"
        found[name] = Block(text, path)
    return found


def commands() -> dict[str, str]:
    """The doc's table of commands that run a bot, by language."""
    table = section().split("<!-- recipe commands -->\n", 1)[1]
    rows = re.findall(r"^\| ([^|]+?) \| `([^`]+)` \|$", table, re.M)
    return dict(rows)


def subsection(language: str) -> str:
    text = section()
    start = text.index(f"\n### {language}\n")
    end = text.find("\n### ", start + 1)
    return text[start:end]


def test_every_block_of_the_section_is_marked_and_run_by_a_recipe() -> None:
    fences = len(re.findall(r"^```\w+$", section(), re.M))
    marked = blocks()
    assert fences == len(marked), (
        f"{fences - len(marked)} unmarked code block(s) in {SECTION!r}: nothing runs them"
    )
    used = {name for recipe in RECIPES.values() for name in (*recipe.generate, *recipe.build)}
    assert set(marked) == used, (
        f"marked but not run: {set(marked) - used}; run but not in the doc: {used - set(marked)}"
    )
    assert {recipe.language for recipe in RECIPES.values()} == set(commands())


@pytest.mark.parametrize("name", list(RECIPES))
def test_the_doc_says_how_to_use_the_code_as_the_bot_does(name: str) -> None:
    recipe = RECIPES[name]
    assert recipe.uses in subsection(recipe.language)
    assert recipe.uses in "".join((BOTS / source).read_text() for source in recipe.bot)


def test_the_examples_generate_their_code_as_the_doc_says() -> None:
    """One way: the examples' build pins the doc's versions and runs its generators with its flags
    (their proto/ is ../../proto)."""
    doc = blocks()
    examples = ROOT / "clients"
    go_mod = (examples / "go" / "go.mod").read_text()
    for module in ("google.golang.org/protobuf", "google.golang.org/grpc/cmd/protoc-gen-go-grpc"):
        pinned = re.search(rf"^\s*{re.escape(module)} (v\S+)", go_mod, re.M)
        assert pinned is not None, module
        version = rf"{re.escape(module)}(/\S+)?@{re.escape(pinned.group(1))}(\s|$)"
        assert re.search(version, doc["go-setup"].text), (module, pinned.group(1))
    pom = (examples / "java" / "pom.xml").read_text()
    for prop in ("grpc.version", "protobuf.version"):
        pinned = re.search(rf"<{prop}>.+?</{prop}>", pom)
        assert pinned is not None and pinned.group(0) in doc["java-pom"].text, prop
    package = json.loads((examples / "typescript" / "package.json").read_text())
    generate = doc["typescript-setup"].text.replace("\\\n", "").splitlines()[-1].split()
    assert ["npx", *package["scripts"]["generate"].replace("../../proto", "proto").split()] == generate
    build_rs = (examples / "rust" / "build.rs").read_text().replace("../../proto", "proto")
    assert code_lines(build_rs, "//") == code_lines(doc["rust-build-script"].text, "//")


def code_lines(text: str, comment: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith(comment)]


def author_env(tmp_path: Path) -> dict[str, str]:
    """This machine's environment, with ``buf`` (from the dev extras) on PATH, and nothing of
    this project's virtualenv besides."""
    shims = tmp_path / "bin"
    shims.mkdir()
    buf = shutil.which("buf") or str(Path(sys.executable).parent / "buf")
    if Path(buf).exists():
        (shims / "buf").symlink_to(buf)
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    env["PATH"] = f"{shims}{os.pathsep}{env['PATH']}"
    return env


def run_block(name: str, folder: Path, env: dict[str, str], deadline: float) -> None:
    """Runs (or writes) the doc's block ``name`` in the author's folder, as the author would."""
    block = blocks()[name]
    if block.path is not None:
        (folder / block.path).write_text(block.text)
        return
    started = time.monotonic()
    # A session of its own, so that a block past its time is stopped with all it started.
    with subprocess.Popen(
        ["bash", "-e", "-c", block.text],
        cwd=folder,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    ) as process:
        try:
            out, err = process.communicate(timeout=max(deadline - started, 1))
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            out, err = process.communicate()
            pytest.fail(f"{name} was still running after {time.monotonic() - started:.0f} s:\n{err[-3000:]}")
    print(f"{name}: {time.monotonic() - started:.0f} s")
    assert process.returncode == 0, f"{name} failed:\n{block.text}\n{out[-2000:]}{err[-3000:]}"


def recipe_params() -> list[object]:
    return [pytest.param(name, marks=pytest.mark.timeout(RECIPES[name].budget_s)) for name in RECIPES]


@pytest.mark.parametrize("name", recipe_params())
def test_recipe_generates_code_a_bot_builds_on_and_plays_with(name: str, tmp_path: Path) -> None:
    recipe = RECIPES[name]
    env = author_env(tmp_path) | dict(recipe.env)
    missing = [tool for tool in recipe.tools if shutil.which(tool, path=env["PATH"]) is None]
    if missing:
        absent(f"the {name} recipe of {DOC.name} needs {', '.join(missing)} on PATH")
    deadline = time.monotonic() + recipe.budget_s - 120  # leaves time for the game
    folder = tmp_path / "mybot"
    shutil.copytree(
        ROOT / "proto", folder / "proto", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info")
    )
    for block in recipe.generate:
        run_block(block, folder, env, deadline)
    for source, target in recipe.bot.items():
        (folder / target).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(BOTS / source, folder / target)
    for block in recipe.build:
        run_block(block, folder, env, deadline)

    command = commands()[recipe.language]

    def launch(server: RefereeServer, token: Path) -> Launch:
        argv = ["bash", "-c", f"cd {shlex.quote(str(folder))} && exec {command}"]
        return Launch(
            argv,
            scratch_env(tmp_path / "scratch", HEARTS_SERVER=server.address, HEARTS_TOKEN_FILE=str(token)),
        )

    assert_fault_free(play_a_game(f"recipe-{name}", tmp_path, launch, unix=False), tmp_path)
