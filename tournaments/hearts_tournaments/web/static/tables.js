// Sorting and filtering in the browser, for the exported (static) site only: the live server
// sorts and filters itself, from the same URL parameters, so its pages work without JavaScript.
(function () {
  "use strict";
  function value(row, index) {
    const cell = row.children[index];
    if (!cell) return "";
    const raw = cell.dataset.value !== undefined ? cell.dataset.value : cell.textContent.trim();
    const num = Number(raw);
    return raw !== "" && !Number.isNaN(num) ? num : raw.toLowerCase();
  }
  function sortBy(table, index, desc) {
    const body = table.tBodies[0];
    const rows = Array.from(body.rows);
    rows.sort((a, b) => {
      const x = value(a, index), y = value(b, index);
      if (x === y) return 0;
      if (x === "") return 1;
      if (y === "") return -1;
      return (x < y ? -1 : 1) * (desc ? -1 : 1);
    });
    rows.forEach((r) => body.appendChild(r));
  }
  function applyFilters(params) {
    const q = (params.get("q") || "").toLowerCase();
    const held = params.get("quarantined") || "";
    document.querySelectorAll("#standings-table tbody tr[data-bot]").forEach((tr) => {
      const quarantined = tr.dataset.quarantined === "yes";
      tr.hidden = !tr.dataset.bot.toLowerCase().includes(q) ||
        (held === "hide" && quarantined) || (held === "only" && !quarantined);
    });
    const bot = params.get("bot") || "", deal = params.get("deal") || "", status = params.get("status") || "";
    document.querySelectorAll("#games-table tbody tr[data-deal]").forEach((tr) => {
      tr.hidden = (bot && !tr.dataset.seats.split(" ").includes(bot)) ||
        (deal && tr.dataset.deal !== deal) || (status && tr.dataset.status !== status);
    });
  }
  function init() {
    if (document.body.dataset.site !== "static") return;
    const params = new URLSearchParams(location.search);
    applyFilters(params);
    document.querySelectorAll("table[data-sortable]").forEach((table) => {
      table.querySelectorAll("th[data-sort-key] button").forEach((button) => {
        const th = button.parentElement;
        button.addEventListener("click", () => {
          const desc = th.getAttribute("aria-sort") === "ascending";
          table.querySelectorAll("th[data-sort-key]").forEach((h) => h.setAttribute("aria-sort", "none"));
          th.setAttribute("aria-sort", desc ? "descending" : "ascending");
          sortBy(table, Array.from(th.parentElement.children).indexOf(th), desc);
        });
      });
      const key = params.get("sort");
      const th = key && table.querySelector('th[data-sort-key="' + key + '"]');
      if (th) sortBy(table, Array.from(th.parentElement.children).indexOf(th), params.get("order") === "desc");
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
