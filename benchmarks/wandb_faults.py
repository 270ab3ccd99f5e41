"""Fault injection for the Weights & Biases output (issue 11 §4): do records survive failing ``run.log`` calls?

FairDQN trains on the doughnut env with ``wandb=True`` (offline, in a temporary folder) and a CSV
logger side by side, dumping every episode. ``run.log`` is made to fail at random (``--fail-rate``,
seeded), in bursts as a flaky network would, and once for good at ``run.finish``. The CSV is the
reference: a record is lost when a CSV row never reached W&B. A second phase calls ``learn`` twice
on one run (the second call restarting the timestep count) and checks that W&B's steps stay
monotonic, so W&B drops nothing.

Usage::

    PYTHONPATH=. python benchmarks/wandb_faults.py [--steps 20000] [--fail-rate 0.3] [--seed 0]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np

from reproduction import write_section

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=20_000)
    p.add_argument("--fail-rate", type=float, default=0.3, help="chance that a run.log call starts a burst of failures")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    import torch

    torch.set_num_threads(1)  # small networks train faster on one thread
    os.environ["WANDB_MODE"] = "offline"
    os.environ["WANDB_SILENT"] = "true"
    import wandb
    from logged_csv import read_csv
    from stable_baselines3.common.logger import configure
    from wandb.sdk.wandb_run import Run

    from sb3_fair import FairDQN
    from sb3_fair.envs import make_donut_allocation

    rng = np.random.default_rng(args.seed)
    tmp = Path(tempfile.mkdtemp())
    kw = dict(learning_starts=500, buffer_size=10_000, batch_size=32, train_freq=4, target_update_interval=500, seed=args.seed)

    # phase 1: random bursts of run.log failures, and a failing run.finish
    accepted: list[dict[str, float]] = []
    state = {"burst": 0, "calls": 0, "failures": 0}
    real_log, real_finish = Run.log, Run.finish

    def flaky_log(self, data, step=None, **kwargs):
        state["calls"] += 1
        if state["burst"] == 0 and rng.random() < args.fail_rate:
            state["burst"] = int(rng.integers(1, 6))  # 1 to 5 failing calls in a row
        if state["burst"] > 0:
            state["burst"] -= 1
            state["failures"] += 1
            raise ConnectionError("injected")
        accepted.append(dict(data))
        return real_log(self, data, step=step, **kwargs)

    def failing_finish(self, *a, **k):
        real_finish(self, *a, **k)
        raise OSError("injected finish failure")

    Run.log, Run.finish = flaky_log, failing_finish
    model = FairDQN("MlpPolicy", make_donut_allocation(), wandb={"dir": str(tmp), "project": "faults"}, **kw)
    model.set_logger(configure(str(tmp / "csv"), ["csv"]))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.learn(args.steps, log_interval=1)
    Run.log, Run.finish = real_log, real_finish
    rows = read_csv(tmp / "csv" / "progress.csv")
    rows_data = [{k: float(v) for k, v in r.items() if v not in ("", None)} for r in rows]
    lost = sum(1 for r in rows_data if r not in accepted)
    finish_reported = any("could not finish the run" in str(w.message) for w in caught)
    report = model.fairness_callback.wandb_report

    # phase 2: two learn() calls on a run the user started; the second restarts num_timesteps
    run = wandb.init(dir=str(tmp), project="faults")
    steps: list[int] = []

    def recording_log(self, data, step=None, **kwargs):
        steps.append(int(step))
        return real_log(self, data, step=step, **kwargs)

    Run.log = recording_log
    model = FairDQN("MlpPolicy", make_donut_allocation(), wandb=True, **kw)
    model.learn(args.steps // 4, log_interval=1)
    n_first = len(steps)
    model.learn(args.steps // 4, log_interval=1)
    Run.log = real_log
    run.finish()
    monotonic = steps == sorted(steps) and min(steps[n_first:]) > max(steps[:n_first])

    lines = [
        f"`PYTHONPATH=. python benchmarks/wandb_faults.py --steps {args.steps} --fail-rate {args.fail_rate} --seed {args.seed}` "
        f"(wandb {wandb.__version__}, offline): FairDQN on the doughnut env, one dump per episode, CSV beside W&B.",
        "",
        "| figure | value |",
        "|---|---|",
        f"| dumps (CSV rows) | {len(rows)} |",
        f"| run.log calls (with retries) | {state['calls']} |",
        f"| injected run.log failures (bursts of 1-5) | {state['failures']} |",
        f"| dumps that reached W&B | {len(accepted)} |",
        f"| **records lost** (CSV rows never accepted by W&B) | **{lost}** |",
        f"| training finished | {model.num_timesteps > 0} |",
        f"| injected run.finish failure reported | {finish_reported} |",
        f"| end-of-training report | {report} |",
        f"| two learn() calls on one run: steps monotonic, second after first ({n_first} + {len(steps) - n_first} dumps) | {monotonic} |",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    write_section(HERE / "RESULTS.md", "W&B fault injection", "## W&B fault injection (issue 11)\n\n" + text)


if __name__ == "__main__":
    main()
