"""structlog configuration, done once per process.

Console output on a terminal, JSON lines otherwise; ``--log-format`` forces either. The
standard library's logging (grpcio's included) goes through the same pipeline.

structlog (and the rich it brings) is imported by the functions, not by this module: a command
that only names a :class:`LogFormat` (``hearts --help``) does not pay for it.
"""

from __future__ import annotations

import enum
import logging
import sys
from typing import Any


class LogFormat(enum.StrEnum):
    """How log lines are rendered."""

    AUTO = "auto"
    CONSOLE = "console"
    JSON = "json"


def configure_logging(fmt: LogFormat | str = LogFormat.AUTO, level: str = "INFO") -> None:
    """Configures structlog and the standard library's logging to write to stderr.

    Args:
        fmt: ``console``, ``json`` or ``auto`` (console when stderr is a terminal).
        level: The lowest level written.
    """
    import structlog

    fmt = LogFormat(fmt)
    if fmt is LogFormat.AUTO:
        fmt = LogFormat.CONSOLE if sys.stderr.isatty() else LogFormat.JSON
    renderer: Any = (
        structlog.dev.ConsoleRenderer() if fmt is LogFormat.CONSOLE else structlog.processors.JSONRenderer()
    )
    shared: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    structlog.configure(
        processors=[*shared, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        # Not cached: a module's logger follows every later configuration (a test's
        # structlog.testing.capture_logs, a second configure_logging in one process) instead of
        # keeping the one it first logged with. A few microseconds a line; the referee logs a
        # handful of lines a game.
        cache_logger_on_first_use=False,
    )
    handler = _StderrHandler()
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=shared,
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                structlog.processors.format_exc_info,
                renderer,
            ],
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())


class _StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever ``sys.stderr`` is when a line is emitted, not when logging was set up
    (a test runner or a CLI harness swaps stderr; a handler bound to a closed one would fail)."""

    def emit(self, record: logging.LogRecord) -> None:
        self.stream = sys.stderr
        super().emit(record)


def get_logger(name: str) -> Any:
    """A structlog logger bound to ``name``.

    Getting a logger configures nothing (a library never does): entry points call
    :func:`configure_logging`; until one does, structlog's defaults apply.
    """
    import structlog

    return structlog.get_logger(name)
