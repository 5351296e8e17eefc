"""``koikoi bench``: throughput of the engine and the kernel, latency of an agent.

* ``koikoi bench engine`` — random play through the engine's public step API
  (see :mod:`koikoi.lab.bench`); rounds/s is the median of ``--repeat`` runs.
* ``koikoi bench kernel`` — random rounds in the compiled kernel
  (:func:`koikoi.kernel.benchmark`).
* ``koikoi bench agent SPEC`` — decision latency of an agent (mean, p50, p90,
  p99, max) over real decisions against an opponent
  (:func:`koikoi.lab.arena.decision_latency`).
* ``koikoi bench human [PATH...]`` — human agreement: how often agents make the
  recorded (human) move, by decision kind (:mod:`koikoi.lab.human`).
* ``koikoi bench env`` — environment steps/s of the batched simulator
  (:mod:`koikoi.envs.vector`) against the per-step Python interfaces.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from koikoi.cli.common import (
    CommandError,
    add_command,
    add_json_option,
    add_rules_option,
    add_seed_option,
)

__all__ = ["engine_command_line", "register", "run"]

KERNEL_MISSING = (
    "the compiled kernel is not available: numba and numpy must import (pip install numba numpy)"
)
JSON_HELP = "print the result as JSON"


def _add_run_options(parser: argparse.ArgumentParser) -> None:
    """``--seconds``, ``--rules``, ``--repeat`` and ``--seed`` of a timed, repeated run."""
    parser.add_argument(
        "--seconds", type=float, default=1.0, metavar="T", help="length of each run (default 1)"
    )
    add_rules_option(parser, help="rule set")
    parser.add_argument(
        "--repeat", type=int, default=5, metavar="R", help="runs; the median is reported"
    )
    add_seed_option(parser)


def register(subparsers: Any) -> None:
    """Add ``koikoi bench engine``, ``koikoi bench kernel`` and ``koikoi bench agent``."""
    parser = add_command(
        subparsers,
        "bench",
        run=run,
        help="measure the engine's and the kernel's throughput, or an agent's latency",
        description=(
            "Measure random-play throughput of the engine or the kernel, or the decision "
            "latency of an agent (single process)."
        ),
    )
    parser.set_defaults(bench_command=None, _bench_parser=parser)
    sub = parser.add_subparsers(dest="bench_command", metavar="SUBCOMMAND")
    engine = sub.add_parser(
        "engine",
        help="random matches through the engine's step API",
        description=(
            "Play random matches through the engine's public step API (Match with "
            "events=False, legal_ids, apply_id) and report rounds/s (median of --repeat "
            "runs) and steps/s. --checked applies actions with the checked apply and "
            "keeps the event log."
        ),
    )
    _add_run_options(engine)
    engine.add_argument(
        "--checked", action="store_true", help="checked apply with the event log on"
    )
    add_json_option(engine, help=JSON_HELP)
    kernel = sub.add_parser(
        "kernel",
        help="random rounds in the compiled playout kernel",
        description="Random rounds per second in the compiled playout kernel, one core.",
    )
    kernel.add_argument(
        "--seconds", type=float, default=2.0, metavar="T", help="time to measure (default 2)"
    )
    add_rules_option(kernel, help="rule set")
    add_seed_option(kernel)
    kernel.add_argument(
        "--policy",
        default="random",
        help="rollout policy: random, greedy or yaku (default random)",
    )
    add_json_option(kernel, help=JSON_HELP)
    agent = sub.add_parser(
        "agent",
        help="decision latency of an agent (mean, p50, p90, p99, max)",
        description=(
            "Time an agent's decisions (those with two or more legal actions) in matches "
            "against another agent, one process. For an agent with a time budget "
            "(mcts:time=T) it reports p99 / T. One warm-up decision, which loads the "
            "compiled kernel, is reported apart."
        ),
    )
    agent.add_argument("spec", metavar="SPEC", help="agent spec, e.g. mcts:time=0.5")
    agent.add_argument(
        "--against", default="heuristic", metavar="SPEC", help="opponent (default heuristic)"
    )
    add_rules_option(agent, help="rule set")
    agent.add_argument(
        "--decisions", type=int, default=200, metavar="N", help="decisions to time (default 200)"
    )
    add_seed_option(agent)
    add_json_option(agent, help=JSON_HELP)
    _register_human(sub)
    _register_env(sub)


def run(args: argparse.Namespace) -> int:
    """Run ``koikoi bench SUBCOMMAND``."""
    if args.bench_command == "engine":
        return _engine(args)
    if args.bench_command == "kernel":
        return _kernel(args)
    if args.bench_command == "agent":
        return _agent(args)
    if args.bench_command == "human":
        return _human(args)
    if args.bench_command == "env":
        return _env(args)
    args._bench_parser.print_help()
    return 2


def engine_command_line(args: argparse.Namespace) -> str:
    """The complete command line that reproduces a ``bench engine`` run."""
    parts = [
        "koikoi bench engine",
        f"--seconds {args.seconds:g}",
        f"--rules {args.rules}",
        f"--repeat {args.repeat}",
        f"--seed {args.seed}",
    ]
    if args.checked:
        parts.append("--checked")
    return " ".join(parts)


def _engine(args: argparse.Namespace) -> int:
    from koikoi.game.rules import load_rules
    from koikoi.lab.bench import bench_engine

    rules = load_rules(args.rules)
    result = bench_engine(
        seconds=args.seconds,
        rules=rules,
        repeat=args.repeat,
        checked=args.checked,
        seed=args.seed,
    )
    command = engine_command_line(args)
    data = result.to_dict()
    if _printed_json(args, data, command):
        return 0
    mode = "checked apply, events on" if args.checked else "apply_id, events off"
    runs = data["runs"]
    print(
        f"engine random play, rules {result.rules}, {mode}, "
        f"{data['implementation']} {data['python']} on {data['machine']}"
    )
    print(
        f"rounds/s: {result.rounds_per_s:,.0f} (median of {len(runs)} x {args.seconds:g} s; "
        f"runs: {', '.join(f'{r.rounds_per_s:,.0f}' for r in result.runs)})"
    )
    print(f"steps/s:  {result.steps_per_s:,.0f}")
    busy = result.rounds_per_cpu_s > 1.15 * result.rounds_per_s
    note = " (the machine was busy: other processes took part of the time)" if busy else ""
    print(f"rounds per CPU second: {result.rounds_per_cpu_s:,.0f}{note}")
    total_rounds = sum(r["rounds"] for r in runs)
    total_steps = sum(r["steps"] for r in runs)
    print(
        f"played: {sum(r['matches'] for r in runs)} matches, {total_rounds} rounds, "
        f"{total_steps} steps"
    )
    return 0


def _printed_json(args: argparse.Namespace, result: dict[str, Any], command: str) -> bool:
    """With ``--json`` print the result with its command and say so; else print the command."""
    if args.json:
        print(json.dumps({**result, "command": command}))
        return True
    print(f"command: {command}")
    return False


def _kernel(args: argparse.Namespace) -> int:
    import importlib

    from koikoi.game.errors import InvalidInputError
    from koikoi.game.rules import load_rules

    rules = load_rules(args.rules)
    if not args.seconds > 0:
        raise InvalidInputError(f"--seconds must be positive, not {args.seconds}")
    try:
        kernel = importlib.import_module("koikoi.kernel")
    except ImportError:
        raise CommandError(KERNEL_MISSING) from None
    available = getattr(kernel, "available", None)
    if not hasattr(kernel, "benchmark") or (callable(available) and not available()):
        raise CommandError(KERNEL_MISSING)
    result: dict[str, Any] = kernel.benchmark(
        seconds=args.seconds, rules=rules, seed=args.seed, policy=args.policy
    )
    command = (
        f"koikoi bench kernel --seconds {args.seconds:g} --rules {args.rules} "
        f"--seed {args.seed} --policy {args.policy}"
    )
    if _printed_json(args, result, command):
        return 0
    print(
        f"kernel random rounds, rules {result.get('rules', rules.name)}, policy "
        f"{result.get('policy', args.policy)}, backend {result.get('backend', '?')}"
    )
    print(f"rounds/s: {result['rounds_per_s']:,.0f}")
    if "rounds" in result and "seconds" in result:
        print(f"played: {result['rounds']} rounds in {result['seconds']:.2f} s")
    return 0


def _agent(args: argparse.Namespace) -> int:
    from koikoi.agents.base import make_agent
    from koikoi.game.rules import load_rules
    from koikoi.lab.arena import decision_latency

    rules = load_rules(args.rules)
    make_agent(args.spec)  # a bad spec fails here, before any match
    make_agent(args.against)
    result = decision_latency(
        args.spec, rules, decisions=args.decisions, against=args.against, seed=args.seed
    )
    command = (
        f"koikoi bench agent {args.spec} --against {args.against} --rules {args.rules} "
        f"--decisions {args.decisions} --seed {args.seed}"
    )
    if _printed_json(args, result, command):
        return 0
    print(
        f"{result['decisions']} decisions of {result['spec']} against {result['against']}, "
        f"rules {result['rules']}, {result['matches']} matches"
    )
    print(
        f"latency ms: mean {result['mean_ms']:.1f}, p50 {result['p50_ms']:.1f}, "
        f"p90 {result['p90_ms']:.1f}, p99 {result['p99_ms']:.1f}, max {result['max_ms']:.1f}"
    )
    print(f"first decision (warm-up, loads the kernel): {result['first_ms']:.1f} ms")
    if "budget_ms" in result:
        over = 100 * (result["p99_over_budget"] - 1)
        print(
            f"budget {result['budget_ms']:.0f} ms: p99 is {result['p99_over_budget']:.3f} x "
            f"the budget ({over:+.1f}%)"
        )
    return 0


# ---------------------------------------------------------------- bench human


def _register_human(sub: Any) -> None:
    human = sub.add_parser(
        "human",
        help="human agreement: how often agents make the recorded moves, by decision kind",
        description=(
            "Put every recorded decision that had a choice (hand play, drawn-card choice, "
            "koi-koi decision) to each agent, as the view of the player who made it, and "
            "report how often the agent makes the recorded move: counts, rate, 95% Wilson "
            "interval, and the rate of a uniform random choice. PATHs are game files "
            "(koikoi records or Guan game files) or folders of them; without a PATH, the "
            "201 human games shipped with koikoi (koikoi.lab.datasets). Any agent spec "
            "can be measured, cmd: bots included."
        ),
    )
    human.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="game files, or folders of *.json game files (default: the shipped human games)",
    )
    human.add_argument(
        "--agent",
        action="append",
        dest="agents",
        metavar="SPEC",
        help="agent spec; repeat for several (default heuristic)",
    )
    human.add_argument(
        "--games", type=int, metavar="N", help="the first N games only (natural file order)"
    )
    human.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="W",
        help=(
            "processes to share the decisions among (default 1); the counts do not depend "
            "on it (each decision's random numbers come from the seed and the decision)"
        ),
    )
    add_seed_option(human)
    add_json_option(human, help=JSON_HELP)


def human_command_line(args: argparse.Namespace) -> str:
    """The complete command line that reproduces a ``bench human`` run."""
    parts = ["koikoi bench human", *args.paths]
    parts += [f"--agent {spec}" for spec in args.agents or ["heuristic"]]
    if args.games is not None:
        parts.append(f"--games {args.games}")
    parts.append(f"--seed {args.seed}")
    if args.workers != 1:
        parts.append(f"--workers {args.workers}")
    return " ".join(parts)


def check_games(games: int | None) -> int | None:
    """``--games``, checked: ``None`` (every game) or 1 or more.

    Raises:
        CommandError: a number below 1.
    """
    if games is not None and games < 1:
        raise CommandError(f"--games must be 1 or more, not {games}")
    return games


def _human(args: argparse.Namespace) -> int:
    from koikoi.agents.base import make_agent
    from koikoi.lab.datasets import game_name, human_games
    from koikoi.lab.human import KIND_NAMES, KINDS, agreement, decisions, load_games

    specs = args.agents or ["heuristic"]
    if args.workers < 1:
        raise CommandError(f"--workers must be 1 or more, not {args.workers}")
    for spec in specs:
        make_agent(spec)  # a bad spec fails here, before the games are read
    if args.paths:
        games = load_games(args.paths, limit=args.games)
    else:
        games = [(game_name(r), r) for r in human_games()[: check_games(args.games)]]
    found = [d for name, record in games for d in decisions(record, game=name)]
    results = [agreement(found, spec, seed=args.seed, workers=args.workers) for spec in specs]
    actions = sum(len(record.actions) for _, record in games)
    summary = {"games": len(games), "actions": actions, "agents": results}
    if _printed_json(args, summary, human_command_line(args)):
        return 0
    counts = results[0]["kinds"]
    by_kind = ", ".join(f"{KIND_NAMES[k]} {counts[k]['decisions']}" for k in KINDS)
    print(
        f"{len(games)} games, {actions} actions, {len(found)} decisions with a choice ({by_kind})"
    )
    for result in results:
        print()
        print(f"{result['agent']} ({result['seconds']:.1f} s)")
        print(f"  {'decision':<18} {'n':>6} {'agreed':>7} {'rate':>7}  {'95% CI':<16} chance")
        rows = [(KIND_NAMES[k], result["kinds"][k]) for k in KINDS]
        for label, t in [*rows, ("all", result["all"])]:
            if not t["decisions"]:
                print(f"  {label:<18} {0:>6}")
                continue
            ci = f"[{t['ci95'][0]:.1%}, {t['ci95'][1]:.1%}]"
            print(
                f"  {label:<18} {t['decisions']:>6} {t['agreed']:>7} {t['rate']:>7.1%}  "
                f"{ci:<16} {t['chance']:.1%}"
            )
    return 0


# ------------------------------------------------------------------ bench env


def _register_env(sub: Any) -> None:
    env = sub.add_parser(
        "env",
        help="environment steps/s: the batched simulator against the per-step Python APIs",
        description=(
            "Environment steps per second with observations and legal actions: the batched "
            "simulator (koikoi.envs.vector; random legal actions drawn in the kernel) with "
            "compact legal ids (round and whole-match episodes), with dense masks and with "
            "sequence observations (round and whole-match episodes), against the per-step "
            "Python interfaces "
            "(the engine with encoding.encode and action_mask at every step, and the "
            "PettingZoo and Gymnasium environments when they are installed). Median of "
            "--repeat runs; compilation excluded."
        ),
    )
    env.add_argument(
        "--n", type=int, default=1024, metavar="N", help="environments stepped together (1024)"
    )
    _add_run_options(env)
    env.add_argument(
        "--baselines",
        choices=("all", "none"),
        default="all",
        help="measure the per-step Python interfaces too (default all)",
    )
    add_json_option(env, help=JSON_HELP)


def env_command_line(args: argparse.Namespace) -> str:
    """The complete command line that reproduces a ``bench env`` run."""
    return (
        f"koikoi bench env --n {args.n} --seconds {args.seconds:g} --rules {args.rules} "
        f"--repeat {args.repeat} --seed {args.seed} --baselines {args.baselines}"
    )


def _median(values: list[float]) -> float:
    import statistics

    return float(statistics.median(values))


def _engine_env_run(rules: Any, seconds: float, seed: int) -> dict[str, float]:
    """Steps/s of one-round episodes through the engine, encoding each step's view.

    Every step builds the view of the player to act (``view_of_round``), its
    observation (``encoding.encode``) and mask (``encoding.action_mask``), and
    applies a uniformly random legal id with ``Round.apply_id`` (events off).
    """
    import random
    import time

    from koikoi.game.engine import Round
    from koikoi.game.views import view_of_round
    from koikoi.kernel.encoding import action_mask, encode

    rng = random.Random(seed)
    start = rules.game.start_points
    match_scores = (start, start)
    steps = 0
    t0 = time.perf_counter()
    c0 = time.process_time()
    elapsed = 0.0
    while elapsed < seconds:
        deck = list(range(48))
        rng.shuffle(deck)
        dealer = rng.randrange(2)
        hands = [0, 0]
        hands[dealer] = sum(1 << c for c in deck[0:8])
        hands[1 - dealer] = sum(1 << c for c in deck[8:16])
        rnd = Round(
            rules,
            hands=(hands[0], hands[1]),
            field=sum(1 << c for c in deck[16:24]),
            stock=deck[24:],
            dealer=dealer,
            events=False,
        )
        while not rnd.is_over:
            view = view_of_round(rnd, rnd.current, match_scores=match_scores)
            encode(view)
            action_mask(view)
            ids = view.legal_ids
            rnd.apply_id(ids[int(rng.random() * len(ids))])
            steps += 1
        elapsed = time.perf_counter() - t0
    cpu = time.process_time() - c0
    return {"steps_per_s": steps / elapsed, "steps_per_cpu_s": steps / cpu if cpu > 0 else 0.0}


def _pettingzoo_run(module: Any, rules: Any, seconds: float, seed: int) -> dict[str, float]:
    """Steps/s of the PettingZoo AEC environment (``env()``, one-round episodes)."""
    import random
    import time

    rng = random.Random(seed)
    e = module.env(rules=rules)
    steps = 0
    episode = 0
    t0 = time.perf_counter()
    c0 = time.process_time()
    elapsed = 0.0
    while elapsed < seconds:
        e.reset(seed=seed * 1_000_003 + episode)
        episode += 1
        for _agent in e.agent_iter():
            obs, _reward, terminated, truncated, _info = e.last()
            if terminated or truncated:
                e.step(None)
                continue
            legal = obs["action_mask"].nonzero()[0]
            e.step(int(legal[int(rng.random() * len(legal))]))
            steps += 1
        elapsed = time.perf_counter() - t0
    cpu = time.process_time() - c0
    return {"steps_per_s": steps / elapsed, "steps_per_cpu_s": steps / cpu if cpu > 0 else 0.0}


def _gymnasium_run(module: Any, rules: Any, seconds: float, seed: int) -> dict[str, float]:
    """Steps/s of the Gymnasium environment (one seat, a ``random`` opponent, one-round
    episodes): each step is one observation of the learner; the opponent's moves
    between them are played inside the step and not counted."""
    import random
    import time

    rng = random.Random(seed)
    e = module.KoiKoiEnv(rules, opponent="random")
    obs, _info = e.reset(seed=seed)
    steps = 0
    t0 = time.perf_counter()
    c0 = time.process_time()
    elapsed = 0.0
    while elapsed < seconds:
        legal = obs["action_mask"].nonzero()[0]
        obs, _reward, terminated, truncated, _info = e.step(
            int(legal[int(rng.random() * len(legal))])
        )
        steps += 1
        if terminated or truncated:
            obs, _info = e.reset()
        elapsed = time.perf_counter() - t0
    cpu = time.process_time() - c0
    return {"steps_per_s": steps / elapsed, "steps_per_cpu_s": steps / cpu if cpu > 0 else 0.0}


def _env_module(name: str, attribute: str) -> Any:
    """``koikoi.envs.NAME`` when it (and its library) can be imported and has
    ``attribute``, else None."""
    import importlib

    try:
        module = importlib.import_module(f"koikoi.envs.{name}")
    except ImportError:
        return None
    return module if callable(getattr(module, attribute, None)) else None


def _env_row(name: str, actions: str, runs: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "interface": name,
        "actions": actions,
        "steps_per_s": _median([r["steps_per_s"] for r in runs]),
        "steps_per_cpu_s": _median([r["steps_per_cpu_s"] for r in runs]),
        "runs": [round(r["steps_per_s"]) for r in runs],
    }


def _env(args: argparse.Namespace) -> int:
    import functools
    import os
    from collections.abc import Callable

    from koikoi.game.errors import InvalidInputError
    from koikoi.game.rules import load_rules

    if args.n < 1:
        raise InvalidInputError(f"--n must be 1 or more, not {args.n}")
    if not args.seconds > 0:
        raise InvalidInputError(f"--seconds must be positive, not {args.seconds}")
    if args.repeat < 1:
        raise InvalidInputError(f"--repeat must be 1 or more, not {args.repeat}")
    rules = load_rules(args.rules)
    try:
        from koikoi.envs import vector
    except ImportError:
        raise CommandError(KERNEL_MISSING) from None
    if not vector.available():
        raise CommandError(KERNEL_MISSING)
    variants = (
        (False, "round", "VectorEnv, legal ids"),
        (False, "match", "VectorEnv, match episodes"),
        (True, "round", "VectorEnv, dense masks"),
    )
    measures: list[tuple[str, str, Callable[[int], dict[str, Any]]]] = [
        (
            name,
            "random, drawn in the kernel",
            functools.partial(
                vector.benchmark, args.seconds, rules, n=args.n, dense_mask=dense, episode=episode
            ),
        )
        for dense, episode, name in variants
    ]
    measures += [
        (
            name,
            "random, drawn in the kernel",
            functools.partial(
                vector.benchmark, args.seconds, rules, n=args.n, episode=episode, sequence=True
            ),
        )
        for episode, name in (
            ("round", "VectorEnv, legal ids + sequences"),
            ("match", "VectorEnv, match episodes + sequences"),
        )
    ]
    if args.baselines == "all":
        measures.append(
            (
                "engine + encode + action_mask",
                "random.Random",
                functools.partial(_engine_env_run, rules, args.seconds),
            )
        )
        module = _env_module("pettingzoo", "env")
        if module is not None:
            run = functools.partial(_pettingzoo_run, module, rules, args.seconds)
            measures.append(("PettingZoo AEC env()", "random.Random", run))
        module = _env_module("gymnasium", "KoiKoiEnv")
        if module is not None:
            run = functools.partial(_gymnasium_run, module, rules, args.seconds)
            measures.append(("Gymnasium KoiKoiEnv", "random.Random, random opponent", run))
    # Interleaved (every interface once per repeat), so that a change in the
    # machine's load touches all of them alike.
    runs: list[list[dict[str, Any]]] = [[] for _ in measures]
    for k in range(args.repeat):
        for j, (_, _, measure) in enumerate(measures):
            runs[j].append(measure(args.seed + k))
    rows = [
        _env_row(name, actions, found)
        for (name, actions, _), found in zip(measures, runs, strict=True)
    ]
    load = list(os.getloadavg()) if hasattr(os, "getloadavg") else []
    result = {
        "rules": rules.name,
        "n": args.n,
        "seconds": args.seconds,
        "repeat": args.repeat,
        "cpus": os.cpu_count(),
        "load_average": load,
        "rows": rows,
    }
    if _printed_json(args, result, env_command_line(args)):
        return 0
    print(
        f"environment steps/s with observations (median of {args.repeat} x {args.seconds:g} s), "
        f"rules {rules.name}, {args.n} environments in the batched simulator"
    )
    base = rows[0]["steps_per_s"]
    width = max(32, *(len(row["interface"]) for row in rows))
    print(f"  {'interface':<{width}} {'steps/s':>12} {'per CPU s':>12} {'ratio':>8}  actions")
    for row in rows:
        ratio = base / row["steps_per_s"] if row["steps_per_s"] else float("inf")
        print(
            f"  {row['interface']:<{width}} {row['steps_per_s']:>12,.0f} "
            f"{row['steps_per_cpu_s']:>12,.0f} {ratio:>8,.1f}  {row['actions']}"
        )
    print("  ratio: the first row's steps/s over this row's")
    if load:
        print(
            f"load average {load[0]:.2f}, {load[1]:.2f}, {load[2]:.2f} on {os.cpu_count()} cpus "
            "(other processes slow the wall-clock figures)"
        )
    return 0
