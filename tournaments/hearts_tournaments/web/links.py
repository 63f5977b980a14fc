"""Where each page lives: one scheme for the live server, one for the static export.

The templates only ever ask a :class:`Links` for an address, so the same templates serve
``/bot/heuristic`` live and ``bot/heuristic.html`` (relative to the page) in an export.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote, urlencode


@dataclass(frozen=True, slots=True)
class Links:
    """Addresses of the pages.

    Attributes:
        static_site: Build file names of an exported site (else the server's routes).
        root: The prefix that leads from the current page to the site's root: ``/`` live,
            ``""`` or ``"../"`` in an export, depending on the page's folder.
    """

    static_site: bool = False
    root: str = "/"

    def at_depth(self, depth: int) -> Links:
        """The links of an exported page ``depth`` folders below the root."""
        return Links(self.static_site, "../" * depth if self.static_site else "/")

    def _page(self, path: str) -> str:
        return f"{self.root}{path}.html" if self.static_site else f"{self.root}{path}"

    def index(self, **query: str) -> str:
        base = f"{self.root}index.html" if self.static_site else self.root
        return _with(base, query)

    def games(self, **query: str) -> str:
        return _with(self._page("games"), query)

    def h2h(self) -> str:
        return self._page("h2h")

    def bot(self, name: str) -> str:
        return self._page(f"bot/{quote(name, safe='')}")

    def game(self, key: str, seat: int | None = None) -> str:
        if self.static_site:
            suffix = "" if seat is None else f"-seat{seat}"
            return f"{self.root}game/{quote(key, safe='')}{suffix}.html"
        return _with(f"{self.root}game/{quote(key, safe='')}", {} if seat is None else {"seat": str(seat)})

    def record(self, key: str) -> str:
        if self.static_site:
            return f"{self.root}game/{quote(key, safe='')}.json"
        return f"{self.root}game/{quote(key, safe='')}/record.json"

    def deal(self, deal: int) -> str:
        return self._page(f"deal/{deal}")

    def static(self, name: str) -> str:
        return f"{self.root}static/{name}"

    def fragment(self, name: str, query: str) -> str:
        return f"{self.root}fragment/{name}" + (f"?{query}" if query else "")

    def events(self) -> str:
        return f"{self.root}events"


def _with(base: str, query: dict[str, str]) -> str:
    kept = {k: v for k, v in query.items() if v}
    return f"{base}?{urlencode(kept)}" if kept else base
