"""How a table plays (:class:`TableSettings`), its defaults, and where it stands (:class:`TableStatus`)."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from hearts_core.deal import derive_seed, new_seed
from hearts_core.defaults import DEFAULT_POLICY, TablePolicy
from hearts_core.rules import Rules
from hearts_protocol.values import TableStatus as TableStatus  # where a table stands

#: The largest value each TableConfig field may take (documented in admin_service.proto):
#: a table always ends, and in bounded time and space. The policy's own are its
#: (:attr:`TablePolicy.BOUNDS`).
LIMITS: dict[str, int] = {
    "target_score": 10_000,
    "max_hands": 1_000,
    "games": 1_000,
    **{name: high for name, (_, high) in TablePolicy.BOUNDS.items()},
}
#: The most hands a table may play in all, ``games × max_hands`` (100 games of the default 200
#: hands): with the server-wide cap on live tables it bounds the work an organiser can queue.
MAX_TABLE_HANDS = 20_000
#: The longest bot name, seed and label (characters).
MAX_NAME_CHARS = 200
MAX_SEED_CHARS = 200
MAX_LABEL_CHARS = 1_000
#: How the stop reason of a table nobody joined begins (the arena recognises it in AwaitTable's
#: answer).
NOBODY_JOINED = "no bot joined"


def check_limits(settings: TableSettings) -> None:
    """Raises ValueError, naming the field and its bound, for a value out of its limit (the
    policy is checked by its own type)."""
    values = {
        "target_score": settings.rules.target_score,
        "max_hands": settings.rules.max_hands,
        "games": settings.games,
    }
    for name, value in values.items():
        if value > LIMITS[name]:
            raise ValueError(f"{name} must be at most {LIMITS[name]}, not {value}")
    hands = settings.games * settings.rules.max_hands
    if hands > MAX_TABLE_HANDS:
        raise ValueError(
            f"games × max_hands must be at most {MAX_TABLE_HANDS}, not {settings.games} × "
            f"{settings.rules.max_hands} = {hands}: play the games on several tables"
        )
    for name in settings.bot_names:
        check_text(name, "a bot name", MAX_NAME_CHARS)
    check_text(settings.label, "the label", MAX_LABEL_CHARS)
    if any(len(seed) > MAX_SEED_CHARS for seed in (settings.seed, *settings.game_seeds)):
        raise ValueError(f"a seed is at most {MAX_SEED_CHARS} characters")


def check_text(value: str, what: str, most: int) -> None:
    """Raises ValueError for a label or name longer than ``most`` characters or holding a control
    character (Unicode category Cc: C0, DEL, C1).

    Such text goes into every record, the referee's log, web pages and terminals: a newline or
    an escape sequence in it would forge a log line or rewrite what a reader's terminal shows.
    """
    if len(value) > most:
        raise ValueError(f"{what} is at most {most} characters")
    for position, char in enumerate(value):
        if unicodedata.category(char) == "Cc":
            raise ValueError(
                f"{what} holds a control character (U+{ord(char):04X} at position {position}): "
                "labels and names are printable text"
            )


@dataclass(frozen=True, slots=True)
class TableSettings:
    """How a table plays.

    Attributes:
        rules: The rules of every game.
        bot_names: The name shown for each seat.
        games: Games played in a row.
        seed: The first game's deal seed, chosen by the organiser; game ``k`` > 0 uses
            ``derive_seed(seed, "game", k)``. Empty (and no ``game_seeds``): every game gets a
            fresh :func:`new_seed`, independent of the others.
        game_seeds: Each game's deal seed (exactly ``games`` of them); overrides ``seed``.
        reveal_seed: Whether GameCompleted tells the seats the seed (else only the record does).
        policy: How long a seat may think, the faults that retire it, how long the table
            waits for its seats (:class:`~hearts_core.defaults.TablePolicy`).
        label: Free text stored in the records (e.g. a tournament's game key).
    """

    rules: Rules
    bot_names: tuple[str, ...]
    games: int = 1
    seed: str = ""
    policy: TablePolicy = DEFAULT_POLICY
    label: str = ""
    game_seeds: tuple[str, ...] = ()
    reveal_seed: bool = False

    def __post_init__(self) -> None:
        if len(self.bot_names) != self.rules.players:
            raise ValueError(f"{self.rules.players} bot names needed, {len(self.bot_names)} given")
        if self.games < 1:
            raise ValueError("a table plays at least one game")
        check_limits(self)
        if self.game_seeds:
            if len(self.game_seeds) != self.games or not all(self.game_seeds):
                raise ValueError(f"game_seeds needs exactly {self.games} non-empty seeds, one per game")
        elif self.seed:
            if self.reveal_seed and self.games > 1:
                raise ValueError(
                    "reveal_seed with a chosen seed and several games would reveal the later games' "
                    "deals: give game_seeds (one per game) instead"
                )
        else:
            # No seed chosen: each game's is drawn now, independently, so that revealing one
            # (in its record or its GameCompleted) tells nothing about the next.
            object.__setattr__(self, "game_seeds", tuple(new_seed() for _ in range(self.games)))

    def game_seed(self, game_number: int) -> str:
        """The deal seed of game ``game_number`` of the table."""
        if self.game_seeds:
            return self.game_seeds[game_number]
        return self.seed if game_number == 0 else derive_seed(self.seed, "game", game_number)
