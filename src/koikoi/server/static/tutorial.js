/* "Learn to play": the guided first round of the web game. Plain JavaScript.

   The server decides what to explain (koikoi.features.tutorial, sent as the "tutorial" field
   of each state message of a tutorial game: every lesson so far and the prompt for
   now); this file only shows it. A coach panel sits between the field and your hand,
   so it never covers the cards it talks about, and the cards it means are
   highlighted where they lie. Explanations wait for "Next" (the game waits with
   them); the prompt stays until you move. The koi-koi decision, the round's
   settlement and the end get their words inside their own dialogs.

   app.js calls KKTutorial.receive(msg) for each state message and awaits what it
   returns before its dialogs open. */
"use strict";

const KKTutorial = (() => {
  const $ = (id) => document.getElementById(id);
  const el = (...args) => KK.el(...args);
  const SEEN = "koikoi.features.tutorial.seen.";
  const AREAS = {
    hand: "#bottom-hand",
    field: "#field",
    stock: "#board .stock",
    pile: "#bottom-pile",
    opponent: "#seat-top",
    score: "#bottom-info",
  };

  let panel = null;
  let game = null; // the tutorial game shown
  let seen = new Set(); // lesson keys already shown (kept per game for reloads)
  let shown = null; // the tip on the board now (its highlights are kept up)
  let pending = []; // lessons of the latest state not shown yet (for the dialogs)
  let prompt = null; // what to do now
  let allTips = []; // the latest state's tips, lessons and prompt

  // ---------------------------------------------------------------- start, leave

  // Forget tutorial games (but `keep`): they are not games to resume from the list.
  function purge(keep) {
    for (const [id, g] of Object.entries(KK.games())) {
      if (g.mode === "tutorial" && id !== keep) {
        KK.forgetGame(id);
        try { sessionStorage.removeItem(SEEN + id); } catch (_) { /* ignore */ }
      }
    }
  }

  function currentGame() {
    return KK.hashParams().game || null;
  }

  async function start() {
    const error = $("new-error");
    if (error) error.textContent = "";
    try {
      const res = await KK.post("/api/games", { mode: "tutorial" });
      purge();
      KK.saveGame(res.game, {
        token: res.token, seat: res.seat, mode: "tutorial", rules: res.rules, created: Date.now(),
      });
      location.hash = `game=${res.game}`;
    } catch (err) {
      if (error && !$("home").hidden) error.textContent = err.message;
      else KK.toast(err.message);
    }
  }

  function leave() {
    for (const d of document.querySelectorAll("dialog[open]")) d.close();
    hide();
    purge();
    location.hash = "";
  }

  // --------------------------------------------------------------------- texts

  function text(tip) {
    const params = Object.assign({}, tip.params);
    if (params.yaku) {
      const names = KK.yakuName(params.yaku);
      params.yaku = KK.lang === "ja" && names.ja ? names.ja : names.en;
    }
    return KK.t(tip.message, params);
  }

  // At the end: play it again, or a real game.
  function finishButtons() {
    return el("div", { class: "coach-buttons" },
      el("button", { type: "button", class: "primary coach-again", text: KK.t("Play the tutorial again"), onclick: () => void start() }),
      el("a", { href: "/#", class: "coach-new", text: KK.t("Start a real game"), onclick: leave }));
  }

  // ------------------------------------------------------------------- the panel

  function ensurePanel() {
    if (panel && panel.isConnected) return panel;
    KK.forceBadges(true); // code badges on while learning (the stored setting is kept)
    panel = el("section", { class: "coach", id: "coach", "aria-labelledby": "coach-title" },
      el("h2", { id: "coach-title", text: KK.t("Learn to play") }),
      el("p", { class: "coach-text", id: "coach-text", "aria-live": "polite" }),
      el("div", { class: "coach-row" },
        el("div", { class: "coach-links" },
          el("button", { type: "button", class: "coach-leave", text: KK.t("Leave tutorial"), onclick: leave }),
          el("button", { type: "button", class: "coach-restart", text: KK.t("Start over"), onclick: () => void start() })),
        el("div", { class: "coach-actions", id: "coach-actions" })));
    place();
    return panel;
  }

  // On a phone the panel sits between the field and your hand; on a wider screen at
  // the top of the side column, so that the whole table stays in view.
  const narrow = window.matchMedia("(max-width: 820px)");
  function place() {
    if (!panel) return;
    if (narrow.matches) $("board").insertBefore(panel, $("choice-bar"));
    else document.querySelector("#game .side").prepend(panel);
  }
  narrow.addEventListener("change", place);

  function hide() {
    KK.forceBadges(false);
    if (panel) panel.remove();
    panel = null;
    shown = null;
    release();
    mark();
  }

  // The explanation waiting for Next, if any: app.js waits for it, so leaving the
  // tutorial (or opening another game) must let it go.
  let waiting = null;
  let epoch = 0;
  function release() {
    epoch += 1;
    if (waiting) waiting();
    waiting = null;
  }

  function say(tip, line) {
    ensurePanel();
    $("coach-text").textContent = line;
    $("coach-text").dataset.key = tip ? tip.key : "";
    $("coach-actions").replaceChildren();
    shown = tip;
    mark();
  }

  // Show one explanation; resolves when the player presses Next.
  function explain(tip) {
    return new Promise((resolve) => {
      say(tip, text(tip));
      waiting = resolve;
      const next = el("button", { type: "button", class: "primary coach-next", text: KK.t("Next") });
      next.addEventListener("click", () => { waiting = null; resolve(); });
      $("coach-actions").append(next);
      next.focus({ preventScroll: true });
      keepInView();
    });
  }

  function keepInView() {
    if (!panel || !panel.getBoundingClientRect) return;
    const r = panel.getBoundingClientRect();
    if (r.top < 0 || r.bottom > window.innerHeight) panel.scrollIntoView({ block: "nearest" });
  }

  function showPrompt(tip, over) {
    if (over) {
      const finish = pending.find((t) => t.place === "finish") || lastOf("finish");
      say(finish, finish ? text(finish) : KK.t("The tutorial is over."));
      $("coach-actions").append(finishButtons());
      return;
    }
    if (!tip) {
      say(null, KK.t("Your opponent is playing…"));
      return;
    }
    say(tip, text(tip));
    // Keyboard: the card the prompt points at gets the focus (Enter plays it).
    const first = tip.cards.length ? document.querySelector(`#bottom-hand button.card[data-code="${CSS.escape(tip.cards[0])}"]`) : null;
    if (first && tip.place === "table") first.focus({ preventScroll: true });
    keepInView();
  }

  function lastOf(place) {
    return allTips.find((t) => t.place === place) || null;
  }

  // ---------------------------------------------------------------- highlights

  function mark() {
    for (const node of document.querySelectorAll(".coach-mark, .coach-area")) {
      node.classList.remove("coach-mark", "coach-area");
    }
    const tip = shown;
    if (!tip) return;
    for (const code of tip.cards || []) {
      for (const node of document.querySelectorAll(`#board .card[data-code="${CSS.escape(code)}"], dialog[open] .card[data-code="${CSS.escape(code)}"]`)) {
        node.classList.add("coach-mark");
      }
    }
    // Parts of the table are outlined only when no card says it better.
    for (const area of tip.cards && tip.cards.length ? [] : tip.areas || []) {
      const node = AREAS[area] && document.querySelector(AREAS[area]);
      if (node) node.classList.add("coach-area");
    }
    // The koi-koi decision: the coach's pick is to stop.
    if (tip.place === "decide") $("stop-btn").classList.add("coach-mark");
  }

  // The board is drawn again after every move: put the highlights back.
  let queued = false;
  function watchBoard() {
    const board = $("board");
    if (!board) return;
    new MutationObserver(() => {
      if (queued) return;
      queued = true;
      requestAnimationFrame(() => { queued = false; mark(); });
    }).observe(board, { childList: true, subtree: true });
  }

  // ------------------------------------------------------------------- dialogs

  function note(tip, extra) {
    return el("div", { class: "coach-note", role: "note", "data-key": tip.key },
      el("strong", { text: KK.t("Learn to play") }), " ", text(tip), extra || null);
  }

  function useLesson(place) {
    const tip = pending.find((t) => t.place === place);
    if (!tip) return null;
    pending = pending.filter((t) => t !== tip);
    remember(tip);
    return tip;
  }

  function onDialog(dialog) {
    if (!dialog.open || !panel) return;
    for (const old of dialog.querySelectorAll(".coach-note")) old.remove();
    let tip = null;
    let body = null;
    let extra = null;
    if (dialog.id === "koikoi-dialog" && prompt && prompt.place === "decide") {
      tip = prompt;
      body = $("koikoi-body");
    } else if (dialog.id === "round-dialog") {
      tip = useLesson("settlement") || lastOf("settlement");
      body = $("round-body");
      // The round is over: the koi-koi prompt (or any other) no longer applies.
      say(tip, KK.t("The round is over: the dialog shows how it was scored. Press Continue when you have read it."));
    } else if (dialog.id === "over-dialog") {
      tip = useLesson("finish") || lastOf("finish");
      body = $("over-body");
      extra = finishButtons();
    }
    if (tip && body) body.prepend(note(tip, extra));
    const again = extra && extra.querySelector(".coach-again");
    if (again) again.focus();
  }

  function watchDialogs() {
    const observer = new MutationObserver((records) => {
      for (const r of records) onDialog(r.target);
    });
    for (const id of ["koikoi-dialog", "round-dialog", "over-dialog"]) {
      const d = $(id);
      if (d) observer.observe(d, { attributes: true, attributeFilter: ["open"] });
    }
  }

  // ------------------------------------------------------------------ the hook

  function remember(tip) {
    seen.add(tip.key);
    try { sessionStorage.setItem(SEEN + game, JSON.stringify([...seen])); } catch (_) { /* ignore */ }
  }

  function load(id) {
    game = id;
    try {
      seen = new Set(JSON.parse(sessionStorage.getItem(SEEN + id) || "[]"));
    } catch (_) {
      seen = new Set();
    }
  }

  /* A state message arrived. Outside a tutorial: nothing (returns null). In one: the
     new lessons are noted (the dialogs take theirs as they open) and the returned
     function shows the others one by one, then the prompt; app.js awaits it. */
  function receive(msg) {
    if (!msg || !msg.tutorial) {
      if (panel) hide();
      return null;
    }
    const G = window.KOIKOI;
    const id = (G && G.game) || currentGame();
    if (id !== game) load(id);
    allTips = msg.tutorial.tips;
    pending = allTips.filter((t) => t.wait && !seen.has(t.key));
    prompt = allTips.find((t) => !t.wait) || null;
    ensurePanel();
    release();
    const mine = epoch;
    return async () => {
      for (const tip of pending.filter((t) => t.place === "table")) {
        await explain(tip);
        if (mine !== epoch) return; // left, or another game opened, meanwhile
        remember(tip);
        pending = pending.filter((t) => t !== tip);
      }
      if (panel) showPrompt(prompt, msg.over);
    };
  }

  // ------------------------------------------------------------------ the page

  function setupHome() {
    const button = $("learn-btn");
    if (!button) return;
    button.addEventListener("click", () => void start());
    // Translate the entry once app.js has loaded the language's messages.
    const translate = () => {
      if (!KK.config) return void setTimeout(translate, 50);
      KK.applyI18n(button.closest(".learn-row"));
    };
    translate();
  }

  // Leaving a tutorial by the address bar or the back button also forgets it. This
  // listener is added before app.js's, so the list of games is drawn without it.
  purge(currentGame());
  window.addEventListener("hashchange", () => {
    const now = currentGame();
    if (now !== game) hide();
    purge(now);
  });
  document.addEventListener("DOMContentLoaded", () => {
    setupHome();
    watchBoard();
    watchDialogs();
  });

  return { receive, start, leave, get seen() { return [...seen]; } };
})();
window.KKTutorial = KKTutorial;
