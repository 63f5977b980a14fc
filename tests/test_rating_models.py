"""The league's rating models (a named extension point: docs/DEVELOPING.md, "Adding a rating model").

Every model registered in :data:`RATING_MODELS` is whole (a name, a description, default
parameters, the columns it shows, a deterministic update) and rates a real league: blocks
played in-process and stored in the real SQLite store (:func:`tests.helpers.web_store.play_league`),
then shown with its own columns. A league's model is fixed once blocks are stored, and a league
from before models (ratings as ``mu``/``sigma`` columns, schema 1) still opens and plays on.
"""

from __future__ import annotations

import json
import math
import shutil
import sqlite3
from collections.abc import Mapping, Sequence
from contextlib import closing
from pathlib import Path
from typing import Any, ClassVar

import pytest

from hearts_tournaments.arena.outcome import GameOutcome
from hearts_tournaments.league import commands
from hearts_tournaments.league.config import LeagueConfig, LeagueError
from hearts_tournaments.league.rating_models import (
    DEFAULT_RATING,
    RATING_MODELS,
    Column,
    OpenSkillPlackettLuce,
    RatingModel,
    State,
)
from hearts_tournaments.league.ratings import online_update
from hearts_tournaments.league.store import LeagueStore
from tests.helpers import cli
from tests.helpers.web_store import play_league

SECRET = bytes(range(32))
#: Short games: the tests are about ratings, not play.
SETTINGS = {"table_size": 6, "seed": "models", "max_hands": 1, "sandbox": "none", "bootstrap": 20}
ENTRANTS = (("heur", "heuristic"), ("rnd", "random"), ("rnd2", "random"), ("heur2", "heuristic"))


def new_league(folder: Path, rating: str = DEFAULT_RATING, blocks: int = 2) -> LeagueStore:
    """A league rated with ``rating``: four built-in entrants validated, ``blocks`` blocks stored."""
    store = commands.init_league(folder, LeagueConfig.from_json({**SETTINGS, "rating": rating}), SECRET)
    for name, bot in ENTRANTS:
        commands.add_version(store, commands.make_spec(name, None, bot))
    play_league(store, blocks)
    return store


@pytest.fixture(scope="module")
def block(tmp_path_factory: pytest.TempPathFactory) -> list[GameOutcome]:
    """The games of a real block (rotation order), played once for the module."""
    with new_league(tmp_path_factory.mktemp("block") / "l", blocks=1) as store:
        return store.block_games()[0]


def problems(key: str, model: Any, block: Sequence[GameOutcome]) -> list[str]:
    """What a model registered as ``key`` lacks to be whole (one line each; empty: nothing)."""
    found: list[str] = []

    def attribute(name: str) -> Any:
        try:
            return getattr(model, name)
        except AttributeError:
            found.append(f"{key}: no {name}")
            return None

    name, description = attribute("name"), attribute("description")
    defaults, columns, scale = attribute("defaults"), attribute("columns"), attribute("scale")
    if name is not None and name != key:
        found.append(f"{key}: registered under another name than its own ({name!r})")
    if description is not None and not (isinstance(description, str) and description.strip()):
        found.append(f"{key}: no description")
    if defaults is not None:
        if not isinstance(defaults, Mapping) or not defaults:
            found.append(f"{key}: no default parameters")
        elif not all(isinstance(v, float) and math.isfinite(v) for v in defaults.values()):
            found.append(f"{key}: default parameters that are not finite floats: {defaults!r}")
    if scale is not None and not (isinstance(scale, float) and math.isfinite(scale) and scale > 0):
        found.append(f"{key}: a scale that is not a positive float: {scale!r}")
    if columns is not None and (not isinstance(columns, tuple) or not columns):
        found.append(f"{key}: no columns it shows")
    elif columns is not None:
        for column in columns:
            if not isinstance(column, Column) or not column.name or not column.label:
                found.append(f"{key}: a column without a name and a label: {column!r}")
            elif defaults:
                try:
                    column.text(defaults)
                except (KeyError, ValueError, IndexError) as exc:
                    found.append(f"{key}: column {column.name!r} cannot format a state: {exc!r}")
        if len({getattr(c, "name", None) for c in columns}) != len(columns):
            found.append(f"{key}: two columns of one name")
    if found:
        return found
    seated = {v for outcome in block for v in outcome.seats}
    start = {v: dict(defaults) for v in sorted(seated)[:1]}
    before = json.dumps(start, sort_keys=True)
    first = model.update(block, start)
    again = model.update(block, dict(reversed(list(start.items()))))
    if first != again or model.update(block, start) != first:
        found.append(f"{key}: its online update is not deterministic")
    if json.dumps(start, sort_keys=True) != before:
        found.append(f"{key}: its online update changes the states it is given")
    if set(first) != seated:
        found.append(f"{key}: its update rates {sorted(first)}, not the block's versions {sorted(seated)}")
    for vid, state in first.items():
        if set(state) != set(defaults) or not all(math.isfinite(x) for x in state.values()):
            found.append(f"{key}: the state of {vid} is not its parameters as finite floats: {state!r}")
        elif not (math.isfinite(model.estimate(state)) and model.uncertainty(state) >= 0):
            found.append(f"{key}: no finite estimate and uncertainty for {state!r}")
        elif model.state(json.loads(json.dumps(state))) != state:
            found.append(f"{key}: a state does not read back as stored: {state!r}")
    return found


def test_every_registered_model_is_whole(block: list[GameOutcome]) -> None:
    assert DEFAULT_RATING in RATING_MODELS and len(RATING_MODELS) >= 2
    for key, model in RATING_MODELS.items():
        assert problems(key, model, block) == []


class _NoColumns(OpenSkillPlackettLuce):
    name = "no-columns"
    columns = ()


class _NoDefaults(OpenSkillPlackettLuce):
    name = "no-defaults"
    defaults: ClassVar[Mapping[str, float]] = {}


class _Drifting(OpenSkillPlackettLuce):
    """Adds a little more on every call: an update that depends on more than its arguments."""

    name = "drifting"
    calls = 0

    def update(
        self, outcomes: Sequence[GameOutcome], start: Mapping[str, Mapping[str, float]]
    ) -> dict[str, State]:
        _Drifting.calls += 1
        return {v: {**s, "mu": s["mu"] + _Drifting.calls} for v, s in super().update(outcomes, start).items()}


class _Bare(RatingModel):
    """Registered with its methods but none of its attributes."""

    def update(
        self, outcomes: Sequence[GameOutcome], start: Mapping[str, Mapping[str, float]]
    ) -> dict[str, State]:
        return {}

    def estimate(self, state: Mapping[str, float]) -> float:
        return 0.0

    def uncertainty(self, state: Mapping[str, float]) -> float:
        return 0.0


def test_a_half_registered_model_is_caught(block: list[GameOutcome]) -> None:
    """The check above is no formality: each half-registered model fails it, saying why."""
    assert problems("no-columns", _NoColumns(), block) == ["no-columns: no columns it shows"]
    assert problems("no-defaults", _NoDefaults(), block) == ["no-defaults: no default parameters"]
    assert problems("drifting", _Drifting(), block) == ["drifting: its online update is not deterministic"]
    assert problems("bare", _Bare(), block) == [
        "bare: no name",
        "bare: no description",
        "bare: no defaults",
        "bare: no columns",
        "bare: no scale",
    ]
    assert problems("openskill-tm", RATING_MODELS[DEFAULT_RATING], block) == [
        "openskill-tm: registered under another name than its own ('openskill-pl')"
    ]


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", list(RATING_MODELS))
def test_every_model_rates_a_real_league_and_shows_its_columns(name: str, tmp_path: Path) -> None:
    model = RATING_MODELS[name]
    with new_league(tmp_path / "l", rating=name) as store:
        assert store.rating is model
        ratings = store.ratings()
        # The stored states are the model's update replayed over the stored blocks, in order.
        replayed: dict[str, State] = {}
        for _number, games in sorted(store.block_games().items()):
            replayed.update(model.update(games, replayed))
        assert {v: r.state for v, r in ratings.items()} == replayed and len(replayed) == len(ENTRANTS)
        with closing(sqlite3.connect(LeagueStore.path_in(tmp_path / "l"))) as db:
            assert {m for (m,) in db.execute("SELECT model FROM ratings")} == {name}
            assert {m for (m,) in db.execute("SELECT model FROM rating_history")} == {name}
        history = store.history("heur@v1")
        assert [b for b, _e, _u in history] == [0, 1]
        last = ratings["heur@v1"].state
        assert history[-1][1:] == (model.estimate(last), model.uncertainty(last))
        # `show`: its columns in the table, its parameters in the JSON.
        text = commands.show(store).splitlines()
        assert text[0].split()[-len(model.columns) :] == [c.name for c in model.columns]
        heur = next(line for line in text if " heur@v1 " in f" {line} ")
        assert heur.endswith("  ".join(c.text(last) for c in model.columns))
        rows = {row["version"]: row for row in json.loads(commands.show(store, "json"))}
        assert {k: rows["heur@v1"][k] for k in model.defaults} == {k: round(v, 6) for k, v in last.items()}
        info = commands.info(store, "heur")
        assert info["rating"] == name and info["online"] == last
        assert [h["block"] for h in info["history"]] == [0, 1]


def test_the_default_model_is_openskill_plackett_luce_unchanged(block: list[GameOutcome]) -> None:
    """``openskill-pl`` gives exactly what the league's online update always gave."""
    start = {block[0].seats[0]: (27.5, 6.25)}
    states = RATING_MODELS[DEFAULT_RATING].update(
        block, {v: {"mu": m, "sigma": s} for v, (m, s) in start.items()}
    )
    assert {v: (s["mu"], s["sigma"]) for v, s in states.items()} == online_update(block, start)
    other = RATING_MODELS["openskill-tm"].update(block, {})
    assert other != RATING_MODELS[DEFAULT_RATING].update(block, {})  # another model, other numbers


def test_an_unknown_model_is_refused_in_one_line(tmp_path: Path) -> None:
    line = f"rating must be one of {', '.join(RATING_MODELS)}, not 'elo'"
    assert "openskill-pl, openskill-tm" in line
    with pytest.raises(LeagueError) as caught:
        LeagueConfig.from_json({**SETTINGS, "rating": "elo"})
    assert str(caught.value) == line
    result = cli.hearts("league", "init", str(tmp_path / "l"), "--rating", "elo")
    assert result.returncode == 2 and result.stderr.strip().splitlines() == [f"hearts: error: {line}"]
    assert not (tmp_path / "l").exists()
    made = cli.hearts("league", "init", str(tmp_path / "tm"), "--rating", "openskill-tm")
    assert made.returncode == 0, made.stderr
    with LeagueStore.open(tmp_path / "tm") as store:
        assert store.config.rating == "openskill-tm" and store.rating is RATING_MODELS["openskill-tm"]


def _set_rating(folder: Path, rating: str | None) -> None:
    """Rewrites the league's stored settings with another ``rating`` (None: without one)."""
    with closing(sqlite3.connect(LeagueStore.path_in(folder))) as db, db:
        (text,) = db.execute("SELECT value FROM meta WHERE key = 'config'").fetchone()
        config = json.loads(text)
        config.pop("rating", None)
        if rating is not None:
            config["rating"] = rating
        db.execute("UPDATE meta SET value = ? WHERE key = 'config'", (json.dumps(config),))


def test_a_league_model_cannot_change_once_blocks_are_stored(tmp_path: Path) -> None:
    folder = tmp_path / "l"
    new_league(folder, blocks=0).close()
    _set_rating(folder, "openskill-bt")  # no block yet: the model may still change
    with LeagueStore.open(folder) as store:
        play_league(store, 1)
        assert store.rating.name == "openskill-bt" and len(store.ratings()) == len(ENTRANTS)
    _set_rating(folder, "openskill-tm")
    line = (
        f"{LeagueStore.path_in(folder)}: its blocks are rated with 'openskill-bt' but its settings say "
        "rating = 'openskill-tm': a league's rating model cannot change once blocks are stored "
        "(start a new league for another model)"
    )
    for read_only in (False, True):
        with pytest.raises(LeagueError) as caught:
            LeagueStore.open(folder, read_only=read_only)
        assert str(caught.value) == line
    shown = cli.hearts("league", "show", str(folder))
    assert shown.returncode == 2 and shown.stderr.strip().splitlines() == [f"hearts: error: {line}"]
    _set_rating(folder, "openskill-bt")
    with LeagueStore.open(folder) as store:
        assert store.block_count() == 1


#: The rating tables as schema 1 (before rating models) made them, word for word.
SCHEMA_1_RATINGS = """
CREATE TABLE ratings (version TEXT PRIMARY KEY, mu REAL NOT NULL, sigma REAL NOT NULL,
                      blocks INTEGER NOT NULL, failed INTEGER NOT NULL, last_block INTEGER);
CREATE TABLE rating_history (block INTEGER NOT NULL, version TEXT NOT NULL, mu REAL NOT NULL,
                             sigma REAL NOT NULL, PRIMARY KEY (block, version));
"""


def to_schema_1(folder: Path) -> None:
    """Makes the league in ``folder`` what schema 1 stored for the same blocks: settings without
    ``rating``, and the rating tables of mu and sigma columns filled as its ``store_block`` did
    (one upsert and one history row per version per block, in block order)."""
    _set_rating(folder, None)
    with closing(sqlite3.connect(LeagueStore.path_in(folder))) as db:
        history = db.execute(
            "SELECT block, version, state FROM rating_history ORDER BY block, version"
        ).fetchall()
        failed = dict(db.execute("SELECT version, failed FROM ratings").fetchall())
        db.executescript(
            "BEGIN; DROP TABLE ratings; DROP TABLE rating_history;" + SCHEMA_1_RATINGS + "COMMIT;"
        )
        with db:
            seen: set[str] = set()
            for block, vid, text in history:
                state = json.loads(text)
                first = vid not in seen
                seen.add(vid)
                db.execute(
                    "INSERT INTO ratings VALUES (?, ?, ?, 1, ?, ?) ON CONFLICT(version) DO UPDATE SET "
                    "mu = excluded.mu, sigma = excluded.sigma, blocks = blocks + 1, "
                    "failed = failed + excluded.failed, last_block = excluded.last_block",
                    (vid, state["mu"], state["sigma"], failed[vid] if first else 0, block),
                )
                db.execute(
                    "INSERT INTO rating_history VALUES (?, ?, ?, ?)",
                    (block, vid, state["mu"], state["sigma"]),
                )
            db.execute("UPDATE meta SET value = '1' WHERE key = 'schema'")


def _schema(folder: Path) -> tuple[str, list[str]]:
    with closing(sqlite3.connect(LeagueStore.path_in(folder))) as db:
        (schema,) = db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        columns = [row[1] for row in db.execute("PRAGMA table_info(ratings)")]
    return str(schema), columns


@pytest.mark.timeout(300)
def test_a_league_from_before_models_opens_and_plays_on(tmp_path: Path) -> None:
    """A schema 1 league (ratings as mu and sigma columns) reads as it is read-only, is converted
    in place when opened to write, and plays on exactly as a league that never was schema 1."""
    new, old = tmp_path / "new", tmp_path / "old"
    new_league(new).close()
    shutil.copytree(new, old)
    to_schema_1(old)
    assert _schema(old) == ("1", ["version", "mu", "sigma", "blocks", "failed", "last_block"])
    with LeagueStore.open(new, read_only=True) as store:
        ratings, history, shown = store.ratings(), store.history("rnd@v1"), commands.show(store, "json")
        info = commands.info(store, "rnd")
    with LeagueStore.open(old, read_only=True) as store:  # the web pages: read as it is
        assert store.config.rating == DEFAULT_RATING
        assert store.ratings() == ratings and store.history("rnd@v1") == history
        assert commands.show(store, "json") == shown and commands.info(store, "rnd") == info
    assert _schema(old)[0] == "1"
    with LeagueStore.open(old, read_only=True) as reader:  # a page open while `run` starts
        assert reader.ratings() == ratings
        with LeagueStore.open(old) as store:  # `run`, `add`...: converted, the same floats
            assert store.ratings() == ratings and commands.info(store, "rnd") == info
        assert _schema(old) == ("2", ["version", "model", "state", "blocks", "failed", "last_block"])
        assert reader.ratings() == ratings and reader.history("rnd@v1") == history
    for folder in (new, old):
        with LeagueStore.open(folder) as store:
            play_league(store, 1)
    with LeagueStore.open(new) as a, LeagueStore.open(old) as b:
        assert a.block_count() == b.block_count() == 3
        assert b.ratings() == a.ratings() != ratings
        assert commands.show(b, "json") == commands.show(a, "json")
        assert b.history("rnd@v1") == a.history("rnd@v1")
    assert cli.hearts("league", "show", str(old)).returncode == 0
