"""The rules core of Cancellation Hearts: cards, rules, state, views, dealing, records, replay.

No network code and no dependencies: the referee (``hearts_server``), the bot SDK
(``hearts_client``) and the tournament runner all stand on it. Importing it configures nothing.
"""
