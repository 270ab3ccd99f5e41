"""Alamdari et al.'s (2024) DQN hyperparameters (Tables 1-2, A.4) as keyword arguments for FairDQN.

Alamdari, Klassen, Creager, McIlraith, *Remembering to Be Fair: Non-Markovian Fairness in
Sequential Decision Making*, ICML 2024 (arXiv:2312.04772).

Values the tables give: learning rate 1e-4, gamma 0.95, minimum exploration 0.2, replay buffer
400 / 6400 (doughnuts, DQN / FairQCM) and 1000 / 8000 (lending), batch 64 / 2048 and 64 / 512.
Values from the authors' code (facts only): MSE loss, one gradient step per env step, training
starts once the buffer is full, target network synced every 1000 (doughnuts) / 100 (lending) updates,
no gradient clipping, networks 32-16-8 (doughnuts) and 32-8 (lending) with ReLU, **orthogonal
weights (gain 1) and zero biases** (``policy_kwargs["ortho_init"] = True``, see
:mod:`sb3_fair.dqn.policies`), and no done flag in the replay memory: the last step of an episode
is bootstrapped, which sb3-fair's doughnut and lending envs express as ``truncated=True``.

In sb3-fair 0.1.0 these presets used PyTorch's default initialisation and the envs ended their
episodes with ``terminated=True``; with both, DQN and FairQCM learned nothing useful at the
paper's learning rate within the paper's 1000 episodes (greedy score below a random policy), and
the examples moved to 1e-3. With both fixed, on the doughnuts DQN and FairQCM learn at 1e-4 as the
authors' code does (within seed noise over 5 seeds); on lending FairQCM does and the DQN baselines
learn less than the authors' (``benchmarks/RESULTS.md``).

Deviations: the authors multiply epsilon by 0.999 per episode (from 1.0, floor 0.2); SB3 decays it
linearly over ``exploration_fraction`` of training, which we set to 0.5 so that it reaches 0.2
half-way (``FairDQN(..., exploration_decay=0.999)`` gives the authors' schedule). FairQCM's
buffer counts real and counterfactual transitions; ``learning_starts`` counts real steps, so FairQCM starts after ``buffer / (1 + counterfactuals per step)`` real steps.
"""

from __future__ import annotations

from typing import Any, cast

from sb3_fair._presets import check_preset_env, check_preset_name
from sb3_fair.common.hyperparams import ZOO_KEYS, hyperparams_file, load_hyperparams, resolve_hyperparams
from sb3_fair.common.validation import env_class

#: preset name -> the env id of its entries in ``sb3_fair/hyperparams/fair_dqn.yml``
#: (variants ``paper_fairqcm`` and ``paper_dqn``, the single source of these values)
PRESETS: dict[str, str] = {"donut": "sb3_fair/DonutAllocation-v0", "loan_applicants": "sb3_fair/LoanApplicants-v0"}


#: Training episodes per run in Alamdari et al. 2024 (§6.1 and §6.2: "across 1000 episodes"); the doughnut episode
#: has 100 steps and the lending episode 40. The presets' epsilon schedule (``exploration_fraction``) is
#: a fraction of the run: to train only the first ``n`` episodes of a paper-length run, call
#: ``model.learn(PAPER_EPISODES * horizon, callback=StopTrainingOnMaxEpisodes(n))``.
PAPER_EPISODES = 1000


def preset_entry(name: str, counterfactual: bool) -> dict[str, Any]:
    """The whole hyper-parameter entry of Alamdari et al.'s (2024) ``name`` experiment, as written in
    ``fair_dqn.yml`` (with RL Zoo's ``n_timesteps``, ``policy`` and, for FairQCM on lending, ``env_kwargs``)."""
    check_preset_name(name, sorted(PRESETS))
    variant = "paper_fairqcm" if counterfactual else "paper_dqn"
    return load_hyperparams(hyperparams_file("fair_dqn"), PRESETS[name], variant)


def check_env(name: str, env: Any) -> None:
    """Refuse an ``env`` that is clearly another sb3-fair env than experiment ``name``'s (an id, an env or a VecEnv).

    The preset's network, buffer, batch and target-network settings are its task's. An env the check cannot
    identify (a user's own env class) passes; the preset's env wrapped in anything passes.
    """
    # each preset's id is one of sb3-fair's registered envs, whose class env_class always finds
    expected = {case: (cast(type, env_class(env_id)), env_id) for case, env_id in PRESETS.items()}
    check_preset_env(env, name, expected, "network, replay buffer, batch size and target-network interval")


def preset_kwargs(name: str, counterfactual: bool) -> dict[str, Any]:
    """FairDQN keyword arguments of Alamdari et al.'s (2024) ``name`` experiment (``"donut"`` or ``"loan_applicants"``)."""
    entry = preset_entry(name, counterfactual)
    kwargs = resolve_hyperparams({k: v for k, v in entry.items() if k not in (*ZOO_KEYS, "policy", "counterfactual")})
    if "counterfactual_offsets" in kwargs:
        kwargs["counterfactual_offsets"] = tuple(kwargs["counterfactual_offsets"])
    return kwargs
