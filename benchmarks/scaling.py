"""How the benchmark runner scales: N identical F-PPO trials on 1 CPU, then on 2 (``--cpus``), through
``benchmarks/runner.py``; wall clock and efficiency ``t1 / (k * tk)`` (1.0: linear; issue 48's target: >= 0.85 on 2).

Each trial is the same size: F-PPO-L on the epidemic with ``fppo.py``'s smoke settings (rollouts of 256 steps, one
epoch, 2 evaluation episodes of 20 steps) for ``--timesteps`` steps, seeds 0 .. N-1; each measurement starts from an
empty results folder, and Ray's own start-up is not timed (the trials' imports in each worker are). Beside the times,
the records of every measurement are compared with the 1-CPU one's (they must be the same bytes).

The figure is only meaningful on an otherwise idle machine: the section gives the load average before and after, and a
busy neighbour on a core lowers the efficiency.

Usage::

    python benchmarks/scaling.py                       # 4 trials of 8192 steps on a local Ray of 1, then 2 CPUs
    python benchmarks/scaling.py --local               # the runner's process pool instead of Ray
    python benchmarks/scaling.py --trials 8 --cpus 1 2 4 --timesteps 4096
    python benchmarks/scaling.py --quick               # a smoke run (2 trials of 512 steps; RESULTS.md untouched)

Writes the section "Runner scaling" of ``<out>/RESULTS.md`` (``--out``, default: the repository's ``benchmarks/``).
"""

from __future__ import annotations

import functools
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import runner
from reproduction import Output, reproduce_parser

from sb3_fair.experiment.config import int_at_least

#: the trials' method and case study (one of ``fppo.py``'s)
PART, METHOD = "epidemic", "f_ppo_l"


def measure(cpus: int, trials: int, timesteps: int, local: bool, address: str | None = None) -> dict[str, Any]:
    """Run ``trials`` identical F-PPO trials on ``cpus`` CPUs from an empty results folder.

    :param cpus: the local Ray's CPUs (or the pool's processes with ``local``).
    :param trials: how many trials (seeds 0 .. trials - 1).
    :param timesteps: each trial's training steps.
    :param local: the runner's process pool instead of Ray.
    :param address: an existing Ray cluster instead of a local Ray (``cpus`` is then the cluster's).
    :returns: ``wall_s`` (the runner's call), ``trial_s`` (each trial's own wall seconds, from the sidecars) and
        ``records`` (each record's bytes, by file name).
    """
    import fppo

    results = Path(tempfile.mkdtemp(prefix=f"sb3_fair_scaling_{cpus}_"))
    try:
        specs = [fppo.trial_spec(PART, METHOD, seed, timesteps, 2, True) for seed in range(trials)]
        trial = functools.partial(fppo.run_trial, work=str(fppo.work_folder(results)), chunk=timesteps,
                                  deadline=float("inf"))
        started = False if local else runner.init_ray(address, cpus, trial)  # Ray's own start-up: not timed
        try:
            t0 = time.perf_counter()
            summary = runner.run(fppo.bench(True), specs, trial, results=results, address=address, local=local,
                                 jobs=cpus, label=fppo.run_name, quiet=True)
            wall = time.perf_counter() - t0
        finally:
            if started:
                import ray

                ray.shutdown()
        runner.check_summary(summary)
        saved = runner.load(results, fppo.bench(True))
        folder = results / fppo.bench(True)
        return {"wall_s": wall, "trial_s": [r["meta"]["wall_s"] for r in saved],
                "records": {f"{r['id']}.json": (folder / f"{r['id']}.json").read_bytes() for r in saved}}
    finally:
        shutil.rmtree(results, ignore_errors=True)


def main(argv: list[str] | None = None) -> None:
    parser = reproduce_parser("scaling", __doc__)
    parser.add_argument("--trials", type=int_at_least(1), default=4, help="identical trials per measurement")
    parser.add_argument("--timesteps", type=int_at_least(256), default=8192, help="training steps per trial")
    parser.add_argument("--cpus", type=int_at_least(1), nargs="+", default=[1, 2], help="the CPUs of each measurement")
    parser.add_argument("--local", action="store_true", help="the runner's process pool instead of a local Ray")
    parser.add_argument("--address", default=None, help="an existing Ray cluster (one measurement: its CPUs)")
    parser.add_argument("--quick", action="store_true", help="2 trials of 512 steps, printed only")
    args = parser.parse_args(argv)
    if args.quick:
        args.trials, args.timesteps = 2, 512
    load_before = os.getloadavg()
    rows, base = [], None
    for cpus in ([None] if args.address else args.cpus):
        m = measure(cpus or 0, args.trials, args.timesteps, args.local, args.address)
        base = base or m
        eff = base["wall_s"] / ((cpus or 1) * m["wall_s"]) if cpus else float("nan")
        rows.append(f"| {cpus or args.address} | {m['wall_s']:.1f} | {sum(m['trial_s']):.1f} | "
                    f"{sum(m['trial_s']) / len(m['trial_s']):.1f} | {eff:.2f} | "
                    f"{'yes' if m['records'] == base['records'] else 'NO'} |")
        print(rows[-1], flush=True)
    load_after = os.getloadavg()
    where = "the runner's process pool (--local)" if args.local else (
        f"the Ray cluster at {args.address}" if args.address else "a local Ray (its start-up not timed)")
    cmd = "python benchmarks/scaling.py" + (" --local" if args.local else "") + (
        f" --trials {args.trials}" if args.trials != 4 else "") + (
        f" --timesteps {args.timesteps}" if args.timesteps != 8192 else "") + (
        " --cpus " + " ".join(map(str, args.cpus)) if args.cpus != [1, 2] else "")
    lines = [f"## Runner scaling: `{cmd}` ({time.strftime('%Y-%m-%d')})", "",
             f"{args.trials} identical trials (F-PPO-L, epidemic, `fppo.py`'s smoke settings, {args.timesteps:,} steps each, "
             f"seeds 0–{args.trials - 1}) through `benchmarks/runner.py` on {where}, one CPU and one torch thread per "
             f"trial; {os.cpu_count()} cores, load average {load_before[0]:.2f} before and {load_after[0]:.2f} after "
             "(1-minute). Efficiency: t1 / (k · tk), 1.0 is linear.", "",
             "| CPUs | wall (s) | trials' own seconds, summed | per trial (s) | efficiency | records the same bytes as on 1 CPU |",
             "|---|---|---|---|---|---|", *rows, ""]
    if load_before[0] > 0.5 or load_after[0] > (max(args.cpus) + 0.5):
        lines += ["The machine was not idle (other work on its cores, see the load average): the efficiency is lower than "
                  "it would be on a quiet machine; run the same command again when it is.", ""]
    text = "\n".join(lines)
    print(text)
    if not args.quick:
        Output(args.out, "scaling").write_section("Runner scaling", text)


if __name__ == "__main__":
    main()
