/* Shared helpers of the Koi-Koi pages: config, card elements, names, API calls, saved games.
   Plain JavaScript, no build step, nothing from outside the server. */
"use strict";

const KK = (() => {
  let config = null;
  const byCode = new Map();

  async function loadConfig() {
    if (config) return config;
    const [r] = await Promise.all([fetch("/api/config"), loadMessages()]);
    config = await r.json();
    for (const c of config.cards) byCode.set(c.code, c);
    applyI18n(document);
    setupLanguageSwitch();
    return config;
  }

  /* Language. The English text is the message key; the Japanese catalog is the
     server's koikoi/locales/ja/*.json (GET /api/messages/ja), shared with the terminal
     game and the CLI. The choice is kept in localStorage ("koikoi.lang"); without one
     the browser's language decides. Placeholders are {name}, as in Python. */
  const LANGS = ["en", "ja"];
  let lang = "en";
  let messages = {};

  function storedLanguage() {
    try {
      const saved = localStorage.getItem("koikoi.lang");
      if (LANGS.includes(saved)) return saved;
    } catch (_) { /* storage blocked: fall through */ }
    const nav = (navigator.languages && navigator.languages[0]) || navigator.language || "en";
    return nav.toLowerCase().startsWith("ja") ? "ja" : "en";
  }

  async function loadMessages() {
    lang = storedLanguage();
    document.documentElement.lang = lang;
    if (lang === "en") { messages = {}; return; }
    try {
      const r = await fetch(`/api/messages/${lang}`);
      messages = r.ok ? await r.json() : {};
    } catch (_) {
      messages = {};
    }
  }

  function fill(text, params) {
    if (!params) return text;
    return text.replace(/\{(\w+)\}/g, (whole, key) => (key in params ? String(params[key]) : whole));
  }

  /* t(message, {name: value}): the message in the page's language. */
  function t(message, params) {
    return fill(messages[message] || message, params);
  }

  /* tn(singular, plural, n, params): English has two forms, Japanese one (keyed by
     the singular); {n} is the count. */
  function tn(singular, plural, n, params) {
    const text = messages[singular] || (n === 1 ? singular : plural);
    return fill(text, Object.assign({ n }, params || {}));
  }

  /* Translate static markup: data-i18n (text), data-i18n-label (aria-label),
     data-i18n-title (title), data-i18n-placeholder (placeholder). The attribute
     holds the English message. */
  function applyI18n(root) {
    const scope = root || document;
    for (const node of scope.querySelectorAll("[data-i18n]")) node.textContent = t(node.dataset.i18n);
    for (const node of scope.querySelectorAll("[data-i18n-label]")) node.setAttribute("aria-label", t(node.dataset.i18nLabel));
    for (const node of scope.querySelectorAll("[data-i18n-title]")) node.title = t(node.dataset.i18nTitle);
    for (const node of scope.querySelectorAll("[data-i18n-placeholder]")) node.placeholder = t(node.dataset.i18nPlaceholder);
  }

  /* Switch language and reload the page, so every view is drawn again in it. */
  function setLanguage(code) {
    if (!LANGS.includes(code)) return;
    try { localStorage.setItem("koikoi.lang", code); } catch (_) { /* ignore */ }
    location.reload();
  }

  /* td(text): a name or description from the server's data (card, month, kind, yaku,
     multiplier, level, rule set) in the page's language; the same catalog as t(),
     for text that is not written in a t() call (koikoi.i18n.td in Python). */
  function td(text) {
    return messages[text] || text;
  }

  /* The language switch of the site header: <div class="lang-switch"> with a
     button[data-lang] per language; the current one is pressed. */
  function setupLanguageSwitch() {
    for (const button of document.querySelectorAll(".lang-switch button[data-lang]")) {
      button.setAttribute("aria-pressed", button.dataset.lang === lang ? "true" : "false");
      button.addEventListener("click", () => {
        if (button.dataset.lang !== lang) setLanguage(button.dataset.lang);
      });
    }
  }

  function kids(...nodes) {
    return nodes.filter((n) => n !== null && n !== undefined && n !== false);
  }

  function card(code) {
    return byCode.get(code);
  }

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    if (attrs) {
      for (const [key, value] of Object.entries(attrs)) {
        if (value === undefined || value === null || value === false) continue;
        if (key === "class") node.className = value;
        else if (key === "text") node.textContent = value;
        else if (key.startsWith("on") && typeof value === "function") node.addEventListener(key.slice(2), value);
        else node.setAttribute(key, value === true ? "" : String(value));
      }
    }
    for (const child of children) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  /* A card's accessible name: in English the English and Japanese names (from
     koikoi.game.cards via /api/config), in Japanese "松に鶴 · 光 (1L)". */
  function cardLabel(info) {
    if (lang === "en") return info.label;
    const name = td(info.name_en).replace(` (${info.code})`, "");
    return `${name} · ${td(info.kind_en)} (${info.code})`;
  }

  /* Code badges (the corner mark "1L", "9A" of each card: month and kind). A setting,
     kept in localStorage ("koikoi.badges": "on" or "off", default "off") and shown as
     document.documentElement.dataset.badges. The card images come from the server with
     or without the badge (/cards/9A.svg?badge=on|off); a change of the data attribute
     (the settings dialog, another tab, the tutorial) swaps the images on the page. The
     tutorial forces them on (forceBadges) without touching the stored setting. */
  const BADGES_STORE = "koikoi.badges";
  let badgesForced = false;

  function storedBadges() {
    try {
      return localStorage.getItem(BADGES_STORE) === "on" ? "on" : "off";
    } catch (_) {
      return "off";
    }
  }

  function badgesOn() {
    return document.documentElement.dataset.badges === "on";
  }

  function cardSrc(code) {
    return `/cards/${code}.svg?badge=${badgesOn() ? "on" : "off"}`;
  }

  // Sets the page's data-badges from the stored setting (or "on" while forced).
  function applyBadges() {
    const want = badgesForced ? "on" : storedBadges();
    if (document.documentElement.dataset.badges !== want) document.documentElement.dataset.badges = want;
  }

  function forceBadges(on) {
    badgesForced = Boolean(on);
    applyBadges();
  }

  function watchBadges() {
    new MutationObserver(() => {
      if (badgesForced && !badgesOn()) return void applyBadges();
      for (const img of document.querySelectorAll("img[data-card-art]")) {
        const src = cardSrc(img.dataset.cardArt);
        if (img.getAttribute("src") !== src) img.setAttribute("src", src);
      }
    }).observe(document.documentElement, { attributes: true, attributeFilter: ["data-badges"] });
    window.addEventListener("storage", (ev) => {
      if (ev.key === BADGES_STORE || ev.key === null) applyBadges();
    });
  }

  applyBadges();
  watchBadges();

  /* One card: <button> when it can be acted on, else role=img. */
  function cardEl(code, opts = {}) {
    const info = card(code);
    const label = info ? cardLabel(info) : code;
    const node = el(opts.button ? "button" : "div", {
      class: "card" + (opts.extra ? " " + opts.extra : ""),
      "data-code": code,
      "aria-label": opts.label || label,
      role: opts.button ? null : "img",
      type: opts.button ? "button" : null,
      title: !info ? code : lang === "en" ? `${info.name_en} · ${info.name_ja || info.month_ja} (${code})` : label,
    });
    node.append(el("img", { src: cardSrc(code), alt: "", draggable: "false", "data-card-art": code }));
    return node;
  }

  function backEl(extra) {
    const node = el("div", { class: "card back" + (extra ? " " + extra : ""), role: "img", "aria-label": t("face-down card") });
    node.append(el("img", { src: "/cards/back.svg", alt: "", draggable: "false" }));
    return node;
  }

  function cardName(code) {
    const info = card(code);
    if (!info) return code;
    const name = td(info.name_en);
    return name.includes(`(${code})`) ? name : `${name} (${code})`;
  }

  /* Who a player is ({kind: "you" | "ai" | "person" | "guest", name}, as records and
     the server store it) named in the page's language: one rule everywhere
     (koikoi.features.names.display_name): "You", "AI (Expert)", a person's name as
     given, "Guest 2" for a person who gave none. */
  function identityName(who) {
    if (!who) return "";
    if (who.kind === "you") return t("You");
    if (who.kind === "ai") return t("AI ({level})", { level: td(who.name) });
    if (who.kind === "guest") return t("Guest {tag}", { tag: who.name });
    return who.name;
  }

  /* A name kept in English ("AI (Expert)", "Guest 2", "You": the leaderboard, the
     statistics, a record's players) in the page's language; any other name as typed
     (koikoi.features.names.shown_name). */
  function playerLabel(name) {
    const text = name || "";
    if (text === "You") return identityName({ kind: "you" });
    const ai = /^AI \((.+)\)$/.exec(text);
    if (ai) return identityName({ kind: "ai", name: ai[1] });
    const guest = /^Guest (\S+)$/.exec(text);
    if (guest) return identityName({ kind: "guest", name: guest[1] });
    return text;
  }

  function cardNames(codes) {
    return codes.map(cardName).join(", ");
  }

  /* {en, ja, name}: the English and Japanese names, and the name in the page's
     language (in Japanese without the reading). */
  function yakuName(key) {
    const names = config && config.yaku[key];
    return names ? { en: names[0], ja: names[1], name: td(names[0]) } : { en: key, ja: "", name: key };
  }

  /* The yaku of a rule set (the rules object of welcome and state messages), in
     display order: [{key, en, ja, needs, points}]; yaku worth 0 are left out. The
     wording is koikoi.features.rules_help's, as the terminal game and `koikoi rules yaku` show it. */
  function yakuTable(rules) {
    const rows = [];
    if (!config || !rules) return rows;
    for (const [key, names] of Object.entries(config.yaku)) {
      const points = key === "teshi" ? rules.instant.teshi
        : key === "kuttsuki" ? rules.instant.kuttsuki : rules.points[key];
      if (!points) continue;
      let needs = names[2] || "";
      if (names[3]) {
        // [English, Japanese, needs, "section.option", needs when that option is true]
        const [section, option] = names[3].split(".");
        if (rules[section] && rules[section][option]) needs = names[4];
      }
      needs = td(needs);
      if (needs.includes("{extra}")) {
        needs = rules.yaku.extra ? needs.replace("{extra}", String(rules.yaku.extra)) : needs.split(/ ?[(（]/)[0];
      }
      rows.push({ key, en: names[0], ja: names[1], name: td(names[0]), needs, points });
    }
    return rows;
  }

  function multiplierName(key) {
    return td((config && config.multipliers && config.multipliers[key]) || key);
  }

  const KIND_ORDER = ["L", "A", "R", "P"];
  const KIND_LABEL = { L: "Brights 光", A: "Animals タネ", R: "Ribbons 短冊", P: "Plains カス" };
  function kindLabel(kind) {
    return { L: t("Brights 光"), A: t("Animals タネ"), R: t("Ribbons 短冊"), P: t("Plains カス") }[kind];
  }

  function groupByKind(codes) {
    const groups = { L: [], A: [], R: [], P: [] };
    for (const code of codes) {
      const info = card(code);
      groups[info ? info.kind : "P"].push(code);
    }
    return KIND_ORDER.map((k) => [k, groups[k]]);
  }

  async function post(url, body) {
    const r = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    let data;
    try {
      data = await r.json();
    } catch (e) {
      data = { type: "error", code: "bad_response", message: `HTTP ${r.status}` };
    }
    if (!r.ok) {
      const err = new Error(data.message || `HTTP ${r.status}`);
      err.code = data.code;
      throw err;
    }
    return data;
  }

  /* Seat tokens are kept in localStorage, per game id, for reconnects. */
  const STORE = "koikoi.games";
  function games() {
    try {
      return JSON.parse(localStorage.getItem(STORE) || "{}");
    } catch (e) {
      return {};
    }
  }
  function saveGame(id, data) {
    const all = games();
    all[id] = Object.assign(all[id] || {}, data);
    localStorage.setItem(STORE, JSON.stringify(all));
  }
  function forgetGame(id) {
    const all = games();
    delete all[id];
    localStorage.setItem(STORE, JSON.stringify(all));
  }

  /* The player without an account: a random device key made once per browser and kept
     in localStorage ("koikoi.deviceKey"). The server stores only its hash; the key opens
     this browser's statistics and history (/stats), so it is never shown or shared. */
  const KEY_STORE = "koikoi.deviceKey";
  const NAME_STORE = "koikoi.playerName";
  function deviceKey() {
    let key = null;
    try { key = localStorage.getItem(KEY_STORE); } catch (_) { /* storage blocked */ }
    if (key && /^[A-Za-z0-9_-]{32,128}$/.test(key)) return key;
    const bytes = new Uint8Array(32);
    crypto.getRandomValues(bytes);
    key = btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
    try { localStorage.setItem(KEY_STORE, key); } catch (_) { /* kept for this page only */ }
    return key;
  }
  function playerName() {
    try { return localStorage.getItem(NAME_STORE) || ""; } catch (_) { return ""; }
  }
  function setPlayerName(name) {
    try { localStorage.setItem(NAME_STORE, name); } catch (_) { /* ignore */ }
  }
  /* Link a seat (its token proves it) to this browser's player, so the finished game
     counts in /stats. Failures are ignored: the game itself goes on. */
  async function linkGame(game, token) {
    const body = { key: deviceKey(), game, token };
    const name = playerName();
    if (name) body.name = name;
    try {
      await post("/api/players/games", body);
      return true;
    } catch (_) {
      return false;
    }
  }

  function hashParams() {
    const out = {};
    const text = location.hash.replace(/^#/, "");
    for (const part of text.split("&")) {
      if (!part) continue;
      const [k, v] = part.split("=");
      out[decodeURIComponent(k)] = v === undefined ? "" : decodeURIComponent(v);
    }
    return out;
  }

  function parseAction(text) {
    const w = text.split(" ");
    return { verb: w[0], card: w[1] || null, target: w[2] || null };
  }

  const reduceMotion = window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches;

  /* "1 point", "2 points". */
  function points(n) {
    return tn("{n} point", "{n} points", n);
  }

  function sleep(ms) {
    return new Promise((resolve) => setTimeout(resolve, ms));
  }

  let toastTimer = null;
  function toast(text) {
    let node = document.getElementById("toast");
    if (!node) {
      node = el("div", { id: "toast", class: "toast", role: "status" });
      document.body.append(node);
    }
    node.textContent = text;
    node.classList.remove("hide");
    clearTimeout(toastTimer);
    toastTimer = setTimeout(() => node.classList.add("hide"), 2600);
  }

  /* A settlement, explained card by card: yaku rows, base, each multiplier, total. */
  function settlementView(s, names) {
    const box = el("div", { class: "settlement" });
    if (s.winner === null || s.winner === undefined) {
      box.append(el("p", { text: s.reason === "no_yaku" ? t("No yaku.") : t("Nobody scores this round.") }));
      return box;
    }
    if (s.yaku && s.yaku.length) {
      const list = el("ul", { class: "yaku-list", "aria-label": t("Yaku") });
      for (const y of s.yaku) {
        const n = yakuName(y.name);
        const cards = el("div", { class: "yaku-cards" });
        for (const c of y.cards) cards.append(cardEl(c));
        list.append(
          el("li", { class: "yaku-row", "data-yaku": y.name },
            el("div", { class: "yaku-name" }, el("strong", { text: n.name }), lang === "ja" ? null : el("small", { text: n.ja })),
            cards,
            el("div", { class: "pts", text: String(y.points) })));
      }
      box.append(list);
    }
    const table = el("table", { class: "calc" });
    table.append(el("tr", {}, el("td", { text: s.yaku && s.yaku.length ? t("Yaku total (base)") : t("Award") }), el("td", { class: "base", text: String(s.base) })));
    let figure = s.base;
    for (const m of s.multipliers || []) {
      figure = figure * m.factor + m.add;
      const how = [m.factor !== 1 ? `×${m.factor}` : "", m.add ? `+${m.add}` : ""].filter(Boolean).join(" ");
      table.append(el("tr", {}, el("td", { text: `${multiplierName(m.name)} (${how})` }), el("td", { text: String(figure) })));
    }
    const who = names ? names[s.winner] : t("Player {n}", { n: s.winner });
    table.append(el("tr", { class: "total" }, el("td", { text: who === t("You") ? t("{who} score", { who }) : t("{who} scores", { who }) }), el("td", { class: "points", text: String(s.points) })));
    box.append(table);
    return box;
  }

  function describeEvent(ev, nameOf) {
    const who = nameOf(ev.player);
    const cards = ev.cards || [];
    switch (ev.type) {
      case "first_dealer":
        if (ev.method === "draw") {
          const draws = ev.draws.map((d) => d.join(" vs ")).join("; ");
          const dealer = nameOf(ev.dealer);
          return dealer === t("You")
            ? t("First dealer by draw ({draws}): {dealer} deal.", { draws, dealer })
            : t("First dealer by draw ({draws}): {dealer} deals.", { draws, dealer });
        }
        return t("First dealer by coin flip: {dealer}.", { dealer: nameOf(ev.dealer) });
      case "round_start": {
        const params = { round: ev.round, month: ev.month, dealer: nameOf(ev.dealer), field: ev.field.join(" ") };
        return params.dealer === t("You")
          ? t("Round {round} (month {month}): {dealer} deal; field {field}.", params)
          : t("Round {round} (month {month}): {dealer} deals; field {field}.", params);
      }
      case "hand":
        return who === t("You") ? t("Your hand: {cards}.", { cards: cards.join(" ") }) : t("{who}'s hand: {cards}.", { who, cards: cards.join(" ") });
      case "redeal":
        return t("Redeal ({why}).", { why: ev.why });
      case "instant":
        return t("{who}: instant hand {yaku} ({cards}), {points}.", { who, yaku: yakuName(ev.yaku).name, cards: cards.join(" "), points: points(ev.points) });
      case "play": {
        const params = { who, card: cardName(ev.card), captured: cards.filter((c) => c !== ev.card).join(" ") };
        if (ev.discard) return t("{who} laid {card} without capturing.", params);
        return cards.length ? t("{who} played {card} and captured {captured}.", params) : t("{who} played {card} to the field.", params);
      }
      case "draw": {
        const params = { who, card: cardName(ev.card), captured: cards.filter((c) => c !== ev.card).join(" ") };
        if (ev.choice) return t("{who} drew {card}: it matches {first} and {second}.", Object.assign(params, { first: ev.choice[0], second: ev.choice[1] }));
        return cards.length ? t("{who} drew {card} and captured {captured}.", params) : t("{who} drew {card} to the field.", params);
      }
      case "take":
        return t("{who} captured {captured} with {card}.", { who, captured: cards.filter((c) => c !== ev.card).join(" "), card: ev.card });
      case "yaku":
        return t("{who} scored: yaku total {total}.", { who, total: ev.total });
      case "koikoi":
        return t("{who} called koi-koi ({calls}).", { who, calls: ev.calls });
      case "stop":
        return ev.automatic ? t("{who} stopped (automatically).", { who }) : t("{who} stopped (shōbu).", { who });
      case "exhausted":
        return t("The hands ran out.");
      case "round_over":
        return ev.winner === null || ev.winner === undefined ? t("Round {round} over: nobody scores.", { round: ev.round }) : t("Round {round} over: {winner} +{points}.", { round: ev.round, winner: nameOf(ev.winner), points: ev.points });
      case "match_over": {
        // The winner first, with the winner's score first: "Match over: AI wins 6–0."
        const w = ev.player;
        if (w === null || w === undefined) return t("Match over: a draw, {scores}.", { scores: ev.scores.join("–") });
        const params = { who, score: `${ev.scores[w]}–${ev.scores[1 - w]}` };
        return who === t("You") ? t("Match over: {who} win {score}.", params) : t("Match over: {who} wins {score}.", params);
      }
      default:
        return ev.type;
    }
  }

  return {
    describeEvent,
    loadConfig, card, kids, el, cardEl, backEl, cardName, cardNames, yakuName, yakuTable, multiplierName,
    groupByKind, KIND_LABEL, kindLabel, post, games, saveGame, forgetGame, hashParams, parseAction,
    deviceKey, playerName, setPlayerName, linkGame, playerLabel, identityName,
    reduceMotion, sleep, toast, settlementView, points,
    t, tn, td, applyI18n, setLanguage, LANGS, cardLabel,
    cardSrc, applyBadges, forceBadges, badgesOn,
    get lang() { return lang; },
    get config() { return config; },
  };
})();
