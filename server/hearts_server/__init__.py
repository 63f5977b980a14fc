"""The Cancellation Hearts referee: rules engine, game records and the gRPC server."""

__version__ = "0.1.0"
