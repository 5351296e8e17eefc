/* The Koi-Koi web game: home page, game table, dialogs. Plain JavaScript.

   The server is authoritative: this page sends intentions ({"type": "act", "action": id,
   "seq": n}) and draws the state the server sends for this seat (docs/protocol.md). */
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const el = KK.el;
  const STEP_MS = KK.reduceMotion ? 0 : 330;

  const G = {
    ws: null,
    token: null,
    game: null,
    seat: null,
    role: null,
    welcome: null,
    state: null, // last state message
    board: null, // what is drawn (may run ahead of or behind `state` during animations)
    events: [],
    queue: [],
    running: false,
    selected: null,
    pending: false,
    hint: null,
    presence: null,
    retries: 0,
    active: false,
    overShown: false,
    decisionShownFor: -1,
    reconnectTimer: null,
    lastPointer: "mouse",
    inviteShown: false,
    qrFor: null, // the invite whose QR code is drawn (or being fetched)
  };
  window.KOIKOI = G; // for debugging in the console

  // ------------------------------------------------------------------ routing

  async function main() {
    await KK.loadConfig();
    KKSound.updateToggle();
    setupHome();
    setupGameUi();
    window.addEventListener("hashchange", route);
    route();
  }

  function show(section) {
    for (const id of ["home", "game", "message"]) $(id).hidden = id !== section;
    document.body.classList.toggle("in-game", section === "game");
    closeDrawer();
  }

  function route() {
    const p = KK.hashParams();
    if (p.join) return void joinInvite(p.join);
    if (p.watch) return void openGame({ token: p.watch, game: null });
    if (p.game) {
      const saved = KK.games()[p.game];
      if (!saved || !saved.token) {
        return showMessage(KK.t("This browser holds no seat for that game. Ask a player for a watch link to spectate."));
      }
      return void openGame({ token: saved.token, game: p.game });
    }
    disconnect();
    showHome();
  }

  function showMessage(text) {
    disconnect();
    $("message-text").textContent = text;
    show("message");
  }

  // --------------------------------------------------------------------- home

  function setupHome() {
    const cfg = KK.config;
    $("player-name").value = KK.playerName();
    for (const a of cfg.agents) {
      $("agent").append(el("option", {
        value: a.agent,
        text: `${a.level} · ${KK.td(a.title)}`,
        selected: a.agent === cfg.default_agent,
      }));
    }
    const describeAgent = () => {
      const a = cfg.agents.find((x) => x.agent === $("agent").value);
      $("agent-desc").textContent = a ? KK.t("Level {level}: {description}", { level: a.level, description: KK.td(a.description) }) : "";
    };
    $("agent").addEventListener("change", describeAgent);
    describeAgent();
    for (const p of cfg.presets) {
      $("rules").append(el("option", { value: p.name, text: `${p.name} (${KK.tn("{n} round", "{n} rounds", p.rounds)})` }));
    }
    const describe = () => {
      const p = cfg.presets.find((x) => x.name === $("rules").value);
      $("rules-desc").textContent = p ? KK.td(p.description) : "";
    };
    $("rules").addEventListener("change", describe);
    describe();
    $("house-details").addEventListener("toggle", () => {
      if ($("house-details").open && !$("house-rules").value.trim()) {
        $("house-rules").value = `extends = "${$("rules").value}"\n\n[game]\nrounds = 12\n`;
      }
    });
    for (const radio of document.querySelectorAll('input[name="mode"]')) {
      radio.addEventListener("change", () => {
        $("agent-row").hidden = modeValue() !== "ai";
      });
    }
    $("new-game").addEventListener("submit", (e) => {
      e.preventDefault();
      void createGame();
    });
  }

  function modeValue() {
    const checked = document.querySelector('input[name="mode"]:checked');
    return checked ? checked.value : "ai";
  }

  async function createGame() {
    $("new-error").textContent = "";
    const body = { mode: modeValue(), rules: $("rules").value };
    if (body.mode === "ai") body.agent = $("agent").value;
    const rounds = $("rounds").value.trim();
    if (rounds) body.rounds = Number(rounds);
    const name = $("player-name").value.trim();
    if (name) body.name = name;
    KK.setPlayerName(name);
    const house = $("house-rules").value;
    if ($("house-details").open && house.trim()) body.house_rules = house;
    const seed = KK.hashParams().seed;
    if (seed && KK.config.allow_seed) body.seed = Number(seed);
    $("start").disabled = true;
    try {
      const res = await KK.post("/api/games", body);
      KK.saveGame(res.game, {
        token: res.token,
        seat: res.seat,
        mode: res.mode,
        rules: res.rules,
        agent: body.agent || null,
        watch: res.watch,
        invite: res.invite || null,
        created: Date.now(),
      });
      await KK.linkGame(res.game, res.token);
      location.hash = `game=${res.game}`;
    } catch (err) {
      $("new-error").textContent = err.message;
    } finally {
      $("start").disabled = false;
    }
  }

  function showHome() {
    show("home");
    const list = $("games-list");
    list.replaceChildren();
    const entries = Object.entries(KK.games()).sort((a, b) => (b[1].created || 0) - (a[1].created || 0));
    if (!entries.length) list.append(el("li", { class: "hint-text", text: KK.t("No games yet.") }));
    for (const [id, g] of entries.slice(0, 30)) {
      const when = g.created ? new Date(g.created).toLocaleString() : "";
      const what = g.mode === "ai" ? KK.t("vs AI ({level})", { level: agentLabel(g.agent) }) : KK.t("vs a friend");
      list.append(
        el("li", {},
          el("a", { href: `/#game=${encodeURIComponent(id)}`, text: `${what}, ${g.rules || ""}` }),
          el("span", { class: "hint-text", text: when }),
          g.over ? el("a", { href: `/replay#game=${encodeURIComponent(id)}`, text: KK.t("replay") }) : null,
          el("button", {
            type: "button",
            text: KK.t("Forget"),
            "aria-label": KK.t("Forget game {id}", { id }),
            onclick: () => { KK.forgetGame(id); showHome(); },
          })));
    }
  }

  // An AI strength in words: a level's title ("Expert"), else the older name ("greedy").
  function agentLabel(agent) {
    const a = KK.config.agents.find((x) => x.agent === agent || `level:${x.level}` === agent);
    return a ? KK.td(a.title) : agent || "?";
  }

  async function joinInvite(invite) {
    // Drop the invite from the address bar and history: it works once.
    history.replaceState(null, "", "/#");
    try {
      const body = { invite };
      if (KK.playerName()) body.name = KK.playerName();
      const res = await KK.post("/api/join", body);
      KK.saveGame(res.game, { token: res.token, seat: res.seat, mode: "friend", created: Date.now() });
      await KK.linkGame(res.game, res.token);
      location.hash = `game=${res.game}`;
    } catch (err) {
      showMessage(err.code === "invite_used"
        ? KK.t("This invite link was already used: both seats of that game are taken.")
        : KK.t("Cannot join: {error}", { error: err.message }));
    }
  }

  // ---------------------------------------------------------------- connection

  function openGame({ token, game }) {
    disconnect();
    Object.assign(G, {
      token, game, seat: null, role: null, welcome: null, state: null, board: null, events: [],
      queue: [], selected: null, pending: false, hint: null, presence: null, retries: 0,
      active: true, overShown: false, decisionShownFor: -1, inviteShown: false, qrFor: null,
    });
    for (const d of document.querySelectorAll("dialog[open]")) d.close();
    show("game");
    clearBoard();
    setStatus(KK.t("Connecting…"));
    connect();
  }

  function clearBoard() {
    for (const id of ["top-hand", "top-pile", "field", "drawn", "bottom-pile", "bottom-hand", "choice-bar", "log", "top-info", "bottom-info", "round-info", "scoreline", "stock-card", "progress", "top-progress", "bottom-progress"]) {
      $(id).replaceChildren();
    }
    $("hint-box").hidden = true;
    hideInvitePanel();
    $("watch-box").hidden = true;
  }

  function connect() {
    if (!G.active) return;
    const scheme = location.protocol === "https:" ? "wss://" : "ws://";
    // The game id in the URL lets a proxy send both players of a game to one server
    // process (deploy.md); the server itself reads the game from the token.
    const query = G.game ? "?game=" + encodeURIComponent(G.game) : "";
    const ws = new WebSocket(scheme + location.host + "/ws" + query);
    G.ws = ws;
    ws.addEventListener("open", () => {
      G.retries = 0;
      ws.send(JSON.stringify({ type: "hello", token: G.token }));
    });
    ws.addEventListener("message", (e) => {
      let msg;
      try {
        msg = JSON.parse(e.data);
      } catch (err) {
        return;
      }
      onMessage(msg);
    });
    ws.addEventListener("close", () => {
      if (G.ws !== ws || !G.active) return;
      G.ws = null;
      const delay = Math.min(10000, 500 * 2 ** G.retries);
      G.retries += 1;
      setStatus(KK.t("Connection lost; reconnecting…"));
      G.reconnectTimer = setTimeout(connect, delay);
    });
  }

  function disconnect() {
    G.active = false;
    clearTimeout(G.reconnectTimer);
    if (G.ws) {
      const ws = G.ws;
      G.ws = null;
      ws.close();
    }
  }

  function send(msg) {
    if (G.ws && G.ws.readyState === WebSocket.OPEN) {
      G.ws.send(JSON.stringify(msg));
      return true;
    }
    KK.toast(KK.t("Not connected; reconnecting…"));
    return false;
  }

  function act(id) {
    if (G.pending || !G.state) return;
    if (send({ type: "act", action: id, seq: G.state.seq })) {
      G.pending = true;
      G.selected = null;
      clearHint();
      renderInteractive();
      setStatus("…");
    }
  }

  function onMessage(msg) {
    switch (msg.type) {
      case "welcome":
        G.welcome = msg;
        G.seat = msg.seat;
        G.role = msg.role;
        G.game = msg.game;
        // A fresh full state follows: drop anything queued from an older connection.
        G.queue = [];
        G.board = null;
        setupSide();
        break;
      case "state":
        // The turn clock counts down from when the state arrived (clocks of the page
        // and the server need not agree).
        if (msg.clock) msg.clock.end = Date.now() + msg.clock.left * 1000;
        G.queue.push(msg);
        void pump();
        break;
      case "presence":
        G.presence = msg;
        renderInfo();
        break;
      case "players":
        if (G.welcome) G.welcome.players = msg.players;
        setupSide();
        renderInfo();
        // The status names the players too ("Waiting for Aoi…"): a seat claimed after
        // the first state gives the waiting player their opponent's name.
        if (G.state && !G.running) renderInteractive();
        break;
      case "hint":
        showHint(msg);
        break;
      case "error":
        onError(msg);
        break;
      default:
        break;
    }
  }

  function onError(msg) {
    if (msg.code === "unknown_token") {
      showMessage(KK.t("This game link is not valid."));
      return;
    }
    G.pending = false;
    if (msg.code === "hint_unavailable" && KKMoments.adviceFailed(msg.message)) return;
    KK.toast(msg.message);
    if (G.state && !G.running) renderInteractive();
  }

  // ------------------------------------------------------------------- names

  function bottomSeat() {
    return G.seat === null || G.seat === undefined ? 0 : G.seat;
  }

  function nameOf(p) {
    if (p === null || p === undefined) return KK.t("Nobody");
    if (G.role === "player" && p === G.seat) return KK.t("You");
    const info = G.welcome && G.welcome.players[p];
    // The server names an AI seat "AI (Expert)"; the page says it in its language.
    if (info && info.kind === "ai") return KK.t("AI ({level})", { level: agentLabel(info.agent) });
    if (info && info.name) return info.name;
    // A person who gave no name is "Guest 1" / "Guest 2" by seat, the same for both
    // players and every spectator (docs/web.md, Names).
    return KK.identityName({ kind: "guest", name: String(p + 1) });
  }

  function names() {
    return [nameOf(0), nameOf(1)];
  }

  // ---------------------------------------------------------------- the queue

  async function pump() {
    if (G.running) return;
    G.running = true;
    try {
      while (G.queue.length) {
        const msg = G.queue.shift();
        await applyState(msg);
      }
    } finally {
      G.running = false;
    }
  }

  function boardFromView(v) {
    return {
      round: v.round,
      month: v.month,
      dealer: v.dealer,
      current: v.current,
      phase: v.phase,
      hand: v.hand.slice(),
      field: v.field.slice(),
      piles: [v.piles[0].slice(), v.piles[1].slice()],
      handCounts: v.hand_counts.slice(),
      stock: v.stock_count,
      drawn: v.drawn,
      roundScores: v.round_scores.slice(),
      calls: v.koikoi_calls.slice(),
      matchScores: v.match_scores.slice(),
    };
  }

  function cloneBoard(b) {
    return JSON.parse(JSON.stringify(b));
  }

  function order(codes) {
    return codes.sort((a, b) => KK.card(a).index - KK.card(b).index);
  }

  function remove(list, codes) {
    for (const c of codes) {
      const i = list.indexOf(c);
      if (i >= 0) list.splice(i, 1);
    }
  }

  // The board after one public event (for animating a step before the next state).
  function applyEvent(b, ev) {
    const p = ev.player;
    const cards = ev.cards || [];
    if (ev.type === "play") {
      remove(b.hand, [ev.card]);
      b.handCounts[p] = Math.max(0, b.handCounts[p] - 1);
      if (cards.length) {
        remove(b.field, cards);
        b.piles[p] = order(b.piles[p].concat(cards));
      } else {
        b.field = order(b.field.concat([ev.card]));
      }
    } else if (ev.type === "draw") {
      b.stock = Math.max(0, b.stock - 1);
      if (cards.length) {
        remove(b.field, cards);
        b.piles[p] = order(b.piles[p].concat(cards));
      } else if (ev.choice) {
        b.drawn = ev.card;
      } else {
        b.field = order(b.field.concat([ev.card]));
      }
    } else if (ev.type === "take") {
      b.drawn = null;
      remove(b.field, cards);
      b.piles[p] = order(b.piles[p].concat(cards));
    }
  }

  function originsFor(ev) {
    const out = {};
    if (ev.type === "draw" || ev.type === "take") out[ev.card] = "@stock";
    if (ev.type === "play") out[ev.card] = ev.player === bottomSeat() ? "@bottom" : "@top";
    return out;
  }

  async function applyState(msg) {
    clearHint();
    // The guided round (tutorial.js): its explanations come before the dialogs.
    const coach = window.KKTutorial ? window.KKTutorial.receive(msg) : null;
    if (msg.full || !G.board) {
      G.events = msg.events.slice();
      G.state = msg;
      G.board = boardFromView(msg.view);
      G.pending = false;
      G.selected = null;
      renderBoard(G.board, { animate: false });
      renderLog(true);
      renderInteractive();
      if (coach) await coach();
      afterState(msg, true);
      return;
    }
    let board = cloneBoard(G.board);
    for (const ev of msg.events) {
      G.events.push(ev);
      appendLog(ev);
      KKSound.event(ev);
      if (ev.type === "play" || ev.type === "draw" || ev.type === "take") {
        if (ev.round !== board.round) continue;
        // The other player's steps are told in words and paced (moments.js); the
        // page's own moves only wait for their cards to land.
        const paced = ev.player !== G.seat;
        const wait = paced ? KKMoments.stepMs() : STEP_MS;
        if (paced) setStatus(KK.describeEvent(ev, nameOf));
        applyEvent(board, ev);
        G.board = board;
        renderBoard(board, { animate: !paced || wait > 0, origins: originsFor(ev), interactive: false });
        board = cloneBoard(board);
        if (wait) await KK.sleep(wait);
      } else if (ev.type === "yaku" || ev.type === "koikoi" || ev.type === "stop") {
        await KKMoments.moment(ev, momentContext(ev, msg));
        if (ev.type === "koikoi" && ev.player !== G.seat) setStatus(KK.t("{who} called koi-koi.", { who: nameOf(ev.player) }));
      } else if (ev.type === "instant") {
        KK.toast(KK.t("{who} holds an instant hand ({yaku})", { who: nameOf(ev.player), yaku: KK.yakuName(ev.yaku).name }));
      } else if (ev.type === "round_over") {
        await roundDialog(ev);
      }
    }
    const newRound = msg.view.round !== G.board.round;
    G.state = msg;
    G.board = boardFromView(msg.view);
    G.pending = false;
    G.selected = null;
    renderBoard(G.board, { animate: !newRound });
    renderInteractive();
    if (coach) await coach();
    afterState(msg, false);
  }

  // What a banner needs to know of a yaku, koi-koi or stop event (moments.js).
  function momentContext(ev, msg) {
    const p = ev.player;
    const over = msg.events.find((e) => e.type === "round_over" && e.round === ev.round);
    const rowsOf = (s) => (s && s.yaku && s.view.round === ev.round ? s.yaku[p].yaku : null);
    return {
      who: nameOf(p),
      mine: G.role === "player" && p === G.seat,
      before: rowsOf(G.state) || [],
      after: rowsOf(msg) || (over && over.winner === p ? over.yaku : null) || [],
      points: over && over.winner === p ? over.points : null,
    };
  }

  function afterState(msg, fresh) {
    const v = msg.view;
    if (msg.over) {
      const saved = G.game && KK.games()[G.game];
      if (saved) KK.saveGame(G.game, { over: true });
      if (!G.overShown) {
        G.overShown = true;
        overDialog(msg);
      }
      return;
    }
    if (v.phase === "decide" && G.role === "player" && v.current === G.seat && v.legal.length) {
      if (G.decisionShownFor !== msg.seq) {
        G.decisionShownFor = msg.seq;
        koikoiDialog(msg);
      }
    }
    if (fresh) setupSide();
    else renderInvitePanel();
  }

  // ---------------------------------------------------------------- rendering

  function snapshot() {
    const rects = new Map();
    for (const node of $("board").querySelectorAll(".card[data-code]")) {
      rects.set(node.dataset.code, node.getBoundingClientRect());
    }
    rects.set("@stock", $("stock-card").getBoundingClientRect());
    rects.set("@top", $("top-hand").getBoundingClientRect());
    rects.set("@bottom", $("bottom-hand").getBoundingClientRect());
    return rects;
  }

  function flip(before, origins) {
    const moved = [];
    for (const node of $("board").querySelectorAll(".card[data-code]")) {
      const code = node.dataset.code;
      let r0 = before.get(code);
      const fromCard = !!r0;
      if (!r0 && origins && origins[code]) r0 = before.get(origins[code]);
      if (!r0) continue;
      const r1 = node.getBoundingClientRect();
      const dx = r0.left - r1.left;
      const dy = r0.top - r1.top;
      if (Math.abs(dx) < 1 && Math.abs(dy) < 1) continue;
      // A card that changes size (field to capture pile) shrinks on its way there.
      const scale = fromCard && r1.width ? ` scale(${r0.width / r1.width})` : "";
      node.classList.add("no-anim");
      node.style.transformOrigin = "0 0";
      node.style.transform = `translate(${dx}px, ${dy}px)${scale}`;
      moved.push(node);
    }
    if (!moved.length) return;
    void document.body.offsetWidth; // apply the start positions, then let the transition run
    for (const node of moved) {
      node.classList.remove("no-anim");
      node.style.transform = "";
    }
  }

  function pileEl(codes, who) {
    return KKTable.pileEl(codes, who); // the four kinds with counts (table.js)
  }

  function renderBoard(b, opts = {}) {
    const before = opts.animate && !KK.reduceMotion ? snapshot() : null;
    const me = bottomSeat();
    const opp = 1 - me;
    const spectator = G.role !== "player";

    const top = $("top-hand");
    top.replaceChildren();
    for (let i = 0; i < b.handCounts[opp]; i++) top.append(KK.backEl());
    top.setAttribute("aria-label", KK.tn("{who}: {n} card in hand", "{who}: {n} cards in hand", b.handCounts[opp], { who: nameOf(opp) }));

    const bottom = $("bottom-hand");
    bottom.replaceChildren();
    if (spectator) {
      for (let i = 0; i < b.handCounts[me]; i++) bottom.append(KK.backEl());
      bottom.setAttribute("aria-label", KK.tn("{who}: {n} card in hand", "{who}: {n} cards in hand", b.handCounts[me], { who: nameOf(me) }));
    } else {
      b.hand.forEach((c, i) => bottom.append(KK.cardEl(c, { button: true, label: `${i + 1}: ${KK.cardLabel(KK.card(c))}` })));
      bottom.setAttribute("aria-label", KK.t("Your hand"));
    }

    const field = $("field");
    field.replaceChildren();
    for (const c of b.field) field.append(KK.cardEl(c, { button: true }));
    field.setAttribute("aria-label", KK.tn("Field: {n} card", "Field: {n} cards", b.field.length));

    $("stock-card").replaceChildren(b.stock > 0 ? KK.backEl() : el("span", { text: "—" }));
    $("stock-count").textContent = KK.t("Stock: {count}", { count: b.stock });
    $("drawn").replaceChildren(b.drawn ? KK.cardEl(b.drawn, { extra: "drawn-card", label: KK.t("Drawn: {card}", { card: KK.cardLabel(KK.card(b.drawn)) }) }) : "");

    $("top-pile").replaceChildren(pileEl(b.piles[opp], nameOf(opp)));
    $("top-pile").setAttribute("aria-label", KK.tn("{who}: {n} captured card", "{who}: {n} captured cards", b.piles[opp].length, { who: nameOf(opp) }));
    $("bottom-pile").replaceChildren(pileEl(b.piles[me], nameOf(me)));
    $("bottom-pile").setAttribute("aria-label", KK.tn("{who}: {n} captured card", "{who}: {n} captured cards", b.piles[me].length, { who: nameOf(me) }));

    for (const node of $("board").querySelectorAll("button.card")) {
      node.setAttribute("aria-disabled", "true");
      node.tabIndex = node.closest("#bottom-hand") ? 0 : -1;
    }
    renderInfo();
    if (before) flip(before, opts.origins);
  }

  function renderInfo() {
    const b = G.board;
    if (!b) return;
    const me = bottomSeat();
    const opp = 1 - me;
    const yaku = (G.state && G.state.yaku) || [null, null];
    for (const [slot, p] of [["top", opp], ["bottom", me]]) {
      const info = $(`${slot}-info`);
      const connected = G.presence ? G.presence.connected[p] : true;
      const seatInfo = G.welcome && G.welcome.players[p];
      info.replaceChildren(...KK.kids(
        el("span", { class: "name", id: `${slot}-name`, text: nameOf(p) }),
        slot === "top" ? el("span", { class: "badge hand-count", text: KK.tn("{n} card in hand", "{n} cards in hand", b.handCounts[p]) }) : null,
        b.dealer === p ? el("span", { class: "badge dealer", title: KK.t("dealer"), text: KK.t("Dealer 親") }) : null,
        b.current === p && !(G.state && G.state.over) && !awaitingOpponent() ? el("span", { class: "badge turn", text: KK.t("to play") }) : null,
        clockBadge(p),
        b.calls[p] ? el("span", { class: "badge koikoi", text: KK.t("koi-koi ×{calls}", { calls: b.calls[p] }) }) : null,
        el("span", { text: KK.t("yaku: {points}", { points: b.roundScores[p] }) }),
        yaku[p] && yaku[p].yaku.length ? el("span", { class: "hint-text", text: yaku[p].yaku.map((y) => KK.yakuName(y.name).name).join(", ") }) : null,
        el("span", { text: KK.t("score: {points}", { points: b.matchScores[p] }) }),
        seatInfo && seatInfo.kind === "human" && !connected ? el("span", { class: "badge offline", text: seatInfo.claimed ? KK.t("offline") : KK.t("not joined yet") }) : null,
      ));
    }
    const rules = G.welcome ? G.welcome.rules : null;
    const month = KK.config.cards[(b.month - 1) * 4];
    $("round-info").replaceChildren(...KK.kids(
      el("div", { text: rules ? KK.t("Round {round} of {rounds}", { round: b.round, rounds: rules.game.rounds }) : KK.t("Round {round}", { round: b.round }) }),
      el("div", { class: "hint-text", text: KK.lang === "en" ? `Month ${b.month}: ${month.month_en} · ${month.month_ja}` : KK.t("Month {month}: {name}", { month: b.month, name: KK.td(month.month_en) }) }),
      rules ? el("div", { class: "hint-text", text: KK.t("Rules: {name}", { name: rules.name }) }) : null,
    ));
    $("scoreline").replaceChildren(
      el("span", {}, `${nameOf(0)}: `, el("strong", { id: "score-0", text: String(b.matchScores[0]) })),
      el("span", {}, `${nameOf(1)}: `, el("strong", { id: "score-1", text: String(b.matchScores[1]) })),
    );
    KKTable.renderProgress(G.state, nameOf, me); // yaku progress of both players (table.js)
  }

  // The turn clock of a quick match from the lobby (the state's clock): a countdown on
  // the badge of the seat whose decision it is, red under 15 s. When it runs out, that
  // player forfeits the match (the server decides and sends the end).
  function clockBadge(p) {
    const c = G.state && !G.state.over ? G.state.clock : null;
    if (!c || c.seat !== p) return null;
    const node = el("span", { class: "badge clock", title: KK.t("time left for this decision: who runs out of time loses the match") });
    node.dataset.end = String(c.end);
    tickClock(node);
    return node;
  }

  function tickClock(node) {
    const left = Math.max(0, Math.ceil((Number(node.dataset.end) - Date.now()) / 1000));
    const time = `${Math.floor(left / 60)}:${String(left % 60).padStart(2, "0")}`;
    node.textContent = KK.t("{time} left", { time });
    node.classList.toggle("low", left < 15);
  }

  setInterval(() => document.querySelectorAll(".badge.clock").forEach(tickClock), 1000);

  // ------------------------------------------------------------- interaction

  function myTurn() {
    const s = G.state;
    return !!(s && G.role === "player" && !s.over && s.view.current === G.seat && s.view.legal.length && !G.pending && !awaitingOpponent());
  }

  // Whether this player's opponent has not taken their seat yet (a friend who has not
  // opened the invite link, a lobby match not yet collected): the server refuses every
  // action until then (open_seat in the state, claimed in the players).
  function awaitingOpponent() {
    if (G.role !== "player" || !G.state || G.state.over) return false;
    const other = 1 - G.seat;
    const info = G.welcome && G.welcome.players[other];
    if (info && info.kind === "human" && info.claimed) return false;
    return G.state.open_seat === other;
  }

  function legalOptions() {
    const byCard = new Map();
    const takes = [];
    for (const l of G.state.view.legal) {
      const a = KK.parseAction(l.action);
      if (a.verb === "play" || a.verb === "discard") {
        if (!byCard.has(a.card)) byCard.set(a.card, []);
        byCard.get(a.card).push({ id: l.id, verb: a.verb, target: a.target });
      } else if (a.verb === "take") {
        takes.push({ id: l.id, target: a.card });
      }
    }
    return { byCard, takes };
  }

  // Whether a choice between captures is no choice: two or more Plains of one month
  // (no rule tells them apart), as in the terminal game. Codes of the field cards.
  function interchangeable(codes) {
    if (codes.length < 2 || codes.some((c) => !c)) return false;
    const cards = codes.map((c) => KK.card(c));
    return cards.every((c) => c && c.kind === "P" && c.month === cards[0].month);
  }

  function renderInteractive() {
    const bar = $("choice-bar");
    bar.replaceChildren();
    $("field").classList.remove("choosing");
    for (const node of $("board").querySelectorAll("button.card")) {
      node.classList.remove("playable", "target", "selected", "dim", "hinted", "match-hint");
      node.setAttribute("aria-disabled", "true");
      node.onclick = null;
      node.tabIndex = node.closest("#bottom-hand") ? 0 : -1;
    }
    const s = G.state;
    if (!s) return;
    const v = s.view;
    if (s.over) {
      setStatus(matchOverText(s));
      return;
    }
    if (awaitingOpponent()) {
      const saved = G.game ? KK.games()[G.game] : null;
      setStatus(saved && saved.invite ? KK.t("Waiting for your friend…") : KK.t("Waiting for your opponent to join…"));
      return;
    }
    if (!myTurn()) {
      if (G.role !== "player") setStatus(KK.t("{who} to play.", { who: nameOf(v.current) }));
      else if (G.pending) setStatus(KK.t("Sending…"));
      else setStatus(KK.t("Waiting for {who}…", { who: nameOf(v.current) }));
      return;
    }
    const { byCard, takes } = legalOptions();
    if (v.phase === "play") {
      for (const node of $("bottom-hand").querySelectorAll("button.card")) {
        const code = node.dataset.code;
        const opts = byCard.get(code);
        if (!opts) {
          node.classList.add("dim");
          continue;
        }
        node.classList.add("playable");
        node.setAttribute("aria-disabled", "false");
        node.onclick = () => chooseHandCard(code);
        if (G.selected === code) node.classList.add("selected");
      }
      if (G.selected) showMatches(G.selected);
      if (G.selected) {
        const opts = byCard.get(G.selected) || [];
        const info = KK.card(G.selected);
        const targets = opts.filter((o) => o.target);
        for (const o of targets) markTarget(o.target, o.id);
        const matches = fieldMatches(G.selected).length;
        const name = KK.td(info.name_en);
        bar.append(el("span", { text: targets.length ? KK.t("Choose the card your {card} captures:", { card: name }) : `${name}:` }));
        for (const o of opts) {
          const text = o.verb === "discard" ? KK.t("Lay it on the field without capturing")
            : o.target ? KK.t("Capture {card}", { card: KK.cardName(o.target) }) : matches ? KK.t("Capture") : KK.t("Play it to the field");
          bar.append(el("button", { type: "button", text, onclick: () => act(o.id) }));
        }
        bar.append(el("button", { type: "button", text: KK.t("Cancel (Esc)"), onclick: () => { G.selected = null; renderInteractive(); } }));
        setStatus(KK.t("Choose what your {card} does.", { card: name }));
      } else {
        setStatus(KK.t("Your turn: play a card from your hand (highlighted cards can be played)."));
      }
    } else if (v.phase === "take") {
      const drawn = KK.card(v.drawn);
      if (interchangeable(takes.map((o) => o.target))) {
        // Two Plains of one month: either capture is the same, nothing to ask.
        act(Math.min(...takes.map((o) => o.id)));
        return;
      }
      bar.append(el("span", { text: KK.t("You drew {card}: choose the card it captures:", { card: KK.td(drawn.name_en) }) }));
      for (const o of takes) {
        markTarget(o.target, o.id);
        bar.append(el("button", { type: "button", text: KK.t("Capture {card}", { card: KK.cardName(o.target) }), onclick: () => act(o.id) }));
      }
      setStatus(KK.t("You drew {card}, which matches two field cards: choose one.", { card: KK.td(drawn.name_en) }));
    } else if (v.phase === "decide") {
      bar.append(el("button", { type: "button", text: KK.t("Koi-koi or stop?"), onclick: () => koikoiDialog(s) }));
      setStatus(KK.t("You made a yaku: koi-koi or stop?"));
    }
  }

  // The field cards of a hand card's month (what it would capture).
  function fieldMatches(code) {
    const info = KK.card(code);
    if (!info) return [];
    return [...$("field").querySelectorAll("button.card")].filter((n) => {
      const other = KK.card(n.dataset.code);
      return other && other.month === info.month;
    });
  }

  // Outline the field cards a hand card would capture (hover, focus or a first tap).
  function showMatches(code) {
    clearMatches();
    for (const node of fieldMatches(code)) node.classList.add("match-hint");
  }

  function clearMatches() {
    for (const node of $("field").querySelectorAll(".card.match-hint")) node.classList.remove("match-hint");
  }

  function markTarget(code, id) {
    const node = $("field").querySelector(`button.card[data-code="${CSS.escape(code)}"]`);
    if (!node) return;
    $("field").classList.add("choosing");
    node.classList.add("target");
    node.setAttribute("aria-disabled", "false");
    node.tabIndex = 0;
    node.setAttribute("aria-label", KK.t("Capture: {card}", { card: KK.cardLabel(KK.card(code)) }));
    node.onclick = () => act(id);
  }

  function chooseHandCard(code) {
    if (!myTurn()) return;
    const opts = legalOptions().byCard.get(code);
    if (!opts) return;
    // On a touch screen the first tap shows what the card captures; the second plays it.
    const firstTouch = G.lastPointer === "touch" && G.selected !== code;
    if (opts.length === 1 && opts[0].verb === "play" && !opts[0].target && !firstTouch) {
      act(opts[0].id);
      return;
    }
    // Two Plains of one month to capture: either is the same, nothing to ask.
    if (!firstTouch && opts.every((o) => o.verb === "play") && interchangeable(opts.map((o) => o.target))) {
      act(Math.min(...opts.map((o) => o.id)));
      return;
    }
    G.selected = code;
    renderInteractive();
    const first = $("field").querySelector("button.card.target") || $("choice-bar").querySelector("button");
    if (first) first.focus();
  }

  function setStatus(text) {
    $("status").replaceChildren(el("p", { text }));
  }

  // --------------------------------------------------------------------- hints

  function requestHint() {
    if (!myTurn()) {
      KK.toast(KK.t("A hint is given on your turn."));
      return;
    }
    send({ type: "hint" });
    if (KKMoments.adviceOpen()) return; // asked in the koi-koi dialog: answered there
    $("hint-box").hidden = false;
    $("hint-box").replaceChildren(el("p", { text: KK.t("The expert is thinking…") }));
    keepLogAtEnd();
  }

  // "+1.2 points · 62% match win": expected net round points, and the chance of
  // winning the match when the evaluator plays for it (not in a single round).
  function hintValue(o) {
    const points = Math.round(o.points * 10) / 10 + 0;
    let text = KK.t("{points} points", { points: `${points >= 0 ? "+" : ""}${points.toFixed(1)}` });
    if (typeof o.equity === "number") text += ` · ${KK.t("{percent}% match win", { percent: Math.round(o.equity * 100) })}`;
    return text;
  }

  function showHint(msg) {
    if (!G.state || msg.seq !== G.state.seq) return;
    if (KKMoments.adviceOpen()) {
      KKMoments.showAdvice(msg, { describe: describeAction, value: hintValue });
      return;
    }
    G.hint = msg;
    const box = $("hint-box");
    box.hidden = false;
    const list = el("ol", {});
    for (const o of msg.options.slice(0, 4)) {
      list.append(el("li", {}, `${describeAction(o.action)}: `, el("strong", { text: hintValue(o) })));
    }
    box.replaceChildren(
      el("strong", { text: KK.t("Hint from the expert, best first:"), title: KK.t("evaluator: {source}", { source: msg.source }) }),
      list,
    );
    const best = msg.options[0];
    const a = KK.parseAction(best.action);
    const code = a.verb === "take" ? a.card : a.card;
    const zone = a.verb === "take" ? "field" : "bottom-hand";
    const node = code && $(zone).querySelector(`[data-code="${CSS.escape(code)}"]`);
    if (node) node.classList.add("hinted");
    if (a.target) {
      const t = $("field").querySelector(`[data-code="${CSS.escape(a.target)}"]`);
      if (t) t.classList.add("hinted");
    }
    keepLogAtEnd();
  }

  function clearHint() {
    G.hint = null;
    $("hint-box").hidden = true;
    for (const node of document.querySelectorAll(".card.hinted")) node.classList.remove("hinted");
    keepLogAtEnd();
  }

  function describeAction(text) {
    const a = KK.parseAction(text);
    if (a.verb === "play") return a.target ? KK.t("Play {card} onto {target}", { card: KK.cardName(a.card), target: KK.cardName(a.target) }) : KK.t("Play {card}", { card: KK.cardName(a.card) });
    if (a.verb === "discard") return KK.t("Lay {card} without capturing", { card: KK.cardName(a.card) });
    if (a.verb === "take") return KK.t("Capture {card}", { card: KK.cardName(a.card) });
    if (a.verb === "koikoi") return KK.t("Koi-koi");
    if (a.verb === "stop") return KK.t("Stop");
    return text;
  }

  // ------------------------------------------------------------------- dialogs

  function openDialog(dialog) {
    if (!dialog.open) dialog.showModal();
    KKMoments.raise(); // a banner showing stays above the dialog
  }

  function koikoiDialog(msg) {
    const dialog = $("koikoi-dialog");
    const d = msg.decision;
    const body = $("koikoi-body");
    body.replaceChildren();
    KKMoments.resetAdvice();
    if (d) {
      body.append(el("p", { text: KK.t("Stopping now scores {points}:", { points: KK.points(d.if_stop.points) }) }));
      body.append(KK.settlementView(d.if_stop, names()));
    }
    const rules = G.welcome && G.welcome.rules;
    if (rules) {
      const bonus = {
        opponent_x2: KK.t("If you call koi-koi and your opponent then scores, their points are doubled; if you improve, you may stop later with more."),
        challenge_x2: KK.t("Koi-koi then improving doubles your points; if your opponent scores instead, their points are doubled."),
        ladder: KK.t("Each koi-koi call adds to your points when you finally stop (×(n−2) from the fourth call)."),
        none: KK.t("No multiplier for koi-koi; if your opponent scores first you lose this round's points."),
      }[rules.koikoi.bonus];
      if (bonus) body.append(el("p", { class: "hint-text", text: bonus }));
    }
    const calls = msg.view.koikoi_calls;
    body.append(el("p", { text: KK.t("Koi-koi calls this round: you {mine}, {opponent} {theirs}. Cards left in your hand: {cards}.", { mine: calls[G.seat], opponent: nameOf(1 - G.seat), theirs: calls[1 - G.seat], cards: msg.view.hand.length }) }));
    if (!msg.view.hand.length) {
      body.append(el("p", { class: "koikoi-warning", text: KK.t("You have no cards left to play: koi-koi cannot add to your yaku, it can only let your opponent score.") }));
    }
    const ending = d ? matchAfterStop(msg, d.if_stop) : null;
    if (ending) body.append(el("p", { class: "koikoi-match", text: ending }));
    const ids = new Map(msg.view.legal.map((l) => [l.action, l.id]));
    $("koikoi-btn").disabled = !ids.has("koikoi");
    $("koikoi-btn").onclick = () => { dialog.close(); act(ids.get("koikoi")); };
    $("stop-btn").onclick = () => { dialog.close(); act(ids.get("stop")); };
    openDialog(dialog);
    $("stop-btn").focus();
  }

  // In the match's last round (or when stopping would bust a player): what stopping
  // means for the match, e.g. "Stopping now wins the match 39–35."
  function matchAfterStop(msg, stop) {
    const rules = G.welcome && G.welcome.rules;
    if (!rules || !stop || !stop.deltas) return null;
    const v = msg.view;
    const after = [v.match_scores[0] + stop.deltas[0], v.match_scores[1] + stop.deltas[1]];
    const bust = rules.game.start_points > 0 && Math.min(after[0], after[1]) <= 0;
    if (v.round < rules.game.rounds && !bust) return null;
    const me = G.seat;
    let winner = after[0] === after[1] ? null : (after[0] > after[1] ? 0 : 1);
    if (winner === null && rules.game.match_tie === "dealer") winner = v.dealer;
    const mine = after[me];
    const theirs = after[1 - me];
    // "39–35"; with a score below zero (zero-sum stakes) "36 to −1".
    const pair = (a, b) => (a >= 0 && b >= 0 ? `${a}–${b}` : KK.t("{a} to {b}", { a, b }).replaceAll("-", "−"));
    if (winner === null) return KK.t("Stopping now ends the match in a draw, {score}.", { score: pair(mine, theirs) });
    if (winner === me) return KK.t("Stopping now wins the match {score}.", { score: pair(mine, theirs) });
    return KK.t("Stopping now loses the match {score} to {who}.", { score: pair(theirs, mine), who: nameOf(1 - me) });
  }

  const REASONS = () => ({
    stop: KK.t("stopped (shōbu 勝負)"),
    exhausted: KK.t("the hands ran out"),
    exhausted_highest: KK.t("the hands ran out: the higher yaku scores"),
    exhausted_last_yaku: KK.t("the hands ran out: the last yaku scores"),
    dealer_point: KK.t("the hands ran out: the dealer's point"),
    oya_ken: KK.t("the hands ran out: the dealer's privilege (oya-ken 親権)"),
    instant: KK.t("an instant hand"),
  });

  function roundDialog(ev) {
    return new Promise((resolve) => {
      const dialog = $("round-dialog");
      const won = ev.winner !== null && ev.winner !== undefined;
      $("round-title").textContent = won
        ? (nameOf(ev.winner) === KK.t("You") ? KK.t("Round {round}: {who} win {points}", { round: ev.round, who: nameOf(ev.winner), points: KK.points(ev.points) })
          : KK.t("Round {round}: {who} wins {points}", { round: ev.round, who: nameOf(ev.winner), points: KK.points(ev.points) }))
        : KK.t("Round {round}: nobody scores", { round: ev.round });
      const body = $("round-body");
      body.replaceChildren(
        el("p", { text: KK.t("Why: {reason}.", { reason: REASONS()[ev.reason] || ev.reason }) }),
        KK.settlementView(ev, names()),
      );
      if (ev.deltas) {
        body.append(el("p", { text: KK.t("Score changes: {first} {first_change}, {second} {second_change}.", { first: nameOf(0), first_change: signed(ev.deltas[0]), second: nameOf(1), second_change: signed(ev.deltas[1]) }) }));
      }
      const done = () => {
        dialog.removeEventListener("close", done);
        resolve();
      };
      dialog.addEventListener("close", done);
      $("round-continue").onclick = () => dialog.close();
      openDialog(dialog);
      $("round-continue").focus();
    });
  }

  function signed(n) {
    return n > 0 ? `+${n}` : String(n);
  }

  function matchOverText(s) {
    const sc = s.view.match_scores;
    if (s.forfeit) {
      const lost = s.forfeit.player;
      const words = { loser: nameOf(lost), winner: nameOf(1 - lost) };
      return words.winner === KK.t("You") ? KK.t("{loser} ran out of time: {winner} win by forfeit.", words) : KK.t("{loser} ran out of time: {winner} wins by forfeit.", words);
    }
    if (s.winner === null || s.winner === undefined) return KK.t("Match over: a draw, {scores}.", { scores: `${sc[0]}–${sc[1]}` });
    // The winner's score first: "Match over: AI wins 18–0."
    const params = { who: nameOf(s.winner), score: `${sc[s.winner]}–${sc[1 - s.winner]}` };
    return params.who === KK.t("You") ? KK.t("Match over: {who} win {score}.", params) : KK.t("Match over: {who} wins {score}.", params);
  }

  function overDialog(msg) {
    const dialog = $("over-dialog");
    $("over-title").textContent = matchOverText(msg);
    $("over-body").replaceChildren(historyTable());
    $("replay-link").href = `/replay#game=${encodeURIComponent(G.game || "")}`;
    $("replay-link").hidden = G.role !== "player";
    $("download-btn").onclick = () => void downloadRecord();
    $("over-close").onclick = () => dialog.close();
    openDialog(dialog);
  }

  async function downloadRecord() {
    try {
      const r = await fetch(`/api/games/${encodeURIComponent(G.game)}/record`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ token: G.token }),
      });
      if (!r.ok) throw new Error((await r.json()).message);
      const blob = new Blob([await r.text()], { type: "application/json" });
      const url = URL.createObjectURL(blob);
      const a = el("a", { href: url, download: `koikoi-${G.game}.json` });
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 5000);
    } catch (err) {
      KK.toast(KK.t("Cannot download: {error}", { error: err.message }));
    }
  }

  function historyTable() {
    const rounds = G.events.filter((e) => e.type === "round_over");
    if (!rounds.length) return el("p", { text: KK.t("No round finished yet.") });
    const table = el("table", { class: "history-table" });
    table.append(el("tr", {},
      el("th", { text: KK.t("Round") }), el("th", { text: KK.t("Result") }), el("th", { text: KK.t("Yaku") }),
      el("th", { text: nameOf(0) }), el("th", { text: nameOf(1) })));
    const totals = [0, 0];
    const start = G.welcome ? G.welcome.rules.game.start_points : 0;
    for (const ev of rounds) {
      totals[0] += ev.deltas[0];
      totals[1] += ev.deltas[1];
      const result = ev.winner === null || ev.winner === undefined ? KK.t("nobody scores") : `${nameOf(ev.winner)}: ${ev.points}`;
      const yaku = (ev.yaku || []).map((y) => `${KK.yakuName(y.name).name} ${y.points}`).join(", ");
      table.append(el("tr", {},
        el("td", { text: String(ev.round) }), el("td", { text: result }), el("td", { text: yaku || "—" }),
        el("td", { text: String(start + totals[0]) }), el("td", { text: String(start + totals[1]) })));
    }
    return table;
  }

  function historyDialog() {
    const body = $("history-body");
    body.replaceChildren(historyTable());
    const rounds = G.events.filter((e) => e.type === "round_over");
    for (const ev of rounds) {
      const details = el("details", {}, el("summary", { text: KK.t("Round {round}: the settlement, card by card", { round: ev.round }) }));
      details.append(KK.settlementView(ev, names()));
      body.append(details);
    }
    openDialog($("history-dialog"));
  }

  // The yaku of the rules being played: name, Japanese name, what it needs, points.
  function yakuTableView(rules) {
    const table = el("table", { class: "yaku-table", id: "yaku-table" });
    const english = KK.lang === "en";
    table.append(el("caption", { text: KK.t("Yaku of the rules '{name}'", { name: rules.name }) }));
    table.append(el("tr", {},
      el("th", { scope: "col", text: KK.t("Yaku") }), english ? el("th", { scope: "col", text: "日本語" }) : null,
      el("th", { scope: "col", text: KK.t("Needs") }), el("th", { scope: "col", class: "pts", text: KK.t("Points") })));
    for (const y of KK.yakuTable(rules)) {
      table.append(el("tr", { "data-yaku": y.key },
        el("th", { scope: "row", text: y.name }), english ? el("td", { lang: "ja", text: y.ja }) : null,
        el("td", { text: y.needs }), el("td", { class: "pts", text: String(y.points) })));
    }
    return table;
  }

  function rulesDialog() {
    const rules = G.welcome && G.welcome.rules;
    const body = $("rules-body");
    body.replaceChildren();
    if (!rules) return;
    body.append(el("p", { text: `${rules.name}: ${KK.td(rules.description)}` }));
    body.append(yakuTableView(rules));
    for (const section of ["game", "play", "koikoi", "end", "yaku", "points"]) {
      const dl = el("dl", {});
      for (const [k, val] of Object.entries(rules[section])) {
        dl.append(el("dt", { text: `${section}.${k}` }), el("dd", { text: Array.isArray(val) ? val.join(", ") || "—" : String(val) }));
      }
      body.append(el("details", {}, el("summary", { text: `[${section}]` }), dl));
    }
    openDialog($("rules-dialog"));
  }

  // ----------------------------------------------------------------------- log

  // The log's last lines in view, now (the side column's panels above it may just
  // have grown or shrunk: reading scrollHeight lays the page out first).
  function keepLogAtEnd() {
    const log = $("log");
    log.scrollTop = log.scrollHeight;
  }

  function logItem(ev) {
    return el("li", { "data-deal": String(ev.deal), text: KK.describeEvent(ev, nameOf) });
  }

  function renderLog() {
    $("log").replaceChildren(...G.events.map(logItem));
    keepLogAtEnd();
  }

  function appendLog(ev) {
    $("log").append(logItem(ev));
    keepLogAtEnd();
  }

  // ------------------------------------------------------------------ side UI

  function setupSide() {
    const saved = G.game ? KK.games()[G.game] : null;
    renderInvitePanel();
    $("watch-box").hidden = !(saved && saved.watch);
    if (saved && saved.watch) $("watch-link").value = `${location.origin}/#watch=${saved.watch}`;
    $("hint-btn").hidden = G.role !== "player";
  }

  // ------------------------------------------------------------ invite panel

  // The invite of this browser's friend game while the friend has not joined, else null.
  function openInvite() {
    const saved = G.game ? KK.games()[G.game] : null;
    if (!saved || !saved.invite || G.role !== "player" || !G.welcome) return null;
    const info = G.welcome.players[1 - G.seat];
    if (!info || info.kind !== "human" || info.claimed) return null;
    if (G.state && G.state.open_seat !== 1 - G.seat) return null;
    return saved.invite;
  }

  // Show the invite panel over the table until the friend has joined; hide it the
  // moment they have (a players or state message says so).
  function renderInvitePanel() {
    const invite = openInvite();
    if (!invite) {
      if (G.inviteShown && G.role === "player" && G.welcome) {
        KK.toast(KK.t("{who} has joined: play starts.", { who: nameOf(1 - G.seat) }));
      }
      hideInvitePanel();
      return;
    }
    $("invite-link").value = `${location.origin}/#join=${invite}`;
    $("game").classList.add("awaiting-friend");
    const panel = $("invite-panel");
    if (panel.hidden) {
      panel.hidden = false;
      $("copy-feedback").textContent = "";
      $("copy-invite").focus();
    }
    G.inviteShown = true;
    if (G.qrFor !== invite) void drawInviteQr(invite);
  }

  function hideInvitePanel() {
    $("invite-panel").hidden = true;
    $("game").classList.remove("awaiting-friend");
    G.inviteShown = false;
  }

  // The invite link's QR code, made by the server for this seat's token only
  // (POST /api/games/{game}/invite-qr, docs/web.md), inlined as SVG.
  async function drawInviteQr(invite) {
    G.qrFor = invite;
    const box = $("invite-qr");
    box.replaceChildren();
    try {
      const r = await fetch(`/api/games/${encodeURIComponent(G.game)}/invite-qr`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ token: G.token, invite }),
      });
      if (!r.ok) {
        const data = await r.json().catch(() => ({}));
        throw new Error(data.message || `HTTP ${r.status}`);
      }
      const doc = new DOMParser().parseFromString(await r.text(), "image/svg+xml");
      const svg = doc.documentElement;
      if (svg.nodeName !== "svg") throw new Error("not an SVG image");
      svg.setAttribute("aria-hidden", "true");
      svg.setAttribute("focusable", "false");
      if (G.qrFor === invite) box.replaceChildren(document.importNode(svg, true));
    } catch (err) {
      if (G.qrFor === invite) G.qrFor = null;
      box.replaceChildren(el("p", { class: "hint-text", text: KK.t("The QR code could not be made: {error}", { error: err.message }) }));
    }
  }

  // Copy a link field to the clipboard. When the page may not write the clipboard
  // (no permission, no secure context), the older copy command is tried on the
  // selected field; failing that, the player is told to copy it by hand.
  async function copy(id, feedback) {
    const input = $(id);
    input.focus();
    input.select();
    let copied = false;
    if (navigator.clipboard && navigator.clipboard.writeText) {
      try {
        await navigator.clipboard.writeText(input.value);
        copied = true;
      } catch (_) { /* refused: try the fallback */ }
    }
    if (!copied) {
      try {
        copied = document.execCommand("copy");
      } catch (_) {
        copied = false;
      }
    }
    const text = copied ? KK.t("Copied.") : KK.t("Select the text and copy it.");
    if (feedback) {
      $(feedback).textContent = copied ? text : KK.t("Copy the link by hand: it is selected; press Ctrl+C (on a phone, long-press it).");
      $(feedback).dataset.copied = copied ? "1" : "0";
    } else {
      KK.toast(text);
    }
  }

  function setupGameUi() {
    $("hint-btn").addEventListener("click", requestHint);
    $("history-btn").addEventListener("click", historyDialog);
    $("rules-btn").addEventListener("click", rulesDialog);
    $("keys-btn").addEventListener("click", () => openDialog($("keys-dialog")));
    // The log keeps its last lines in view when the side column's other panels grow
    // or shrink (a hint shown, a drawer opened).
    if (window.ResizeObserver) new ResizeObserver(keepLogAtEnd).observe($("log"));
    $("progress-btn").addEventListener("click", progressDialog);
    $("tab-progress").addEventListener("click", progressDialog);
    $("tab-hint").addEventListener("click", () => { closeDrawer(); requestHint(); });
    for (const tab of $("tabbar").querySelectorAll("button[data-drawer]")) {
      tab.addEventListener("click", () => toggleDrawer(tab.dataset.drawer));
    }
    // A tap on the table, or a button of a drawer, closes the open drawer.
    $("board").addEventListener("click", closeDrawer);
    $("side-extra").addEventListener("click", (e) => {
      if (e.target.closest("button:not(.lang-switch button), a")) closeDrawer();
    });
    $("copy-invite").addEventListener("click", () => void copy("invite-link", "copy-feedback"));
    $("copy-watch").addEventListener("click", () => void copy("watch-link"));
    for (const b of document.querySelectorAll(".close-dialog")) {
      b.addEventListener("click", () => b.closest("dialog").close());
    }
    // The koi-koi decision cannot be dismissed without choosing.
    $("koikoi-dialog").addEventListener("cancel", (e) => e.preventDefault());
    KKMoments.setup({ requestHint }); // Ask the AI (A) in it, and the Settings dialog
    $("koikoi-dialog").addEventListener("keydown", (e) => {
      if (e.key === "k" || e.key === "K") { e.preventDefault(); if (!$("koikoi-btn").disabled) $("koikoi-btn").click(); }
      if (e.key === "s" || e.key === "S") { e.preventDefault(); $("stop-btn").click(); }
    });
    document.addEventListener("keydown", onKey);
    const hand = $("bottom-hand");
    const handCard = (e) => {
      const node = e.target && e.target.closest ? e.target.closest("button.card[data-code]") : null;
      return node && hand.contains(node) ? node : null;
    };
    const highlight = (e) => {
      const node = handCard(e);
      if (node && G.role === "player") showMatches(node.dataset.code);
    };
    const unhighlight = () => {
      clearMatches();
      if (G.selected && G.state && G.state.view.phase === "play") showMatches(G.selected);
    };
    hand.addEventListener("mouseover", highlight);
    hand.addEventListener("focusin", highlight);
    hand.addEventListener("mouseleave", unhighlight);
    hand.addEventListener("focusout", unhighlight);
    document.addEventListener("pointerdown", (e) => { G.lastPointer = e.pointerType; }, true);
    document.addEventListener("keydown", () => { G.lastPointer = "keyboard"; }, true);
  }

  // ------------------------------------------------------- phone drawers

  // On a phone the side column's extras (More) and the whole log (Log) open as
  // sheets over the table from the tab bar; one at a time, closed by Esc or a tap
  // on the table.
  function toggleDrawer(name) {
    const open = $("game").dataset.drawer === name ? null : name;
    if (open) $("game").dataset.drawer = open;
    else delete $("game").dataset.drawer;
    for (const tab of $("tabbar").querySelectorAll("button[data-drawer]")) {
      tab.setAttribute("aria-expanded", String(tab.dataset.drawer === open));
    }
    if (open === "log") keepLogAtEnd();
  }

  function closeDrawer() {
    if ($("game").dataset.drawer) toggleDrawer(null);
  }

  function progressDialog() {
    closeDrawer();
    openDialog($("progress-dialog"));
  }

  function onKey(e) {
    if ($("game").hidden || document.querySelector("dialog[open]")) return;
    if (e.key === "Escape" && $("game").dataset.drawer) {
      closeDrawer();
      return;
    }
    const target = e.target;
    if (target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA" || target.tagName === "SELECT")) return;
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key === "Escape" && G.selected) {
      G.selected = null;
      renderInteractive();
      const first = $("bottom-hand").querySelector("button.playable");
      if (first) first.focus();
      return;
    }
    if (e.key === "h" || e.key === "H") {
      requestHint();
      return;
    }
    if (e.key === "?") {
      openDialog($("keys-dialog"));
      return;
    }
    if (e.key === "y" || e.key === "Y") {
      progressDialog();
      return;
    }
    if (/^[1-9]$/.test(e.key)) {
      const nodes = $("bottom-hand").querySelectorAll("button.card");
      const node = nodes[Number(e.key) - 1];
      if (node) {
        node.focus();
        if (node.classList.contains("playable")) node.click();
      }
      return;
    }
    if ((e.key === "ArrowLeft" || e.key === "ArrowRight") && target && target.classList && target.classList.contains("card")) {
      const zone = target.parentElement;
      const nodes = [...zone.querySelectorAll("button.card")].filter((n) => n.tabIndex >= 0);
      const i = nodes.indexOf(target);
      const next = nodes[(i + (e.key === "ArrowRight" ? 1 : nodes.length - 1)) % nodes.length];
      if (next) {
        e.preventDefault();
        next.focus();
      }
    }
  }

  document.addEventListener("DOMContentLoaded", () => void main());
})();
