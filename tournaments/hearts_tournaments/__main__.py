"""``python -m hearts_tournaments`` is the ``hearts`` command."""

from hearts_tournaments.cli.main import main

main()
