"""Every public conformance vector replays to exactly its ``expected`` outcome."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hearts_core.replay import replay
from tests.conftest import CONFORMANCE, ROOT, UPSTREAM_CONFORMANCE, VECTORS
from tests.helpers.cli import hearts


@pytest.mark.parametrize("path", VECTORS, ids=[p.stem for p in VECTORS])
def test_vector_matches_expected(path: Path) -> None:
    vector = json.loads(path.read_text())
    assert replay(vector["record"]) == vector["expected"]


def test_there_are_vectors(vectors: list[Path]) -> None:
    assert len(vectors) >= 59


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# Collected only when an upstream shared/ is beside the checkout (as in the project's own CI): a
# fresh clone alone has nothing to compare with, and that is not a skipped feature.
if UPSTREAM_CONFORMANCE.is_dir():

    def test_the_repository_copy_of_the_vectors_matches_upstream() -> None:
        # Upstream is authoritative: a vector added or changed there must be copied here.
        upstream, ours = _tree(UPSTREAM_CONFORMANCE), _tree(CONFORMANCE)
        missing = sorted(upstream.keys() - ours.keys())
        changed = sorted(k for k in upstream.keys() & ours.keys() if upstream[k] != ours[k])
        assert not missing and not changed, (
            f"copy {UPSTREAM_CONFORMANCE} to {CONFORMANCE}: missing {missing}, changed {changed}"
        )

    def test_the_repository_copy_of_the_rules_matches_upstream() -> None:
        upstream = (UPSTREAM_CONFORMANCE.parent / "RULES.md").read_text()
        assert (ROOT / "docs" / "RULES.md").read_text() == upstream, "copy shared/RULES.md to docs/RULES.md"


def test_replay_cli_prints_one_outcome_per_file_in_order(vectors: list[Path]) -> None:
    result = hearts("replay", *map(str, vectors))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == len(vectors)
    for line, path in zip(lines, vectors, strict=True):
        assert json.loads(line) == json.loads(path.read_text())["expected"], path.name


def test_replay_cli_reports_bad_files_and_goes_on(tmp_path: Path, vectors: list[Path]) -> None:
    not_json = tmp_path / "broken.json"
    not_json.write_text("{oops")
    not_record = tmp_path / "list.json"
    not_record.write_text("[1, 2, 3]")
    missing = tmp_path / "missing.json"
    result = hearts("replay", str(missing), str(not_json), str(vectors[0]), str(not_record))
    assert result.returncode == 2
    assert len(result.stdout.splitlines()) == 1
    assert json.loads(result.stdout) == json.loads(vectors[0].read_text())["expected"]
    errors = result.stderr.splitlines()
    assert len(errors) == 3
    assert str(missing) in errors[0] and "no such file" in errors[0]
    assert str(not_json) in errors[1] and "not JSON" in errors[1]
    assert str(not_record) in errors[2] and "not a game record" in errors[2]


def test_an_illegal_record_is_still_an_outcome(vectors: list[Path]) -> None:
    illegal = next(p for p in vectors if "illegal" in p.name)
    result = hearts("replay", str(illegal))
    assert result.returncode == 0
    assert json.loads(result.stdout)["error"] is not None
