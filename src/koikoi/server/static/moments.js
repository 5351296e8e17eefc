/* The game's moments: the opponent's turn paced, banners for a yaku, a koi-koi call and a
   stop, the expert's advice in the koi-koi dialog, and the Settings dialog. Plain
   JavaScript, used by app.js through a few hooks (KKMoments.*).

   Settings are kept in localStorage: "koikoi.pace" (instant/fast/normal/slow: how long
   each step of the opponent's turn stays on screen), "koikoi.sound" (sound.js) and
   "koikoi.badges" ("on"/"off": the cards' code badges, set on <html data-badges>). */
"use strict";

const KKMoments = (() => {
  const el = KK.el;
  const PACE_KEY = "koikoi.pace";
  const BADGES_KEY = "koikoi.badges";

  /* Milliseconds per step of the opponent's turn (the terminal game's paces). */
  const PACES = { instant: 0, fast: 400, normal: 900, slow: 1600 };
  const DEFAULT_PACE = "normal";
  const BANNER_MS = 2600;

  function stored(key) {
    try {
      return localStorage.getItem(key);
    } catch (_) {
      return null;
    }
  }

  function store(key, value) {
    try { localStorage.setItem(key, value); } catch (_) { /* storage blocked: this page only */ }
  }

  function pace() {
    const name = stored(PACE_KEY);
    return name in PACES ? name : DEFAULT_PACE;
  }

  function setPace(name) {
    if (!(name in PACES)) return;
    store(PACE_KEY, name);
  }

  /* How long one step of the opponent's turn stays before the next (0: at once). */
  function stepMs() {
    return PACES[pace()];
  }

  function badges() {
    return stored(BADGES_KEY) === "on";
  }

  function setBadges(on) {
    store(BADGES_KEY, on ? "on" : "off");
    applyBadges();
  }

  function applyBadges() {
    document.documentElement.dataset.badges = badges() ? "on" : "off";
  }

  // Before the page is drawn, so the cards never flash with the wrong badges.
  applyBadges();

  // ------------------------------------------------------------------ banners

  let bannerTimer = null;

  function banner() {
    return document.getElementById("moment-banner");
  }

  function canPop(node) {
    return typeof node.showPopover === "function";
  }

  /* Show a banner: a title and a line under it. It takes no focus and no clicks
     (pointer-events: none), sits at the top of the window, away from the hand and the
     dialogs' buttons, and is read out by the live region #moment-live. */
  function show(kind, title, sub, extra) {
    const node = banner();
    const live = document.getElementById("moment-live");
    if (!node) return;
    node.dataset.kind = kind;
    node.replaceChildren(...KK.kids(
      el("span", { class: "moment-title" }, title, extra ? " " : null, extra || null),
      sub ? el("span", { class: "moment-sub", text: sub }) : null,
    ));
    if (live) live.textContent = sub ? `${node.querySelector(".moment-title").textContent}. ${sub}` : node.textContent;
    node.classList.remove("show");
    if (canPop(node) && node.matches(":popover-open")) node.hidePopover();
    node.hidden = false;
    if (canPop(node)) node.showPopover();
    void node.offsetWidth; // restart the entrance animation
    node.classList.add("show");
    clearTimeout(bannerTimer);
    bannerTimer = setTimeout(hide, BANNER_MS);
  }

  function hide() {
    const node = banner();
    if (!node) return;
    node.classList.remove("show");
    if (canPop(node) && node.matches(":popover-open")) node.hidePopover();
    node.hidden = true;
  }

  /* Keep a showing banner above a modal dialog opened after it (the top layer stacks
     in the order things were opened). */
  function raise() {
    const node = banner();
    if (!node || node.hidden || !canPop(node) || !node.matches(":popover-open")) return;
    node.hidePopover();
    node.showPopover();
  }

  // The Japanese name without its romanisation: "赤短" of "赤短 akatan".
  function kanji(key) {
    return (KK.yakuName(key).ja || "").split(" ")[0];
  }

  /* The yaku a "yaku" event made: those that are new or worth more than before. */
  function madeYaku(before, after) {
    const had = new Map((before || []).map((y) => [y.name, y.points]));
    const fresh = (after || []).filter((y) => !had.has(y.name) || had.get(y.name) < y.points);
    return fresh.length ? fresh : after || [];
  }

  /* A moment of the game: a yaku made, a koi-koi call or a stop, by either player.
     `ctx`: {who (the player's name), mine (the page's own player), before and after
     (that player's yaku rows before and after the event), points (a stop's points,
     when known)}. Resolves when the game may go on: at once for the page's own
     player, after a step of the pace for the other one. */
  async function moment(ev, ctx) {
    const mine = !!ctx.mine;
    if (ev.type === "yaku") {
      const made = madeYaku(ctx.before, ctx.after);
      const english = KK.lang === "en";
      const names = made.map((y) => KK.yakuName(y.name).name).join(" · ");
      const title = names ? KK.t("{yaku}!", { yaku: names }) : KK.t("A yaku!");
      const ja = english && made.length ? el("span", { lang: "ja", text: made.map((y) => kanji(y.name)).join("・") }) : null;
      const points = KK.points(ev.total);
      const sub = mine ? KK.t("You made a yaku: {points}", { points }) : KK.t("{who} made a yaku: {points}", { who: ctx.who, points });
      show("yaku", title, sub, ja);
    } else if (ev.type === "koikoi") {
      const title = mine ? KK.t("You call koi-koi! こいこい") : KK.t("{who} calls koi-koi! こいこい", { who: ctx.who });
      const sub = ev.calls > 1 ? KK.t("Call {calls} this round", { calls: ev.calls }) : null;
      show("koikoi", title, sub);
    } else if (ev.type === "stop") {
      let title;
      if (ctx.points === null || ctx.points === undefined) {
        title = mine ? KK.t("You stop. 勝負") : KK.t("{who} stops. 勝負", { who: ctx.who });
      } else {
        const points = KK.points(ctx.points);
        title = mine ? KK.t("You stop: {points}", { points }) : KK.t("{who} stops: {points}", { who: ctx.who, points });
      }
      show("stop", title, ev.automatic ? KK.t("No koi-koi is possible now.") : null);
    } else {
      return;
    }
    if (!mine && stepMs()) await KK.sleep(stepMs());
  }

  // ------------------------------------------------------------------ advice

  /* The "Ask the AI" part of the koi-koi dialog: #ask-ai-btn (key A) asks the page's
     hint (the expert, as H does on the table); #koikoi-advice shows its values. */
  let askHint = null;
  let asking = false;

  function adviceBox() {
    return document.getElementById("koikoi-advice");
  }

  function resetAdvice() {
    asking = false;
    const box = adviceBox();
    if (box) {
      box.hidden = true;
      box.replaceChildren();
    }
    const button = document.getElementById("ask-ai-btn");
    if (button) button.disabled = false;
  }

  function ask() {
    if (asking || !askHint) return;
    asking = true;
    const box = adviceBox();
    box.hidden = false;
    box.replaceChildren(el("p", { text: KK.t("The expert is thinking…") }));
    document.getElementById("ask-ai-btn").disabled = true;
    askHint();
  }

  /* The hint message's koi-koi and stop rows, best first, in match terms:
     `value(option)` is the page's "+1.2 points · 62% match win". */
  function showAdvice(msg, { describe, value }) {
    const box = adviceBox();
    if (!box) return;
    asking = false;
    box.hidden = false;
    const list = el("ul", { class: "advice-list" });
    for (const o of msg.options) {
      const verb = KK.parseAction(o.action).verb;
      if (verb !== "koikoi" && verb !== "stop") continue;
      list.append(el("li", { "data-action": verb }, el("strong", { text: `${describe(o.action)}: ` }), value(o)));
    }
    const best = msg.options.length ? KK.parseAction(msg.options[0].action).verb : null;
    box.replaceChildren(
      el("p", { class: "advice-title", text: KK.t("The expert's advice:") }),
      list,
      best ? el("p", { text: best === "koikoi" ? KK.t("The expert would call koi-koi.") : KK.t("The expert would stop.") }) : null,
    );
  }

  /* A hint that could not be made while the dialog waits for one. */
  function adviceFailed(message) {
    if (!asking) return false;
    asking = false;
    const box = adviceBox();
    box.replaceChildren(el("p", { text: KK.t("No advice: {error}", { error: message }) }));
    document.getElementById("ask-ai-btn").disabled = false;
    return true;
  }

  function adviceOpen() {
    const dialog = document.getElementById("koikoi-dialog");
    return !!(dialog && dialog.open);
  }

  // ---------------------------------------------------------------- settings

  function settingsDialog() {
    const dialog = document.getElementById("settings-dialog");
    for (const radio of dialog.querySelectorAll('input[name="pace"]')) radio.checked = radio.value === pace();
    document.getElementById("settings-sound").checked = KKSound.enabled();
    document.getElementById("settings-badges").checked = badges();
    if (!dialog.open) dialog.showModal();
  }

  /* Wire the page's controls; `requestHint` asks the server for the expert's values
     (app.js: the same request as H on the table). */
  function setup({ requestHint }) {
    askHint = requestHint;
    const button = document.getElementById("ask-ai-btn");
    if (button) button.addEventListener("click", ask);
    const dialog = document.getElementById("koikoi-dialog");
    if (dialog) {
      dialog.addEventListener("keydown", (e) => {
        if ((e.key === "a" || e.key === "A") && !e.ctrlKey && !e.metaKey && !e.altKey) {
          e.preventDefault();
          ask();
        }
      });
    }
    const open = document.getElementById("settings-btn");
    if (open) open.addEventListener("click", settingsDialog);
    const settings = document.getElementById("settings-dialog");
    if (!settings) return;
    for (const radio of settings.querySelectorAll('input[name="pace"]')) {
      radio.addEventListener("change", () => { if (radio.checked) setPace(radio.value); });
    }
    document.getElementById("settings-sound").addEventListener("change", (e) => KKSound.setEnabled(e.target.checked));
    document.getElementById("settings-badges").addEventListener("change", (e) => setBadges(e.target.checked));
  }

  return {
    PACES, pace, setPace, stepMs, badges, setBadges,
    moment, show, raise, madeYaku,
    resetAdvice, showAdvice, adviceFailed, adviceOpen,
    setup,
  };
})();
