/* The statistics page: this browser's player (device key), totals, charts and finished games.
   The charts are inline SVG drawn here (no library); the data is koikoi.features.stats' summary
   from POST /api/players/stats. */
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const el = KK.el;
  const NS = "http://www.w3.org/2000/svg";
  const MAX_BARS = 60;

  function svg(tag, attrs, ...children) {
    const node = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v !== undefined && v !== null) node.setAttribute(k, String(v));
    }
    for (const c of children) {
      if (c === null || c === undefined) continue;
      node.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return node;
  }

  function percent(x) {
    return x === null || x === undefined ? "–" : `${Math.round(x * 100)}%`;
  }

  function signed(n) {
    return n > 0 ? `+${n}` : String(n);
  }

  function decimal(x) {
    return x === null || x === undefined ? "–" : (Math.round(x * 10) / 10).toFixed(1);
  }

  function yakuLabel(key) {
    const n = KK.yakuName(key);
    return KK.lang === "ja" ? n.name : n.en;
  }

  function resultText(result) {
    if (result === "win") return KK.t("Win");
    if (result === "loss") return KK.t("Loss");
    return KK.t("Draw");
  }

  function record(t) {
    return KK.t("{wins} W · {losses} L · {draws} D", { wins: t.wins, losses: t.losses, draws: t.draws });
  }

  /* The width of a chart's box in CSS pixels: charts are drawn at that size, so their
     text keeps its size on a phone and on a wide screen (drawn again on resize). */
  function boxWidth(node) {
    return Math.max(240, Math.floor(node.clientWidth || 320));
  }

  /* A chart as <svg role=img> with a title (its accessible name). */
  function chart(width, height, label) {
    return svg("svg", {
      viewBox: `0 0 ${width} ${height}`,
      width,
      height,
      role: "img",
      "aria-label": label,
      class: "chart-svg",
      preserveAspectRatio: "xMidYMid meet",
    }, svg("title", {}, label));
  }

  /* Horizontal bars, one row per item: the label above its bar, the value text at the right. */
  function barChart(rows, label, kind, width) {
    const rowH = 36;
    const height = Math.max(rowH, rows.length * rowH);
    const root = chart(width, height, label);
    rows.forEach((row, i) => {
      const y = i * rowH;
      const frac = row.max > 0 ? Math.max(0, Math.min(1, row.value / row.max)) : 0;
      root.append(
        svg("text", { x: 0, y: y + 13, class: "chart-label" }, row.label),
        svg("text", { x: width, y: y + 13, class: "chart-value", "text-anchor": "end" }, row.text),
        svg("rect", { x: 0, y: y + 18, width, height: 12, rx: 3, class: "bar-track" }),
        svg("rect", { x: 0, y: y + 18, width: Math.max(frac * width, frac > 0 ? 2 : 0), height: 12, rx: 3, class: `bar ${kind || ""}` }));
    });
    return root;
  }

  /* Net points of each game in time order (the latest MAX_BARS), and the running total. */
  function pointsChart(games, width) {
    const shown = games.slice(-MAX_BARS);
    const height = Math.round(Math.min(260, Math.max(160, width * 0.4)));
    const pad = { left: 36, right: 8, top: 12, bottom: 22 };
    let running = 0;
    const totals = games.map((g) => (running += g.net_points)).slice(-MAX_BARS);
    // The axis spans the data and 0, no more: all losses top out at 0, all gains start
    // there; when every value is 0 the 0 line sits in the middle.
    const values = shown.map((g) => g.net_points).concat(totals, [0]);
    const hi = Math.max(...values);
    const lo = Math.min(...values);
    const spanTop = hi === lo ? hi + 1 : hi;
    const spanBottom = hi === lo ? lo - 1 : lo;
    const plotW = width - pad.left - pad.right;
    const plotH = height - pad.top - pad.bottom;
    const y = (v) => pad.top + ((spanTop - v) / (spanTop - spanBottom)) * plotH;
    const step = plotW / shown.length;
    const label = KK.t("Points per game: the bars are each game's points, the line the running total");
    const root = chart(width, height, label);
    for (const v of new Set([hi, 0, lo])) {
      root.append(
        svg("line", { x1: pad.left, x2: width - pad.right, y1: y(v), y2: y(v), class: v === 0 ? "axis" : "grid" }),
        svg("text", { x: pad.left - 4, y: y(v) + 4, "text-anchor": "end", class: "chart-axis-label" }, signed(v)));
    }
    shown.forEach((g, i) => {
      const top = Math.min(y(g.net_points), y(0));
      const h = Math.max(Math.abs(y(g.net_points) - y(0)), 1);
      const barW = Math.min(40, Math.max(step * 0.7, 1));
      const x = pad.left + i * step + (step - barW) / 2;
      const rect = svg("rect", {
        x, y: top, width: barW, height: h,
        class: g.net_points >= 0 ? "bar gain" : "bar loss",
      }, svg("title", {}, `${KK.playerLabel(g.opponent)} · ${resultText(g.result)} · ${signed(g.net_points)}`));
      root.append(rect);
    });
    const points = totals.map((v, i) => `${pad.left + i * step + step / 2},${y(v)}`).join(" ");
    root.append(svg("polyline", { points, class: "running" }));
    // The first and the last game shown; one game is named once, under its bar.
    const first = games.length - shown.length + 1;
    if (first === games.length) {
      root.append(svg("text", { x: pad.left + step / 2, y: height - 6, "text-anchor": "middle", class: "chart-axis-label" }, KK.t("game {n}", { n: first })));
    } else {
      root.append(
        svg("text", { x: pad.left, y: height - 6, class: "chart-axis-label" }, KK.t("game {n}", { n: first })),
        svg("text", { x: width - pad.right, y: height - 6, "text-anchor": "end", class: "chart-axis-label" }, KK.t("game {n}", { n: games.length })));
    }
    return root;
  }

  function tiles(t) {
    const items = [
      [KK.t("Games"), String(t.games)],
      [KK.t("Won"), `${t.wins} (${percent(t.win_rate)})`],
      [KK.t("Lost"), String(t.losses)],
      [KK.t("Drawn"), String(t.draws)],
      [KK.t("Net points"), signed(t.net_points)],
      [KK.t("Points per round"), decimal(t.points_per_round)],
      [KK.t("Rounds won"), `${t.rounds_won} / ${t.rounds}`],
      [KK.t("Koi-koi calls"), `${t.koikoi_successes} / ${t.koikoi_calls} (${percent(t.koikoi_success_rate)})`],
    ];
    return items.map(([k, v]) => el("div", { class: "tile" }, el("dt", { text: k }), el("dd", { text: v })));
  }

  function table(node, first, rows, label = (name) => name) {
    const head = el("tr", {},
      el("th", { scope: "col", text: first }),
      el("th", { scope: "col", text: KK.t("Games") }),
      el("th", { scope: "col", text: KK.t("W–L–D") }),
      el("th", { scope: "col", text: KK.t("Win rate") }),
      el("th", { scope: "col", text: KK.t("Points per round") }),
      el("th", { scope: "col", text: KK.t("Koi-koi") }));
    const body = rows.map((r) => el("tr", {},
      el("th", { scope: "row", text: label(r.name) }),
      el("td", { text: String(r.games) }),
      el("td", { text: `${r.wins}–${r.losses}–${r.draws}` }),
      el("td", { text: percent(r.win_rate) }),
      el("td", { text: decimal(r.points_per_round) }),
      el("td", { text: `${r.koikoi_successes}/${r.koikoi_calls}` })));
    node.replaceChildren(el("thead", {}, head), el("tbody", {}, ...body));
  }

  function gameItem(g) {
    const when = g.finished_at ? new Date(g.finished_at * 1000).toLocaleString(KK.lang) : g.created;
    const score = `${g.score[0]}–${g.score[1]}`;
    return el("li", { class: `game-line ${g.result}`, "data-game": g.game_id },
      el("span", { class: "when", text: when }),
      el("span", { class: "who", text: KK.t("vs {opponent}", { opponent: KK.playerLabel(g.opponent) }) }),
      el("span", { class: "rules", text: g.rules }),
      el("strong", { class: "result", text: `${resultText(g.result)} ${score}` }),
      el("span", { class: "net", text: KK.tn("{n} round", "{n} rounds", g.rounds) }),
      el("a", { href: `/replay#mine=${encodeURIComponent(g.game_id)}`, class: "replay-link", text: KK.t("Replay") }));
  }

  function draw(data) {
    const s = data.summary;
    const t = s.total;
    if (!t.games) {
      $("s-empty").hidden = false;
      $("s-content").hidden = true;
      return;
    }
    $("s-empty").hidden = true;
    $("s-content").hidden = false;
    $("s-totals").replaceChildren(...tiles(t));
    $("s-points-chart").replaceChildren(pointsChart(s.games, boxWidth($("s-points-chart"))));
    $("s-opponent-chart").replaceChildren(barChart(
      s.by_opponent.map((o) => ({ label: KK.playerLabel(o.name), value: o.wins, max: o.games, text: `${record(o)} · ${percent(o.win_rate)}` })),
      KK.t("Win rate by opponent"), "win", boxWidth($("s-opponent-chart"))));
    const yaku = Object.entries(t.yaku);
    const most = Math.max(1, ...yaku.map(([, n]) => n));
    $("s-yaku-chart").replaceChildren(yaku.length
      ? barChart(yaku.map(([key, n]) => ({ label: yakuLabel(key), value: n, max: most, text: String(n) })), KK.t("Yaku made"), "yaku", boxWidth($("s-yaku-chart")))
      : el("p", { class: "hint-text", text: KK.t("No yaku made yet.") }));
    const calls = [{ name: KK.t("All games"), tally: t }].concat(
      s.by_rules.length > 1 ? s.by_rules.map((r) => ({ name: r.name, tally: r })) : []);
    $("s-koikoi-chart").replaceChildren(t.koikoi_calls
      ? barChart(calls.map((c) => ({
        label: c.name,
        value: c.tally.koikoi_successes,
        max: c.tally.koikoi_calls,
        text: KK.t("{ok} of {calls} succeeded", { ok: c.tally.koikoi_successes, calls: c.tally.koikoi_calls }),
      })), KK.t("Koi-koi success"), "koikoi", boxWidth($("s-koikoi-chart")))
      : el("p", { class: "hint-text", text: KK.t("No koi-koi calls yet.") }));
    table($("s-rules-table"), KK.t("Rule set"), s.by_rules);
    table($("s-opponent-table"), KK.t("Opponent"), s.by_opponent, KK.playerLabel);
    $("s-games").replaceChildren(...s.games.slice().reverse().map(gameItem));
  }

  let latest = null;
  let resizeTimer = null;
  window.addEventListener("resize", () => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => { if (latest) draw(latest); }, 150);
  });

  async function load() {
    $("s-error").textContent = "";
    try {
      const data = await KK.post("/api/players/stats", { key: KK.deviceKey() });
      if (data.name && !$("s-name").value) $("s-name").value = data.name;
      latest = data;
      draw(data);
    } catch (err) {
      if (err.code === "unknown_player") {
        $("s-empty").hidden = false;
        return;
      }
      $("s-error").textContent = KK.t("Cannot load the statistics: {error}", { error: err.message });
    }
  }

  async function saveName(e) {
    e.preventDefault();
    const name = $("s-name").value.trim();
    try {
      const res = await KK.post("/api/players/me", { key: KK.deviceKey(), name });
      KK.setPlayerName(res.name);
      $("s-status").textContent = KK.t("Saved.");
    } catch (err) {
      $("s-status").textContent = err.message;
    }
  }

  async function main() {
    await KK.loadConfig();
    KK.applyI18n(document);
    $("s-name").value = KK.playerName();
    $("s-name-form").addEventListener("submit", (e) => void saveName(e));
    await load();
    document.body.dataset.ready = "1";
  }

  document.addEventListener("DOMContentLoaded", () => void main());
})();
