"""FairPPO's group penalties (paper 001): the estimator, the gradient, equivalence at 0, learning, bad input."""

from __future__ import annotations

import numpy as np
import pytest
import torch as th
from sb3_contrib import RecurrentPPO
from stable_baselines3 import PPO
from stable_baselines3.common.callbacks import BaseCallback

from sb3_fair import FairPPO, FairRecurrentPPO, metrics
from sb3_fair.common.evaluation import evaluate_group_fairness, price_of_fairness_table
from sb3_fair.common.figure_table import episode_figures
from sb3_fair.envs import AllelopathicHarvestEnv, DisparityGame
from sb3_fair.ppo import advantage_weights
from sb3_fair.wrappers import CounterfactualPair, make_multiagent_vec_env

KW = dict(n_steps=20, batch_size=40, n_epochs=2, seed=0)


def game_env(n_instances: int = 2, **kw):
    return make_multiagent_vec_env(DisparityGame(n_agents=4, **kw), n_instances=n_instances)


# ---------------------------------------------------------------------------- the estimator
def test_contrasts_reproduce_the_metrics():
    r = np.array([1.0, 2, 3, 4, 5, 6])
    g = np.array([0, 1, 0, 1, 1, 0])
    f = np.array([0, 0, 0, 1, 1, 1])
    assert metrics.group_contrasts(g) @ r == pytest.approx([metrics.demographic_parity(r, g)])
    csp = metrics.conditional_statistical_parity(r, g, f)
    assert np.abs(metrics.group_contrasts(g, "csp", factors=f) @ r).sum() == pytest.approx(csp["mean_abs"])
    twins = np.array([3, 4, 5, 0, 1, 2])
    assert (metrics.group_contrasts(g, "cf", twins=twins) @ r).sum() == pytest.approx(metrics.counterfactual_fairness(r[:3], r[3:]))
    assert metrics.group_contrasts(np.zeros(4, dtype=int)).shape == (0, 4)
    with pytest.raises(ValueError, match="metric"):
        metrics.group_contrasts(g, "eo")


def test_advantage_weights_known_answers():
    # DP, 4 agents, group 1 ahead by 2 in realised return: c = +-1/2, n = 4, w = 1 -+ lambda*4*alpha/2
    realised = np.array([[2.0, 2.0, 0.0, 0.0]])
    w, stats = advantage_weights(realised, np.zeros((1, 4)), np.array([[1, 1, 0, 0]]), 4, "dp", alpha=1.0, beta=0.0, coef=0.25)
    np.testing.assert_allclose(w, [[0.5, 0.5, 1.5, 1.5]])
    assert stats["penalty_retro"] == pytest.approx(2.0) and stats["penalty_pro"] == 0.0
    # the prospective part: group 0 ahead in value -> the opposite direction, scaled by beta = 0.5
    w, stats = advantage_weights(np.zeros((1, 4)), np.array([[0.0, 0.0, 1.0, 1.0]]), np.array([[1, 1, 0, 0]]), 4, "dp",
                                 alpha=0.0, beta=0.5, coef=0.25)
    np.testing.assert_allclose(w, [[1.25, 1.25, 0.75, 0.75]])
    assert stats["penalty_pro"] == pytest.approx(1.0)
    # equal groups: no gradient from the penalty
    w, _ = advantage_weights(np.ones((3, 4)), np.ones((3, 4)), np.tile([1, 1, 0, 0], (3, 1)), 4, "dp", 1.0, 1.0, 1.0)
    np.testing.assert_allclose(w, 1.0)
    # CF: agent 0 (factual) ahead of its twin 2 -> w_0 = 1 - 1 * 4 * (1/2), w_2 = 1 + 2; pair (1, 3) equal
    w, _ = advantage_weights(np.array([[3.0, 1.0, 0.0, 1.0]]), np.zeros((1, 4)), np.array([[0, 0, 1, 1]]), 4, "cf",
                             alpha=1.0, beta=0.0, coef=1.0, twins=np.array([[2, 3, 0, 1]]))
    np.testing.assert_allclose(w, [[-1.0, 1.0, 3.0, 1.0]])
    # CSP: strata weighted by their share; one stratum (factor 0) unequal
    w, _ = advantage_weights(np.array([[1.0, 0.0, 5.0, 5.0]]), np.zeros((1, 4)), np.array([[1, 0, 1, 0]]), 4, "csp",
                             alpha=1.0, beta=0.0, coef=0.5, factors=np.array([[0, 0, 1, 1]]))
    np.testing.assert_allclose(w, [[0.0, 2.0, 1.0, 1.0]])
    # two instances are independent
    w, _ = advantage_weights(np.array([[1.0, 0.0, 0.0, 1.0]]), np.zeros((1, 4)), np.array([[1, 0, 1, 0]]), 2, "dp", 1.0, 0.0, 0.5)
    np.testing.assert_allclose(w, [[0.0, 2.0, 2.0, 0.0]])


# ---------------------------------------------------------------------------- PPO equivalence and gradient
def params(model):
    return th.cat([p.detach().flatten() for p in model.policy.parameters()])


@pytest.mark.parametrize("fair_kwargs", [dict(fairness_coef=0.0), dict(alpha=0.0, beta=0.0)])
def test_weight_zero_is_exactly_ppo(fair_kwargs):
    ppo = PPO("MlpPolicy", game_env(), **KW).learn(160)
    fair = FairPPO("MlpPolicy", game_env(), **KW, **fair_kwargs).learn(160)
    assert th.equal(params(ppo), params(fair))


def test_penalty_changes_the_actor_gradient(monkeypatch):
    grads = {}

    def actor_gradient(self):
        """In place of PPO's update: the actor's gradient of the surrogate on the whole rollout."""
        data = next(self.rollout_buffer.get(batch_size=None))
        _, log_prob, _ = self.policy.evaluate_actions(data.observations, data.actions.long().flatten())
        loss = -(data.advantages * th.exp(log_prob - data.old_log_prob)).mean()
        self.policy.zero_grad()
        loss.backward()
        actor = [*self.policy.mlp_extractor.policy_net.parameters(), *self.policy.action_net.parameters()]
        grads[self.__class__.__name__ + str(getattr(self, "fairness_coef", ""))] = th.cat([p.grad.flatten() for p in actor])
        critic_target = data.returns.clone()
        grads["returns" + str(getattr(self, "fairness_coef", ""))] = critic_target

    monkeypatch.setattr(PPO, "train", actor_gradient)
    PPO("MlpPolicy", game_env(), **KW).learn(160)
    FairPPO("MlpPolicy", game_env(), **KW, fairness_coef=0.0).learn(160)
    FairPPO("MlpPolicy", game_env(), **KW, fairness_coef=1.0, alpha=1.0, beta=0.5).learn(160)
    th.testing.assert_close(grads["PPO"], grads["FairPPO0.0"])
    assert not th.allclose(grads["PPO"], grads["FairPPO1.0"], atol=1e-4)
    # the critic's regression target is never biased by the penalty
    th.testing.assert_close(grads["returns"].sort().values, grads["returns1.0"].sort().values)


# ---------------------------------------------------------------------------- learning
@pytest.mark.slow
@pytest.mark.parametrize("parent, fair_cls, policy", [(PPO, FairPPO, "MlpPolicy"), (RecurrentPPO, FairRecurrentPPO, "MlpLstmPolicy")],
                         ids=["FairPPO", "FairRecurrentPPO"])
def test_short_run_lowers_the_dp_gap(parent, fair_cls, policy):
    kw = dict(n_steps=40, batch_size=80, n_epochs=4, learning_rate=3e-3, seed=1)
    ppo = parent(policy, make_multiagent_vec_env(DisparityGame(n_agents=8, disparity=0.5), 2), **kw).learn(12_000)
    fair = fair_cls(policy, make_multiagent_vec_env(DisparityGame(n_agents=8, disparity=0.5), 2), **kw,
                    fairness="dp", alpha=0.5, beta=0.5).learn(12_000)
    res_ppo = evaluate_group_fairness(ppo, DisparityGame(n_agents=8, disparity=0.5), n_episodes=5)
    res_fair = evaluate_group_fairness(fair, DisparityGame(n_agents=8, disparity=0.5), n_episodes=5)
    assert res_ppo["dp_abs"] > 7.0  # PPO works all the time: gap 0.5 x 20 steps
    assert res_fair["dp_abs"] < 0.5 * res_ppo["dp_abs"]
    pof = price_of_fairness_table(res_fair, res_ppo)
    assert pof[1] < 0  # the advantaged group gives up reward
    logged = fair.logger.name_to_value
    assert not logged or all(np.isfinite(v) for v in logged.values())


def test_logs_group_figures_and_penalty_parts(tmp_path):
    from stable_baselines3.common.logger import configure

    model = FairPPO("MlpPolicy", game_env(), **KW, fairness="csp")
    model.set_logger(configure(str(tmp_path), ["csv"]))
    model.learn(400)
    import csv

    with open(tmp_path / "progress.csv") as fh:
        columns = next(csv.reader(fh))
    for col in ("fairness/dp", "fairness/dp_norm", "fairness/csp_mean_abs", "fairness/group_0_mean", "fairness/penalty_retro",
                "fairness/penalty_pro", "fairness/adv_weight_std", "fairness/adv_weight_min", "fairness/adv_weight_max"):
        assert col in columns, col


def test_cf_on_a_counterfactual_pair_and_harvest():
    vec = make_multiagent_vec_env(CounterfactualPair(lambda: AllelopathicHarvestEnv.from_preset("tiny")), n_instances=1)
    model = FairPPO("MlpPolicy", vec, n_steps=30, batch_size=60, n_epochs=1, seed=0, fairness="cf", alpha=1.0, beta=1.0)
    model.learn(240)
    res = evaluate_group_fairness(model, CounterfactualPair(AllelopathicHarvestEnv.from_preset("tiny"), mode="extreme"), n_episodes=1)
    assert {"cf_gap", "cf_norm", "dp"} <= set(res)


def test_save_load_keeps_configuration(tmp_path):
    model = FairPPO("MlpPolicy", game_env(), **KW, fairness="csp", alpha=0.25, beta=0.75, fairness_coef=0.5)
    model.save(tmp_path / "m")
    loaded = FairPPO.load(tmp_path / "m", env=game_env())
    assert (loaded.fairness, loaded.alpha, loaded.beta, loaded.fairness_coef) == ("csp", 0.25, 0.75, 0.5)
    loaded.learn(80)


def test_groups_follow_the_stakeholders_where_the_infos_give_none():
    """A game that reports no group in its infos: the penalty's groups are its `stakeholders`' (read again when an
    episode starts, since DisparityGame redraws them), as the game declares them."""
    vec = make_multiagent_vec_env(NoGroups(n_agents=4), n_instances=2)
    model = FairPPO("MlpPolicy", vec, n_steps=40, batch_size=40, n_epochs=1, seed=0, fairness="dp", alpha=1.0, beta=1.0)
    seen = []

    class Check(BaseCallback):
        def _on_step(self):
            tracker = model.fairness_term.tracker
            declared = np.concatenate([g.stakeholders.groups for g in vec.unwrapped.par_envs])
            seen.append(np.array_equal(tracker._cur[0], declared))
            return True

    model.learn(160, callback=Check())
    assert seen and all(seen)


# ---------------------------------------------------------------------------- bad input
class NoGroups(DisparityGame):
    def _infos(self, benefits=None):
        return {a: {} if benefits is None else {"benefits": benefits} for a in self.agents}


class OneGroup(DisparityGame):
    def reset(self, seed=None, options=None):
        return super().reset(seed=seed, options={"groups": np.zeros(self.n_agents, dtype=int)})


@pytest.mark.parametrize(
    "kwargs, env_fn, match",
    [
        (dict(fairness="eo"), game_env, "fairness must be one of"),
        (dict(alpha=-0.1), game_env, "alpha"),
        (dict(beta=-1), game_env, "beta"),
        (dict(fairness_coef=float("nan")), game_env, "fairness_coef"),
        ({}, lambda: __import__("gymnasium").make("CartPole-v1"), "multi-agent VecEnv"),
        (dict(agents_per_instance=3), game_env, r"agents_per_instance=3 does not match the env, whose games have 4 agents"),
        (dict(agents_per_instance=2), game_env, r"agents_per_instance=2 does not match the env"),  # divides 8 slots, pools games
        (dict(protected_group=1.5), game_env, "protected_group"),
        (dict(wandb="yes"), game_env, "wandb"),
    ],
)
def test_bad_input_fails_at_construction(kwargs, env_fn, match):
    with pytest.raises(ValueError, match=match):
        FairPPO("MlpPolicy", env_fn(), **kwargs)


@pytest.mark.parametrize(
    "kwargs, env_fn, match",
    [
        ({}, lambda: make_multiagent_vec_env(OneGroup(n_agents=4)), "single group"),
        (dict(fairness="cf"), game_env, "CounterfactualPair"),
    ],
)
def test_infos_are_checked_from_the_first_reset(kwargs, env_fn, match):
    """What only the infos show is checked when training starts, from SB3's own reset: construction never resets."""
    env = env_fn()
    model = FairPPO("MlpPolicy", env, **kwargs)
    with pytest.raises(ValueError, match=match):
        model.learn(10)


def test_group_figures_known_answer():
    out = episode_figures([4.0, 2.0, 1.0, 1.0], [0, 0, 1, 1], factors=[0, 1, 0, 1])
    # every signed gap positive when the protected group (1) is ahead: here it is behind
    assert out["dp"] == pytest.approx(-2.0) and out["dp_norm"] == pytest.approx((2 - 6) / 8)
    assert out["csp_norm_0"] == pytest.approx((1 - 4) / 5) and out["csp_norm_1"] == pytest.approx((1 - 2) / 3)
    out = episode_figures([3.0, 1.0, 1.0, 1.0], [0, 0, 1, 1], twins=[2, 3, 0, 1])
    assert out["cf_gap"] == pytest.approx(-1.0) and out["cf_norm"] == pytest.approx(-2 / 6)
