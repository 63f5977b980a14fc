"""The house's layout: imports only go down, and no module imports itself round a circle.

Read from the source (every ``import`` and ``from … import``, at any depth, even inside a
function or under ``TYPE_CHECKING``), so a lazy import cannot hide a circle.

    cli → portal → web → {league, tournament} → results → kit → arena
        → (hearts_server, hearts_client, hearts_core)

The league and the tournament sit side by side: neither imports the other. What both need (the
store's primitives, signing, the statistics, the fair-play audit, stopping on SIGTERM, the Ray
executor) is ``results``, below both; how a game is played (``arena.settings.PlaySettings``) is
the arena's. The bot test kit (``kit``) plays on the arena and is what the tournament's
pre-flight check runs.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "tournaments" / "hearts_tournaments"
#: Each layer, and the layers of the house it may import (its own included).
LAYERS = {
    "arena": {"arena"},
    "kit": {"arena", "kit"},
    "results": {"arena", "kit", "results"},
    "tournament": {"arena", "kit", "results", "tournament"},
    "league": {"arena", "kit", "results", "league"},
    "web": {"arena", "kit", "results", "tournament", "league", "web"},
    "portal": {"arena", "kit", "results", "tournament", "league", "web", "portal"},
    "cli": {"arena", "kit", "results", "tournament", "league", "web", "portal", "cli"},
}


def _module(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """The project modules ``path`` imports (``from pkg import mod`` counts as ``pkg.mod``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("hearts_tournaments"))
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("hearts_tournaments"):
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                is_module = (PACKAGE.parent / Path(*sub.split("."))).with_suffix(".py").exists()
                found.add(sub if is_module else str(node.module))
    return found


def _graph() -> dict[str, set[str]]:
    files = [p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts]
    modules = {_module(p): p for p in files}
    return {name: {m for m in _imports(path) if m in modules and m != name} for name, path in modules.items()}


def _layer(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS else None


def test_every_module_sits_in_a_layer() -> None:
    top = ("hearts_tournaments", "hearts_tournaments.__main__")
    loose = [m for m in _graph() if _layer(m) is None and m not in top]
    assert loose == [], f"modules outside arena/kit/results/tournament/league/web/portal/cli: {loose}"


@pytest.mark.parametrize("layer", sorted(LAYERS))
def test_a_layer_imports_only_the_layers_below_it(layer: str) -> None:
    wrong = sorted(
        f"{m} imports {d}"
        for m, deps in _graph().items()
        if _layer(m) == layer
        for d in deps
        if _layer(d) is not None and _layer(d) not in LAYERS[layer]
    )
    assert wrong == [], "imports going up:\n" + "\n".join(wrong)


def test_nothing_above_the_referee_reaches_into_its_internals() -> None:
    """The house reaches the referee by ``make_server`` and its admin API: never its registry,
    its servicers or its live tables (the table settings' limits, the server's defaults for
    ``hearts serve``, the seat replay and the bot test kit's game scripts are public)."""
    internal = ("hearts_server.registry", "hearts_server.service", "hearts_server.table")
    public = {"hearts_server.table.settings", "hearts_server.table.script"}
    public_names: set[str] = set()
    wrong = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom) or not (node.module or "").startswith(internal):
                continue
            names = {a.name for a in node.names}
            if node.module not in public and not names <= public_names:
                wrong.append(f"{_module(path)} imports {node.module}: {sorted(names - public_names)}")
    assert wrong == [], "\n".join(wrong)


def test_no_module_imports_itself_round_a_circle() -> None:
    graph = _graph()
    circles: list[list[str]] = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for dep in sorted(graph[node]):
            if state.get(dep) == 1:
                circles.append([*stack[stack.index(dep) :], dep])
            elif dep not in state:
                visit(dep)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    assert circles == [], "import circles:\n" + "\n".join(" → ".join(c) for c in circles)
