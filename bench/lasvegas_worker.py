"""Measure PyPI's lasvegas 0.2.0 for bench/rules.py, inside its own venv.

lasvegas pins numpy < 2 while our main venv needs numpy 2, so this runs under .venv-bench as a
subprocess. It imports nothing from the project (that venv has no scorekeeper), reads one JSON
job on stdin and prints one JSON object on stdout; messages go to stderr.
"""

from __future__ import annotations

import json
import os
import platform
import random
import sys
import time
from collections.abc import Callable
from importlib.metadata import version
from typing import Any

import numpy as np
from lasvegas.act import random_play, random_roll
from lasvegas.core import GameEnv

BILLS_2012 = {
    10000: 6,
    20000: 8,
    30000: 8,
    40000: 6,
    50000: 6,
    60000: 5,
    70000: 5,
    80000: 5,
    90000: 5,
}
"""The 54 notes of the 2012 game; lasvegas's own default pool is smaller (RuleBook)."""


def pin(cpu: int | None) -> str:
    """Pin to the parent's core so both engines run on the same CPU; say what happened."""
    if cpu is None or not hasattr(os, "sched_setaffinity"):
        return "not pinned"
    try:
        os.sched_setaffinity(0, {cpu})
    except OSError as exc:
        return f"not pinned ({exc})"
    return f"pinned to CPU {cpu}"


def rate(batch: Callable[[], int], seconds: float, warmup: float) -> tuple[float, int]:
    """Units per second of `batch` (returns units done) over ~`seconds`, after a warm-up.

    Same loop as bench/rules.py so both engines pay the same timing overhead.
    """
    end = time.perf_counter() + warmup
    while time.perf_counter() < end:
        batch()
    done = 0
    start = time.perf_counter()
    end = start + seconds
    now = start
    while now < end:
        done += batch()
        now = time.perf_counter()
    return done / (now - start), done


def games(players: int, seconds: float, warmup: float, seed: int) -> dict[str, Any]:
    """Whole uniform-random games, classic rules without neutral dice, 2012 notes.

    lasvegas adds neutral ("extra") dice for 2-4 players by default; num_xtr_players=0
    turns that off so it plays the same game as our classic edition without the variant.
    """
    env = GameEnv(num_players=players, num_xtr_players=0, bills_pool=BILLS_2012)
    money = played = 0  # over warm-up and timed games alike

    def one() -> int:
        nonlocal money, played
        env.reset()
        while not env():
            if env.rolled is None:
                env.roll(random_roll(env))
            env.play(random_play(env))
        money += int(env.scores[:, 0].sum())
        played += 1
        return 1

    random.seed(seed)
    per_s, n = rate(one, seconds, warmup)
    return {"games_per_s": per_s, "games": n, "mean_money": money / played}


def payouts(casinos: list[dict[str, list[int]]], seconds: float, warmup: float) -> dict[str, Any]:
    """Casino payouts over the shared casino list, via get_winners + get_gains.

    lasvegas has no standalone payout function; these two are what its round end uses.
    Inputs are built before timing (dice as 5-colour arrays, notes sorted ascending, both
    required by lasvegas), just as the parent pre-builds ours.
    """
    env = GameEnv(num_players=5)  # 5 colours, max 8 dice each: fits every generated casino
    get_winners, get_gains = env.get_winners, env.get_gains
    jobs = []
    for c in casinos:
        dice = np.array(c["dice"] + [0] * (5 - len(c["dice"])))
        jobs.append(([dice], [sorted(c["notes"])]))
    results = [
        [int(v) for v in get_gains(get_winners(casinos_dice=d), casinos_bills=b)[:, 0]]
        for d, b in jobs
    ]

    def one_pass() -> int:
        for d, b in jobs:
            get_gains(get_winners(casinos_dice=d), casinos_bills=b)
        return len(jobs)

    per_s, n = rate(one_pass, seconds, warmup)
    return {"payouts_per_s": per_s, "payouts": n, "payout_results": results}


def main() -> int:
    """Run the job from stdin and print the results as JSON."""
    job = json.load(sys.stdin)
    out: dict[str, Any] = {
        "pin": pin(job.get("cpu")),
        "lasvegas": version("lasvegas"),
        "numpy": np.__version__,
        "python": platform.python_version(),
    }
    out |= games(job["players"], job["seconds"], job["warmup"], job["seed"])
    out |= payouts(job["casinos"], job["seconds"], job["warmup"])
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
