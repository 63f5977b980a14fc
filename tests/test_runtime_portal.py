"""Bots on the runtimes the competition provides, submitted through the real portal and validated by
the real league run, in the real sandbox (docs/COMPETITION.md, "Runtimes").

One league, one portal and one ``hearts league run`` for the module: an SDK bot that searches with
the simulator (``hearts_client.sim`` on its native backend) is submitted with
``runtime = "python-sdk"`` and becomes active, as the docs say; a hostile entrant on the same
runtime reads what the runtime shows it and reports it; an SDK bot that does not name the runtime
is told to; a program of the league's machine outside the system's folders is refused.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import util
from pathlib import Path
from typing import Any

import pytest

from hearts_tournaments.arena import runtimes
from hearts_tournaments.league.store import LeagueStore
from hearts_tournaments.portal.uploads import UploadError, check_archive
from tests.helpers.portal import Client, league_running, make_league, tar_gz, wait_status
from tests.helpers.runtimes import SIM_BOT, require_runtime
from tests.helpers.toolchains import require_bwrap
from tests.helpers.web_server import web_server

HOSTILE = Path(__file__).parent / "hostile" / "runtime_snoop.py"
MANIFEST = 'command = ["python3", "bot.py"]\nprotocol = "grpc"\nruntime = "python-sdk"\n'


@dataclass
class Competition:
    """The module's league and portal, and what was submitted to it."""

    folder: Path
    client: Client
    tokens: dict[str, str]
    sim: dict[str, Any]
    hostile: dict[str, Any]

    def findings(self, version: str) -> list[dict[str, Any]]:
        """The ``HOSTILE`` lines of a version's validation game (its first seat)."""
        log = self.folder / "logs" / version / f"validate-{version}-s0.log"
        lines = log.read_text(errors="replace").splitlines()
        return [json.loads(line[len("HOSTILE ") :]) for line in lines if line.startswith("HOSTILE {")]

    def submit(self, who: str, files: dict[str, str]) -> dict[str, Any]:
        archive = tar_gz([(name, text.encode()) for name, text in files.items()])
        answer = self.client.api_upload(self.tokens[who], archive)
        assert answer.status == 202, answer.body
        return wait_status(self.client, self.tokens[who], answer.json()["id"], {"active", "error"})


def package_folder(name: str) -> str:
    spec = util.find_spec(name)
    assert spec is not None and spec.submodule_search_locations
    return str(Path(next(iter(spec.submodule_search_locations))).resolve())


@pytest.fixture(scope="module")
def competition(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Competition]:
    require_bwrap()
    installed = require_runtime("python-sdk")
    folder = tmp_path_factory.mktemp("competition") / "lg"
    tokens = make_league(folder, ("alice", "mallory", "trent"))
    with league_running(folder), web_server(folder, "--submissions") as url:
        client = Client(url)
        held = Competition(folder, client, tokens, {}, {})
        held.sim = held.submit("alice", {"bot.toml": MANIFEST, "bot.py": SIM_BOT})
        with LeagueStore.open(folder, read_only=True) as store:
            snapshot = store.resolve("alice@v1").spec.snapshot
        probes = [
            str(folder),
            str(folder / "league.sqlite"),
            str(folder / "portal.sqlite"),
            str(folder / "snapshots"),
            str(snapshot),
            package_folder("hearts_tournaments"),
            package_folder("hearts_server"),
            str(Path(sys.prefix).resolve()),
            str(Path.home()),
            *(f"w:{p}/planted" for p in installed.built.hidden),  # no .py: the check would look for it
        ]
        command = json.dumps(["python3", "snoop.py", *probes])
        held.hostile = held.submit(
            "mallory",
            {"bot.toml": f'command = {command}\nruntime = "python-sdk"\n', "snoop.py": HOSTILE.read_text()},
        )
        yield held


@pytest.mark.timeout(900)
def test_an_sdk_bot_on_the_simulator_is_submitted_and_becomes_active(competition: Competition) -> None:
    assert competition.sim["status"] == "active", competition.sim
    assert competition.sim["message"] == "alice@v1 passed its validation game and plays"
    with LeagueStore.open(competition.folder, read_only=True) as store:
        version = store.resolve("alice@v1")
    assert version.status == "active" and version.spec.runtime == "python-sdk"
    log = competition.folder / "logs" / "alice@v1" / "validate-alice@v1-s0.log"
    assert "search bot on the native simulator" in log.read_text()


@pytest.mark.timeout(900)
def test_a_hostile_bot_on_the_runtime_sees_nothing_of_the_referee_runner_or_league(
    competition: Competition,
) -> None:
    assert competition.hostile["status"] == "active", competition.hostile
    findings = competition.findings("mallory@v1")
    python = next(f for f in findings if f["kind"] == "python")
    inside = str(runtimes.RUNTIMES["python-sdk"].inside)
    assert python["prefix"] == inside and python["backend"] == "native", python
    imports = {f["module"]: f["ok"] for f in findings if f["kind"] == "import"}
    assert imports == {
        "hearts_client": True,
        "hearts_client.sim": True,
        "hearts_core": True,
        "hearts_sim": True,
        "grpc": True,
        "google.protobuf": True,
        "numpy": True,
        "hearts_tournaments": False,
        "hearts_server": False,
    }, imports
    walk = next(f for f in findings if f["kind"] == "walk")
    assert walk["named"] == [], walk["named"]  # no package of the referee, runner or league; no database
    league = str(competition.folder)
    assert not [f for f in walk["folders"] if f.startswith(league)], walk["folders"]
    assert any(f.startswith(inside) for f in walk["folders"])  # it did walk its runtime
    probes = {f["path"]: f for f in findings if f["kind"] == "probe"}
    assert len(probes) == 9
    opened = {path: f for path, f in probes.items() if f["opened"]}
    # Only the home folder may be listed: it holds the interpreter's prefix (pyenv's) and nothing else.
    home = str(Path.home())
    assert set(opened) <= {home}, opened
    if home in opened:
        holds = {Path(p).relative_to(home).parts[0] for p in runtimes.installed("python-sdk").built.binds}
        assert set(opened[home]["entries"]) <= holds, opened[home]
    writes = [f for f in findings if f["kind"] == "write"]
    assert writes and not any(f["written"] for f in writes), writes


@pytest.mark.timeout(900)
def test_an_sdk_bot_without_the_runtime_is_told_to_name_it(competition: Competition) -> None:
    """The manifest docs/COMPETITION.md used to give an SDK bot, without a runtime: the machine's
    python3 has no SDK, and the line says which runtime provides it."""
    done = competition.submit(
        "trent", {"bot.toml": 'command = ["python3", "bot.py"]\nprotocol = "grpc"\n', "bot.py": SIM_BOT}
    )
    assert done["status"] == "error", done
    assert "No module named 'hearts_client'" in done["message"], done
    assert 'fix: add runtime = "python-sdk" to its entry' in done["message"], done


@pytest.mark.timeout(900)
def test_a_program_of_the_machine_outside_its_system_folders_is_refused(competition: Competition) -> None:
    """The sandbox binds a program's prefix: naming the runner's own interpreter (or any program of
    the machine outside its system folders) would have shown the bot that folder."""
    command = json.dumps([sys.executable, "bot.py"])
    done = competition.submit("trent", {"bot.toml": f"command = {command}\n", "bot.py": SIM_BOT})
    assert done["status"] == "error", done
    assert "is neither a file of the archive nor a program of the league's machine" in done["message"], done


@pytest.mark.timeout(300)
def test_the_runtimes_page_lists_the_registry(competition: Competition) -> None:
    visitor = Client(competition.client.url)
    assert 'href="/runtimes"' in visitor.get("/login").body  # reachable from the portal's pages
    page = visitor.get("/runtimes")
    assert page.status == 200, page.body
    for state in runtimes.states(staleness=False):
        row = page.body.split(f'data-runtime="{state.runtime.name}"', 1)[1].split("</tr>", 1)[0]
        assert f'data-status="{state.status}"' in row
        for word in state.runtime.words:
            assert f"<code>{word}</code>" in row
        versions = state.to_json()["versions"]
        assert all(f"{name} {version}" in row for name, version in versions.items()), row
    listed = visitor.get("/runtimes.json").json()
    assert listed == [s.to_json() for s in runtimes.states(staleness=False)]
    assert [entry["name"] for entry in listed] == list(runtimes.RUNTIMES)


@pytest.mark.timeout(120)
def test_a_manifest_naming_an_unknown_or_missing_runtime_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def archive(runtime: str) -> bytes:
        text = f'command = ["python3", "bot.py"]\nruntime = "{runtime}"\n'
        return tar_gz([("bot.toml", text.encode()), ("bot.py", b"")])

    with pytest.raises(
        UploadError, match=r"bot.toml's runtime must be one of python-sdk, java-grpc, node-grpc"
    ):
        check_archive(archive("cobol"))
    monkeypatch.setenv(runtimes.HOME_VARIABLE, str(tmp_path))  # a machine with no runtime installed
    with pytest.raises(UploadError, match=r"runtime 'node-grpc' is not installed on the league's machine"):
        check_archive(archive("node-grpc"))
