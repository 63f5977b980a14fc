"""A league's settings: chosen at ``hearts league init`` and stored in its database."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from hearts_core.defaults import DEFAULT_POLICY, TablePolicy
from hearts_core.rules import DEFAULT_MAX_HANDS, DEFAULT_TARGET_SCORE, MAX_PLAYERS, MIN_PLAYERS
from hearts_tournaments.arena.bots import BotSpec, Reuse
from hearts_tournaments.arena.sandbox import SandboxKind
from hearts_tournaments.arena.settings import PlaySettings
from hearts_tournaments.league.rating_models import DEFAULT_RATING, rating_refusal
from hearts_tournaments.results.where import SERVER_PATTERN, ExecutorKind


class LeagueError(Exception):
    """A league command cannot be done (bad setting, unknown entrant, ...): one clear line."""


#: Process reuse policies: ``fresh`` starts every bot anew for every game.
REUSE_POLICIES = ("fresh",)


@dataclass(frozen=True, slots=True)
class LeagueConfig:
    """How a league's games are played, rated and scheduled.

    Attributes:
        name: The league's name (labels of its tables).
        table_size: Seats per table, 6 to 11; a block is one deal in every rotation, so
            ``table_size`` games.
        seed: Derives every block's deal, seating and bot seeds (with the deal secret).
        policy: The referee's limit per decision, the thinking time per seat per game, the
            faults that retire a seat and how long a table waits for its bots (stored as the
            flat keys ``decision_ms``, ``time_bank_ms``, ``max_faults``, ``join_timeout_ms``).
        target_score: A game ends when a total reaches this.
        max_hands: ... or after this many hands.
        quarantine_after: Failed rated games after which a version is quarantined.
        sandbox: How bots are isolated (``bwrap`` or ``none`` for trusted bots).
        reuse: Bot process reuse policy (``fresh``: one process per seat per game).
        provisional_blocks: A version is provisional until it played this many blocks ...
        provisional_width: ... and its official interval is at most this wide.
        lane_blocks: The priority lane: a version that played fewer blocks than this (a new or
            updated one) is seated in the next blocks before anything else, so that it has a
            provisional rating within minutes (0: no lane; at most ``provisional_blocks``).
        new_bonus: Extra priority (in blocks) of a version whose online sigma is still above
            ``settled_sigma``: new versions get extra games until their rating settles.
        settled_sigma: The online sigma below which a rating counts as settled.
        spread: Random spread of the rating term in matchmaking (0: strictly similar ratings).
        bootstrap: Bootstrap resamples of the official table.
        executor: Where ``run`` plays the games: ``local`` (this machine) or ``ray`` (a Ray
            cluster, docs/DISTRIBUTED.md); ``run --executor`` overrides it.
        ray_address: With ``executor = "ray"``: the Ray head's ``host:port``, ``auto``, or
            empty for a one-machine Ray; ``run --ray-address`` overrides it.
        hide_names: Whether the bots see neutral labels (``seat-3``) instead of their
            table-mates' names (docs/FAIR_PLAY.md).
        rating: The online rating model, a name in
            :data:`~hearts_tournaments.league.rating_models.RATING_MODELS` (fixed once a block is
            stored); a league from before models has none stored and rates as ``openskill-pl``.
    """

    name: str = "league"
    table_size: int = 6
    seed: str = "1"
    policy: TablePolicy = DEFAULT_POLICY
    target_score: int = DEFAULT_TARGET_SCORE
    max_hands: int = DEFAULT_MAX_HANDS
    quarantine_after: int = 3
    sandbox: str = SandboxKind.BWRAP.value
    reuse: str = "fresh"
    provisional_blocks: int = 8
    provisional_width: float = 1.0
    lane_blocks: int = 2
    new_bonus: float = 3.0
    settled_sigma: float = 4.0
    spread: float = 1.0
    bootstrap: int = 200
    executor: str = ExecutorKind.LOCAL.value
    ray_address: str = ""
    hide_names: bool = False
    rating: str = DEFAULT_RATING

    def __post_init__(self) -> None:
        if not MIN_PLAYERS <= self.table_size <= MAX_PLAYERS:
            raise LeagueError(f"table size must be {MIN_PLAYERS} to {MAX_PLAYERS}, not {self.table_size}")
        for name in (
            "target_score",
            "max_hands",
            "quarantine_after",
            "provisional_blocks",
        ):
            if getattr(self, name) < 1:
                raise LeagueError(f"{name.replace('_', '-')} must be at least 1, not {getattr(self, name)}")
        if not isinstance(self.lane_blocks, int) or not 0 <= self.lane_blocks <= self.provisional_blocks:
            raise LeagueError(
                f"lane-blocks must be 0 (no lane) to provisional-blocks ({self.provisional_blocks}), "
                f"not {self.lane_blocks!r}"
            )
        if self.sandbox not in tuple(SandboxKind):
            raise LeagueError(f'sandbox must be "bwrap" or "none", not {self.sandbox!r}')
        if self.reuse not in REUSE_POLICIES:
            raise LeagueError(f"reuse must be one of {', '.join(REUSE_POLICIES)}, not {self.reuse!r}")
        if self.bootstrap < 0 or self.provisional_width <= 0 or self.spread < 0 or self.new_bonus < 0:
            raise LeagueError("bootstrap, spread and new-bonus must be >= 0 and provisional-width > 0")
        if not self.seed:
            raise LeagueError("the seed must not be empty")
        check_executor(self.executor, self.ray_address)
        refusal = rating_refusal(self.rating)
        if refusal is not None:
            raise LeagueError(refusal)

    def to_json(self) -> dict[str, Any]:
        """The settings as stored: the policy's keys flat among the others, as ever."""
        out = asdict(self)
        out.update(out.pop("policy"))
        return out

    @staticmethod
    def from_json(data: dict[str, Any]) -> LeagueConfig:
        """The settings stored by :meth:`to_json` (unknown keys ignored, missing ones default).

        Raises:
            LeagueError: for a stored policy value out of its bounds.
        """
        known = {f.name for f in fields(LeagueConfig)} - {"policy"}
        try:
            policy = TablePolicy.from_json(data)
        except ValueError as exc:
            raise LeagueError(str(exc)) from None
        return LeagueConfig(policy=policy, **{k: v for k, v in data.items() if k in known})

    def play_settings(self, folder: Path, bots: tuple[BotSpec, ...] = ()) -> PlaySettings:
        """How the league's games are played, by ``bots``, the league being in ``folder`` (what the
        arena and the entrants' check read).

        A league starts a process per seat per game (no warm bots yet: ``reuse = "never"``).
        """
        return PlaySettings(
            name=self.name,
            table_size=self.table_size,
            bots=bots,
            target_score=self.target_score,
            max_hands=self.max_hands,
            policy=self.policy,
            sandbox=SandboxKind(self.sandbox),
            reuse=Reuse.NEVER,
            base_dir=folder,
            hide_names=self.hide_names,
        )


def check_executor(executor: str, ray_address: str) -> None:
    """Refuses an executor or Ray address the league cannot play on, in one line.

    Raises:
        LeagueError: naming the setting, what is wrong and what it takes.
    """
    if executor not in tuple(ExecutorKind):
        raise LeagueError(f'executor must be "local" or "ray", not {executor!r}')
    if not isinstance(ray_address, str) or (
        ray_address and ray_address != "auto" and not SERVER_PATTERN.fullmatch(ray_address)
    ):
        raise LeagueError(
            f'ray-address must be "host:port" of the Ray head, "auto", or "" for a one-machine Ray, '
            f"not {ray_address!r}"
        )
