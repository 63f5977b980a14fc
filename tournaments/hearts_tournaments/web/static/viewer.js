// The replay viewer: draws the timeline the server embedded in the page (#timeline), step by step.
// In a seat's view the server sent only that seat's cards: other hands are drawn face down.
(function () {
  "use strict";
  const SUITS = { C: ["♣", "clubs"], D: ["♦", "diamonds"], H: ["♥", "hearts"], S: ["♠", "spades"] };
  const RANKS = { T: "10" };
  const ORDER = "23456789TJQKA";
  const SUIT_ORDER = "CDHS";

  function cardOrder(code) {
    return SUIT_ORDER.indexOf(code.slice(-1)) * 13 + ORDER.indexOf(code.slice(0, -1));
  }

  function cardEl(code, extra) {
    const el = document.createElement("span");
    const suit = code.slice(-1), rank = code.slice(0, -1);
    const shown = RANKS[rank] || rank;
    el.className = "card s-" + suit + (extra ? " " + extra : "");
    el.textContent = shown + SUITS[suit][0];
    el.title = shown + " of " + SUITS[suit][1];
    el.dataset.card = code;
    return el;
  }

  function without(cards, removed) {
    const out = cards.slice();
    for (const c of removed) {
      const i = out.indexOf(c);
      if (i >= 0) out.splice(i, 1);
    }
    return out;
  }

  function init() {
    const dataEl = document.getElementById("timeline");
    const root = document.getElementById("viewer");
    if (!dataEl || !root) return;
    const game = JSON.parse(dataEl.textContent);
    const n = game.players;
    root.hidden = false;

    // Steps: per hand, the deal, after the passes, every card, the end of the hand.
    const steps = [];
    game.hands.forEach((hand, h) => {
      steps.push({ h: h, kind: "deal" });
      steps.push({ h: h, kind: "pass" });
      hand.tricks.forEach((trick, t) => {
        trick.plays.forEach((_, c) => steps.push({ h: h, kind: "card", t: t, c: c }));
      });
      steps.push({ h: h, kind: "end" });
    });
    let pos = 0;
    let timer = null;
    const scrubber = document.getElementById("scrubber");
    const speed = document.getElementById("speed");
    const playBtn = document.getElementById("play");
    scrubber.max = String(Math.max(0, steps.length - 1));

    function stepHash(step) {
      const h = "h" + (step.h + 1);
      if (step.kind === "deal") return h;
      if (step.kind === "pass") return h + "p";
      if (step.kind === "end") return h + "e";
      const trick = game.hands[step.h].tricks[step.t];
      const last = step.c === trick.plays.length - 1;
      return h + "t" + (step.t + 1) + (last ? "" : "c" + (step.c + 1));
    }

    function fromHash(hash) {
      const m = /^#?h(\d+)(?:(p|e)|t(\d+)(?:c(\d+))?)?$/.exec(hash);
      if (!m) return null;
      const h = Number(m[1]) - 1;
      const hand = game.hands[h];
      if (!hand) return null;
      let want;
      if (m[2] === "p") want = (s) => s.h === h && s.kind === "pass";
      else if (m[2] === "e") want = (s) => s.h === h && s.kind === "end";
      else if (m[3]) {
        const t = Number(m[3]) - 1;
        const trick = hand.tricks[t];
        if (!trick) return null;
        const c = m[4] ? Math.min(Number(m[4]), trick.plays.length) - 1 : trick.plays.length - 1;
        want = (s) => s.h === h && s.kind === "card" && s.t === t && s.c === c;
      } else want = (s) => s.h === h && s.kind === "deal";
      const i = steps.findIndex(want);
      return i >= 0 ? i : null;
    }

    // A deep link to a moment this game does not have says so (and the viewer shows the start).
    const problemEl = document.getElementById("link-problem");
    function linkProblem(hash) {
      if (!hash || hash === "#") return null;
      const m = /^#?h(\d+)(?:(p|e)|t(\d+)(?:c(\d+))?)?$/.exec(hash);
      if (!m) {
        return hash + " is not a moment of this game: a link ends in #h2 (hand 2), #h2p (after its " +
          "passes), #h2t5 (its trick 5), #h2t5c3 (the trick's third card) or #h2e (its end).";
      }
      const hand = game.hands[Number(m[1]) - 1];
      if (!hand) {
        return hash + ": no hand " + m[1] + " in this game (it has " + game.hands.length + " hand" +
          (game.hands.length === 1 ? "" : "s") + ").";
      }
      if (m[3] && !hand.tricks[Number(m[3]) - 1]) {
        return hash + ": no trick " + m[3] + " in hand " + m[1] + " (it has " + hand.tricks.length + " tricks).";
      }
      return null;
    }
    function showLinkProblem(hash) {
      const problem = linkProblem(hash);
      if (!problemEl) return;
      problemEl.hidden = problem === null;
      problemEl.textContent = problem === null ? "" : problem + " Showing " +
        (pos === 0 ? "the start of the game." : "where the replay was.");
    }

    // Seats around an ellipse, seat 0 at the bottom, clockwise (to its left is seat 1).
    const table = document.getElementById("table");
    const seatEls = [];
    for (let s = 0; s < n; s++) {
      const angle = Math.PI / 2 + (2 * Math.PI * s) / n;
      const el = document.createElement("section");
      el.className = "seat" + (game.view_seat === s ? " me" : "");
      el.style.left = 50 + 40 * Math.cos(angle) + "%";
      el.style.top = 50 + 38 * Math.sin(angle) + "%";
      el.dataset.seat = String(s);
      el.setAttribute("aria-label", "Seat " + s + " " + game.seats[s]);
      el.innerHTML = '<h3 class="seat-name"></h3><div class="hand-cards"></div><div class="played"></div>';
      el.querySelector(".seat-name").textContent = "Seat " + s + " · " + game.seats[s];
      table.appendChild(el);
      seatEls.push(el);
    }
    const centre = document.createElement("div");
    centre.className = "centre";
    table.appendChild(centre);

    function handCards(hand, s, step) {
      // The cards seat s holds at this step, or null when this view does not show them.
      const dealt = hand.dealt[s];
      if (dealt === null) return null;
      if (step.kind === "deal") return dealt.slice();
      let cards = without(dealt, hand.passed[s] || []).concat(hand.received[s] || []);
      const played = [];
      if (step.kind === "end") {
        hand.tricks.forEach((tr) => tr.plays.forEach((p) => played.push(p)));
      } else if (step.kind === "card") {
        hand.tricks.forEach((tr, t) => {
          if (t < step.t) tr.plays.forEach((p) => played.push(p));
          else if (t === step.t) tr.plays.slice(0, step.c + 1).forEach((p) => played.push(p));
        });
      }
      cards = without(cards, played.filter((p) => p[0] === s).map((p) => p[1]));
      return cards.sort((a, b) => cardOrder(a) - cardOrder(b));
    }

    function handSize(hand, s, step) {
      const size = hand.tricks.length;
      if (step.kind === "deal" || step.kind === "pass") return size;
      if (step.kind === "end") return 0;
      let played = 0;
      hand.tricks.forEach((tr, t) => {
        tr.plays.forEach((p, c) => {
          if (p[0] === s && (t < step.t || (t === step.t && c <= step.c))) played++;
        });
      });
      return size - played;
    }

    function render() {
      const step = steps[pos];
      const hand = game.hands[step.h];
      scrubber.value = String(pos);
      const trick = step.kind === "card" ? hand.tricks[step.t] : null;
      const complete = trick && step.c === trick.plays.length - 1;
      // Seats: cards held, card just played in this trick.
      for (let s = 0; s < n; s++) {
        const el = seatEls[s];
        const box = el.querySelector(".hand-cards");
        box.replaceChildren();
        const cards = handCards(hand, s, step);
        if (cards === null) {
          const back = document.createElement("span");
          back.className = "backs";
          back.textContent = handSize(hand, s, step) + " cards (hidden)";
          box.appendChild(back);
        } else {
          cards.forEach((c) => box.appendChild(cardEl(c)));
          if (!cards.length) box.textContent = "no cards";
        }
        if (step.kind === "deal" && hand.passed[s]) {
          box.querySelectorAll(".card").forEach((c) => {
            if (hand.passed[s].includes(c.dataset.card)) c.classList.add("to-pass");
          });
        }
        const playedBox = el.querySelector(".played");
        playedBox.replaceChildren();
        el.classList.toggle("dealer", hand.dealer === s);
        el.classList.toggle("to-move", false);
        el.classList.toggle("won", Boolean(complete && trick.winner === s));
        if (trick) {
          trick.plays.slice(0, step.c + 1).forEach((p) => {
            if (p[0] !== s) return;
            const extra = p[2] ? "cancelled" : "";
            const card = cardEl(p[1], extra);
            playedBox.appendChild(card);
            if (p[2]) playedBox.appendChild(document.createTextNode(" cancelled"));
            if (p[3]) playedBox.appendChild(document.createTextNode(" (by referee)"));
          });
        }
      }
      // The centre: what happened.
      centre.replaceChildren();
      const say = (text, cls) => {
        const p = document.createElement("p");
        if (cls) p.className = cls;
        p.textContent = text;
        centre.appendChild(p);
        return p;
      };
      let where;
      if (step.kind === "deal") {
        where = "Hand " + (step.h + 1) + ": dealt by seat " + hand.dealer + ", passing " + hand.pass_direction;
        say(hand.kitty_size + "-card kitty face down");
        if (hand.passed.some((p) => p)) say("Cards outlined are the ones passed.");
      } else if (step.kind === "pass") {
        where = "Hand " + (step.h + 1) + ": after the passes (" + hand.pass_direction + ")";
        for (let s = 0; s < n; s++) {
          if (!hand.passed[s]) continue;
          const p = say("Seat " + s + " passed to seat " + hand.pass_to[s] + ": ");
          hand.passed[s].forEach((c) => p.appendChild(cardEl(c)));
          if (hand.received[s]) {
            const from = hand.pass_to.indexOf(s);
            const r = say("Seat " + s + " received from seat " + from + ": ");
            hand.received[s].forEach((c) => r.appendChild(cardEl(c)));
          }
        }
      } else if (step.kind === "card") {
        where = "Hand " + (step.h + 1) + ", trick " + (step.t + 1) + " of " + hand.tricks.length +
          ", card " + (step.c + 1) + " of " + trick.plays.length;
        const p = say("Trick " + (step.t + 1) + ", led by seat " + trick.leader + ": ");
        trick.plays.slice(0, step.c + 1).forEach((pl) => {
          const wrap = document.createElement("span");
          wrap.className = "trick-card";
          wrap.appendChild(document.createTextNode(pl[0] + ":"));
          wrap.appendChild(cardEl(pl[1], pl[2] ? "cancelled" : ""));
          p.appendChild(wrap);
        });
        if (complete) {
          if (trick.set_aside) say("Every card of the suit led cancelled: the trick is set aside.", "set-aside");
          else say("Won by seat " + trick.winner + " (" + game.seats[trick.winner] + ")", "winner-line");
        }
      } else {
        where = "Hand " + (step.h + 1) + ": end";
        const k = say("Kitty: ");
        hand.kitty.forEach((c) => k.appendChild(cardEl(c)));
        k.appendChild(document.createTextNode(hand.kitty_taker === null ? " (nobody took it)" : " taken by seat " + hand.kitty_taker));
        if (hand.uncollected.length) {
          const u = say("Uncollected: ");
          hand.uncollected.forEach((c) => u.appendChild(cardEl(c)));
        }
        if (hand.moon !== null) say("Seat " + hand.moon + " shot the moon!", "winner-line");
      }
      document.getElementById("where").textContent = where + " · step " + (pos + 1) + " of " + steps.length;
      // Points: collected this hand so far (the kitty's only at the end), totals.
      const body = document.querySelector("#scores tbody");
      body.replaceChildren();
      let taken = new Array(n).fill(0);
      if (step.kind === "end") taken = hand.points;
      else if (step.kind === "card") {
        const upto = complete ? step.t : step.t - 1;
        if (upto >= 0) taken = hand.tricks[upto].taken;
      }
      const before = step.h > 0 ? game.hands[step.h - 1].totals : new Array(n).fill(0);
      for (let s = 0; s < n; s++) {
        const tr = document.createElement("tr");
        const total = step.kind === "end" ? hand.totals[s] : before[s];
        tr.innerHTML = "<th scope='row'></th><td class='num'></td><td class='num'></td>";
        tr.children[0].textContent = s + " " + game.seats[s];
        tr.children[1].textContent = String(taken[s]) + (step.kind === "end" ? " → " + hand.scores[s] : "");
        tr.children[2].textContent = String(total);
        body.appendChild(tr);
      }
      const info = document.getElementById("hand-info");
      info.textContent = game.view_seat === null ? "Every seat's cards are shown." :
        "Seat " + game.view_seat + "'s view: only its own cards and what everyone saw.";
      const hash = "#" + stepHash(step);
      if (location.hash !== hash) history.replaceState(null, "", hash);
    }

    function go(i) {
      pos = Math.max(0, Math.min(steps.length - 1, i));
      render();
    }
    function findFrom(dir, test) {
      for (let i = pos + dir; i >= 0 && i < steps.length; i += dir) if (test(steps[i], i)) return i;
      return dir > 0 ? steps.length - 1 : 0;
    }
    function trickEnd(s) {
      return s.kind !== "card" || s.c === game.hands[s.h].tricks[s.t].plays.length - 1;
    }
    const actions = {
      prev: () => go(pos - 1),
      next: () => go(pos + 1),
      "prev-trick": () => go(findFrom(-1, trickEnd)),
      "next-trick": () => go(findFrom(1, trickEnd)),
      "prev-hand": () => {
        const h = steps[pos].kind === "deal" && steps[pos].h > 0 ? steps[pos].h - 1 : steps[pos].h;
        go(steps.findIndex((s) => s.h === h));
      },
      "next-hand": () => go(findFrom(1, (s) => s.kind === "deal")),
      play: () => toggle(),
    };
    function toggle() {
      if (timer) {
        clearInterval(timer);
        timer = null;
        playBtn.textContent = "▶ Play";
        playBtn.setAttribute("aria-pressed", "false");
        return;
      }
      if (pos >= steps.length - 1) go(0);
      playBtn.textContent = "⏸ Pause";
      playBtn.setAttribute("aria-pressed", "true");
      timer = setInterval(() => {
        if (pos >= steps.length - 1) toggle();
        else go(pos + 1);
      }, Number(speed.value));
    }
    speed.addEventListener("change", () => {
      if (timer) { toggle(); toggle(); }
    });
    root.querySelectorAll("[data-act]").forEach((b) => b.addEventListener("click", () => actions[b.dataset.act]()));
    scrubber.addEventListener("input", () => go(Number(scrubber.value)));
    document.addEventListener("keydown", (e) => {
      const tag = e.target && e.target.tagName;
      if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA" || e.altKey || e.ctrlKey || e.metaKey) return;
      const keys = {
        ArrowRight: e.shiftKey ? "next-trick" : "next",
        ArrowLeft: e.shiftKey ? "prev-trick" : "prev",
        PageDown: "next-hand",
        PageUp: "prev-hand",
        " ": "play",
        k: "play",
      };
      if (e.key === "Home") { go(0); e.preventDefault(); return; }
      if (e.key === "End") { go(steps.length - 1); e.preventDefault(); return; }
      const act = keys[e.key];
      if (!act) return;
      if (e.key === " " && tag === "BUTTON") return; // the button's own click handles it
      e.preventDefault();
      actions[act]();
    });
    window.addEventListener("hashchange", () => {
      const asked = location.hash;
      const i = fromHash(asked);
      if (i !== null && i !== pos) go(i);
      showLinkProblem(asked);
    });
    const seatSelect = document.getElementById("seat-select");
    if (seatSelect) {
      seatSelect.addEventListener("change", () => {
        const opt = seatSelect.options[seatSelect.selectedIndex];
        location.href = opt.dataset.href + location.hash;
      });
    }
    const asked = location.hash;
    const start = fromHash(asked);
    go(start === null ? 0 : start);
    showLinkProblem(asked);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
