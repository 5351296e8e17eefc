/* Sound effects, synthesised with the Web Audio API: no sound files are downloaded.

   A yaku, a koi-koi call and a stop each have their own sound, for either player (the
   banners of moments.js show the same moments). On by default (as in the Koi-Koi
   apps players know), with a toggle in the page header (#sound-toggle) and in the
   Settings dialog, remembered in localStorage ("koikoi.sound": "on"/"off").
   Nothing is made and nothing sounds before the first user gesture (a click, a tap
   or a key): browsers allow audio only after one, and a page should not start
   making noise by itself. */
"use strict";

const KKSound = (() => {
  const KEY = "koikoi.sound";
  let ctx = null;
  let gestured = false;

  function enabled() {
    try {
      return localStorage.getItem(KEY) !== "off";
    } catch (_) {
      return true;
    }
  }

  function setEnabled(on) {
    try { localStorage.setItem(KEY, on ? "on" : "off"); } catch (_) { /* storage blocked */ }
    updateToggle();
    if (on) play("play");
  }

  function audio() {
    if (!gestured || !enabled()) return null;
    if (!ctx) {
      const Ctx = window.AudioContext || window.webkitAudioContext;
      if (!Ctx) return null;
      try {
        ctx = new Ctx();
      } catch (_) {
        return null;
      }
    }
    if (ctx.state === "suspended" && ctx.resume) void ctx.resume();
    return ctx;
  }

  /* One note: a wave from `freq` (sliding to `to`), starting `at` seconds from now,
     with a quick attack and an exponential fade over `dur` seconds. */
  function note(c, { freq, to, at = 0, dur = 0.15, type = "sine", gain = 0.12 }) {
    const t0 = c.currentTime + at;
    const osc = c.createOscillator();
    const amp = c.createGain();
    osc.type = type;
    osc.frequency.setValueAtTime(freq, t0);
    if (to) osc.frequency.exponentialRampToValueAtTime(to, t0 + dur);
    amp.gain.setValueAtTime(0.0001, t0);
    amp.gain.exponentialRampToValueAtTime(gain, t0 + 0.008);
    amp.gain.exponentialRampToValueAtTime(0.0001, t0 + dur);
    osc.connect(amp);
    amp.connect(c.destination);
    osc.start(t0);
    osc.stop(t0 + dur + 0.02);
  }

  /* A short filtered noise burst: a card sliding on the mat. */
  function swish(c, { at = 0, dur = 0.12, freq = 2400, gain = 0.08 }) {
    const t0 = c.currentTime + at;
    const length = Math.max(1, Math.floor(c.sampleRate * dur));
    const buffer = c.createBuffer(1, length, c.sampleRate);
    const data = buffer.getChannelData(0);
    for (let i = 0; i < length; i++) data[i] = (Math.random() * 2 - 1) * (1 - i / length);
    const src = c.createBufferSource();
    src.buffer = buffer;
    const filter = c.createBiquadFilter();
    filter.type = "bandpass";
    filter.frequency.setValueAtTime(freq, t0);
    const amp = c.createGain();
    amp.gain.setValueAtTime(gain, t0);
    src.connect(filter);
    filter.connect(amp);
    amp.connect(c.destination);
    src.start(t0);
  }

  const SOUNDS = {
    // A card laid on the mat: a soft, low knock.
    play: (c) => {
      note(c, { freq: 180, to: 90, dur: 0.09, type: "triangle", gain: 0.2 });
      swish(c, { dur: 0.05, freq: 1800, gain: 0.05 });
    },
    // A capture: the firm double slap of a hanafuda card onto its match.
    capture: (c) => {
      note(c, { freq: 260, to: 120, dur: 0.08, type: "triangle", gain: 0.22 });
      note(c, { freq: 330, to: 150, at: 0.07, dur: 0.1, type: "triangle", gain: 0.18 });
      swish(c, { at: 0.05, dur: 0.06, freq: 2200, gain: 0.05 });
    },
    // A card turned from the stock.
    draw: (c) => swish(c, { dur: 0.14, freq: 3200, gain: 0.07 }),
    // A yaku: a rising pentatonic arpeggio.
    yaku: (c) => {
      [523.25, 659.25, 783.99, 1046.5].forEach((f, i) => note(c, { freq: f, at: i * 0.08, dur: 0.28, gain: 0.09 }));
    },
    // Koi-koi: two bright calls, the second higher.
    koikoi: (c) => {
      note(c, { freq: 880, at: 0, dur: 0.16, type: "square", gain: 0.04 });
      note(c, { freq: 1174.66, at: 0.16, dur: 0.24, type: "square", gain: 0.04 });
    },
    // A stop (shōbu): two firm knocks and a low, settled fifth.
    stop: (c) => {
      note(c, { freq: 220, to: 110, dur: 0.1, type: "triangle", gain: 0.22 });
      note(c, { freq: 220, to: 110, at: 0.13, dur: 0.1, type: "triangle", gain: 0.22 });
      note(c, { freq: 392, at: 0.26, dur: 0.5, gain: 0.07 });
      note(c, { freq: 587.33, at: 0.26, dur: 0.5, gain: 0.05 });
    },
    // The end of a round: a falling cadence.
    round: (c) => {
      [783.99, 659.25, 523.25].forEach((f, i) => note(c, { freq: f, at: i * 0.14, dur: 0.4, gain: 0.08 }));
    },
  };

  /* Make a sound; each one made is announced as a "koikoi:sound" event on the
     document (detail: {name}), for whoever wants to know (the tests). */
  function play(name) {
    const c = audio();
    const sound = SOUNDS[name];
    if (!c || !sound) return;
    try {
      sound(c);
    } catch (_) { return; /* a sound is never worth an error */ }
    document.dispatchEvent(new CustomEvent("koikoi:sound", { detail: { name } }));
  }

  /* The sound of one game event (a state message's event, as docs/protocol.md
     describes). */
  function event(ev) {
    const captured = ev.cards && ev.cards.length;
    if (ev.type === "play") play(captured ? "capture" : "play");
    else if (ev.type === "draw") play(captured ? "capture" : "draw");
    else if (ev.type === "take") play("capture");
    else if (ev.type === "yaku") play("yaku");
    else if (ev.type === "koikoi") play("koikoi");
    else if (ev.type === "stop") play("stop");
    else if (ev.type === "round_over") play("round");
  }

  function updateToggle() {
    const button = document.getElementById("sound-toggle");
    if (!button) return;
    const on = enabled();
    button.setAttribute("aria-pressed", on ? "true" : "false");
    button.textContent = on ? KK.t("Sound: on") : KK.t("Sound: off");
    button.title = on ? KK.t("Turn the sound effects off") : KK.t("Turn the sound effects on");
  }

  function setup() {
    const gesture = () => { gestured = true; };
    for (const type of ["pointerdown", "keydown", "touchstart"]) {
      document.addEventListener(type, gesture, { capture: true, passive: true });
    }
    const button = document.getElementById("sound-toggle");
    if (button) {
      button.hidden = false;
      button.addEventListener("click", () => setEnabled(!enabled()));
    }
    updateToggle();
  }

  document.addEventListener("DOMContentLoaded", setup);

  return { enabled, setEnabled, play, event, updateToggle, get started() { return ctx !== null; } };
})();
