/* The lobby: quick match (pairs two waiting players who want the same rule set) and the
   leaderboard (Glicko-2 ratings per rule set, the AI levels included). */
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const el = KK.el;
  let polling = null;
  let waiting = false;

  function quickBody() {
    const body = { key: KK.deviceKey(), rules: $("q-rules").value };
    const rounds = $("q-rounds").value;
    if (rounds) body.rounds = Number(rounds);
    const name = $("q-name").value.trim();
    if (name) body.name = name;
    return body;
  }

  function setWaiting(on) {
    waiting = on;
    $("q-start").disabled = on;
    $("q-cancel").hidden = !on;
    if (!on && polling) { clearTimeout(polling); polling = null; }
  }

  async function ask() {
    try {
      const res = await KK.post("/api/lobby/quick", quickBody());
      if (!waiting) return;
      if (res.type === "matched") {
        setWaiting(false);
        KK.saveGame(res.game, { token: res.token, seat: res.seat, mode: "friend", rules: res.rules, created: Date.now() });
        $("q-status").textContent = KK.t("Matched with {name}: starting the game…", { name: KK.playerLabel(res.opponent) });
        location.href = `/#game=${encodeURIComponent(res.game)}`;
        return;
      }
      $("q-status").textContent = KK.t("Waiting for an opponent who wants {rules}…", { rules: res.rules });
      polling = setTimeout(() => void ask(), 1000);
    } catch (err) {
      setWaiting(false);
      $("q-status").textContent = KK.t("Cannot find a match: {error}", { error: err.message });
    }
  }

  async function start(e) {
    e.preventDefault();
    KK.setPlayerName($("q-name").value.trim());
    setWaiting(true);
    await ask();
  }

  async function cancel() {
    setWaiting(false);
    $("q-status").textContent = KK.t("You left the queue.");
    try { await KK.post("/api/lobby/leave", { key: KK.deviceKey() }); } catch (_) { /* gone already */ }
  }

  async function leaderboard() {
    const rules = $("lb-rules").value;
    const table = $("lb-table");
    try {
      const r = await fetch(`/api/leaderboard?rules=${encodeURIComponent(rules)}`);
      const data = await r.json();
      if (!r.ok) throw new Error(data.message || `HTTP ${r.status}`);
      const head = el("tr", {},
        el("th", { scope: "col", text: "#" }),
        el("th", { scope: "col", text: KK.t("Player") }),
        el("th", { scope: "col", text: KK.t("Rating") }),
        el("th", { scope: "col", text: "±" }),
        el("th", { scope: "col", text: KK.t("Games") }),
        el("th", { scope: "col", text: KK.t("W–L–D") }));
      // A provisional rating (fewer than 10 rated games) is shown with "?"; people with
      // one are listed apart, unranked.
      const row = (p, rank) => el("tr", { class: p.kind === "ai" ? "ai-row" : "human-row" },
        el("td", { text: rank }),
        el("th", { scope: "row", text: KK.playerLabel(p.name) }),
        el("td", {
          class: p.provisional ? "rating provisional" : "rating",
          text: Math.round(p.rating).toString() + (p.provisional ? "?" : ""),
          title: p.provisional ? KK.t("Provisional: fewer than {n} rated games", { n: 10 }) : undefined,
        }),
        el("td", { text: Math.round(p.rd).toString() }),
        el("td", { text: String(p.games) }),
        el("td", { text: `${p.wins}–${p.losses}–${p.draws}` }));
      table.replaceChildren(el("thead", {}, head),
        el("tbody", {}, ...data.players.map((p, i) => row(p, String(i + 1)))));
      const unranked = data.provisional || [];
      const extra = $("lb-provisional");
      extra.hidden = $("lb-provisional-title").hidden = unranked.length === 0;
      extra.replaceChildren(el("thead", {}, head.cloneNode(true)),
        el("tbody", {}, ...unranked.map((p) => row(p, "–"))));
    } catch (err) {
      table.replaceChildren(el("caption", { text: KK.t("Cannot load the leaderboard: {error}", { error: err.message }) }));
    }
  }

  async function main() {
    await KK.loadConfig();
    KK.applyI18n(document);
    $("q-name").value = KK.playerName();
    for (const p of KK.config.presets) {
      $("q-rules").append(el("option", { value: p.name, text: p.name }));
      $("lb-rules").append(el("option", { value: p.name, text: p.name }));
    }
    const wanted = KK.hashParams().rules;
    if (wanted && KK.config.presets.some((p) => p.name === wanted)) $("lb-rules").value = wanted;
    $("q-form").addEventListener("submit", (e) => void start(e));
    $("q-cancel").addEventListener("click", () => void cancel());
    $("lb-rules").addEventListener("change", () => void leaderboard());
    await leaderboard();
    document.body.dataset.ready = "1";
  }

  document.addEventListener("DOMContentLoaded", () => void main());
})();
