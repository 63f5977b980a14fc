"""The transport limits both sides agree on, and channels that keep to them.

The referee lets one HTTP/2 connection carry at most :data:`MAX_CALLS_PER_CONNECTION` calls at
once (a bot needs one). A small number keeps one abusive connection (an HTTP/2 rapid reset:
streams opened and reset as fast as it can) from crowding out everyone else's joins; see
``bench/rapid_reset.py``. grpc shares one connection between every channel of a process to the
same address, so a client that keeps many calls open (several seats in one process, an organiser
awaiting many tables) gives each group its own connection with :func:`own_channel`.
"""

from __future__ import annotations

import grpc

#: Calls one connection may have open at once (grpc's ``max_concurrent_streams`` on the referee).
MAX_CALLS_PER_CONNECTION = 8

#: Channel options that give a channel a connection of its own (not shared in the process).
OWN_CONNECTION: list[tuple[str, int]] = [("grpc.use_local_subchannel_pool", 1)]


def own_channel(address: str, credentials: grpc.ChannelCredentials | None = None) -> grpc.aio.Channel:
    """A grpc.aio channel to ``address`` over a connection of its own (TLS with ``credentials``)."""
    if credentials is not None:
        return grpc.aio.secure_channel(address, credentials, options=OWN_CONNECTION)
    return grpc.aio.insecure_channel(address, options=OWN_CONNECTION)
