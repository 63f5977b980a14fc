"""The bot test kit is honest: every bot of the mutation set (tests/kit_mutants) is caught by
the check named for its defect, and by no other check of its level but those the same defect
fails too; the same programs without a defect pass every check of every level.

Every case shares the module's one run: the mutants and the good bots are tested side by side
(each mutant at its own level only), a few at a time.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
from pathlib import Path

import pytest

from hearts_tournaments.arena.bots import BotSpec
from hearts_tournaments.kit.catalogue import Level
from hearts_tournaments.kit.report import Report, Status
from hearts_tournaments.kit.run import ALL_LEVELS, run_kit_async
from tests.conftest import ROOT
from tests.kit_mutants import GOOD, MUTANTS, Mutant, good

#: Kit runs at once (each a referee and a bot process or two).
AT_ONCE = 6


def _spec(mutant: Mutant) -> BotSpec:
    return BotSpec(
        name=mutant.name.replace(".", "-"),
        command=mutant.command,
        workdir=ROOT,
        files=mutant.files,
        protocol=mutant.protocol,
    )


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> dict[str, Report]:
    """Every mutant at its level and every good bot at every level, side by side: once per test
    run, however many xdist workers share this module's tests (the first one runs them, the
    others read its reports)."""
    if worker_id == "master":
        return _run_all()
    shared = tmp_path_factory.getbasetemp().parent / "kit_mutants.json"
    with (shared.parent / "kit_mutants.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if shared.exists():
            return {k: Report.from_json(v) for k, v in json.loads(shared.read_text()).items()}
        found = _run_all()
        shared.write_text(json.dumps({k: r.to_json() for k, r in found.items()}))
        return found


def _run_all() -> dict[str, Report]:
    gate = asyncio.Semaphore(AT_ONCE)

    async def one(key: str, mutant: Mutant, levels: tuple[Level, ...]) -> tuple[str, Report]:
        async with gate:
            return key, await run_kit_async(_spec(mutant), mutant.competition, levels)

    async def everything() -> dict[str, Report]:
        runs = [one(m.name, m, (m.level,)) for m in MUTANTS]
        runs += [one(f"good-{p}", good(p), ALL_LEVELS) for p in GOOD]
        return dict(await asyncio.gather(*runs))

    with contextlib.chdir(ROOT):
        return asyncio.run(everything())


def test_the_mutation_set_is_large_varied_and_named() -> None:
    assert len(MUTANTS) >= 25
    assert len({m.name for m in MUTANTS}) == len(MUTANTS)
    assert {m.language for m in MUTANTS} >= {"python", "sh"}
    assert {m.protocol.value for m in MUTANTS} == {"grpc", "stdio"}
    assert {m.level for m in MUTANTS} == set(Level)
    for mutant in MUTANTS:
        assert mutant.catches.startswith(f"{mutant.level.value}."), mutant.name
        others = mutant.also | mutant.may_also
        assert all(name.startswith(f"{mutant.level.value}.") for name in others), mutant.name


@pytest.mark.timeout(1200)
@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.name for m in MUTANTS])
def test_each_mutant_is_caught_by_its_check(reports: dict[str, Report], mutant: Mutant) -> None:
    report = reports[mutant.name]
    shown = f"{mutant.why}\n" + "\n".join(report.text())
    caught = report.check(mutant.catches)
    assert caught.status is Status.FAILED, shown
    assert caught.fix, shown
    failed = {c.name for c in report.checks if c.status is Status.FAILED}
    required = {mutant.catches} | mutant.also
    assert required <= failed <= required | mutant.may_also, shown


@pytest.mark.timeout(1200)
@pytest.mark.parametrize("program", GOOD)
def test_the_same_bots_without_a_defect_pass_every_check(reports: dict[str, Report], program: str) -> None:
    report = reports[f"good-{program}"]
    assert report.passed, "\n".join(report.text(verbose=True))
    assert {c.level for c in report.checks} == {level.value for level in Level}


def test_no_mutant_leaves_anything_running() -> None:
    """Every process a mutant started is gone (the kit killed what leaves-child left)."""
    mine = [
        pid
        for pid in os.listdir("/proc")
        if pid.isdigit() and _cmdline(pid).startswith(("sleep\x00600",)) and _ours(pid)
    ]
    assert mine == []


def _cmdline(pid: str) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_text(errors="replace")
    except OSError:
        return ""


def _ours(pid: str) -> bool:
    try:
        return Path(f"/proc/{pid}/environ").read_bytes().find(b"HEARTS_SEED=") >= 0
    except OSError:
        return False
