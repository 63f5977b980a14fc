"""Every check of the kit, by level: its stable name, what it checks and the fix when it fails.

The names are the kit's interface (a CI system keys on them, the docs list them), so they are
written once, here; ``docs/BOT_TEST.md`` lists every one (a test holds the two together).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from hearts_core.rules import MAX_PLAYERS, MIN_PLAYERS


class Level(enum.StrEnum):
    """The kit's levels, in the order they run."""

    PROCESS = "process"
    SESSION = "session"
    RULES = "rules"
    TIMING = "timing"


#: What ``hearts tournament check``, ``hearts league add`` and the portal run.
QUICK_LEVELS = (Level.PROCESS, Level.SESSION)

#: The checks whose failure means a bot cannot play a game at all: the pre-flight check refuses
#: it. Any other failed check of the quick levels is a warning: the bot plays and the referee
#: answers for it where it fails (a late answer, an answer not repeated after a rejection), as
#: in any game; a check game on a loaded machine must not keep a bot out of a tournament.
CANNOT_PLAY = frozenset({"process.flags", "process.starts", "process.limits", "session.joins"})

#: Where a bot's process learns everything it is given.
_GETS = "docs/PROTOCOL.md, what a bot process gets"


@dataclass(frozen=True, slots=True)
class Check:
    """One check of the kit.

    Attributes:
        name: Its stable name, ``LEVEL.WHAT``.
        what: What it checks, in one line.
        fix: What to do when it fails (a verdict may give a more precise one).
    """

    name: str
    what: str
    fix: str

    @property
    def level(self) -> Level:
        """The check's level."""
        return Level(self.name.split(".", 1)[0])


def _rules(name: str, what: str, rule: str) -> Check:
    return Check(
        f"rules.{name}",
        what,
        f"{rule}: the bot must answer every request of such a hand from its view and legal cards "
        "(the request it failed on and its log are below; docs/RULES.md)",
    )


CHECKS: tuple[Check, ...] = (
    Check(
        "process.flags",
        "takes the flags a competition appends to its command: --server unix:/run/hearts/referee.sock "
        "--token-file /run/hearts/token (a stdio bot gets none)",
        "accept --server ADDRESS and --token-file FILE after your own arguments (or read HEARTS_SERVER "
        f"and HEARTS_TOKEN_FILE) and ignore flags you do not know ({_GETS})",
    ),
    Check(
        "process.starts",
        "starts in the sandbox and joins its table within the join timeout",
        "run the command by hand to see it start; inside the sandbox it runs in /tmp with no network and "
        f"sees only its files ({_GETS})",
    ),
    Check(
        "process.limits",
        "stays under the competition's memory, CPU and process limits",
        "use less memory or CPU, or fewer processes, than the competition's [limits] allow",
    ),
    Check(
        "process.decides",
        "makes every decision of a short game itself, in time",
        "answer every request within its time_left_ms with one of its legal cards (docs/PROTOCOL.md)",
    ),
    Check(
        "process.stdout",
        "writes nothing on its stdout but its answers (a stdio bot)",
        "write one answer line per decide or rejected line and nothing else; logs go to stderr "
        "(docs/PROTOCOL.md, stdin/stdout bots)",
    ),
    Check(
        "process.exits",
        "exits by itself, with status 0, once its table ends",
        "stop when the stream ends with status OK (a stdio bot: when its stdin ends) and exit with status 0",
    ),
    Check(
        "process.leftovers",
        "leaves no process running behind it",
        "stop every process the bot starts (and wait for it) before the bot exits",
    ),
    Check(
        "session.joins",
        "joins its seat with the token it is given, as a warm bot joins its session",
        "send join{token, protocol_version: 1} first on one Play stream, the token read from the "
        f"--token-file file and trimmed ({_GETS})",
    ),
    Check(
        "session.request_ids",
        "answers each request with that request's own id",
        "echo the request_id of the decision_request you answer (a stdio bot: its id, or no id)",
    ),
    Check(
        "session.games",
        "plays game after game on one stream: game_started again, game_completed many times",
        "keep reading the stream after game_completed: a warm bot gets game after game until the "
        "stream ends with OK; reset what you keep per game at each game_started",
    ),
    Check(
        "session.rejection",
        "answers a request again after its answer was rejected",
        "after a rejection (a rule's code, UNKNOWN_CARD, WRONG_ANSWER or MALFORMED) answer the same "
        "request again while its time lasts (a stdio bot: one answer line per rejected line)",
    ),
    Check(
        "session.reconnect",
        "reconnects with its token after its stream breaks, and plays on (a gRPC bot)",
        "on UNAVAILABLE, CANCELLED or RESOURCE_EXHAUSTED open a new Play stream with the same token "
        "(back off 0.1 s, doubling to 2 s) and answer the request the referee sends again "
        "(docs/PROTOCOL.md, Reconnecting)",
    ),
    _rules(
        "cancel",
        "follows a trick in which two identical cards cancelled",
        "identical cards played to one trick cancel: the trick's `cancelled` flags mark them, and the "
        "highest card of the suit led played only once wins",
    ),
    _rules(
        "set_aside",
        "plays on after a trick is set aside, its leader leading again",
        "a trick whose every card of the suit led is cancelled is set aside (no winner, `set_aside`: "
        "true): its cards wait in view.set_aside and its leader leads again",
    ),
    _rules(
        "set_aside_taken",
        "plays on after set-aside points and the kitty go to a later trick's winner",
        "set-aside cards and a kitty not yet taken go to the next trick's winner with that trick "
        "(view.kitty_taker, view.taken_points)",
    ),
    _rules(
        "set_aside_last_trick",
        "plays on after the last trick of a hand is set aside, its points counting for nobody",
        "when the last trick of a hand is set aside its cards are uncollected (hand_completed's "
        "`uncollected`), and the next hand follows",
    ),
    _rules(
        "first_lead_points",
        "leads the first trick holding only hearts and Black Marias",
        "a first lead may be a heart or the QS when the leader holds nothing else: play one of the "
        "request's legal cards",
    ),
    _rules(
        "both_copies",
        "passes and plays on with both copies of a card (two decks)",
        "every card exists twice: a hand, a pass and a trick may hold both copies of one card",
    ),
    _rules(
        "moon",
        "shoots the moon and answers the moon choice",
        "a seat that took every heart and both Black Marias is asked DECISION_KIND_MOON: answer "
        'choose_moon (a stdio bot: {"moon": "self_minus_26"} or "others_plus_26")',
    ),
    _rules(
        "pass_directions",
        "passes left and right over several hands",
        "hand 0 passes left (to seat + 1), hand 1 right, then in turn: view.passed_to says where",
    ),
    *(
        _rules(
            f"table_size.{n}",
            f"plays a hand at {n} seats (its hand size and kitty)",
            f"a table has {MIN_PLAYERS} to {MAX_PLAYERS} seats: 104 // seats cards each and 104 % seats in "
            "the kitty; take the table size from game_started",
        )
        for n in range(MIN_PLAYERS, MAX_PLAYERS + 1)
    ),
    *(
        Check(
            f"timing.table_size.{n}",
            f"at {n} seats, decides within the decision limit and would last a whole game on its time bank",
            "think less per decision: every decision must end within time_left_ms, and a game's decisions "
            "together within the time bank (the time_bank_ms of each request)",
        )
        for n in range(MIN_PLAYERS, MAX_PLAYERS + 1)
    ),
)

#: The checks by name.
BY_NAME = {check.name: check for check in CHECKS}


def checks_of(level: Level) -> tuple[Check, ...]:
    """The checks of one level, in order."""
    return tuple(c for c in CHECKS if c.level is level)
