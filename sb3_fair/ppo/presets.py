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
(every fairness weight 0: SB3's PPO with the same settings); for lending also ``"f_ppo_authors"``: F-PPO
with the authors' code's choices in the three places below where it differs from the paper's text
(massaging flips on ties, the training Δl is their ``counts_sinkhorn``, the horizon is terminal), so that
the two readings can be compared.

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
  every candidate until the policy's standard deviations shrink below about 0.66);
* massaging keeps the sampled action when the alternative is only as fair (the paper: "if the alternative
  action is fairer"), where the authors' lending code replaces it on a tie too (``>=``), which flips every
  applicant in the τ band whose outcome the flip cannot change (:func:`~sb3_fair.common.long_term.advantages.massaging_choice`;
  ``massaging_ties="flip"`` gives theirs);
* lending: the env's ``counts_sinkhorn`` is the exact W1 of the two groups' windowed count values, where the
  authors' code computes it with geomloss's Sinkhorn loss (blur 0.01), which reads below the exact value; their Δs
  counts the new decision before the oldest leaves the window (w + 1 decisions, here w). ``"f_ppo_authors"`` keeps
  both of sb3-fair's (the env's ``long_term="counts_geomloss"`` gives their Sinkhorn). With these choices F-PPO on
  lending is bistable: a run either learns to lend or ends rejecting nearly every applicant, in sb3-fair and in the
  authors' own code, and small differences such as the Sinkhorn's numerics decide which (``benchmarks/RESULTS.md``,
  "F-PPO's training curve against its authors' code"); at the paper's 700,000 steps 4 of 5 seeds end rejecting
  ("What the second round's lending runs show").
"""

from __future__ import annotations

from typing import Any, cast

from sb3_fair._presets import check_preset_env, check_preset_name
from sb3_fair.common.hyperparams import ZOO_KEYS, hyperparams_file, load_hyperparams, resolve_hyperparams
from sb3_fair.common.validation import env_class

#: the case studies (the lending one by its env's name: FairDQN's lending preset is another env)
PRESETS = ("delayed_impact_lending", "attention", "epidemic")
#: the methods of the paper's figures, as FairPPO settings, and F-PPO with the authors' code's choices
VARIANTS = ("f_ppo", "f_ppo_l", "a_ppo", "ppo", "f_ppo_authors")
#: the variants only some case studies have
VARIANT_CASES = {"f_ppo_authors": ("delayed_impact_lending",)}
#: the registered env of each case study
ENV_IDS = {
    "delayed_impact_lending": "sb3_fair/DelayedImpactLending-v0",
    "attention": "sb3_fair/AttentionAllocation-v0",
    "epidemic": "sb3_fair/EpidemicControl-v0",
}


def preset_entry(name: str, variant: str = "f_ppo") -> dict[str, Any]:
    """The whole entry of Hu et al.'s (2024) ``name`` case study for one ``variant``, as written in
    ``sb3_fair/hyperparams/fair_ppo.yml`` (the single source of these values; entry
    ``"<env id>@<variant>"``, with RL Zoo's ``n_timesteps`` and ``policy``)."""
    check_preset_name(name, PRESETS)
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {list(VARIANTS)}, got {variant!r}")
    if name not in VARIANT_CASES.get(variant, PRESETS):
        raise ValueError(f"variant {variant!r} exists for {list(VARIANT_CASES[variant])} only, not for {name!r}")
    return load_hyperparams(hyperparams_file("fair_ppo"), ENV_IDS[name], variant)


#: the authors' training budgets (steps): the entries' ``n_timesteps``
PAPER_TIMESTEPS = {name: int(preset_entry(name)["n_timesteps"]) for name in PRESETS}


def check_env(name: str, env: Any) -> None:
    """Refuse an ``env`` that is clearly another sb3-fair env than case study ``name``'s (an id, an env or a VecEnv).

    The preset's network, rollout length and τ schedule are its case study's. An env the check cannot identify
    (a user's own env or wrapper of its own class) passes; the preset's env wrapped in anything passes.
    """
    # each preset's id is one of sb3-fair's registered envs, whose class env_class always finds
    expected = {case: (cast(type, env_class(env_id)), env_id) for case, env_id in ENV_IDS.items()}
    check_preset_env(env, name, expected, "network, rollout length and massaging schedule (tau)")


def preset_env_kwargs(name: str, variant: str = "f_ppo") -> dict[str, Any]:
    """The env arguments a variant needs (its entry's ``env_kwargs``; ``"f_ppo_authors"``: the authors' training
    long-term gap and terminal horizon), ``{}`` for the others."""
    return dict(preset_entry(name, variant).get("env_kwargs") or {})


def check_env_kwargs(name: str, variant: str, env: Any) -> Any:
    """The env for ``FairPPO.from_preset``: an id made with the variant's env arguments, or an env checked to have
    them (an env or VecEnv whose bare env's attributes differ is refused, naming the arguments to make it with)."""
    import gymnasium as gym

    needed = preset_env_kwargs(name, variant)
    if not needed:
        return env
    if isinstance(env, str):
        return gym.make(env, **needed)
    from sb3_fair.common.protocol import get_env_attr

    wrong = {k: v for k, v in needed.items() if get_env_attr(env, k) != v}
    if wrong:
        args = ", ".join(f"{k}={v!r}" for k, v in needed.items())
        raise ValueError(
            f"env: variant {variant!r} trains on the env made with {args} (the authors' code's); this env has "
            + ", ".join(f"{k}={get_env_attr(env, k)!r}" for k in wrong)
            + f": pass the id, or gym.make({ENV_IDS[name]!r}, {args})"
        )
    return env


def preset_kwargs(name: str, variant: str = "f_ppo") -> dict[str, Any]:
    """FairPPO keyword arguments of Hu et al.'s (2024) ``name`` case study for one ``variant`` (the env's own
    arguments, if the variant has any, are :func:`preset_env_kwargs`).

    :param name: ``"delayed_impact_lending"``, ``"attention"`` or ``"epidemic"``.
    :param variant: ``"f_ppo"``, ``"f_ppo_l"``, ``"a_ppo"``, ``"ppo"`` or (lending) ``"f_ppo_authors"``.
    """
    entry = preset_entry(name, variant)
    kwargs = resolve_hyperparams({k: v for k, v in entry.items() if k not in (*ZOO_KEYS, "policy")})
    if isinstance(kwargs.get("fairness_coef"), list):  # a pair of branch weights
        kwargs["fairness_coef"] = tuple(kwargs["fairness_coef"])
    return kwargs


__all__ = [
    "ENV_IDS",
    "PAPER_TIMESTEPS",
    "PRESETS",
    "VARIANTS",
    "VARIANT_CASES",
    "check_env",
    "check_env_kwargs",
    "preset_entry",
    "preset_env_kwargs",
    "preset_kwargs",
]
