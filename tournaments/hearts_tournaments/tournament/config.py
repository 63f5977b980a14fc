"""Tournament configuration: a TOML file read into a frozen :class:`TournamentConfig`.

Every mistake a user can make in the file becomes one :class:`ConfigError` naming the key and
what to do about it, so that the command line can print one line and exit 2. See
``docs/TOURNAMENTS.md`` for the complete format.
"""

from __future__ import annotations

import difflib
import inspect
import json
import os
import re
import tomllib
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, cast

from hearts_client.bot import Bot
from hearts_client.bots import BUILTIN_BOTS
from hearts_core.defaults import DEFAULT_POLICY, POLICY_KEYS, TablePolicy
from hearts_core.rules import DEFAULT_MAX_HANDS, DEFAULT_TARGET_SCORE, MAX_PLAYERS, MIN_PLAYERS
from hearts_server.table.settings import LIMITS as TABLE_LIMITS
from hearts_tournaments.arena import runtimes
from hearts_tournaments.arena.bots import BOT_NAME_PATTERN, BotProtocol, BotSpec, Reuse
from hearts_tournaments.arena.sandbox import LIMIT_KEYS, Limits, SandboxKind
from hearts_tournaments.arena.settings import PlaySettings, bot_named
from hearts_tournaments.results.stats import SprtSettings
from hearts_tournaments.results.where import SERVER_PATTERN, ExecutorKind
from hearts_tournaments.tournament.gauntlet import GauntletSpec
from hearts_tournaments.tournament.schedule import (
    DEFAULT_SEATING,
    SCHEDULE_DESIGN,
    SeatingMode,
    real_teams,
    team_problem,
)

#: The embedded demo configuration, a file of this package.
DEMO_RESOURCE = "demo.toml"


class ConfigError(Exception):
    """A configuration mistake, phrased as one line: the key, what is wrong, what to do.

    Args:
        key: The key at fault, e.g. ``tournament.table_size`` or ``bots[2].command``; empty
            when the problem is the file itself.
        message: What is wrong and what to do.
    """

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"{key}: {message}" if key else message)
        self.key = key
        self.message = message


@dataclass(frozen=True, slots=True)
class TournamentConfig:
    """A whole tournament: how its games are played and who plays them.

    Attributes:
        name: The tournament's name (default: the config file's stem).
        table_size: Seats per table, 6 to 11.
        deals: Distinct deals; with ``duplicate`` each is played in every seat rotation.
        seed: Derives the schedule, every deal and every bot's seed.
        concurrency: Tables played at once.
        target_score: Each game ends when a total reaches this.
        max_hands: Each game also ends after this many hands.
        output: The folder for the database, records and logs.
        duplicate: Play each deal once per rotation of its table's seats.
        seating: How a duplicate deal's games seat its bots: ``balanced`` (the default: the
            solver's layouts where better ones were found, else ``permute``'s), ``permute`` (a
            different order in every game, so neighbours vary; the default before) or
            ``rotate`` (the same order turned; the default before that). A tournament stored
            keeps its own.
        schedule_design: The schedule's design (``SCHEDULE_DESIGN``; not a config key): a
            stored tournament is reopened with the one its schedule was made with.
        policy: The referee's limit per decision, the thinking time per seat per game, the
            faults that retire a seat and how long a table waits for its bots (the keys
            ``decision_ms``, ``time_bank_ms``, ``max_faults`` and ``join_timeout_ms`` of
            ``[tournament]``).
        quarantine_after: Failed games (a seat retired or never answering, or the bot's process
            crashed) before a bot is quarantined.
        server: Address of an external referee, or empty for one started by the runner.
        sandbox: How bots are isolated (``bwrap``, the default, or ``none`` for trusted bots).
        executor: Where the games are played: ``local`` (this machine) or ``ray`` (a cluster).
        ray_address: With ``executor = "ray"``: the cluster's address (``host:port`` of its
            head, or ``auto``), or empty to start a one-machine Ray on the spot.
        limits: What each bot may use per game (the ``[limits]`` table).
        reuse: Whether a bot process plays several games (:class:`Reuse`): ``between_deals``
            (the default) keeps it up for games of other deals, ``never`` starts one per seat
            per game.
        restart_after: With reuse, a process is replaced after this many games.
        bots: The entrants, in the order given.
        base_dir: The config file's folder.
        gauntlet: With a ``[gauntlet]`` section: the candidate and its sequential test; the
            tournament is then a gauntlet of at most ``deals`` deals, stopped early.
        teams: The ``team`` each bot declared (bots without one are left out): two bots of one
            team never share a table (docs/FAIR_PLAY.md).
        hide_names: Whether the bots see neutral labels (``seat-3``) instead of their
            table-mates' names in every message (the referee's ``hide_bot_names``).
        luck_correction: Correct the standings and the gauntlet's test for luck (docs/
            TOURNAMENTS.md, *Luck correction*).
    """

    name: str
    table_size: int
    bots: tuple[BotSpec, ...]
    deals: int = 4
    seed: str = "1"
    concurrency: int = field(default_factory=lambda: os.cpu_count() or 1)
    target_score: int = DEFAULT_TARGET_SCORE
    max_hands: int = DEFAULT_MAX_HANDS
    output: Path = Path("runs")
    duplicate: bool = True
    seating: SeatingMode = DEFAULT_SEATING
    schedule_design: int = SCHEDULE_DESIGN
    policy: TablePolicy = DEFAULT_POLICY
    quarantine_after: int = 3
    server: str = ""
    sandbox: SandboxKind = SandboxKind.BWRAP
    executor: ExecutorKind = ExecutorKind.LOCAL
    ray_address: str = ""
    limits: Limits = field(default_factory=Limits)
    reuse: Reuse = Reuse.BETWEEN_DEALS
    restart_after: int = 100
    base_dir: Path = Path(".")
    gauntlet: GauntletSpec | None = None
    teams: Mapping[str, str] = field(default_factory=dict)
    hide_names: bool = False
    luck_correction: bool = False

    @property
    def bot_names(self) -> tuple[str, ...]:
        """The bots' names in config order."""
        return tuple(b.name for b in self.bots)

    def bot(self, name: str) -> BotSpec:
        """The bot called ``name``.

        Raises:
            KeyError: if there is none.
        """
        return bot_named(self.bots, name)

    def sandbox_of(self, spec: BotSpec) -> SandboxKind:
        """The sandbox ``spec`` runs in: its own, else the tournament's."""
        return spec.sandbox or self.sandbox

    def play_settings(self) -> PlaySettings:
        """How the tournament's games are played (what the arena and the entrants' check read)."""
        return PlaySettings(
            name=self.name,
            table_size=self.table_size,
            bots=self.bots,
            target_score=self.target_score,
            max_hands=self.max_hands,
            policy=self.policy,
            limits=self.limits,
            sandbox=self.sandbox,
            reuse=self.reuse,
            restart_after=self.restart_after,
            server=self.server,
            hide_names=self.hide_names,
            base_dir=self.base_dir,
        )


#: Most bots in a tournament: with 10,000 deals at 11 seats (the other limits) its schedule is
#: designed in well under a minute of CPU (bench/schedule.py --largest; tests/test_schedule.py).
MAX_BOTS = 1_000
#: Most deals.
MAX_DEALS = 10_000

#: Keys of [tournament]: the expected type (for messages) and a validator per key.
_INT_RANGES: dict[str, tuple[int, int | None]] = {
    "table_size": (MIN_PLAYERS, MAX_PLAYERS),
    "deals": (1, MAX_DEALS),
    "concurrency": (1, 256),
    # The referee's own bounds (hearts_server.table.settings.LIMITS, in admin_service.proto).
    "target_score": (1, TABLE_LIMITS["target_score"]),
    "max_hands": (1, TABLE_LIMITS["max_hands"]),
    "decision_ms": (1, TABLE_LIMITS["decision_ms"]),
    "time_bank_ms": (1, TABLE_LIMITS["time_bank_ms"]),
    "max_faults": (1, TABLE_LIMITS["max_faults"]),
    "join_timeout_ms": (1, TABLE_LIMITS["join_timeout_ms"]),
    "quarantine_after": (1, 1_000_000),
    "restart_after": (1, 1_000_000),
}
#: Every key of [tournament].
TOURNAMENT_KEYS = frozenset(
    {
        *_INT_RANGES,
        "name",
        "seed",
        "output",
        "duplicate",
        "seating",
        "server",
        "sandbox",
        "executor",
        "ray_address",
        "reuse",
        "hide_names",
        "luck_correction",
    }
)
_BOT_KEYS = frozenset(
    {"name", "builtin", "command", "options", "files", "sandbox", "protocol", "runtime", "team"}
)
#: Highest value of any key of [limits] (a terabyte of memory, eleven days of CPU).
_LIMIT_MAXIMUM = 1_000_000
#: Lowest value of each key of [limits].
_LIMIT_MINIMA = {"memory_mb": 16, "cpu_s": 1, "processes": 1, "open_files": 16, "file_mb": 1,
                 "scratch_mb": 1, "log_bytes": 1024}  # fmt: skip
#: The sections of a config file.
SECTIONS = ("tournament", "bots", "limits", "gauntlet")
#: Keys of [gauntlet] besides candidate: the sequential test's settings (see SprtSettings).
GAUNTLET_FLOATS = ("h0", "h1", "alpha", "beta")
GAUNTLET_KEYS = frozenset({"candidate", *GAUNTLET_FLOATS, "min_deals"})


def load_config(path: Path) -> tuple[TournamentConfig, str]:
    """Reads and checks a tournament's config file.

    Args:
        path: The TOML file.

    Returns:
        The configuration and the file's text (stored with the tournament).

    Raises:
        ConfigError: on a missing or unreadable file, bad TOML or any bad key.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError("", "no such config file") from None
    except IsADirectoryError:
        raise ConfigError("", "is a folder: give the tournament's .toml file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError("", f"cannot be read: {exc}") from None
    return parse_config(text, path.resolve().parent, default_name=path.stem), text


def demo_config_text() -> str:
    """The embedded demo configuration (``hearts tournament run --demo``), as TOML.

    ``montecarlo`` is dropped when this installation has no such built-in bot.
    """
    demo = resources.files("hearts_tournaments.tournament").joinpath(DEMO_RESOURCE)
    text = demo.read_text(encoding="utf-8")
    if "montecarlo" in BUILTIN_BOTS:
        return text
    # The demo file keeps montecarlo in a block of its own, marked so it can be cut out.
    return re.sub(r"# montecarlo:begin.*?# montecarlo:end\n", "", text, flags=re.DOTALL)


def names_seating(text: str) -> bool:
    """Whether a config's text sets ``tournament.seating`` (rather than taking the default)."""
    try:
        section = tomllib.loads(text).get("tournament", {})
    except tomllib.TOMLDecodeError:
        return False
    return isinstance(section, dict) and "seating" in section


def parse_config(text: str, base_dir: Path, default_name: str = "tournament") -> TournamentConfig:
    """Parses and checks a configuration given as TOML text.

    Args:
        text: The TOML.
        base_dir: The config file's folder: bot commands run there.
        default_name: The name when ``tournament.name`` is not given.

    Raises:
        ConfigError: on bad TOML or any bad key.
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError("", f"not valid TOML: {exc}") from None
    except RecursionError:
        raise ConfigError("", "not valid TOML: nested too deeply") from None
    except ValueError as exc:  # e.g. a number of more than 4300 digits
        raise ConfigError("", f"not valid TOML: {exc}") from None
    for key in data:
        if key not in SECTIONS:
            raise ConfigError(
                key,
                f"unknown section: {_closest(key, SECTIONS)}a config has a [tournament] table, [[bots]] "
                "entries, and optionally [limits] and [gauntlet] tables",
            )
    section = data.get("tournament")
    if section is None:
        raise ConfigError("tournament", "missing: add a [tournament] table with at least table_size")
    if not isinstance(section, dict):
        raise ConfigError("tournament", "must be a table: write [tournament] followed by its keys")
    settings = _tournament(section, default_name)
    bots = _bots(data.get("bots"), base_dir)
    teams = _teams(data["bots"])
    limits = _limits(data.get("limits", {}))
    gauntlet = _gauntlet(data["gauntlet"], bots) if "gauntlet" in data else None
    if gauntlet is not None and real_teams([b.name for b in bots], teams):
        raise ConfigError(
            "gauntlet",
            "cannot be played with teams: a gauntlet seats its candidate and the field's bots in turn "
            "at every deal; run a round robin to keep teams apart, or drop the team keys",
        )
    real = real_teams([b.name for b in bots], teams)
    if real:  # a team of one bot changes nothing (a field smaller than a table may declare it)
        problem = team_problem([b.name for b in bots], real, settings["table_size"])
        if problem is not None:
            raise ConfigError("bots", f"the teams cannot be kept apart: {problem}")
    policy = TablePolicy(**{key: settings.pop(key) for key in POLICY_KEYS if key in settings})
    return TournamentConfig(
        bots=bots, base_dir=base_dir, limits=limits, gauntlet=gauntlet, policy=policy, teams=teams, **settings
    )


def _teams(entries: list[dict[str, Any]]) -> dict[str, str]:
    """Each bot's ``team``, for the bots that give one (checked after the bots themselves)."""
    teams: dict[str, str] = {}
    for index, entry in enumerate(entries):
        if "team" not in entry:
            continue
        team = entry["team"]
        if not isinstance(team, str) or not BOT_NAME_PATTERN.fullmatch(team):
            raise ConfigError(
                f"bots[{index}].team",
                f"must be a team name of letters, digits, '.', '_' or '-' (at most 40), not {_shown(team)}",
            )
        teams[entry["name"]] = team
    return teams


def _limits(section: Any) -> Limits:
    if not isinstance(section, dict):
        raise ConfigError("limits", "must be a table: write [limits] followed by e.g. memory_mb = 512")
    values: dict[str, int] = {}
    for key, value in section.items():
        if key not in LIMIT_KEYS:
            known = ", ".join(LIMIT_KEYS)
            raise ConfigError(
                f"limits.{key}", f"unknown key: {_closest(key, LIMIT_KEYS)}the keys of [limits] are {known}"
            )
        if not isinstance(value, int) or isinstance(value, bool):
            raise ConfigError(f"limits.{key}", f"must be a whole number, not {_shown(value)}")
        if value < _LIMIT_MINIMA[key]:
            raise ConfigError(f"limits.{key}", f"must be at least {_LIMIT_MINIMA[key]}, not {value}")
        maximum = _LIMIT_MAXIMUM * 1024 if key == "log_bytes" else _LIMIT_MAXIMUM
        if value > maximum:
            raise ConfigError(f"limits.{key}", f"must be at most {maximum}, not {value}")
        values[key] = value
    return Limits(**values)


def _sandbox(value: Any, key: str) -> SandboxKind:
    try:
        return SandboxKind(value)
    except ValueError:
        raise ConfigError(
            key, f'must be "bwrap" (the default) or "none" (trusted bots only), not {_shown(value)}'
        ) from None


def _gauntlet(section: Any, bots: tuple[BotSpec, ...]) -> GauntletSpec:
    if not isinstance(section, dict):
        raise ConfigError("gauntlet", 'must be a table: write [gauntlet] followed by candidate = "..."')
    for key in section:
        if key not in GAUNTLET_KEYS:
            known = ", ".join(sorted(GAUNTLET_KEYS))
            raise ConfigError(
                f"gauntlet.{key}",
                f"unknown key: {_closest(key, GAUNTLET_KEYS)}the keys of [gauntlet] are {known}",
            )
    names = [b.name for b in bots]
    candidate = section.get("candidate")
    if candidate is None:
        raise ConfigError("gauntlet.candidate", 'missing: name the bot under test, e.g. candidate = "mine"')
    if not isinstance(candidate, str) or candidate not in names:
        raise ConfigError(
            "gauntlet.candidate",
            f"must be the name of one of the bots ({', '.join(names)}), not {_shown(candidate)}",
        )
    values: dict[str, Any] = {}
    for key in GAUNTLET_FLOATS:
        if key in section:
            value = section[key]
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ConfigError(f"gauntlet.{key}", f"must be a number, not {_shown(value)}")
            values[key] = float(value)
    if "min_deals" in section:
        value = section["min_deals"]
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError("gauntlet.min_deals", f"must be a whole number, not {_shown(value)}")
        values["min_deals"] = value
    try:
        settings = SprtSettings(**values)
    except ValueError as exc:
        raise ConfigError("gauntlet", f"{exc}") from None
    return GauntletSpec(candidate=candidate, sprt=settings)


def _tournament(section: dict[str, Any], default_name: str) -> dict[str, Any]:
    for key in section:
        if key not in TOURNAMENT_KEYS:
            known = ", ".join(sorted(TOURNAMENT_KEYS))
            raise ConfigError(
                f"tournament.{key}",
                f"unknown key: {_closest(key, TOURNAMENT_KEYS)}the keys of [tournament] are {known}",
            )
    out: dict[str, Any] = {}
    name = section.get("name", default_name)
    if not isinstance(name, str) or not BOT_NAME_PATTERN.fullmatch(name):
        raise ConfigError(
            "tournament.name",
            "must be a string of letters, digits, '.', '_' or '-' (at most 40), e.g. name = \"spring\"",
        )
    out["name"] = name
    if "table_size" not in section:
        raise ConfigError("tournament.table_size", f"missing: add table_size = {MIN_PLAYERS}..{MAX_PLAYERS}")
    for key, (low, high) in _INT_RANGES.items():
        if key not in section:
            continue
        value = section[key]
        if not isinstance(value, int) or isinstance(value, bool):
            raise ConfigError(f"tournament.{key}", f"must be a whole number, not {_shown(value)}")
        if value < low or (high is not None and value > high):
            span = f"between {low} and {high}" if high is not None else f"at least {low}"
            raise ConfigError(f"tournament.{key}", f"must be {span}, not {value}")
        out[key] = value
    seed = section.get("seed", 1)
    if isinstance(seed, bool) or not isinstance(seed, int | str) or seed == "":
        raise ConfigError("tournament.seed", f"must be a number or a non-empty string, not {_shown(seed)}")
    if len(str(seed)) > 200:
        raise ConfigError("tournament.seed", "must be at most 200 characters")
    out["seed"] = str(seed)
    duplicate = section.get("duplicate", True)
    if not isinstance(duplicate, bool):
        raise ConfigError("tournament.duplicate", f"must be true or false, not {_shown(duplicate)}")
    out["duplicate"] = duplicate
    luck = section.get("luck_correction", False)
    if not isinstance(luck, bool):
        raise ConfigError("tournament.luck_correction", f"must be true or false, not {_shown(luck)}")
    out["luck_correction"] = luck
    seating = section.get("seating", DEFAULT_SEATING.value)
    values = [f'"{m.value}"' for m in SeatingMode]
    modes = ", ".join(values[:-1]) + " or " + values[-1]
    if not isinstance(seating, str) or seating not in {m.value for m in SeatingMode}:
        raise ConfigError("tournament.seating", f"must be {modes}, not {_shown(seating)}")
    out["seating"] = SeatingMode(seating)
    output = section.get("output", f"runs/{name}")
    if not isinstance(output, str) or not output:
        raise ConfigError("tournament.output", f"must be a folder path as a string, not {_shown(output)}")
    out["output"] = Path(output)
    server = section.get("server", "")
    if not isinstance(server, str) or (server and not SERVER_PATTERN.fullmatch(server)):
        raise ConfigError(
            "tournament.server", f'must be "host:port" (or "" to start a referee), not {_shown(server)}'
        )
    out["server"] = server
    hide = section.get("hide_names", False)
    if not isinstance(hide, bool):
        raise ConfigError("tournament.hide_names", f"must be true or false, not {_shown(hide)}")
    out["hide_names"] = hide
    if "sandbox" in section:
        out["sandbox"] = _sandbox(section["sandbox"], "tournament.sandbox")
    if "reuse" in section:
        reuse = section["reuse"]
        choices = ", ".join(f'"{r.value}"' for r in Reuse)
        if not isinstance(reuse, str) or reuse not in {r.value for r in Reuse}:
            raise ConfigError("tournament.reuse", f"must be one of {choices}, not {_shown(reuse)}")
        out["reuse"] = Reuse(reuse)
    out.update(_executor(section))
    return out


def _executor(section: dict[str, Any]) -> dict[str, Any]:
    """The ``executor`` and ``ray_address`` keys of [tournament]."""
    out: dict[str, Any] = {}
    value = section.get("executor", "local")
    try:
        out["executor"] = ExecutorKind(value)
    except ValueError:
        raise ConfigError("tournament.executor", f'must be "local" or "ray", not {_shown(value)}') from None
    address = section.get("ray_address", "")
    if not isinstance(address, str) or (
        address and address != "auto" and not SERVER_PATTERN.fullmatch(address)
    ):
        raise ConfigError(
            "tournament.ray_address",
            f'must be "host:port" of the Ray head, "auto", or "" for a one-machine Ray, '
            f"not {_shown(address)}",
        )
    out["ray_address"] = address
    if out["executor"] is ExecutorKind.RAY and section.get("server"):
        raise ConfigError(
            "tournament.server",
            'cannot be set with executor = "ray": each Ray node starts its own referee',
        )
    return out


def _bots(entries: Any, base_dir: Path) -> tuple[BotSpec, ...]:
    if entries is None:
        raise ConfigError("bots", "missing: add at least two [[bots]] entries, each with a name")
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise ConfigError("bots", "must be [[bots]] tables, each with name and builtin or command")
    if len(entries) < 2:
        raise ConfigError(
            "bots", f"a tournament needs at least 2 bots, not {len(entries)}: add [[bots]] entries"
        )
    if len(entries) > MAX_BOTS:
        raise ConfigError("bots", f"a tournament takes at most {MAX_BOTS} bots, not {len(entries)}")
    specs: list[BotSpec] = []
    seen: set[str] = set()
    for index, entry in enumerate(entries):
        where = f"bots[{index}]"
        for key in entry:
            if key not in _BOT_KEYS:
                raise ConfigError(
                    f"{where}.{key}",
                    f"unknown key: {_closest(key, _BOT_KEYS)}a bot has name, and builtin (with options) or "
                    "command (with protocol, files, runtime), and sandbox and team",
                )
        name = entry.get("name")
        if name is None:
            raise ConfigError(f"{where}.name", "missing: give every bot a name")
        if not isinstance(name, str) or not BOT_NAME_PATTERN.fullmatch(name):
            raise ConfigError(
                f"{where}.name",
                f"must be letters, digits, '.', '_' or '-' (at most 40 characters), not {_shown(name)}",
            )
        if name in seen:
            raise ConfigError(f"{where}.name", f"{name!r} is used twice: give every bot a distinct name")
        seen.add(name)
        specs.append(_bot(entry, where, name, base_dir))
    return tuple(specs)


def _bot(entry: dict[str, Any], where: str, name: str, base_dir: Path) -> BotSpec:
    sandbox = _sandbox(entry["sandbox"], f"{where}.sandbox") if "sandbox" in entry else None
    files = _files(entry["files"], f"{where}.files", base_dir) if "files" in entry else None
    if files is not None and "builtin" in entry:
        raise ConfigError(f"{where}.files", "only command bots have files of their own")
    has_builtin = "builtin" in entry
    has_command = "command" in entry
    if has_builtin == has_command:
        raise ConfigError(
            where,
            f'bot {name!r} needs exactly one of builtin = "..." or command = [...], '
            f"not {'both' if has_builtin else 'neither'}",
        )
    if has_command:
        if "options" in entry:
            raise ConfigError(f"{where}.options", "only built-in bots take options: pass flags in command")
        protocol = entry.get("protocol", BotProtocol.GRPC.value)
        if protocol not in tuple(BotProtocol):
            raise ConfigError(
                f"{where}.protocol", f'must be "grpc" (the default) or "stdio", not {_shown(protocol)}'
            )
        command = entry["command"]
        if (
            not isinstance(command, list)
            or not command
            or not all(isinstance(part, str) and part for part in command)
        ):
            raise ConfigError(
                f"{where}.command",
                f'must be a non-empty list of strings, e.g. ["python", "my_bot.py"], not {_shown(command)}',
            )
        return BotSpec(
            name=name,
            command=tuple(command),
            workdir=base_dir,
            files=files,
            sandbox=sandbox,
            protocol=BotProtocol(protocol),
            runtime=_runtime(entry["runtime"], f"{where}.runtime") if "runtime" in entry else None,
        )
    if "protocol" in entry:
        raise ConfigError(f"{where}.protocol", "only command bots take a protocol: built-in bots speak gRPC")
    if "runtime" in entry:
        raise ConfigError(
            f"{where}.runtime",
            "only command bots take a runtime: built-in bots run on the runner's own Python",
        )
    builtin = entry["builtin"]
    known = ", ".join(sorted(BUILTIN_BOTS))
    if not isinstance(builtin, str) or builtin not in BUILTIN_BOTS:
        raise ConfigError(f"{where}.builtin", f"unknown built-in bot {_shown(builtin)}: use one of {known}")
    options = entry.get("options", {})
    if not isinstance(options, dict) or not all(
        isinstance(v, int | float | str | bool) for v in options.values()
    ):
        raise ConfigError(
            f"{where}.options", "must be a table of plain values, e.g. options = { worlds = 4 }"
        )
    factory = cast(Callable[..., Bot], BUILTIN_BOTS[builtin])
    for key, value in options.items():
        problem = option_type_problem(factory, key, value)
        if problem is not None:
            raise ConfigError(f"{where}.options", f"not accepted by {builtin!r}: {problem}")
    try:
        # Built here once so that a bad option is a config error, not a crash in every game.
        factory(None, **options)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{where}.options", f"not accepted by {builtin!r}: {exc}") from None
    return BotSpec(name=name, builtin=builtin, options=dict(options), workdir=base_dir, sandbox=sandbox)


def _runtime(value: Any, key: str) -> str:
    """A runtime's name (whether this machine has it installed is checked when it runs)."""
    if not isinstance(value, str) or value not in runtimes.RUNTIMES:
        raise ConfigError(
            key, f"must be one of {runtimes.names()} (`hearts runtime list`), not {_shown(value)}"
        )
    return value


def _files(value: Any, key: str, base_dir: Path) -> tuple[Path, ...]:
    """``files = "dir"`` or ``files = ["dir", "file"]``, relative to the config file's folder."""
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(i, str) and i for i in items):
        raise ConfigError(
            key, f'must be a path or a list of paths, e.g. files = "bots/mine", not {_shown(value)}'
        )
    # Whether they exist is checked when the tournament runs (the runner's one-line error).
    return tuple((base_dir / item).resolve() for item in items)


def _closest(key: str, known: Iterable[str]) -> str:
    """``did you mean deals? `` for ``deal``, or nothing when no known key is close."""
    match = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.6)
    return f"did you mean {match[0]}? " if match else ""


def _shown(value: Any) -> str:
    """A value as the user wrote it, for messages (``"abc"``, ``12``, ``[1, 2]``, ``true``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        shown = json.dumps(value, ensure_ascii=False)  # quoted, control characters escaped
        return shown if len(shown) <= 80 else shown[:76] + '..."'
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "a list"
    shown = repr(value)
    return shown if len(shown) <= 80 else shown[:77] + "..."


#: TOML values an option's annotated type accepts (an int is a float, a bool is neither).
_OPTION_TYPES: dict[object, tuple[type, ...]] = {int: (int,), float: (int, float), str: (str,), bool: (bool,)}


def option_type_problem(factory: Callable[..., object], key: str, value: object) -> str | None:
    """Why ``value`` does not suit the parameter ``key`` of a built-in bot's constructor, or None.

    Checked against the constructor's annotations, so that ``worlds = 2.5`` is refused before
    anything is played rather than making the bot raise (and its SDK answer for it) on every
    decision.
    """
    try:
        parameters = inspect.signature(factory).parameters
        hints = typing.get_type_hints(getattr(factory, "__init__", factory))
    except (TypeError, ValueError, NameError):
        return None  # nothing to check against: the constructor's call will tell
    if key not in parameters or key == "seed":
        known = ", ".join(p for p in parameters if p not in ("self", "seed")) or "none"
        return f"no option {key!r} (its options: {known})"
    hint = hints.get(key)
    if hint is None:
        return None
    members = (
        typing.get_args(hint)
        if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union
        else (hint,)
    )
    accepted: list[type] = []
    for member in members:
        if member is type(None):
            continue
        if member not in _OPTION_TYPES:
            return None  # a type this check does not know: leave it to the constructor
        accepted.extend(_OPTION_TYPES[member])
    if isinstance(value, tuple(accepted)) and (bool in accepted or not isinstance(value, bool)):
        return None
    wanted = " or ".join(getattr(m, "__name__", str(m)) for m in members if m is not type(None))
    return f"{key} must be {wanted}, not {type(value).__name__} {value!r}"
