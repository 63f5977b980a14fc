"""The Python bot SDK and the built-in bots of Cancellation Hearts."""

from hearts_client.bot import Bot

__all__ = ["Bot"]
