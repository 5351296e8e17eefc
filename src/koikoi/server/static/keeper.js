/* Score keeper for physical games: tap captured cards, pick the rules, see the yaku. */
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const el = KK.el;
  const selected = new Set();
  let timer = null;
  let serial = 0;

  async function main() {
    const cfg = await KK.loadConfig();
    for (const p of cfg.presets) $("k-rules").append(el("option", { value: p.name, text: p.name, title: KK.td(p.description) }));
    const months = $("k-months");
    for (let m = 1; m <= 12; m++) {
      const cards = cfg.cards.filter((c) => c.month === m);
      const row = el("div", { class: "cards" });
      for (const c of cards) {
        const b = KK.cardEl(c.code, { button: true });
        b.setAttribute("aria-pressed", "false");
        b.addEventListener("click", () => toggle(c.code, b));
        row.append(b);
      }
      const month = KK.lang === "en" ? `${cards[0].month_en} ${cards[0].month_ja}` : KK.t("Month {month}: {name}", { month: m, name: KK.td(cards[0].month_en) });
      months.append(el("div", { class: "keeper-month", role: "group", "aria-label": month },
        el("h3", { text: KK.lang === "en" ? `${m}. ${cards[0].month_en} · ${cards[0].month_ja}` : month }), row));
    }
    for (const id of ["k-rules", "k-round", "k-koikoi", "k-opp", "k-house"]) {
      $(id).addEventListener("input", schedule);
      $(id).addEventListener("change", schedule);
    }
    $("k-clear").addEventListener("click", () => {
      selected.clear();
      for (const b of months.querySelectorAll("button.card")) b.setAttribute("aria-pressed", "false");
      schedule();
    });
    await score();
  }

  function toggle(code, button) {
    if (selected.has(code)) selected.delete(code);
    else selected.add(code);
    button.setAttribute("aria-pressed", selected.has(code) ? "true" : "false");
    schedule();
  }

  function schedule() {
    clearTimeout(timer);
    timer = setTimeout(() => void score(), 120);
  }

  async function score() {
    const mine = ++serial;
    const cards = KK.config.cards.filter((c) => selected.has(c.code)).map((c) => c.code);
    $("k-count").textContent = String(cards.length);
    $("k-selected").textContent = cards.join(" ") || KK.t("none");
    const body = {
      cards,
      rules: $("k-rules").value,
      round: Number($("k-round").value) || 1,
      koikoi_self: Number($("k-koikoi").value) || 0,
      opponent_koikoi: $("k-opp").checked,
    };
    const house = $("k-house").value;
    if (house.trim()) body.house_rules = house;
    try {
      const res = await KK.post("/api/score", body);
      if (mine !== serial) return;
      $("k-error").textContent = "";
      const s = res.settlement;
      const base = s.yaku.reduce((n, y) => n + y.points, 0);
      $("k-base").textContent = String(base);
      $("k-points").textContent = String(s.points);
      $("k-result").replaceChildren(
        el("p", { class: "hint-text", text: KK.t("Rules: {rules}; round {round} (month {month}).", { rules: res.rules, round: res.round, month: res.month }) }),
        KK.settlementView(s, [KK.t("You"), KK.t("Opponent")]));
    } catch (err) {
      if (mine !== serial) return;
      $("k-error").textContent = err.message;
    }
  }

  document.addEventListener("DOMContentLoaded", () => void main());
})();
