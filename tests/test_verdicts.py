"""The standings' two verdicts on a pair of bots read as answers to two questions, not as a
contradiction, in every form.

The tier (the strength model) answers "is their order established over the whole field?"; the
paired line answers "did the two differ on the deals both played?". After 12 deals they often
disagree: two bots share a tier while their paired difference excludes zero. The report used to
call both "separated" ("separated" right below a table that put the two in one tier). Here a
real tournament folder (a store of 12 deals of synthetic results, the seed chosen so that the
two verdicts disagree on a pair) is reported as text, Markdown and JSON and served by ``hearts
web``: each form names the paired verdict by its own word, and says once which question each
verdict answers.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from hearts_tournaments.cli.main import app
from hearts_tournaments.tournament.results import (
    DIFFERED,
    NO_CLEAR_DIFFERENCE,
    PAIRED_QUESTION,
    TIER_QUESTION,
)
from tests.helpers.web_server import get, web_server
from tests.helpers.web_store import add_synthetic, config_text, create

BOTS = [("ace", "random"), ("bee", "random"), ("cee", "random")]


def report(folder: Path, fmt: str = "table") -> str:
    result = CliRunner().invoke(app, ["tournament", "report", str(folder), "--format", fmt])
    assert result.exit_code == 0, result.output
    return result.output


def disagreeing(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    """A demo-sized tournament (3 bots, tables of 6, 12 deals) where a pair of neighbours in the
    ranking shares a tier but differed on its shared deals, and that pair (JSON)."""
    for seed in range(40):
        folder = tmp_path / f"t{seed}"
        text = config_text(BOTS, table_size=6, deals=12, duplicate=False, target_score=100, seed=f"v{seed}")
        add_synthetic(folder, create(folder, text), {"ace": 10.0, "bee": 12.0, "cee": 15.0}, f"v{seed}")
        data = json.loads(report(folder, "json"))
        for pair in data["separation"]["neighbours"]:
            if not pair["separated"] and pair["paired_separated"]:
                return folder, pair
    raise AssertionError("no seed gave a pair in one tier that differed on its shared deals")


@pytest.mark.timeout(300)
def test_a_tier_and_a_paired_difference_read_as_two_answers(tmp_path: Path) -> None:
    folder, pair = disagreeing(tmp_path)
    a, b = pair["a"], pair["b"]

    data = json.loads(report(folder, "json"))
    tiers = {line["bot"]: line["tier"] for line in data["standings"]}
    assert tiers[a] == tiers[b]  # one tier ...
    (paired,) = [p for p in data["paired"] if {p["a"], p["b"]} == {a, b}]
    assert paired["separated"] is True  # ... and the pair differed on the deals both played
    assert data["verdicts"]["tier"]["question"] == TIER_QUESTION
    assert data["verdicts"]["paired"]["question"] == PAIRED_QUESTION
    assert "paired[].separated" in data["verdicts"]["paired"]["keys"]
    assert f"{DIFFERED} (paired differences: {PAIRED_QUESTION})" in data["separation"]["summary"]

    for fmt in ("table", "markdown"):
        text = report(folder, fmt)
        flat = " ".join(text.replace("│", " ").replace("|", " ").split())
        # One place says which question each verdict answers.
        assert flat.count(TIER_QUESTION) == 1 and flat.count(PAIRED_QUESTION) <= 2, (fmt, text)
        assert "Two verdicts, two questions." in flat, (fmt, text)
        # The pair's paired line says "differed", and no paired line says "separated".
        pairs = text.split("Paired differences over shared deals")[1].split("Head-to-head")[0]
        row = next(line for line in pairs.splitlines() if f"{a} − {b}" in line)
        assert DIFFERED in row, (fmt, row)
        assert "separated" not in pairs, (fmt, pairs)
        rows = [line for line in pairs.splitlines() if line.startswith(("│", "|")) and " − " in line]
        assert len(rows) == 3 and all(DIFFERED in r or NO_CLEAR_DIFFERENCE in r for r in rows), (fmt, pairs)

    with web_server(folder) as url:
        page = get(url + "/").body
    flat = " ".join(re.sub(r"<[^>]+>", " ", page).split()).replace("&#34;", '"').replace("&#39;", "'")
    assert TIER_QUESTION in flat and PAIRED_QUESTION in flat, flat
    assert "Order established" in flat
    row = re.search(rf'<tr data-pair="{a}\|{b}".*?</tr>', page, re.S)
    assert row is not None, page
    assert f", {DIFFERED}" in row.group() and "separated" not in re.sub(
        r"data-separated=\"\w+\"", "", row.group()
    )
