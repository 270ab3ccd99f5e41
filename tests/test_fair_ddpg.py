"""FairDDPG / FairTD3 (paper 002): Fair-E equivariance, Fair-ER gradient and its one-forward loss, lambda = 0 is SB3."""

from __future__ import annotations

import csv

import gymnasium as gym
import numpy as np
import pytest
import torch as th
from gymnasium import spaces
from stable_baselines3 import DDPG, TD3
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

import sb3_fair  # noqa: F401
from sb3_fair import FairDDPG, FairTD3, Stakeholders
from sb3_fair.common.symmetry import AgentSymmetry
from sb3_fair.ddpg import FairEPolicy, equivariance_distance
from sb3_fair.envs import PursuitEvasionEnv

KW = dict(learning_starts=50, batch_size=32, seed=0)


def pursuit(**kwargs):
    return gym.make("sb3_fair/PursuitEvasion-v0", max_steps=60, **kwargs)


def random_obs(n=16, dim=18, seed=0):
    return np.random.default_rng(seed).uniform(-1, 1, (n, dim)).astype(np.float32)


@pytest.mark.parametrize("algo", [FairDDPG, FairTD3])
def test_fair_e_is_exactly_equivariant_for_every_permutation(algo):
    model = algo("FairEPolicy", pursuit(), **KW)
    sym = model.symmetry
    assert len(sym.permutations()) == 6
    obs = random_obs()
    with th.no_grad():
        act = model.actor(th.as_tensor(obs)).numpy()
        for perm in sym.permutations():
            permuted = model.actor(th.as_tensor(sym.permute_obs(obs, perm))).numpy()
            np.testing.assert_allclose(permuted, sym.permute_action(act, perm), atol=1e-6)
    # and the plain MLP actor is not
    plain = algo("MlpPolicy", pursuit(), **KW)
    with th.no_grad():
        a = plain.actor(th.as_tensor(obs)).numpy()
        b = plain.actor(th.as_tensor(sym.permute_obs(obs, (1, 0, 2)))).numpy()
    assert np.abs(b - sym.permute_action(a, (1, 0, 2))).max() > 1e-3


def test_fair_e_policy_works_with_sb3_td3():
    env = PursuitEvasionEnv(max_steps=60)
    model = TD3(FairEPolicy, env, policy_kwargs={"agent_obs": env.symmetry.agent_obs}, **KW)
    model.learn(80)
    obs = random_obs(4)
    a = model.predict(obs, deterministic=True)[0]
    b = model.predict(env.symmetry.permute_obs(obs, (2, 0, 1)), deterministic=True)[0]
    np.testing.assert_allclose(b, env.symmetry.permute_action(a, (2, 0, 1)), atol=1e-5)


@pytest.mark.parametrize("fair, base", [(FairDDPG, DDPG), (FairTD3, TD3)])
def test_lambda_zero_is_exactly_sb3(fair, base):
    a = fair("MlpPolicy", pursuit(), equivariance_coef=0.0, **KW).learn(200)
    b = base("MlpPolicy", pursuit(), **KW).learn(200)
    for p, q in zip(a.policy.parameters(), b.policy.parameters()):
        assert th.equal(p, q)
    obs = random_obs(5)
    np.testing.assert_array_equal(a.predict(obs)[0], b.predict(obs)[0])


def test_regulariser_gradient_reaches_actor_and_lowers_error():
    model = FairDDPG("MlpPolicy", pursuit(), equivariance_coef=1.0, **KW)
    obs = th.as_tensor(random_obs(64))
    def error():
        model._perm_rng = np.random.default_rng(1)
        with th.no_grad():
            return model.equivariance_term(obs, model.actor(obs)).mean().item()
    before = error()
    opt = th.optim.Adam(model.actor.parameters(), lr=1e-3)
    for step in range(150):
        loss = model.equivariance_term(obs, model.actor(obs)).mean()
        opt.zero_grad()
        loss.backward()
        if step == 0:
            grads = [p.grad for p in model.actor.parameters()]
            assert all(g is not None for g in grads) and sum(float(g.abs().sum()) for g in grads) > 0
        opt.step()
    assert error() < 0.5 * before


def test_fair_er_changes_training_and_logs(tmp_path):
    from stable_baselines3.common.logger import configure

    base = FairTD3("MlpPolicy", pursuit(), equivariance_coef=0.0, **KW)
    reg = FairTD3("MlpPolicy", pursuit(), equivariance_coef=0.9, **KW)
    reg.set_logger(configure(str(tmp_path), ["csv"]))
    base.learn(150)
    reg.learn(150, log_interval=1)
    assert any(not th.equal(p, q) for p, q in zip(base.actor.parameters(), reg.actor.parameters()))
    text = (tmp_path / "progress.csv").read_text()
    assert "fairness/equivariance_error" in text and "fairness/equivariance_reg" in text
    with open(tmp_path / "progress.csv") as f:
        rows = [r for r in csv.DictReader(f) if r["fairness/equivariance_error"]]
    error = np.array([float(r["fairness/equivariance_error"]) for r in rows])
    reg = np.array([float(r["fairness/equivariance_reg"]) for r in rows])
    assert len(error) > 0 and np.all((error >= 0) & (error <= 2))  # 1 - cos lies in [0, 2]
    np.testing.assert_allclose(reg, 0.9 * error, rtol=1e-6)


@pytest.mark.parametrize("policy", ["MlpPolicy", "FairEPolicy"])
@pytest.mark.parametrize("algo", [FairDDPG, FairTD3])
@pytest.mark.parametrize("distance", ["cosine", "mse"])
def test_actor_loss_is_td3s_plus_lambda_times_the_mean_distance(algo, policy, distance):
    """TD3's actor loss plus lambda times the mean distance of mu(sigma . s) to the detached sigma . mu(s), with sigma
    drawn from _perm_rng; the logged error is that mean (kept as a detached tensor until train() averages)."""
    model = algo(policy, pursuit(), equivariance_coef=0.5, equivariance_distance=distance, **KW)
    obs = th.as_tensor(random_obs(64))
    model._perm_rng = np.random.default_rng(7)
    errors = []
    loss = model._actor_loss(obs, errors)
    model._perm_rng = np.random.default_rng(7)
    k = model._perm_rng.integers(0, 6, size=64)
    with th.no_grad():
        actions = model.actor(obs)
        obs_sigma = th.gather(obs, 1, model._obs_perm[k])
        target = th.gather(actions, 1, model._act_perm[k])
        expected_eqv = equivariance_distance(model.actor(obs_sigma), target, 3, distance).mean()
        expected = -model.critic.q1_forward(obs, actions).mean() + 0.5 * expected_eqv
    assert th.equal(loss.detach(), expected) and th.equal(errors[0], expected_eqv) and not errors[0].requires_grad


def test_actor_backward_gives_backward_gradients_exactly():
    """_actor_backward asks autograd for the actor's gradients only; they are backward()'s, bit for bit."""
    model = FairTD3("MlpPolicy", pursuit(), equivariance_coef=0.5, **KW)
    obs = th.as_tensor(random_obs(64))
    model._perm_rng = np.random.default_rng(3)
    loss = model._actor_loss(obs, [])
    model.actor.optimizer.zero_grad()
    loss.backward(retain_graph=True)
    expected = [p.grad.clone() for p in model.actor.parameters()]
    model.actor.optimizer.zero_grad()
    model.critic.optimizer.zero_grad()
    model._actor_backward(loss)
    for p, g in zip(model.actor.parameters(), expected):
        assert th.equal(p.grad, g)
    assert all(p.grad is None for p in model.critic.parameters())  # the critic's unused gradients are not computed


class BatchNormExtractor(BaseFeaturesExtractor):
    def __init__(self, observation_space):
        super().__init__(observation_space, features_dim=18)
        self.norm = th.nn.BatchNorm1d(18)

    def forward(self, obs):
        return self.norm(obs)


def test_an_actor_with_batch_norm_trains():
    model = FairTD3("MlpPolicy", pursuit(), equivariance_coef=0.5,
                    policy_kwargs={"features_extractor_class": BatchNormExtractor}, **KW)
    model.learn(80)
    assert all(th.isfinite(p).all() for p in model.actor.parameters())


@pytest.mark.parametrize("algo", [FairDDPG, FairTD3])
def test_fair_er_is_reproducible_seed_for_seed(algo):
    a = algo("MlpPolicy", pursuit(), equivariance_coef=0.5, **KW).learn(150)
    b = algo("MlpPolicy", pursuit(), equivariance_coef=0.5, **KW).learn(150)
    for p, q in zip(a.policy.parameters(), b.policy.parameters()):
        assert th.equal(p, q)


def test_equivariance_distance_values():
    a = th.tensor([[1.0, 0.0, 0.0, 1.0]])
    assert equivariance_distance(a, a, 2).item() == pytest.approx(0.0)
    b = th.tensor([[-1.0, 0.0, 0.0, 1.0]])  # first agent opposite: 1 - cos = 2; second equal: 0
    assert equivariance_distance(a, b, 2).item() == pytest.approx(1.0)
    assert equivariance_distance(a, b, 2, "mse").item() == pytest.approx(1.0)  # (4/2 + 0) / 2


def test_save_load_keeps_configuration(tmp_path):
    model = FairDDPG("FairEPolicy", pursuit(), equivariance_coef=0.5, equivariance_distance="mse", **KW)
    model.learn(60)
    model.save(tmp_path / "m.zip")
    loaded = FairDDPG.load(tmp_path / "m.zip", env=pursuit())
    assert loaded.equivariance_coef == 0.5 and loaded.equivariance_distance == "mse"
    assert isinstance(loaded.policy, FairEPolicy)
    obs = random_obs(3)
    np.testing.assert_allclose(loaded.predict(obs)[0], model.predict(obs)[0], atol=1e-6)


class NoSymmetryEnv(gym.Env):
    def __init__(self, action_dim=6):
        self.stakeholders = Stakeholders(names=("a", "b", "c"), groups=np.arange(3))
        self.observation_space = spaces.Box(-1, 1, (18,), np.float32)
        self.action_space = spaces.Box(-1, 1, (action_dim,), np.float32)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(18, np.float32), {}

    def step(self, action):
        return np.zeros(18, np.float32), 0.0, True, False, {"benefits": np.zeros(3)}


def test_bad_input_fails_at_construction():
    with pytest.raises(ValueError, match="equivariance_coef"):
        FairDDPG("MlpPolicy", pursuit(), equivariance_coef=-0.1)
    with pytest.raises(ValueError, match="equivariance_coef"):
        FairTD3("MlpPolicy", pursuit(), equivariance_coef=float("nan"))
    with pytest.raises(ValueError, match="equivariance_distance"):
        FairDDPG("MlpPolicy", pursuit(), equivariance_distance="l1")
    with pytest.raises(ValueError, match="symmetry"):
        FairDDPG("MlpPolicy", NoSymmetryEnv(), equivariance_coef=0.5)
    FairDDPG("MlpPolicy", NoSymmetryEnv(), equivariance_coef=0.0)  # no symmetry needed at lambda = 0
    bad = NoSymmetryEnv(action_dim=9)
    bad.symmetry = AgentSymmetry(n_agents=3, obs_dim=18, action_dim=6, obs_index=lambda p: np.arange(18))
    with pytest.raises(ValueError, match="size"):
        FairTD3("MlpPolicy", bad, equivariance_coef=0.5)
    with pytest.raises(ValueError, match="agent"):
        FairDDPG("FairEPolicy", pursuit(observation="absolute"))
    FairDDPG("MlpPolicy", gym.make("Pendulum-v1"))  # at zero weight: the parent, without figures (a log notice, no warning)


def test_a_frozen_actor_still_trains_the_critic():
    model = FairTD3("MlpPolicy", pursuit(), equivariance_coef=0.5, **KW)
    for p in model.actor.parameters():
        p.requires_grad_(False)
    before = [p.clone() for p in model.actor.parameters()]
    model.learn(150)
    assert all(th.equal(p, q) for p, q in zip(before, model.actor.parameters()))
