"""The entrant portal: accounts, bot submissions and each entrant's own pages (docs/COMPETITION.md).

:mod:`.accounts` keeps the portal's database (``LEAGUE/portal.sqlite``: accounts with hashed
tokens, invite codes, submissions, the audit log); :mod:`.uploads` checks an uploaded archive
and turns it into the entrant's next league version; :mod:`.app` serves it next to the public
pages (``hearts web LEAGUE --submissions``); :mod:`.cli` holds ``hearts league entrant``,
``hearts league invite`` and ``hearts submit``.
"""
