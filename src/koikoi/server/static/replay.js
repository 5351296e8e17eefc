/* Step-through replay of a finished game (frames computed by the server from the record).
   Each frame carries its step in words (koikoi.features.narrate, the same words as the terminal
   replay, in the page's language) and, when the record was analysed, a mistake mark;
   settlements are explained with KK.settlementView, as in the live game. */
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const el = KK.el;
  let data = null;
  let pos = 0;

  async function main() {
    await KK.loadConfig();
    KK.applyI18n(document);
    const list = $("r-games");
    for (const [id, g] of Object.entries(KK.games())) {
      if (!g.token) continue;
      list.append(el("li", {}, el("a", { href: `#game=${encodeURIComponent(id)}`, text: `${g.mode === "ai" ? KK.t("vs AI") : KK.t("vs a friend")}, ${g.rules || ""}` }),
        el("span", { class: "hint-text", text: g.created ? new Date(g.created).toLocaleString() : "" })));
    }
    $("r-file").addEventListener("change", loadFile);
    $("r-analysis").addEventListener("change", loadFile);
    $("r-prev-mistake").addEventListener("click", () => toMistake(-1));
    $("r-next-mistake").addEventListener("click", () => toMistake(1));
    $("r-first").addEventListener("click", () => go(0));
    $("r-prev").addEventListener("click", () => go(pos - 1));
    $("r-next").addEventListener("click", () => go(pos + 1));
    $("r-last").addEventListener("click", () => go(data.frames.length - 1));
    $("r-slider").addEventListener("input", () => go(Number($("r-slider").value)));
    document.addEventListener("keydown", (e) => {
      if (!data || (e.target && e.target.tagName === "INPUT" && e.target.type !== "range")) return;
      if (e.key === "ArrowRight") { e.preventDefault(); go(pos + 1); }
      if (e.key === "ArrowLeft") { e.preventDefault(); go(pos - 1); }
      if (e.key === "Home") go(0);
      if (e.key === "End") go(data.frames.length - 1);
    });
    window.addEventListener("hashchange", fromHash);
    await fromHash();
  }

  async function fromHash() {
    const p = KK.hashParams();
    if (p.mine) {
      // A game from /stats: this browser's device key opens its player's own games.
      try {
        start(await KK.post("/api/players/replay", { key: KK.deviceKey(), game: p.mine }));
      } catch (err) {
        $("r-error").textContent = err.message;
      }
      return;
    }
    if (!p.game) return;
    const saved = KK.games()[p.game];
    if (!saved || !saved.token) {
      $("r-error").textContent = KK.t("This browser holds no seat for that game.");
      return;
    }
    try {
      start(await KK.post(`/api/games/${encodeURIComponent(p.game)}/replay?lang=${KK.lang}`, { token: saved.token }));
    } catch (err) {
      $("r-error").textContent = err.message;
    }
  }

  /* What each file of the page must be: the message for an empty file and for one
     that is not JSON, each naming the file and saying what is expected. */
  const UPLOADS = {
    record: {
      empty: (file) => KK.t("The record file {file} is empty. Choose a game record: the .json file of \"Download record\" or of koikoi.", { file }),
      notJson: (file) => KK.t("The record file {file} is not a game record (it is not JSON). Choose the .json file of \"Download record\" or of koikoi.", { file }),
    },
    analysis: {
      empty: (file) => KK.t("The analysis file {file} is empty. Choose the file that koikoi analyze --json wrote for this record, or no analysis.", { file }),
      notJson: (file) => KK.t("The analysis file {file} is not an analysis (it is not JSON). Choose the file that koikoi analyze --json wrote for this record, or no analysis.", { file }),
    },
  };

  /* A file's JSON, or an Error whose message (translated) names the file, what was
     wrong with it and what is expected. */
  async function readJson(file, kind) {
    const text = await file.text();
    if (!text.trim()) throw new Error(UPLOADS[kind].empty(file.name));
    try {
      return JSON.parse(text);
    } catch (_) {
      throw new Error(UPLOADS[kind].notJson(file.name));
    }
  }

  async function loadFile() {
    const file = $("r-file").files[0];
    const extra = $("r-analysis").files[0];
    if (!file) {
      if (extra) $("r-error").textContent = KK.t("Choose the record file too: an analysis marks the mistakes of a record.");
      return;
    }
    let body;
    try {
      body = { record: await readJson(file, "record") };
      if (extra) body.analysis = await readJson(extra, "analysis");
    } catch (err) {
      $("r-error").textContent = err.message;
      return;
    }
    try {
      start(await KK.post(`/api/replay?lang=${KK.lang}`, body));
    } catch (err) {
      $("r-error").textContent = KK.t("Cannot replay this file: {error}", { error: err.message });
    }
  }

  function start(d) {
    data = d;
    $("r-error").textContent = "";
    $("viewer").hidden = false;
    $("r-slider").max = String(d.frames.length - 1);
    const note = $("r-analysis-note");
    note.hidden = !d.analysed;
    note.textContent = d.analysed
      ? KK.tn("The analysis marks {n} mistake.", "The analysis marks {n} mistakes.", d.mistakes) : "";
    $("r-mistake-nav").hidden = !d.mistakes;
    go(0);
  }

  function toMistake(delta) {
    if (!data) return;
    for (let i = pos + delta; i >= 0 && i < data.frames.length; i += delta) {
      if (data.frames[i].mistake) { go(i); return; }
    }
    KK.toast(KK.t("No more mistakes this way."));
  }

  function go(i) {
    if (!data) return;
    pos = Math.max(0, Math.min(data.frames.length - 1, i));
    const f = data.frames[pos];
    $("r-slider").value = String(pos);
    const steps = data.frames.length - 1;
    $("r-pos").textContent = steps ? KK.t("Step {step} of {steps}", { step: pos, steps }) : KK.t("No moves: the match ended at the deal");
    for (const id of ["r-first", "r-prev", "r-next", "r-last", "r-slider"]) $(id).disabled = !steps;
    // Who the players are, named in the page's language (older answers: the names).
    const names = data.identities ? data.identities.map(KK.identityName) : (data.names || data.players);
    const who = (p) => (data.players[p] === `player ${p}` ? KK.t("Player {n}", { n: p }) : KK.t("{name} (player {n})", { name: names[p], n: p }));
    $("r-action").textContent = f.action ? `${who(f.actor)}: ${KK.lang === "en" ? f.action : f.action_text || f.action}` : KK.t("Round {round} dealt", { round: f.round });
    for (const p of [0, 1]) {
      $(`r-hand-${p}`).replaceChildren(...f.hands[p].map((c) => KK.cardEl(c)));
      const pile = $(`r-pile-${p}`);
      pile.replaceChildren();
      for (const [, codes] of KK.groupByKind(f.piles[p])) {
        if (!codes.length) continue;
        const g = el("div", { class: "pile-group" });
        for (const c of codes) g.append(KK.cardEl(c));
        pile.append(g);
      }
      $(`r-info-${p}`).replaceChildren(...KK.kids(
        el("span", { class: "name", text: who(p) }),
        f.dealer === p ? el("span", { class: "badge dealer", text: KK.t("Dealer 親") }) : null,
        f.current === p && !f.over ? el("span", { class: "badge turn", text: KK.t("to play") }) : null,
        f.koikoi_calls[p] ? el("span", { class: "badge koikoi", text: KK.t("koi-koi ×{calls}", { calls: f.koikoi_calls[p] }) }) : null,
        el("span", { text: KK.t("yaku: {points}", { points: f.round_scores[p] }) }),
        el("span", { text: KK.t("score: {points}", { points: f.match_scores[p] }) })));
    }
    $("r-field").replaceChildren(...f.field.map((c) => KK.cardEl(c)));
    $("r-stock").textContent = KK.t("Round {round}, month {month} · stock {stock}", { round: f.round, month: f.month, stock: f.stock_count });
    $("r-drawn").replaceChildren(f.drawn ? KK.cardEl(f.drawn, { extra: "drawn-card" }) : "");
    $("r-events").replaceChildren(...f.events.map((e) => el("li", { text: KK.describeEvent(e, who) })));
    words(f, [who(0), who(1)]);
  }

  /* The step in words, its mistake mark and its settlements explained. */
  function words(f, names) {
    const mark = $("r-mistake");
    mark.hidden = !f.mistake;
    mark.textContent = f.mistake ? f.mistake.text : "";
    $("r-narration").replaceChildren(...(f.narration || []).map((line) => el("p", { text: line })));
    const box = $("r-settlements");
    box.replaceChildren();
    for (const e of f.events) {
      if (e.type !== "round_over") continue;
      box.append(el("h3", { text: KK.t("Round {round} settled", { round: e.round }) }), KK.settlementView(e, names));
    }
  }

  document.addEventListener("DOMContentLoaded", () => void main());
})();
