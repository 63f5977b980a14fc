"""bench/strength.py measures points per hand in mid-game hands, at every deal index."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

import bench.strength as strength
from hearts_client.bot import Bot
from hearts_client.bots.ismcts import search_settings
from hearts_client.bots.montecarlo import Objective
from hearts_core.cards import Card
from hearts_core.rules import MoonChoice
from hearts_core.view import View


class _Watching:
    """Wraps a bot; records whether each View it was shown puts the search bots' objective in its endgame."""

    def __init__(self, inner: Bot, seen: list[bool]) -> None:
        self.inner = inner
        self.seen = seen

    def choose_pass(self, view: View) -> Sequence[Card]:
        self.seen.append(Objective(view).endgame)
        return self.inner.choose_pass(view)

    def choose_play(self, view: View) -> Card:
        self.seen.append(Objective(view).endgame)
        return self.inner.choose_play(view)

    def choose_moon(self, view: View) -> MoonChoice:
        return self.inner.choose_moon(view)


@pytest.mark.parametrize("index", [0, 7, 199, 200, 479, 1999])
def test_no_deal_is_a_last_hand_or_an_endgame(index: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # Hand ``index`` of a game sets the dealer and the pass direction; before the fix, deals from
    # index 199 on were at or past the rules' hand limit (200), so the search bots played them as
    # the game's last hand (for placing, not points) while the bench counts points.
    seen: list[bool] = []
    made = strength._bot

    def watched(config: strength.Config, name: str, seed: str) -> Bot:
        return _Watching(made(config, name, seed), seen)  # type: ignore[return-value]

    monkeypatch.setattr(strength, "_bot", watched)
    config = strength.Config(bot="heuristic", field="random", players=8, hands=max(index + 1, 480), seed="t")
    outcome = strength.play_deal(config, index)
    assert seen and not any(seen), f"deal {index}: a bot saw an endgame"
    assert outcome.seat == index % 8


def test_the_ratio_interval_keeps_the_pairing_of_each_deal() -> None:
    # Bot points are half the field's on every deal, however lucky the deal: the ratio is
    # exactly 0.5 with no width, where unpaired intervals of the two means would be wide.
    field = [0.0, 26.0, 4.0, 13.0, 8.0, 1.0]
    bot = [f / 2 for f in field]
    assert strength.ratio_interval(bot, field) == (0.5, 0.5, 0.5)
    ratio, low, high = strength.ratio_interval([1.0, 3.0, 2.0, 2.0], [4.0, 4.0, 6.0, 6.0])
    assert ratio == pytest.approx(0.4) and low < 0.4 < high


def test_pool_combines_the_hands_of_runs_on_different_seeds(tmp_path: Path) -> None:
    files = []
    for seed in ("p1", "p2"):
        config = strength.Config(bot="heuristic", field="random", players=6, hands=6, seed=seed)
        figures = strength.run(config, jobs=1)
        files.append(tmp_path / f"{seed}.json")
        files[-1].write_text(json.dumps(figures))
    pooled = strength.pool([str(f) for f in files])
    runs = [json.loads(f.read_text()) for f in files]
    both = [p for r in runs for p in r["bot_points"]]
    assert pooled["hands"] == 12 and pooled["seed"] == ["p1", "p2"]
    assert pooled["bot_points_per_hand"] == pytest.approx(sum(both) / 12)
    other = tmp_path / "other.json"
    other.write_text(json.dumps({**runs[0], "players": 8}))
    with pytest.raises(ValueError, match="different bots or settings"):
        strength.pool([str(files[0]), str(other)])


def test_pool_refuses_runs_of_two_versions_of_ismcts(tmp_path: Path) -> None:
    # A run records ismcts's search settings; a figure pooled over two versions would be neither's.
    config = strength.Config(bot="ismcts", field="heuristic", players=6, hands=1, seed="v", safety_limit=None)
    figures = strength.run(config, jobs=1)
    assert figures["ismcts"] == search_settings()
    files = [tmp_path / "now.json", tmp_path / "before.json", tmp_path / "unrecorded.json"]
    files[0].write_text(json.dumps(figures))
    files[1].write_text(json.dumps({**figures, "ismcts": {**search_settings(), "mismatch_weight": 0.25}}))
    files[2].write_text(json.dumps({k: v for k, v in figures.items() if k != "ismcts"}))
    assert strength.pool([str(files[0]), str(files[0])])["ismcts"] == search_settings()
    reordered = tmp_path / "reordered.json"  # the same settings, their keys written in another order
    reordered.write_text(json.dumps({**figures, "ismcts": dict(reversed(list(search_settings().items())))}))
    assert strength.pool([str(files[0]), str(reordered)])["ismcts"] == search_settings()
    for other in files[1:]:
        with pytest.raises(ValueError, match="different bots or settings"):
            strength.pool([str(files[0]), str(other)])
