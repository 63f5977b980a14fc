"""The mutation set: deliberately broken bots, each caught by a named check of the bot test kit.

Each :class:`Mutant` is one defect a real bot has (a flag it refuses, a stream it drops, a rule's
rare path it crashes on, a hand it thinks too long about), in Python or POSIX sh, over gRPC (by
hand, or through the SDK) or stdin/stdout. ``catches`` is the check that must fail; ``also``
are the other checks of its level that the same defect fails too, each for that defect (a bot
that crashes on a set-aside trick meets one in two of the kit's deals); every other check of
its level must pass or be skipped. The ``good`` bots of each kind must pass everything: they
are the same code without the defect.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

from hearts_core.defaults import TablePolicy
from hearts_tournaments.arena.bots import BotProtocol
from hearts_tournaments.arena.sandbox import Limits, SandboxKind
from hearts_tournaments.kit.catalogue import Level
from hearts_tournaments.kit.table import Competition

#: The repository, the mutation set's folder (the bots see it, read-only, in their sandbox) and
#: the shell example the shell mutants wrap.
ROOT = Path(__file__).resolve().parent.parent.parent
FOLDER = "tests/kit_mutants"
EXAMPLE = "clients/stdio/first_legal.sh"
#: A competition generous with time: on a loaded machine no good answer is ever late, so a
#: check fails for its defect only (the timing mutants use the default limits).
CALM = Competition(policy=TablePolicy(decision_ms=5000, time_bank_ms=600_000))


@dataclass(frozen=True, slots=True)
class Mutant:
    """One broken bot.

    Attributes:
        name: Its name (also the defect its program is given).
        program: ``grpc`` (by hand), ``sdk``, ``stdio`` (Python) or a shell script's name.
        level: The level that judges it.
        catches: The check that must fail.
        also: Other checks of the level its defect fails too.
        may_also: Checks whose game's very last events trip the defect: the process dies after
            its last decision there, and whether the kit sees that exit before the game's end
            (that check fails) or only as the next game starts (it does not) is a race the
            mutation set does not decide.
        competition: What it is tested for.
        why: The defect, in words.
    """

    name: str
    program: str
    level: Level
    catches: str
    why: str
    also: frozenset[str] = frozenset()
    may_also: frozenset[str] = frozenset()
    competition: Competition = field(default=CALM)

    @property
    def files(self) -> tuple[Path, ...] | None:
        """What its sandbox shows (a shell mutant also sees the example it wraps)."""
        if self.program.endswith(".sh"):
            return (ROOT / FOLDER, ROOT / EXAMPLE)
        return None

    @property
    def protocol(self) -> BotProtocol:
        """How it talks."""
        return BotProtocol.GRPC if self.program in ("grpc", "sdk") else BotProtocol.STDIO

    @property
    def language(self) -> str:
        """The language it is written in."""
        return "sh" if self.program.endswith(".sh") else "python"

    @property
    def command(self) -> tuple[str, ...]:
        """Its command, from the repository's root (a Python bot is given its defect, a shell
        script the shell example it wraps)."""
        if self.program.endswith(".sh"):
            return ("sh", f"{FOLDER}/{self.program}", EXAMPLE)
        script = {"grpc": "grpc_bot.py", "sdk": "sdk_bot.py", "stdio": "stdio_bot.py"}[self.program]
        return (sys.executable, f"{FOLDER}/{script}", self.name.removesuffix("-stdio"))


P, S, R, T = Level.PROCESS, Level.SESSION, Level.RULES, Level.TIMING
SIZES = frozenset(f"rules.table_size.{n}" for n in range(7, 12))

MUTANTS: tuple[Mutant, ...] = (
    # process
    Mutant("flags", "grpc", P, "process.flags", "refuses the --token-file flag it is given"),
    Mutant("no-start", "stdio", P, "process.starts", "exits at once: it cannot load what it needs"),
    Mutant(
        "slow-join",
        "stdio",
        P,
        "process.starts",
        "takes 5 s to start, past a 3 s join timeout",
        competition=Competition(policy=TablePolicy(decision_ms=5000, join_timeout_ms=3000)),
    ),
    Mutant(
        "memory-hog",
        "grpc",
        P,
        "process.limits",
        "holds 400 MB, over a 256 MB limit",
        competition=Competition(policy=CALM.policy, limits=Limits(memory_mb=256)),
    ),
    Mutant(
        "cpu-burner",
        "grpc",
        P,
        "process.limits",
        "spins on the CPU, over a 2 s budget",
        competition=Competition(policy=CALM.policy, limits=Limits(cpu_s=2)),
    ),
    # Bots that never answer are tested at the default limit: they cost it in full at each turn.
    Mutant(
        "silent",
        "stdio",
        P,
        "process.decides",
        "reads its requests and never answers",
        competition=Competition(),
    ),
    Mutant("buffered", "stdio", P, "process.decides", "never flushes its stdout", competition=Competition()),
    Mutant("crash-mid-game", "grpc", P, "process.decides", "exits with status 1 after three answers"),
    Mutant("chatty", "stdio", P, "process.stdout", "greets on its stdout"),
    Mutant("chatty.sh", "chatty.sh", P, "process.stdout", "greets on its stdout"),
    Mutant("lingers", "stdio", P, "process.exits", "stays up after its stdin ends"),
    Mutant("exit-nonzero", "grpc", P, "process.exits", "exits with status 3 once its table ends"),
    Mutant(
        "leaves-child",
        "grpc",
        P,
        "process.leftovers",
        "starts a helper process and exits without stopping it (unsandboxed: bwrap would end it)",
        competition=Competition(policy=CALM.policy, sandbox=SandboxKind.NONE),
    ),
    # session
    Mutant("single-game", "grpc", S, "session.games", "exits after its first game_completed"),
    Mutant("single-game-stdio", "stdio", S, "session.games", "exits after its first game_completed"),
    Mutant(
        "stale-id",
        "grpc",
        S,
        "session.request_ids",
        "answers first with the previous request's id",
        # At a session's next table the previous id is one of the last table's: the referee drops
        # such an answer unseen (docs/PROTOCOL.md), so the request times out.
        also=frozenset({"session.games"}),
    ),
    Mutant("stale-id-stdio", "stdio", S, "session.request_ids", "answers first with a wrong id"),
    Mutant("no-retry", "grpc", S, "session.rejection", "ignores rejections"),
    Mutant("no-retry-stdio", "stdio", S, "session.rejection", "ignores rejected lines"),
    Mutant("no_retry.sh", "no_retry.sh", S, "session.rejection", "never reads its rejected lines"),
    Mutant("no-reconnect", "grpc", S, "session.reconnect", "gives up when its stream breaks"),
    # rules
    Mutant(
        "cancel-confused",
        "stdio",
        R,
        "rules.cancel",
        "takes a cancelled pair that opens a trick for no card of the suit led: it discards, illegally",
        also=frozenset({"rules.table_size.7"}),  # whose hand opens a trick with a pair too
    ),
    Mutant(
        "set-aside-crash",
        "sdk",
        R,
        "rules.set_aside",
        "raises when cards are set aside",
        # A trick of the 7-seat hand is set aside too.
        also=frozenset({"rules.set_aside_taken", "rules.table_size.7"}),
    ),
    Mutant(
        "last-trick-crash",
        "stdio",
        R,
        "rules.set_aside_last_trick",
        "crashes on a hand whose cards nobody took",
        # The 7-seat game's last hand ends with its last trick set aside too, after the bot's
        # last decision.
        may_also=frozenset({"rules.table_size.7"}),
    ),
    Mutant("first-lead-filter", "stdio", R, "rules.first_lead_points", "never leads a point card first"),
    Mutant(
        "both-copies-crash",
        "stdio",
        R,
        "rules.both_copies",
        "crashes receiving a card twice",
        also=frozenset({"rules.pass_directions"}),  # it receives a pair in one of those four hands
    ),
    Mutant("moon-blind", "sdk", R, "rules.moon", "raises on the moon choice"),
    Mutant(
        "left-only",
        "stdio",
        R,
        "rules.pass_directions",
        "crashes passing right",
        also=frozenset({"rules.set_aside_last_trick"}),
    ),
    Mutant(
        "six-only",
        "stdio",
        R,
        "rules.table_size.11",
        "assumes six seats",
        also=SIZES | {"rules.pass_directions"},
    ),
    Mutant("kitty-zero", "sdk", R, "rules.table_size.8", "raises at a table with no kitty"),
    # timing
    Mutant(
        "slow-at-11",
        "stdio",
        T,
        "timing.table_size.11",
        "thinks 400 ms a decision at 11 seats: a long game would use up its time bank",
        competition=Competition(),
    ),
    Mutant(
        "over-limit",
        "grpc",
        T,
        "timing.table_size.9",
        "takes 1.5 s over one decision at 9 seats, past the 1 s limit",
        competition=Competition(),
    ),
)

#: The same programs without a defect: each passes every check of every level.
GOOD = ("grpc", "sdk", "stdio")


def good(program: str) -> Mutant:
    """The ``good`` bot of a program (its level and check unused: it runs every level)."""
    return Mutant("good", program, Level.PROCESS, "", "no defect", competition=Competition())
