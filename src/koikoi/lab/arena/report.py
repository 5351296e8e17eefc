"""Reporting an arena: the JSON-ready summary, the SPRT verdict, the text table, the plot."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from koikoi.game.errors import InvalidInputError
from koikoi.lab.arena.config import ArenaConfig
from koikoi.lab.arena.results import PairResult
from koikoi.lab.arena.stats import elo_interval, gsprt_llr, ratio_ci, score_interval, wilson


def sprt_status(config: ArenaConfig, pairs: Sequence[PairResult]) -> dict[str, Any]:
    """The SPRT's state after ``pairs``: its bounds, the LLR and the verdict so far.

    Returns:
        ``elo0``, ``elo1``, ``alpha``, ``beta``, ``llr``, ``lower``, ``upper``,
        ``units`` and ``result``: ``"H1"``, ``"H0"`` or ``"inconclusive"``.

    Raises:
        InvalidInputError: the config has no ``sprt`` bounds.
    """
    if config.sprt is None:
        raise InvalidInputError("no SPRT without sprt=(elo0, elo1) in the arena config")
    elo0, elo1 = config.sprt
    lower = math.log(config.beta / (1 - config.alpha))
    upper = math.log((1 - config.beta) / config.alpha)
    llr = gsprt_llr([p.score for p in pairs], elo0, elo1)
    if llr >= upper:
        verdict = "H1"
    elif llr <= lower:
        verdict = "H0"
    else:
        verdict = "inconclusive"
    return {
        "elo0": elo0,
        "elo1": elo1,
        "alpha": config.alpha,
        "beta": config.beta,
        "llr": round(llr, 4),
        "lower": round(lower, 4),
        "upper": round(upper, 4),
        "result": verdict,
        "units": len(pairs),
    }


def _interval(mean: float, lo: float, hi: float, digits: int = 4) -> dict[str, Any]:
    """``{"mean", "ci95"}``; an unbounded value (an infinity) is ``None`` (JSON null)."""

    def value(x: float) -> float | None:
        return round(x, digits) if math.isfinite(x) else None

    return {"mean": value(mean), "ci95": [value(lo), value(hi)]}


def summarize(config: ArenaConfig, pairs: Sequence[PairResult]) -> dict[str, Any]:
    """The statistics of an arena as JSON-ready data (see the module docstring)."""
    matches = [m for p in pairs for m in p.matches]
    n = len(matches)
    agents: list[dict[str, Any]] = []
    pair_scores = [p.score for p in pairs]
    score_of_a = (0.5, 0.0, 1.0)
    for i in (0, 1):
        sign = 1 if i == 0 else -1
        wins = sum(1 for m in matches if m.winner == i)
        draws = sum(1 for m in matches if m.winner is None)
        losses = n - wins - draws
        lo, hi = wilson(wins, n)
        scores_i = [s if i == 0 else 1 - s for s in pair_scores]
        s_mean = (wins + draws / 2) / n if n else 0.5
        s_lo, s_hi = score_interval(wins + draws / 2, n, scores_i)
        rounds = [float(p.rounds) for p in pairs]
        pts = [float(sum(m.points[i] for m in p.matches)) for p in pairs]
        nets = [sign * p.net for p in pairs]
        ppr = ratio_ci(pts, rounds)
        net = ratio_ci(nets, rounds)
        calls = sum(m.koikoi_calls[i] for m in matches)
        succ = sum(m.koikoi_successes[i] for m in matches)
        total_rounds = sum(m.rounds for m in matches)
        yaku: dict[str, int] = {}
        for m in matches:
            for name, count in m.yaku[i].items():
                yaku[name] = yaku.get(name, 0) + count
        decisions = sum(m.decisions[i] for m in matches)
        think = sum(m.think[i] for m in matches)
        forfeits = [m.forfeit for m in matches if m.forfeit_by == i and m.forfeit]
        if i == 0:
            score_of_a = (s_mean, s_lo, s_hi)
        agents.append(
            {
                "label": "AB"[i],
                "spec": config.agents[i],
                "matches": n,
                "match_wins": wins,
                "match_draws": draws,
                "match_losses": losses,
                "match_win_rate": _interval(wins / n if n else 0.0, lo, hi),
                "score": _interval(s_mean, s_lo, s_hi),
                "rounds": total_rounds,
                "round_wins": sum(m.round_wins[i] for m in matches),
                "points_per_round": _interval(*ppr),
                "net_per_round": _interval(*net),
                "koikoi": {
                    "calls": calls,
                    "successes": succ,
                    "success_rate": round(succ / calls, 4) if calls else None,
                },
                "yaku": dict(sorted(yaku.items(), key=lambda kv: (-kv[1], kv[0]))),
                "yaku_per_round": {
                    k: round(v / total_rounds, 4) if total_rounds else 0.0
                    for k, v in sorted(yaku.items(), key=lambda kv: (-kv[1], kv[0]))
                },
                "forfeits": len(forfeits),
                "forfeit_reasons": forfeits[:10],
                "decisions": decisions,
                "think_ms_mean": round(1000 * think / decisions, 3) if decisions else 0.0,
                "think_ms_max": round(
                    1000 * max((m.think_max[i] for m in matches), default=0.0), 3
                ),
            }
        )
    elo = _interval(*elo_interval(*score_of_a), 1)
    return {
        "agents": agents,
        "elo": elo,
        "rules": config.rules.name,
        "matches": n,
        "pairs": len(pairs),
        "duplicate": config.duplicate,
        "common_rng": config.common_rng,
        "seed": config.seed,
        "rounds": sum(m.rounds for m in matches),
    }


def format_report(summary: dict[str, Any]) -> str:
    """The summary as a human-readable table."""
    a, b = summary["agents"]
    width = max(22, len(a["spec"]) + 2, len(b["spec"]) + 2)

    def iv(d: dict[str, Any], pct: bool = False, signed: bool = False) -> str:
        m, (lo, hi) = d["mean"], d["ci95"]
        if pct:
            return f"{m:.1%} [{lo:.1%}, {hi:.1%}]"
        fmt = "{:+.2f}" if signed else "{:.2f}"
        return f"{fmt.format(m)} [{fmt.format(lo)}, {fmt.format(hi)}]"

    def koi(x: dict[str, Any]) -> str:
        k = x["koikoi"]
        if not k["calls"]:
            return "0"
        return f"{k['calls']} ({k['success_rate']:.1%} won)"

    def top_yaku(x: dict[str, Any]) -> str:
        items = list(x["yaku_per_round"].items())[:6]
        return ", ".join(f"{k} {v:.1%}" for k, v in items) or "-"

    mode = "duplicate pairs" if summary["duplicate"] else "matches"
    if summary.get("common_rng"):
        mode += ", common random numbers"
    lines = [
        f"Arena: A = {a['spec']}, B = {b['spec']}; rules {summary['rules']}; "
        f"{summary['matches']} matches ({summary['pairs']} {mode}), {summary['rounds']} rounds, "
        f"seed {summary['seed']}",
        f"{'':24}{'A':<{width}}{'B'}",
    ]
    rows = [
        (
            "match W/D/L",
            f"{a['match_wins']}/{a['match_draws']}/{a['match_losses']}",
            f"{b['match_wins']}/{b['match_draws']}/{b['match_losses']}",
        ),
        ("match win rate", iv(a["match_win_rate"], True), iv(b["match_win_rate"], True)),
        ("match score", iv(a["score"], True), iv(b["score"], True)),
        ("points per round", iv(a["points_per_round"]), iv(b["points_per_round"])),
        (
            "net points per round",
            iv(a["net_per_round"], signed=True),
            iv(b["net_per_round"], signed=True),
        ),
        ("round wins", str(a["round_wins"]), str(b["round_wins"])),
        ("koi-koi calls", koi(a), koi(b)),
        ("think ms (mean/max)", _think(a), _think(b)),
    ]
    if a["forfeits"] or b["forfeits"]:
        rows.append(("forfeits", str(a["forfeits"]), str(b["forfeits"])))
    for label, x, y in rows:
        lines.append(f"{label:<24}{x:<{width}}{y:<{width}}".rstrip())
    for x in (a, b):
        lines.append(f"yaku per round ({x['label']}): {top_yaku(x)}")
    elo = summary["elo"]
    lo, hi = elo["ci95"]
    lines.append(
        f"Elo difference A - B: {_elo(elo['mean'], a['score']['mean'] - 0.5)} "
        f"[{_elo(lo, -1)}, {_elo(hi, 1)}]"
    )
    for x in (a, b):
        for reason in x["forfeit_reasons"][:3]:
            lines.append(f"forfeit ({x['label']}): {reason}")
    sprt = summary.get("sprt")
    if sprt is not None:
        verdict = {
            "H1": f"H1 accepted (Elo >= {sprt['elo1']:g})",
            "H0": f"H0 accepted (Elo <= {sprt['elo0']:g})",
            "inconclusive": "inconclusive",
        }[sprt["result"]]
        lines.append(
            f"SPRT [{sprt['elo0']:g}, {sprt['elo1']:g}]: LLR {sprt['llr']:.2f} "
            f"({sprt['lower']:.2f}, {sprt['upper']:.2f}) after {sprt['units']} units: {verdict}"
        )
    return "\n".join(lines)


def _elo(value: float | None, side: float) -> str:
    """An Elo value of the JSON summary as text: ``None`` is unbounded on ``side``."""
    if value is None:
        return "+∞" if side > 0 else "−∞"
    return f"{value:+.0f}"


def _think(x: dict[str, Any]) -> str:
    return f"{x['think_ms_mean']:.2f} / {x['think_ms_max']:.1f}"


def plot_running_mean(pairs: Sequence[PairResult], path: str | Path, *, title: str = "") -> Path:
    """Save a PNG of agent A's running net points per round with its 95% band.

    Needs matplotlib (``pip install 'koikoi[plot]'``); imported here only.

    Raises:
        InvalidInputError: without matplotlib, or when the file cannot be written.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise InvalidInputError("--plot needs matplotlib: pip install 'koikoi[plot]'") from None
    xs: list[int] = []
    means: list[float] = []
    los: list[float] = []
    his: list[float] = []
    nets: list[float] = []
    rounds: list[float] = []
    for i, p in enumerate(pairs, 1):
        nets.append(p.net)
        rounds.append(float(p.rounds))
        m, lo, hi = ratio_ci(nets, rounds)
        xs.append(i)
        means.append(m)
        los.append(lo)
        his.append(hi)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    ax.plot(xs, means, label="net points per round (A - B)")
    ax.fill_between(xs, los, his, alpha=0.25, label="95% confidence band")
    ax.axhline(0.0, color="grey", linewidth=0.8)
    ax.set_xlabel("deal pairs played")
    ax.set_ylabel("points per round")
    if title:
        ax.set_title(title)
    ax.legend(loc="best")
    fig.tight_layout()
    out = Path(path)
    try:
        fig.savefig(out, dpi=100)
    except OSError as exc:
        raise InvalidInputError(f"cannot write plot {str(out)!r}: {exc.strerror or exc}") from None
    finally:
        plt.close(fig)
    return out
