"""A bot on the Python SDK (hearts_client), with one defect chosen by name.

``python sdk_bot.py DEFECT --server ... --token-file ...``: ``good`` has none; the others raise
where their bug would (the SDK then answers for them with bot_error, and the kit sees that).
"""

import sys

from hearts_client import Bot, main

DEFECT = sys.argv.pop(1)


class Mutant(Bot):
    name = "mutant"

    def choose_pass(self, view):
        return sorted(view.hand, key=lambda c: c.rank)[-3:]

    def choose_play(self, view):
        if DEFECT == "set-aside-crash" and view.set_aside:
            raise RuntimeError("a trick nobody won?")
        if DEFECT == "kitty-zero" and view.kitty_size == 0:
            raise ZeroDivisionError("points per kitty card")
        return min(view.legal, key=lambda c: c.rank)

    def choose_moon(self, view):
        if DEFECT == "moon-blind":
            raise NotImplementedError("the moon never happens")
        return "self_minus_26"


main(Mutant())
