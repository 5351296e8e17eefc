/* Score keeper for a whole match played with real cards: round by round, who won, the
   winner's captured cards and the koi-koi calls. The page keeps the match (in
   localStorage, so a reload loses nothing) and sends it whole to POST /api/keeper,
   where koikoi.features.keeper scores it: each round's settlement, the running totals and the
   rule set's end of the match. No scoring rule is written here. */
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const el = KK.el;
  const STORE = "koikoi.features.keeper";
  const PLAYERS = ["A", "B"];
  let state = null;
  let sheet = null;
  let timer = null;
  let serial = 0;

  function fresh(old) {
    return {
      rules: old ? old.rules : "nintendo",
      house: old ? old.house : "",
      rounds: old ? old.rounds : 6,
      first_dealer: old ? old.first_dealer : "A",
      names: old ? old.names.slice() : ["A", "B"],
      played: [],
      pending: newPending(),
    };
  }

  function newPending() {
    return { winner: "A", cards: [], koikoi: { A: 0, B: 0 } };
  }

  function load() {
    try {
      const saved = JSON.parse(localStorage.getItem(STORE) || "null");
      if (saved && Array.isArray(saved.played) && saved.pending && Array.isArray(saved.names)) return saved;
    } catch (_) { /* a broken entry: start again */ }
    return fresh(null);
  }

  function save() {
    try { localStorage.setItem(STORE, JSON.stringify(state)); } catch (_) { /* storage blocked */ }
  }

  /* A round as /api/keeper reads it: nobody's round has no cards and no calls. */
  function report(entry) {
    if (entry.winner === "nobody") return { winner: "nobody" };
    return { winner: entry.winner, cards: entry.cards.slice(), koikoi: Object.assign({}, entry.koikoi) };
  }

  function request(s, withPending) {
    const body = {
      rules: s.rules,
      rounds: s.rounds,
      first_dealer: s.first_dealer,
      names: s.names,
      played: s.played.map(report),
    };
    if (s.house.trim()) body.house_rules = s.house;
    if (withPending) body.pending = report(s.pending);
    return body;
  }

  function name(p) {
    return state.names[PLAYERS.indexOf(p)] || p;
  }

  async function main() {
    const cfg = await KK.loadConfig();
    KK.applyI18n(document);
    state = load();
    for (const p of cfg.presets) $("k-rules").append(el("option", { value: p.name, text: p.name, title: KK.td(p.description) }));
    const months = $("k-months");
    for (let m = 1; m <= 12; m++) {
      const cards = cfg.cards.filter((c) => c.month === m);
      const row = el("div", { class: "cards" });
      for (const c of cards) {
        const b = KK.cardEl(c.code, { button: true });
        b.setAttribute("aria-pressed", "false");
        b.addEventListener("click", () => toggle(c.code));
        row.append(b);
      }
      const month = KK.lang === "en"
        ? { label: `${cards[0].month_en} ${cards[0].month_ja}`, title: `${m}. ${cards[0].month_en} · ${cards[0].month_ja}` }
        : { label: KK.td(cards[0].month_en), title: KK.t("Month {month}: {name}", { month: m, name: KK.td(cards[0].month_en) }) };
      months.append(el("div", { class: "keeper-month", role: "group", "aria-label": month.label },
        el("h3", { text: month.title }), row));
    }
    $("k-setup").open = state.played.length === 0;
    for (const b of document.querySelectorAll(".keeper-winner button")) {
      b.addEventListener("click", () => { state.pending.winner = b.dataset.winner; changed(); });
    }
    for (const p of PLAYERS) {
      $(`k-kk-${p}-minus`).addEventListener("click", () => calls(p, -1));
      $(`k-kk-${p}-plus`).addEventListener("click", () => calls(p, 1));
    }
    $("k-clear").addEventListener("click", () => { state.pending.cards = []; changed(); });
    $("k-add").addEventListener("click", () => void addRound());
    $("k-undo").addEventListener("click", () => void undo());
    $("k-new").addEventListener("click", newMatch);
    $("k-rules").addEventListener("change", () => void setup({ rules: $("k-rules").value }));
    $("k-first-dealer").addEventListener("change", () => void setup({ first_dealer: $("k-first-dealer").value }));
    for (const r of document.querySelectorAll('input[name="k-rounds"]')) {
      r.addEventListener("change", () => void setup({ rounds: Number(r.value) }));
    }
    for (const [i, id] of [[0, "k-name-a"], [1, "k-name-b"]]) {
      $(id).addEventListener("change", () => {
        const typed = $(id).value.trim() || PLAYERS[i];
        if (typed === state.names[i]) return;
        void setup((s) => {
          const names = s.names.slice();
          names[i] = typed;
          return { names };
        });
      });
    }
    $("k-house").addEventListener("change", () => void setup({ house: $("k-house").value }));
    drawInputs();
    await refresh();
  }

  /* ------------------------------------------------------------ changes */

  function toggle(code) {
    const cards = state.pending.cards;
    const i = cards.indexOf(code);
    if (i >= 0) cards.splice(i, 1);
    else cards.push(code);
    if (state.pending.winner === "nobody") state.pending.winner = "A";
    changed();
  }

  function calls(p, delta) {
    const kk = state.pending.koikoi;
    kk[p] = Math.max(0, Math.min(20, (kk[p] || 0) + delta));
    changed();
  }

  function changed() {
    save();
    drawInputs();
    clearTimeout(timer);
    timer = setTimeout(() => void refresh(), 120);
  }

  /* A change of the match itself (rules, length, names, dealer): kept only when the
     server accepts the match under it; otherwise the old one stays. Changes run one
     after the other, each on the state the one before left. */
  let queue = Promise.resolve();
  function setup(change) {
    queue = queue.then(() => applySetup(change));
    return queue;
  }

  async function applySetup(change) {
    const candidate = Object.assign({}, state, typeof change === "function" ? change(state) : change);
    try {
      const res = await KK.post("/api/keeper", request(candidate, true));
      state = candidate;
      save();
      show(res);
    } catch (err) {
      $("k-error").textContent = err.message;
    }
    drawInputs();
  }

  async function addRound() {
    if (sheet && sheet.over) return;
    clearTimeout(timer);
    serial++; // a preview still on its way is out of date now
    const candidate = Object.assign({}, state, { played: state.played.concat([report(state.pending)]) });
    try {
      const res = await KK.post("/api/keeper", request(candidate, false));
      state = candidate;
      state.pending = newPending();
      save();
      drawInputs();
      show(res);
      $("k-setup").open = false;
      KK.toast(KK.t("Round {round} added.", { round: state.played.length }));
      await refresh();
    } catch (err) {
      $("k-error").textContent = err.message;
    }
  }

  /* Undo takes the last round back into the editor, to correct it or drop it. */
  async function undo() {
    if (!state.played.length) {
      KK.toast(KK.t("No round to undo."));
      return;
    }
    const last = state.played.pop();
    state.pending = last.winner === "nobody" ? Object.assign(newPending(), { winner: "nobody" })
      : { winner: last.winner, cards: last.cards || [], koikoi: Object.assign({ A: 0, B: 0 }, last.koikoi || {}) };
    save();
    drawInputs();
    KK.toast(KK.t("Round {round} taken back.", { round: state.played.length + 1 }));
    await refresh();
  }

  function newMatch() {
    if (state.played.length && !window.confirm(KK.t("Start a new match? The rounds of this one are cleared."))) return;
    state = fresh(state);
    save();
    drawInputs();
    $("k-setup").open = true;
    void refresh();
  }

  /* ------------------------------------------------------------ drawing */

  /* Sets an input to the kept value, unless the user is typing in it. */
  function setValue(id, value) {
    const input = $(id);
    if (document.activeElement !== input) input.value = value;
  }

  function drawInputs() {
    $("k-rules").value = state.rules;
    setValue("k-house", state.house);
    setValue("k-name-a", state.names[0]);
    setValue("k-name-b", state.names[1]);
    $("k-first-dealer").value = state.first_dealer;
    for (const r of document.querySelectorAll('input[name="k-rounds"]')) r.checked = Number(r.value) === state.rounds;
    const p = state.pending;
    for (const b of document.querySelectorAll(".keeper-winner button")) {
      b.setAttribute("aria-pressed", b.dataset.winner === p.winner ? "true" : "false");
    }
    for (const q of PLAYERS) {
      $(`k-win-${q}`).textContent = KK.t("{name} won", { name: name(q) });
      $(`k-calls-label-${q}`).textContent = KK.t("Koi-koi {name}", { name: name(q) });
      $(`k-kk-${q}`).textContent = String(p.koikoi[q] || 0);
      $(`k-total-name-${q}`).textContent = name(q);
    }
    for (const b of $("k-months").querySelectorAll("button.card")) {
      b.setAttribute("aria-pressed", p.cards.includes(b.dataset.code) ? "true" : "false");
    }
    const chosen = KK.config.cards.filter((c) => p.cards.includes(c.code)).map((c) => c.code);
    $("k-count").textContent = String(chosen.length);
    $("k-setup-summary").textContent = KK.t("The match: {a} and {b}, {rules}, {rounds} rounds",
      { a: state.names[0], b: state.names[1], rules: state.rules, rounds: state.rounds });
  }

  async function refresh() {
    const mine = ++serial;
    try {
      const res = await KK.post("/api/keeper", request(state, true));
      if (mine !== serial) return;
      show(res);
    } catch (err) {
      if (mine !== serial) return;
      $("k-error").textContent = err.message;
    }
  }

  function show(res) {
    sheet = res.sheet;
    $("k-error").textContent = "";
    for (const q of PLAYERS) $(`k-total-${q}`).textContent = String(sheet.totals[q]);
    const next = res.next;
    const where = $("k-where");
    if (next) {
      const dealer = next.dealer ? KK.t("{name} deals", { name: name(next.dealer) }) : "";
      where.replaceChildren(
        el("strong", { text: KK.t("Round {round} of {rounds}", { round: next.round, rounds: sheet.rounds }) }),
        el("span", { text: KK.t("month {month}", { month: next.month }) }),
        dealer ? el("span", { text: dealer }) : "");
    } else {
      where.replaceChildren(el("strong", { text: KK.t("The match is over") }));
    }
    $("k-first-dealer").closest(".field-row").hidden = !res.needs_first_dealer;
    $("k-add").textContent = next ? KK.t("Add round {round}", { round: next.round }) : KK.t("The match is over");
    $("k-add").disabled = !next;
    $("k-undo").disabled = !state.played.length;
    drawPending(res.pending, next);
    drawHistory(res);
  }

  function drawPending(pending, next) {
    const line = $("k-pending-line");
    const result = $("k-result");
    line.classList.remove("error-text");
    const box = $("k-result-box");
    if (!next) {
      line.textContent = resultText();
      $("k-base").textContent = "0";
      $("k-points").textContent = "0";
      result.replaceChildren();
      box.hidden = true;
      return;
    }
    $("k-base").textContent = String(pending ? pending.base : 0);
    const s = pending && pending.settlement;
    $("k-points").textContent = String(s ? s.points : 0);
    const names = [name("A"), name("B")];
    if (s) {
      line.textContent = s.winner === null || s.winner === undefined
        ? KK.t("Round {round}: nobody scores.", { round: next.round })
        : KK.tn("Round {round}: {name} scores {n} point.", "Round {round}: {name} scores {n} points.", s.points,
          { round: next.round, name: names[s.winner] });
      result.replaceChildren(KK.settlementView(s, names));
      box.hidden = false;
    } else {
      // the one message a preview gives in every language comes in both (error_ja)
      line.textContent = pending && pending.error ? (KK.lang === "ja" && pending.error_ja) || pending.error : "";
      line.classList.add("error-text");
      result.replaceChildren();
      box.hidden = true;
    }
  }

  function resultText() {
    const t = sheet.totals;
    const w = sheet.winner;
    if (w === null || w === undefined) return KK.t("Match drawn, {a} to {b}.", { a: t.A, b: t.B });
    const other = w === "A" ? "B" : "A";
    return KK.t("{name} wins the match, {a} to {b}.", { name: name(w), a: t[w], b: t[other] });
  }

  function drawHistory(res) {
    const list = $("k-history");
    list.replaceChildren();
    const names = [name("A"), name("B")];
    sheet.played.forEach((r, i) => {
      const s = res.settlements[i];
      const what = s.winner === null || s.winner === undefined
        ? KK.t("nobody scores")
        : KK.t("{name} +{points}", { name: names[s.winner], points: s.points });
      const calls = PLAYERS.filter((p) => r.koikoi[p]).map((p) => KK.t("{name} koi-koi ×{n}", { name: name(p), n: r.koikoi[p] }));
      const summary = el("summary", {},
        el("strong", { text: KK.t("Round {round}, {what}", { round: r.round, what }) }),
        calls.length ? ` · ${calls.join(", ")}` : "",
        el("span", { class: "running", text: `${r.totals.A} – ${r.totals.B}` }));
      list.append(el("li", { "data-round": String(r.round) }, el("details", {}, summary, KK.settlementView(s, names))));
    });
    if (sheet.over) list.append(el("li", { class: "keeper-final", text: resultText() }));
  }

  document.addEventListener("DOMContentLoaded", () => void main());
})();
