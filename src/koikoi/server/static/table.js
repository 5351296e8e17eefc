/* The game table's extras: capture piles by kind with counts, and the yaku progress
   panel. Plain JavaScript, used by app.js.

   The progress rows come from the server (the state message's "progress": for each
   player, every yaku of the rules with the cards held, the cards needed, and whether
   it is made or can still be made), computed from the public capture piles only: the
   same logic as the terminal game's, not a copy of it here. */
"use strict";

const KKTable = (() => {
  const el = KK.el;
  const KIND_JA = { L: "光", A: "タネ", R: "短冊", P: "カス" };

  function kindName(kind) {
    // The English word of each kind, for the label beside its Japanese name.
    if (kind === "L") return KK.t("Brights");
    if (kind === "A") return KK.t("Animals");
    if (kind === "R") return KK.t("Ribbons");
    return KK.t("Plains");
  }

  // The counts last drawn for each pile, so that a count that grows can be marked.
  const lastCounts = new Map();

  /* A capture pile: always the four kinds in order (Brights, Animals, Ribbons,
     Plains), each with its count, an empty kind as a dimmed "0". A count that grew
     since the pile was last drawn bumps once (not with reduced motion). */
  function pileEl(codes, who) {
    const box = document.createDocumentFragment();
    const before = lastCounts.get(who);
    const now = {};
    lastCounts.set(who, now);
    for (const [kind, list] of KK.groupByKind(codes)) {
      now[kind] = list.length;
      const grew = !KK.reduceMotion && before && list.length > before[kind];
      const name = kindName(kind);
      const group = el("div", {
        class: "pile-group" + (list.length ? "" : " empty"),
        role: "group",
        "data-kind": kind,
        "aria-label": KK.t("{who}: {kind} {kanji}, {n}", { who, kind: name, kanji: KIND_JA[kind], n: list.length }),
      });
      group.append(el("span", { class: "kind", "aria-hidden": "true", title: `${name} ${KIND_JA[kind]}` },
        el("span", { class: "kind-ja", lang: "ja", text: KIND_JA[kind] }),
        KK.lang === "ja" ? null : el("span", { class: "kind-en", text: name }),
        el("span", { class: grew ? "count bump" : "count", text: String(list.length) })));
      const cards = el("div", { class: "pile-cards" });
      for (const c of list) cards.append(KK.cardEl(c));
      group.append(cards);
      box.append(group);
    }
    return box;
  }

  // The Japanese name without its romanisation: "猪鹿蝶" of "猪鹿蝶 inoshikachō".
  function kanji(key) {
    return (KK.yakuName(key).ja || "").split(" ")[0];
  }

  function yakuLabel(key) {
    return KK.lang === "ja" && kanji(key) ? kanji(key) : KK.yakuName(key).en;
  }

  /* The rows worth a glance, as the terminal game's progress line: made yaku first,
     then those under way by share of cards held; none impossible or not begun. */
  function leading(rows, limit) {
    return rows
      .map((r, i) => ({ r, i }))
      .filter(({ r }) => r.done || (r.possible && r.have > 0))
      .sort((a, b) => (a.r.done === b.r.done ? 0 : a.r.done ? -1 : 1)
        || b.r.have / b.r.need - a.r.have / a.r.need || a.i - b.i)
      .slice(0, limit)
      .map(({ r }) => r);
  }

  function lineText(rows) {
    const parts = leading(rows, 3).map((r) => `${yakuLabel(r.name)} ${r.have}/${r.need}${r.done ? " ✓" : ""}`);
    return parts.join(" · ");
  }

  function rowEl(r) {
    const state = r.done ? "done" : r.possible ? (r.have ? "started" : "open") : "impossible";
    const n = KK.yakuName(r.name);
    const pips = el("span", { class: "pips", "aria-hidden": "true" });
    for (let i = 0; i < r.need; i++) pips.append(el("span", { class: i < r.have ? "pip on" : "pip" }));
    let status = "";
    if (r.done) status = KK.t("made");
    else if (!r.possible) status = KK.t("no longer possible");
    return el("li", { class: `progress-row ${state}`, "data-yaku": r.name, title: KK.lang === "ja" ? n.name : n.ja ? `${n.en} · ${n.ja}` : n.en },
      el("span", { class: "yaku-label" },
        el("span", { class: "yaku-en", text: yakuLabel(r.name) }),
        KK.lang !== "ja" && kanji(r.name) ? el("span", { class: "yaku-ja", lang: "ja", text: kanji(r.name) }) : null),
      pips,
      el("span", { class: "have", text: `${r.have}/${r.need}` }),
      el("span", { class: "pts", text: KK.points(r.points) }),
      status ? el("span", { class: "why", text: status }) : null);
  }

  /* One player's progress: made first, then under way, not begun, and impossible last. */
  function listEl(rows, who) {
    const rank = (r) => (r.done ? 0 : !r.possible ? 3 : r.have ? 1 : 2);
    const sorted = rows.map((r, i) => ({ r, i }))
      .sort((a, b) => rank(a.r) - rank(b.r)
        || (rank(a.r) === 1 ? b.r.have / b.r.need - a.r.have / a.r.need : 0) || a.i - b.i)
      .map(({ r }) => r);
    const list = el("ul", { class: "progress-list", "aria-label": KK.t("{who}: yaku progress", { who }) });
    for (const r of sorted) list.append(rowEl(r));
    return list;
  }

  /* Fill the progress panel (#progress) and the one-line summaries under the piles
     (#top-progress, #bottom-progress) from a state message. `nameOf(seat)` names a
     player; `me` is the seat drawn at the bottom. */
  function renderProgress(state, nameOf, me) {
    const panel = document.getElementById("progress");
    const rows = state && state.progress;
    if (!panel) return;
    if (!rows) {
      panel.replaceChildren();
      return;
    }
    const opp = 1 - me;
    const parts = [];
    for (const [slot, p] of [["bottom", me], ["top", opp]]) {
      const section = el("section", { class: "progress-player", "data-seat": String(p), "data-slot": slot },
        el("h3", { text: nameOf(p) }),
        listEl(rows[p], nameOf(p)));
      parts.push(section);
      const line = document.getElementById(`${slot}-progress`);
      if (line) line.textContent = lineText(rows[p]);
    }
    panel.replaceChildren(...parts);
  }

  return { pileEl, renderProgress, lineText };
})();
