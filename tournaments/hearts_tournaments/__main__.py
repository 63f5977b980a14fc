"""``python -m hearts_tournaments`` is the ``hearts`` command."""

from hearts_tournaments.cli import main

main()
