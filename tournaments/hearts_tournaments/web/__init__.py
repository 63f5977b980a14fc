"""``hearts web``: a tournament's leaderboard, games and replays in a browser (live or exported).

:mod:`.source` reads the data (the only module that knows the store), :mod:`.pages` renders
it, :mod:`.app` serves it live and :mod:`.export` writes it as a static site.
"""
