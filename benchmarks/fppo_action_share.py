"""How much of F-PPO's long-term term depends on the action it regularises (delayed-impact lending).

F-PPO (Hu, Lear, Zhang 2024, arXiv:2401.06318) adds to each row's advantage the two branches of its Eq. 7,
``R(s_t, a_t)``: a penalty ``min(0, -(Δl_{t+1} - Δl_t))`` where ``Δs_{t+1} > δ`` and a reward
``max(0, -(Δl_{t+1} - Δl_t))`` where ``Δs_{t+1} <= δ``
(:func:`sb3_fair.common.long_term.long_term_terms`). The term can steer the policy only through the part of it that
changes with the action. Along a trajectory of a behaviour policy this script steps a copy of the env with each of
the two actions from every state (the same random numbers: the env draws three uniforms per step whatever the
action) and reports, for each training long-term measure (the env's ``long_term``):

- **Δl change**: ``mean |Δl_{t+1}(accept) - Δl_{t+1}(reject)|`` against ``mean |Δl_{t+1}(a_t) - Δl_t|``, the
  action-dependent part of the step's change of the long-term gap against the change itself;
- **Eq. 7's term**: ``mean |R(s_t, accept) - R(s_t, reject)|`` against ``mean |R(s_t, a_t)|``, and the same
  difference with only the gate (Δs) following the action (the Δl change of the executed action for both) or
  only the Δl change following it (the executed action's gate for both);
- the share of steps at which the two actions give different Δl changes at all.

The applicant joins the env's window whatever the decision, so a long-term measure of the window's counts only
(``counts_sinkhorn``, the authors' training Δl) cannot depend on the current action; the default (``wasserstein``)
depends on it through the smoothing prior, which follows the credit pmfs that an accepted loan shifts.

    python benchmarks/fppo_action_share.py --steps 2000 --seeds 3

Behaviour policies: the equal-opportunity reference (``EqualOpportunityPolicy``), uniform random actions, and any
saved model (``--models path.zip ...``, e.g. runs of ``benchmarks/fppo.py``: the states that policy visits). δ is the lending preset's (0.005).
"""

from __future__ import annotations

import argparse
import copy
import time
from pathlib import Path
from typing import Any

import numpy as np

from reproduction import Output, reproduce_parser
from sb3_fair.experiment.config import int_at_least

#: the lending measures whose training signal the term can use
MEASURES = ("wasserstein", "counts_sinkhorn", "pmf_wasserstein", "pmf_l2")


def preset_delta() -> float:
    """δ of the lending F-PPO preset."""
    from sb3_fair.ppo.presets import preset_kwargs

    return float(preset_kwargs("delayed_impact_lending", "f_ppo")["delta"])


def trajectory_terms(measure: str, policy: str, steps: int, seed: int, delta: float, model: Any = None) -> dict[str, np.ndarray]:
    """Per step of one trajectory: the Δl change and Eq. 7's term for the executed action and for each of the two
    actions from the same state.

    :param measure: the env's ``long_term``.
    :param policy: ``"eo"``, ``"random"`` or ``"model"`` (then ``model`` acts, sampled actions).
    :param steps: the trajectory's length.
    :param seed: the env's (and the behaviour policy's) seed.
    :param delta: Eq. 7's δ.
    """
    from sb3_fair.common.long_term import long_term_terms
    from sb3_fair.common.protocol import LONG_TERM_FAIRNESS, SHORT_TERM_FAIRNESS
    from sb3_fair.envs import EqualOpportunityPolicy
    from sb3_fair.envs.delayed_impact import DelayedImpactLendingEnv

    env = DelayedImpactLendingEnv(long_term=measure, horizon=steps)
    obs, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    eo = EqualOpportunityPolicy(env, seed=seed) if policy == "eo" else None
    rows = {k: [] for k in ("taken", "change", "ds")}  # the executed action; (reject, accept) columns after it
    for _ in range(steps):
        if policy == "eo":
            a = int(eo.predict(obs)[0])
        elif policy == "random":
            a = int(rng.integers(2))
        else:
            a = int(np.asarray(model.predict(obs, deterministic=False)[0]).item())
        before = info[LONG_TERM_FAIRNESS]
        change, ds = [], []
        for candidate in (0, 1):
            twin = copy.deepcopy(env)
            _, _, _, _, twin_info = twin.step(candidate)
            change.append(twin_info[LONG_TERM_FAIRNESS] - before)
            ds.append(twin_info[SHORT_TERM_FAIRNESS])
        obs, _, terminated, truncated, info = env.step(a)
        assert abs(info[LONG_TERM_FAIRNESS] - before - change[a]) < 1e-9, "the twin's step is not the env's"
        rows["taken"].append(a)
        rows["change"].append(change)
        rows["ds"].append(ds)
        if terminated or truncated:
            break
    taken = np.array(rows["taken"])
    change, ds = np.array(rows["change"]), np.array(rows["ds"])
    idx = np.arange(len(taken))

    def term(short_term: np.ndarray, lt_change: np.ndarray) -> np.ndarray:
        penalty, reward = long_term_terms(short_term, lt_change, delta)
        return penalty + reward

    both = np.stack([term(ds[:, c], change[:, c]) for c in (0, 1)], axis=1)
    gate_only = np.stack([term(ds[:, c], change[idx, taken]) for c in (0, 1)], axis=1)
    change_only = np.stack([term(ds[idx, taken], change[:, c]) for c in (0, 1)], axis=1)
    return {"change_taken": change[idx, taken], "change_diff": change[:, 1] - change[:, 0],
            "term_taken": both[idx, taken], "term_diff": both[:, 1] - both[:, 0],
            "gate_diff": gate_only[:, 1] - gate_only[:, 0], "change_only_diff": change_only[:, 1] - change_only[:, 0],
            "within_delta": ds[idx, taken] <= delta}


def share(part: np.ndarray, whole: np.ndarray) -> float:
    """``mean |part| / mean |whole|`` (NaN when the whole is 0)."""
    denominator = float(np.mean(np.abs(whole)))
    return float(np.mean(np.abs(part))) / denominator if denominator > 0 else float("nan")


def table(steps: int, seeds: int, policies: list[str], model_paths: list[str] | None = None) -> list[str]:
    """The markdown rows: one per (measure, behaviour policy), means over seeds with their spread."""
    from sb3_fair import FairPPO

    delta = preset_delta()
    models = {Path(path).stem: FairPPO.load(path, device="cpu") for path in model_paths or []}
    lines = [f"| training Δl (`long_term`) | behaviour policy | Δl change: action-dependent share | steps where the action "
             f"changes Δl | Eq. 7's term: action-dependent share | of it through the gate only | through the Δl change "
             f"only | steps with Δs <= δ ({delta:g}) |", "|---|---|---|---|---|---|---|---|"]
    for measure in MEASURES:
        for policy in [*policies, *models]:
            model = models.get(policy)
            per_seed = [trajectory_terms(measure, "model" if model else policy, steps, seed, delta, model)
                        for seed in range(seeds)]

            def cell(values: list[float]) -> str:
                if any(np.isnan(values)):
                    return "-"
                return f"{np.mean(values):.3f}" + (f" ± {np.std(values):.3f}" if len(values) > 1 else "")

            lines.append(
                f"| `{measure}` | {f'`{policy}`' if model else policy} | "
                f"{cell([share(r['change_diff'], r['change_taken']) for r in per_seed])} | "
                f"{cell([float(np.mean(np.abs(r['change_diff']) > 1e-12)) for r in per_seed])} | "
                f"{cell([share(r['term_diff'], r['term_taken']) for r in per_seed])} | "
                f"{cell([share(r['gate_diff'], r['term_taken']) for r in per_seed])} | "
                f"{cell([share(r['change_only_diff'], r['term_taken']) for r in per_seed])} | "
                f"{cell([float(np.mean(r['within_delta'])) for r in per_seed])} |")
            print(lines[-1], flush=True)
    return lines


def main(argv: list[str] | None = None) -> None:
    p = reproduce_parser("fppo_action_share", __doc__)
    p.add_argument("--steps", type=int_at_least(1), default=2000, help="steps per trajectory")
    p.add_argument("--seeds", type=int_at_least(1), default=3, help="trajectories per (measure, policy)")
    p.add_argument("--policies", nargs="+", default=["eo", "random"], choices=["eo", "random"])
    p.add_argument("--models", nargs="+", default=None, help="saved FairPPO models as more behaviour policies")
    args = p.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    command = (f"python benchmarks/fppo_action_share.py --steps {args.steps} --seeds {args.seeds}"
               + (f" --policies {' '.join(args.policies)}" if args.policies != ["eo", "random"] else "")
               + (f" --models {' '.join(args.models)}" if args.models else ""))
    lines = [f"## F-PPO, how much of the long-term term depends on the action: `{command}` ({time.strftime('%Y-%m-%d')})", "",
             f"Delayed-impact lending, one trajectory of {args.steps} steps per seed (env seeds 0-{args.seeds - 1}) and "
             "behaviour policy; from every state a copy of the env steps with each action (the same random numbers). "
             "Action-dependent share: mean \\|x(accept) − x(reject)\\| over mean \\|x(executed action)\\|, for the "
             "step's change of Δl and for Eq. 7's term (both branches, unweighted); \"through the gate only\": the "
             "executed action's Δl change under each action's Δs gate; \"through the Δl change only\": the executed "
             "action's gate with each action's Δl change. Mean ± std over seeds.", "",
             *table(args.steps, args.seeds, args.policies, args.models), ""]
    Output(args.out, "fppo_action_share").write_section("F-PPO, how much of the long-term term depends on the action",
                                                        "\n".join(lines))


if __name__ == "__main__":
    main()
