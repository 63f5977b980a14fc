"""The SDK's logging: the standard library's, so that a bot author's process needs nothing else.

Importing the SDK configures nothing; :func:`hearts_client.main` (an entry point) sets up plain
lines on stderr, and a host that configured logging (structlog's stdlib bridge, say) gets the SDK's
events through its own pipeline. An event is a snake_case name and key=value fields, as in the
referee's logs; the fields are also attached to the record as ``fields``.
"""

from __future__ import annotations

import logging
import sys
from typing import Any


class EventLogger:
    """A thin event-style front for a :class:`logging.Logger`."""

    def __init__(self, name: str) -> None:
        self._logger = logging.getLogger(name)

    def _log(self, level: int, event: str, fields: dict[str, Any], exc_info: bool = False) -> None:
        if self._logger.isEnabledFor(level):
            text = " ".join([event, *(f"{key}={value!r}" for key, value in fields.items())])
            self._logger.log(level, "%s", text, exc_info=exc_info, extra={"fields": fields})

    def info(self, event: str, **fields: Any) -> None:
        """Logs ``event`` at INFO."""
        self._log(logging.INFO, event, fields)

    def warning(self, event: str, **fields: Any) -> None:
        """Logs ``event`` at WARNING."""
        self._log(logging.WARNING, event, fields)

    def exception(self, event: str, **fields: Any) -> None:
        """Logs ``event`` at ERROR with the exception being handled."""
        self._log(logging.ERROR, event, fields, exc_info=True)


def get_logger(name: str) -> EventLogger:
    """The SDK's logger for module ``name``."""
    return EventLogger(name)


def configure_stderr_logging(level: int = logging.INFO) -> None:
    """Plain ``time LEVEL event key=value`` lines on stderr: for the SDK's entry points only."""
    logging.basicConfig(level=level, stream=sys.stderr, format="%(asctime)s %(levelname)s %(message)s")
