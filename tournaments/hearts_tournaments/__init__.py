"""The ``hearts`` command line and the round-robin tournament runner."""
