"""Hu, Lear, Zhang's (2024) PPO settings for their three case studies, as keyword arguments for FairPPO.

Hu, Lear, Zhang, *Striking a Balance in Fairness for Dynamic Systems Through Reinforcement Learning*,
arXiv:2401.06318, §VI. The paper gives δ, λ and τ; the rest are facts read from the authors' code:

* every env: learning rate 1e-5, minibatch 64, 10 epochs, γ 0.99, GAE λ 0.95, clip 0.2, entropy 0,
  value coefficient 0.5, gradient norm 0.5, advantage standardisation, orthogonal initialisation,
  one env; rollouts of 2,000 steps (lending: one training episode) or 2,048 (attention, epidemic);
* networks with ReLU and a trunk shared by actor and critic (lending [256, 256] then [256, 128] per
  head; attention [128, 128] then [128, 64]; epidemic [512, 512] then [512, 256]), built here with
  :class:`~sb3_fair.ppo.policies.MlpTrunk` as the shared features extractor: the same layers as the
  authors' SB3 1.5 network;
* the regularisation weights of their code (the penalty and reward branches of Eq. 7 weighted
  separately, β3 and β4; A-PPO's β1 and β2), which are not all the paper's: lending δ = 0.005 in
  the code (paper 0.05) and (β3, β4) = (1.12, 1.0) (paper λ = 1);
* massaging (Eq. 6) with the paper's τ schedules: lending ``1 - 2 τ(i)`` (no massaging up to
  iteration 17), attention 0.08 from iteration 16, epidemic ``min(0.35, 0.01 · 1.2^(i - 50))`` from
  iteration 50 (:mod:`sb3_fair.common.long_term`);
* training budgets (:data:`PAPER_TIMESTEPS`): 700k, 2M and 500k steps.

Variants: ``"f_ppo"`` (regularisation and massaging), ``"f_ppo_l"`` (the paper's ablation without
massaging), ``"a_ppo"`` (Yu et al.'s 2022 baseline with the weights of Hu et al.'s code) and ``"ppo"``
(every fairness weight 0: SB3's PPO with the same settings).

Deviations from the authors' code (the paper is followed where the two differ):

* the envs end a training episode with ``truncated`` (bootstrapped), where the authors' code treats
  the cut as terminal (``horizon_terminates=True`` in the env gives theirs);
* the env's default Δl is what F-PPO trains on: lending W1 on the credit axis, attention the spread
  of the true rates, epidemic the S/I/R fractions, where the authors' code trains on a Sinkhorn of
  windowed counts, on the spread of windowed incident counts and on raw S/I/R counts (each env's
  ``long_term`` option selects theirs);
* massaging is Eq. 6 everywhere. The authors' epidemic code massages only when the sampled node's
  own probability is at most τ (no closeness test); their attention code compares per-dimension
  Gaussian densities of the two sites a one-unit move touches, where sb3-fair compares the joint
  density of the 5-d logit action (its peak is (2π)^-2.5 σ^-5 ≈ 0.0101 at σ = 1, so τ = 0.08 admits
  every candidate until the policy's standard deviations shrink below about 0.66).
"""

from __future__ import annotations

from typing import Any

from torch import nn

from sb3_fair.common.long_term import (
    attention_massaging_threshold,
    epidemic_massaging_threshold,
    lending_massaging_threshold,
)
from sb3_fair.ppo.policies import MlpTrunk

#: the case studies
PRESETS = ("lending", "attention", "epidemic")
#: the methods of the paper's figures, as FairPPO settings
VARIANTS = ("f_ppo", "f_ppo_l", "a_ppo", "ppo")
#: the registered env of each case study
ENV_IDS = {"lending": "sb3_fair/DelayedImpactLending-v0", "attention": "sb3_fair/AttentionAllocation-v0",
           "epidemic": "sb3_fair/EpidemicControl-v0"}
#: the authors' training budgets (steps)
PAPER_TIMESTEPS = {"lending": 700_000, "attention": 2_000_000, "epidemic": 500_000}

_COMMON: dict[str, Any] = {
    "learning_rate": 1e-5, "batch_size": 64, "n_epochs": 10, "gamma": 0.99, "gae_lambda": 0.95, "clip_range": 0.2,
    "ent_coef": 0.0, "vf_coef": 0.5, "max_grad_norm": 0.5, "normalize_advantage": True,
}
# (n_steps, shared trunk, head, F-PPO (β3, β4), δ, A-PPO (β1, β2), ω, τ schedule)
_CASES: dict[str, tuple[int, list[int], list[int], tuple[float, float], float, tuple[float, float], float, Any]] = {
    "lending": (2000, [256, 256], [256, 128], (1.12, 1.0), 0.005, (0.25, 0.25), 0.005, lending_massaging_threshold),
    "attention": (2048, [128, 128], [128, 64], (0.15, 0.15), 0.1, (0.15, 0.15), 0.05, attention_massaging_threshold),
    "epidemic": (2048, [512, 512], [512, 256], (0.25, 0.25), 0.05, (0.1, 0.1), 0.05, epidemic_massaging_threshold),
}


def preset_kwargs(name: str, variant: str = "f_ppo") -> dict[str, Any]:
    """FairPPO keyword arguments of Hu et al.'s (2024) ``name`` case study for one ``variant``.

    :param name: ``"lending"``, ``"attention"`` or ``"epidemic"``.
    :param variant: ``"f_ppo"``, ``"f_ppo_l"``, ``"a_ppo"`` or ``"ppo"``.
    """
    if name not in _CASES:
        raise ValueError(f"preset must be one of {list(PRESETS)}, got {name!r}")
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {list(VARIANTS)}, got {variant!r}")
    n_steps, trunk, head, f_coef, delta, a_coef, omega, schedule = _CASES[name]
    kwargs = dict(_COMMON, n_steps=n_steps)
    kwargs["policy_kwargs"] = {"features_extractor_class": MlpTrunk,
                               "features_extractor_kwargs": {"layers": list(trunk), "activation_fn": nn.ReLU},
                               "net_arch": {"pi": list(head), "vf": list(head)}, "activation_fn": nn.ReLU}
    if variant in ("f_ppo", "f_ppo_l"):
        kwargs.update(fairness="long_term", fairness_coef=f_coef, delta=delta)
    elif variant == "a_ppo":
        kwargs.update(fairness="a_ppo", fairness_coef=a_coef, omega=omega)
    else:
        kwargs.update(fairness="long_term", fairness_coef=0.0)
    if variant == "f_ppo":
        kwargs.update(massaging=True, massaging_tau=schedule)
    return kwargs


__all__ = ["ENV_IDS", "PAPER_TIMESTEPS", "PRESETS", "VARIANTS", "preset_kwargs"]
