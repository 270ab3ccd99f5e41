"""FairPPO.from_preset: Hu, Lear, Zhang's (2024) settings, the shared trunk, and the long-term evaluation protocol."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch as th
from stable_baselines3 import PPO

from sb3_fair import FairPPO
from sb3_fair.common.evaluation import evaluate_long_term
from sb3_fair.common.long_term.advantages import (
    attention_massaging_threshold,
    epidemic_massaging_threshold,
    lending_massaging_threshold,
)
from sb3_fair.common.protocol import LONG_TERM_FAIRNESS, SHORT_TERM_FAIRNESS
from sb3_fair.envs import DelayedImpactLendingEnv, EpidemicControlEnv
from sb3_fair.ppo.policies import MlpTrunk
from sb3_fair.ppo.presets import ENV_IDS, PRESETS, VARIANTS, preset_kwargs


def test_variants_set_the_paper_weights():
    f = preset_kwargs("delayed_impact_lending", "f_ppo")
    assert (f["fairness"], f["fairness_coef"], f["delta"], f["massaging"]) == ("long_term", (1.12, 1.0), 0.005, True)
    assert f["massaging_tau"] is lending_massaging_threshold and f["n_steps"] == 2000 and f["learning_rate"] == 1e-5
    assert "massaging" not in preset_kwargs("delayed_impact_lending", "f_ppo_l")
    a = preset_kwargs("epidemic", "a_ppo")
    assert (a["fairness"], a["fairness_coef"], a["omega"]) == ("a_ppo", (0.1, 0.1), 0.05)
    assert preset_kwargs("epidemic", "f_ppo")["massaging_tau"] is epidemic_massaging_threshold
    assert preset_kwargs("attention", "ppo")["fairness_coef"] == 0.0
    with pytest.raises(ValueError, match="preset must be one of"):
        preset_kwargs("loans")
    # the name two presets of different envs shared up to 0.3.0 is refused, saying what each became
    with pytest.raises(ValueError, match=r"got 'lending' \('lending' named two presets.*FairPPO.from_preset's 'delayed_impact_lending'"):
        FairPPO.from_preset("lending", "sb3_fair/DelayedImpactLending-v0")
    with pytest.raises(ValueError, match="variant must be one of"):
        preset_kwargs("delayed_impact_lending", "fppo")


@pytest.mark.parametrize("name", PRESETS)
def test_the_trunk_is_shared_by_actor_and_critic(name):
    model = FairPPO.from_preset(name, ENV_IDS[name], variant="f_ppo", seed=0)
    policy = model.policy
    assert isinstance(policy.features_extractor, MlpTrunk)
    assert policy.pi_features_extractor is policy.features_extractor is policy.vf_features_extractor
    trunk, head = {"delayed_impact_lending": ([256, 256], [256, 128]), "attention": ([128, 128], [128, 64]),
                   "epidemic": ([512, 512], [512, 256])}[name]
    obs_dim = model.observation_space.shape[0]
    widths = [obs_dim, *trunk]
    n_trunk = sum(a * b + b for a, b in zip(widths, widths[1:]))
    heads = [trunk[-1], *head]
    n_head = sum(a * b + b for a, b in zip(heads, heads[1:]))
    n_out = model.action_space.n if hasattr(model.action_space, "n") else model.action_space.shape[0]
    n_act = head[-1] * n_out + n_out + (n_out if name == "attention" else 0)  # the Gaussian's log_std
    expected = n_trunk + 2 * n_head + n_act + head[-1] + 1
    assert sum(p.numel() for p in policy.parameters()) == expected


def test_the_ppo_variant_is_sb3_ppo_with_the_same_settings():
    kwargs = preset_kwargs("delayed_impact_lending", "ppo")
    del kwargs["fairness"], kwargs["fairness_coef"]
    kwargs.update(n_steps=64, batch_size=32, n_epochs=2)
    base = PPO("MlpPolicy", DelayedImpactLendingEnv(horizon=50), seed=0, **kwargs).learn(128)
    fair = FairPPO.from_preset("delayed_impact_lending", DelayedImpactLendingEnv(horizon=50), variant="ppo", seed=0, n_steps=64,
                               batch_size=32, n_epochs=2).learn(128)
    for a, b in zip(base.policy.state_dict().values(), fair.policy.state_dict().values()):
        th.testing.assert_close(a, b, rtol=0, atol=0)


def test_overrides_win_and_the_model_saves(tmp_path):
    model = FairPPO.from_preset("epidemic", EpidemicControlEnv(horizon=5), variant="f_ppo", n_steps=16, batch_size=16,
                                learning_rate=1e-3)
    assert model.n_steps == 16 and model.learning_rate == 1e-3
    model.learn(32)
    model.save(tmp_path / "m.zip")
    loaded = FairPPO.load(tmp_path / "m.zip", env=EpidemicControlEnv(horizon=5))
    assert loaded.massaging and loaded.massaging_tau(60) == pytest.approx(epidemic_massaging_threshold(60))
    assert loaded.fairness_config()["fairness_coef"] == [0.25, 0.25]


class Ramp(gym.Env):
    """Δs = t / 10, Δl = 1 / t and reward t after step t; episodes of 3 + (seed % 2) steps."""

    observation_space = gym.spaces.Box(0.0, 1.0, (1,), dtype=np.float32)
    action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t, self.length = 0, 3 + (seed or 0) % 2
        return np.zeros(1, dtype=np.float32), {}

    def step(self, action):
        self.t += 1
        info = {SHORT_TERM_FAIRNESS: self.t / 10, LONG_TERM_FAIRNESS: 1 / self.t, "t": self.t}
        return np.zeros(1, dtype=np.float32), float(self.t), False, self.t >= self.length, info


class Always:
    def predict(self, observation, state=None, episode_start=None, deterministic=False):
        return 0, None


def test_evaluate_long_term_on_known_curves():
    res = evaluate_long_term(Always(), Ramp(), n_episodes=2, seed=0, info_keys=("t",))
    # episode 0: 3 steps (seed 0); episode 1: 4 steps (seed 1); the shorter one is padded with NaN
    np.testing.assert_allclose(res["short_term"], [[0.1, 0.2, 0.3, np.nan], [0.1, 0.2, 0.3, 0.4]])
    np.testing.assert_allclose(res["t"], [[1, 2, 3, np.nan], [1, 2, 3, 4]])
    assert res["long_term_final"] == pytest.approx((1 / 3 + 1 / 4) / 2)
    assert res["episode_reward"] == pytest.approx((6 + 10) / 2) and res["episode_reward_std"] == pytest.approx(2.0)
    assert res["short_term_mean"] == pytest.approx(np.mean([0.1, 0.2, 0.3, 0.1, 0.2, 0.3, 0.4]))
    with pytest.raises(ValueError, match="n_episodes"):
        evaluate_long_term(Always(), Ramp(), n_episodes=0)


def test_each_variant_builds_the_method_it_names():
    """F-PPO: long-term regulariser and massaging; F-PPO-L: the regulariser alone; A-PPO: its own advantage;
    PPO: every weight 0. All on the case study's env, with the shared trunk and the preset's rollout length."""
    expected = {"f_ppo": ("long_term", (0.15, 0.15), True), "f_ppo_l": ("long_term", (0.15, 0.15), False),
                "a_ppo": ("a_ppo", (0.15, 0.15), False), "ppo": ("long_term", (0.0, 0.0), False)}
    assert set(expected) | {"f_ppo_authors"} == set(VARIANTS)  # the last one: lending only (below)
    for variant in expected:
        model = FairPPO.from_preset("attention", ENV_IDS["attention"], variant=variant)
        assert (model.fairness, tuple(model.fairness_coef), model.massaging) == expected[variant], variant
        assert type(model.env.envs[0].unwrapped).__name__ == "AttentionAllocationEnv" and model.n_steps == 2048
        assert isinstance(model.policy.features_extractor, MlpTrunk)
    assert FairPPO.from_preset("attention", ENV_IDS["attention"], variant="f_ppo").massaging_tau is attention_massaging_threshold


def test_the_authors_variant_is_f_ppo_with_their_codes_three_choices():
    """Lending's f_ppo_authors: F-PPO with the tie flip, the authors' training long-term gap and terminal horizon."""
    import gymnasium as gym

    f, a = preset_kwargs("delayed_impact_lending", "f_ppo"), preset_kwargs("delayed_impact_lending", "f_ppo_authors")
    assert {k: v for k, v in a.items() if k != "massaging_ties"} == f and a["massaging_ties"] == "flip"
    model = FairPPO.from_preset("delayed_impact_lending", ENV_IDS["delayed_impact_lending"], variant="f_ppo_authors")
    env = model.env.envs[0].unwrapped
    assert (model.massaging, model.massaging_ties, env.long_term, env.horizon_terminates) == (True, "flip", "counts_sinkhorn", True)
    made = gym.make(ENV_IDS["delayed_impact_lending"], long_term="counts_sinkhorn", horizon_terminates=True)
    assert FairPPO.from_preset("delayed_impact_lending", made, variant="f_ppo_authors").massaging_ties == "flip"
    with pytest.raises(ValueError, match=r"variant 'f_ppo_authors' trains on the env made with long_term='counts_sinkhorn', "
                                         r"horizon_terminates=True .* this env has long_term='wasserstein', horizon_terminates=False"):
        FairPPO.from_preset("delayed_impact_lending", gym.make(ENV_IDS["delayed_impact_lending"]), variant="f_ppo_authors")
    with pytest.raises(ValueError, match=r"variant 'f_ppo_authors' exists for \['delayed_impact_lending'\] only"):
        FairPPO.from_preset("epidemic", ENV_IDS["epidemic"], variant="f_ppo_authors")
