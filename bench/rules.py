"""Rules-engine speed: our scorekeeper against PyPI's lasvegas 0.2.0, on the same work.

Usage: .venv/bin/python bench/rules.py [--seconds S] [--players N] [--skip-lasvegas]

Why: the table companion replays and simulates games on a Raspberry Pi, so we want to know
whether our pure-Python engine is in the same league as an existing one. lasvegas pins
numpy < 2, which our main venv cannot have, so it lives in its own venv (.venv-bench, made on
demand) and is measured by bench/lasvegas_worker.py in a subprocess on the same core.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import random
import subprocess
import sys
import time
import venv
from collections.abc import Callable
from pathlib import Path
from typing import Any

from scorekeeper.payout import pay_casino
from scorekeeper.simulate import play_random_game

REPO = Path(__file__).resolve().parent.parent
BENCH_VENV = REPO / ".venv-bench"
WORKER = Path(__file__).resolve().parent / "lasvegas_worker.py"
LASVEGAS = "lasvegas==0.2.0"
N_CASINOS = 1000
SEED = 12345

EXTRA_GAMES: list[tuple[str, str, int, dict[str, Any] | None]] = [
    ("classic 2p", "classic", 2, None),
    ("classic 3p", "classic", 3, None),
    ("classic 4p", "classic", 4, None),
    ("classic 5p", "classic", 5, None),
    ("classic neutral 3p", "classic", 3, {"neutral_dice": True}),
    ("custom skip A 4p", "custom", 4, {"skip_rule": "A"}),
    ("royale 2p", "royale", 2, None),
    ("royale 4p", "royale", 4, None),
]
"""Every edition we ship, timed for our engine only (lasvegas plays classic rules only)."""


def pin_to_one_cpu() -> int | None:
    """Pin this process to its first allowed core: steadier timings, and the worker uses it too."""
    if not hasattr(os, "sched_setaffinity"):
        return None
    cpu = min(os.sched_getaffinity(0))
    try:
        os.sched_setaffinity(0, {cpu})
    except OSError:
        return None
    return cpu


def cpu_model() -> str:
    """CPU name from /proc/cpuinfo (x86 'model name', Pi 'Model'), for comparing runs."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        text = ""
    found: dict[str, str] = {}
    for line in text.splitlines():
        key, _, value = line.partition(":")
        found.setdefault(key.strip().lower(), value.strip())
    for key in ("model name", "model", "hardware", "cpu model"):
        if found.get(key):
            return found[key]
    return platform.processor() or platform.machine() or "unknown"


def rate(batch: Callable[[], int], seconds: float, warmup: float) -> tuple[float, int]:
    """Units per second of `batch` (returns units done) over ~`seconds`, after a warm-up.

    The worker has the same loop, so both engines pay the same timing overhead.
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


def make_casinos(n: int, seed: int) -> list[dict[str, list[int]]]:
    """Varied random casinos (1-3 notes, 0-5 players with 0-8 dice) so no one case dominates.

    Counts stay <= 8 because lasvegas's get_winners has a lookup sized by the max dice.
    """
    rng = random.Random(seed)
    return [
        {
            "notes": [rng.randint(1, 9) * 10_000 for _ in range(rng.randint(1, 3))],
            "dice": [rng.randint(0, 8) for _ in range(rng.randint(0, 5))],
        }
        for _ in range(n)
    ]


def ours_games(
    edition: str, players: int, options: dict[str, Any] | None, seconds: float, warmup: float
) -> tuple[float, float]:
    """Whole random games per second (a new seed each game) and mean money paid per game."""
    seeds = itertools.count(SEED)
    money = played = 0  # over warm-up and timed games alike

    def one() -> int:
        nonlocal money, played
        state = play_random_game(edition, players, next(seeds), options)
        money += sum(state.money(p.name) for p in state.players)
        played += 1
        return 1

    per_s, _ = rate(one, seconds, warmup)
    return per_s, money / played


def ours_payouts(
    casinos: list[dict[str, list[int]]], seconds: float, warmup: float
) -> tuple[float, list[list[int]]]:
    """Payouts per second over the shared casinos, plus each casino's result per player."""
    jobs = [
        (i % 6 + 1, c["notes"], {f"p{j}": d for j, d in enumerate(c["dice"])})
        for i, c in enumerate(casinos)
    ]
    results = []
    for casino, notes, weights in jobs:
        paid = [0] * 5
        for name, amount in pay_casino(casino, notes, weights).payouts:
            paid[int(name[1:])] += amount
        results.append(paid)

    def one_pass() -> int:
        for casino, notes, weights in jobs:
            pay_casino(casino, notes, weights)
        return len(jobs)

    per_s, _ = rate(one_pass, seconds, warmup)
    return per_s, results


def bench_python() -> tuple[Path | None, str]:
    """The bench venv's python with lasvegas installed, creating it if needed; else why not."""
    py = BENCH_VENV / "bin" / "python"
    check = [str(py), "-c", "import importlib.metadata as m; print(m.version('lasvegas'))"]

    def has_lasvegas() -> bool:
        done = subprocess.run(check, capture_output=True, text=True, check=False)
        return done.returncode == 0 and done.stdout.strip() == LASVEGAS.split("==")[1]

    if py.exists() and has_lasvegas():
        return py, f"using {BENCH_VENV.name}"
    if not py.exists():
        print(f"creating {BENCH_VENV} for {LASVEGAS} (needs numpy < 2) ...", flush=True)
        try:
            venv.create(BENCH_VENV, with_pip=True, clear=True)
        except (OSError, subprocess.CalledProcessError) as exc:
            return None, f"could not create {BENCH_VENV}: {exc}"
    print(f"installing {LASVEGAS} into {BENCH_VENV.name} ...", flush=True)
    pip = [str(py), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    done = subprocess.run(
        [*pip, "--timeout", "15", "--retries", "1", LASVEGAS],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0 or not has_lasvegas():
        tail = (done.stderr.strip().splitlines() or ["no error output"])[-1]
        return None, f"could not install {LASVEGAS} (no network?): {tail}"
    return py, f"installed into {BENCH_VENV.name}"


def run_worker(py: Path, job: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
    """Run the lasvegas measurement in its venv; its JSON result, or why there is none."""
    try:
        done = subprocess.run(
            [str(py), str(WORKER)],
            input=json.dumps(job),
            capture_output=True,
            text=True,
            check=False,
            timeout=120 + 10 * job["seconds"],
        )
    except subprocess.TimeoutExpired:
        return None, "lasvegas worker timed out"
    if done.returncode != 0:
        tail = " | ".join(done.stderr.strip().splitlines()[-3:])
        return None, f"lasvegas worker failed (exit {done.returncode}): {tail}"
    return json.loads(done.stdout), ""


def fmt(value: float | None) -> str:
    """Thousands separators, no false precision."""
    if value is None:
        return "-"
    return f"{value:,.0f}" if value >= 100 else f"{value:,.1f}"


def main(argv: list[str] | None = None) -> int:
    """Time both engines, print one table, exit 0 even when lasvegas is unavailable."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=3.0, help="timing per row (default 3)")
    ap.add_argument("--players", type=int, default=4, help="players in the compared game")
    ap.add_argument("--skip-lasvegas", action="store_true", help="time our engine only")
    args = ap.parse_args(argv)
    if not 2 <= args.players <= 5:
        ap.error("--players must be 2 to 5 (classic rules)")
    t_start = time.perf_counter()
    seconds, warmup = args.seconds, min(0.5, args.seconds / 5)

    cpu = pin_to_one_cpu()
    pinned = f"pinned to CPU {cpu}" if cpu is not None else "not pinned (no sched_setaffinity)"
    print(f"Python {platform.python_version()} ({platform.python_implementation()}), "
          f"{platform.system()} {platform.machine()}")
    print(f"CPU: {cpu_model()}; this process {pinned}")
    print(f"~{seconds:g} s per measurement after a {warmup:g} s warm-up", flush=True)

    casinos = make_casinos(N_CASINOS, SEED)
    p = args.players
    main_label = f"classic {p}p games/s (no neutral)"
    ours_rate, ours_money = ours_games("classic", p, None, seconds, warmup)
    ours_pay, ours_results = ours_payouts(casinos, seconds, warmup)
    extras: list[tuple[str, float]] = []
    for label, edition, n, options in EXTRA_GAMES:
        if (edition, n, options) == ("classic", p, None):
            extras.append((f"{label} games/s (same run as above)", ours_rate))
        else:
            extras.append((f"{label} games/s", ours_games(edition, n, options, seconds, warmup)[0]))

    theirs: dict[str, Any] | None = None
    note = "skipped (--skip-lasvegas)"
    if not args.skip_lasvegas:
        py, note = bench_python()
        if py is not None:
            job = {"cpu": cpu, "players": p, "seconds": seconds, "warmup": warmup,
                   "seed": SEED, "casinos": casinos}
            theirs, why = run_worker(py, job)
            note = why or (f"{note}: lasvegas {theirs['lasvegas']}, numpy {theirs['numpy']}, "
                           f"Python {theirs['python']}, worker {theirs['pin']}")

    def get(key: str) -> float | None:
        return None if theirs is None else float(theirs[key])

    rows: list[tuple[str, float, float | None]] = [
        (main_label, ours_rate, get("games_per_s")),
        (f"casino payouts/s ({N_CASINOS} varied casinos)", ours_pay, get("payouts_per_s")),
        (f"  check: mean money paid per {p}p game", ours_money, get("mean_money")),
        *((label, value, None) for label, value in extras),
    ]
    width = max(len(r[0]) for r in rows)
    print()
    print(f"{'measurement':<{width}}  {'ours':>10}  {'lasvegas 0.2.0':>14}  {'ours/lv':>8}")
    print("-" * (width + 40))
    for label, mine, other in rows:
        ratio = f"{mine / other:.2f}x" if other else "-"
        print(f"{label:<{width}}  {fmt(mine):>10}  {fmt(other):>14}  {ratio:>8}")
    print()
    print(f"lasvegas: {note}")
    if theirs is not None:
        same = sum(a == b for a, b in zip(ours_results, theirs["payout_results"], strict=True))
        print(f"payout cross-check: {same}/{N_CASINOS} casinos paid identically by both engines")
    print(f"total time {time.perf_counter() - t_start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
