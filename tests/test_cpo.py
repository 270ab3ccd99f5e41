"""CPO (Achiam et al. 2017) on a fairness gap: the step's solver against a brute-force solution and a worked example,
TRPO's update exactly when no constraint is set, a constraint that is kept, saving, logging and bad input."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
import torch as th
from gymnasium import spaces
from sb3_contrib import TRPO
from stable_baselines3.common.logger import configure

from sb3_fair import CPO
from sb3_fair.common.protocol import LONG_TERM_FAIRNESS, SHORT_TERM_FAIRNESS
from sb3_fair.cpo import cpo_step


def _solve(q_mat: np.ndarray, g: np.ndarray, b: np.ndarray, c: float, delta: float) -> np.ndarray:
    h_inv = np.linalg.inv(q_mat)
    step = cpo_step(g @ h_inv @ g, g @ h_inv @ b, b @ h_inv @ b, c, delta)
    return step.g_coef * h_inv @ g + step.b_coef * h_inv @ b


def test_a_worked_example() -> None:
    """max x1 + x2 subject to x1 <= 0.5 and |x| <= 1 (H = I, δ = 0.5): x = (0.5, sqrt(0.75))."""
    x = _solve(np.eye(2), np.array([1.0, 1.0]), np.array([1.0, 0.0]), -0.5, 0.5)
    np.testing.assert_allclose(x, [0.5, math.sqrt(0.75)], atol=1e-9)
    # the same constraint further out does not cut the trust region: TRPO's step
    step = cpo_step(2.0, 1.0, 1.0, -1.5, 0.5)
    assert step.case == "unconstrained" and step.nu == 0.0
    np.testing.assert_allclose(step.g_coef * np.array([1.0, 1.0]), [math.sqrt(0.5), math.sqrt(0.5)])
    # violated and out of reach (c = 1.5 > sqrt(2δ s) = 1): the recovery step, straight down the cost's gradient
    step = cpo_step(2.0, 1.0, 1.0, 1.5, 0.5)
    assert step.case == "recovery" and step.g_coef == 0.0 and step.b_coef == pytest.approx(-1.0)
    # violated but reachable (c = 0.5): the step lands on the constraint, x1 = -0.5, with the best x2
    x = _solve(np.eye(2), np.array([1.0, 1.0]), np.array([1.0, 0.0]), 0.5, 0.5)
    np.testing.assert_allclose(x, [-0.5, math.sqrt(0.75)], atol=1e-9)


def test_the_step_is_the_best_point_of_the_trust_region_that_keeps_the_constraint() -> None:
    """Against SLSQP on random problems (2-4 dimensions, both signs of c, three trust-region sizes)."""
    from scipy.optimize import minimize

    rng = np.random.default_rng(0)
    checked = 0
    for _ in range(60):
        d = int(rng.integers(2, 5))
        m = rng.normal(size=(d, d))
        h = m @ m.T + 0.1 * np.eye(d)
        g, b = rng.normal(size=d), rng.normal(size=d)
        c, delta = float(rng.normal() * rng.choice([0.01, 0.1, 1.0])), float(rng.choice([0.01, 0.1, 1.0]))
        h_inv = np.linalg.inv(h)
        step = cpo_step(g @ h_inv @ g, g @ h_inv @ b, b @ h_inv @ b, c, delta)
        if step.case == "recovery":  # no feasible point: the cost's own step to the trust region's edge
            assert c - math.sqrt(2 * delta * (b @ h_inv @ b)) > 0
            continue
        x = step.g_coef * h_inv @ g + step.b_coef * h_inv @ b
        constraints = [{"type": "ineq", "fun": lambda y: -(c + b @ y)}, {"type": "ineq", "fun": lambda y: delta - 0.5 * y @ h @ y}]
        best = max((minimize(lambda y: -g @ y, rng.normal(size=d) * 0.01, constraints=constraints, method="SLSQP",
                             options={"ftol": 1e-12, "maxiter": 500}) for _ in range(4)), key=lambda r: -r.fun)
        assert c + b @ x <= 1e-7 and 0.5 * x @ h @ x <= delta * (1 + 1e-7)
        np.testing.assert_allclose(x, best.x, rtol=1e-4, atol=1e-6)
        checked += 1
    assert checked > 40


def test_parallel_gradients_give_the_least_step_onto_the_plane() -> None:
    """g = b (H = I): max bᵀx subject to bᵀx <= 0.025 is any point of that plane; CPO's limit is its nearest, 0.25 b
    for |b|² = 0.1. Also with no reward gradient: onto the plane when the constraint is violated, else no step."""
    step = cpo_step(0.1, 0.1, 0.1, -0.025, 0.01)
    assert (step.g_coef, step.b_coef, step.case) == (0.0, pytest.approx(0.25), "constrained")
    x = _solve(np.eye(2), np.array([0.3, 0.1]), np.array([0.3, 0.1]), -0.025, 0.01)
    np.testing.assert_allclose(x, 0.25 * np.array([0.3, 0.1]))
    step = cpo_step(0.0, 0.0, 1.0, 0.05, 0.01)
    assert (step.g_coef, step.b_coef) == (0.0, pytest.approx(-0.05))
    assert cpo_step(0.0, 0.0, 1.0, -0.05, 0.01)[:2] == (0.0, 0.0)


@pytest.mark.parametrize("bad", [dict(q=math.nan, r=0.0, s=1.0, c=0.0, max_kl=0.01), dict(q=1.0, r=0.0, s=1.0, c=0.0, max_kl=0.0)])
def test_the_solver_refuses_what_it_cannot_use(bad) -> None:
    with pytest.raises(ValueError, match="q|max_kl"):
        cpo_step(**bad)


class Greedy(gym.Env):
    """A bandit with fairness signals: action 1 earns 1 and leaves a gap of 1, action 0 earns 0.2 and no gap."""

    observation_space = spaces.Box(-1.0, 1.0, (1,), np.float32)
    action_space = spaces.Discrete(2)

    def __init__(self) -> None:
        self.t = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(1, np.float32), {SHORT_TERM_FAIRNESS: 0.0, LONG_TERM_FAIRNESS: 0.0}

    def step(self, action):
        self.t += 1
        gap = float(action == 1)
        info = {SHORT_TERM_FAIRNESS: gap, LONG_TERM_FAIRNESS: 0.0}
        return np.zeros(1, np.float32), 1.0 if action == 1 else 0.2, False, self.t >= 10, info


def _share_of_ones(model) -> float:
    obs = np.zeros((1, 1), np.float32)
    with th.no_grad():
        return float(model.policy.get_distribution(th.as_tensor(obs)).distribution.probs[0, 1])


def test_with_no_limit_cpo_is_trpo() -> None:
    kwargs = dict(n_steps=128, batch_size=64, seed=3)
    trpo = TRPO("MlpPolicy", "CartPole-v1", **kwargs).learn(256)  # each built and trained in turn: seeding is global
    cpo = CPO("MlpPolicy", "CartPole-v1", **kwargs).learn(256)
    assert not cpo.constrained and cpo.cost_critic is None
    for (name, a), b in zip(trpo.policy.state_dict().items(), cpo.policy.state_dict().values(), strict=True):
        assert th.equal(a, b), name


def test_the_constraint_is_kept(tmp_path) -> None:
    """TRPO learns to take the gap-making action; CPO with a mean gap of at most 0.2 keeps it rare."""
    kwargs = dict(n_steps=200, batch_size=100, learning_rate=3e-3, seed=0)
    free = CPO("MlpPolicy", Greedy(), **kwargs).learn(4000)
    bound = CPO("MlpPolicy", Greedy(), cost_limit=0.2, **kwargs)
    bound.set_logger(configure(str(tmp_path), ["csv"]))
    bound.learn(4000)
    assert _share_of_ones(free) > 0.9
    assert 0.1 < _share_of_ones(bound) < 0.3  # the best policy that keeps the limit: action 1 with probability 0.2
    assert bound.last_step is not None
    import csv

    rows = list(csv.DictReader((tmp_path / "progress.csv").open()))
    assert {"cpo/cost", "cpo/nu", "cpo/recovery", "cpo/cost_value_loss", "fairness/short_term"} <= set(rows[0])
    rows = [r for r in rows if r["cpo/cost"]]  # the first dump comes before the first update
    assert float(rows[0]["cpo/cost"]) == pytest.approx(0.5, abs=0.15)  # the first rollout: a coin flip per step
    assert float(rows[-1]["cpo/cost"]) < 0.35
    # the line search keeps the constrained steps, also those taken while the constraint is violated
    kept = [float(r["train/is_line_search_success"]) for r in rows if r["cpo/constrained"] == "1.0"]
    assert len(kept) > 5 and np.mean(kept) > 0.8


def test_several_envs_and_a_time_limit(tmp_path) -> None:
    """Two sub-envs whose episodes a time limit cuts (the cost is bootstrapped there), a sub-sampled actor batch."""
    from stable_baselines3.common.env_util import make_vec_env

    env = make_vec_env(Greedy, n_envs=2, seed=0)
    model = CPO("MlpPolicy", env, cost_limit=0.2, n_steps=100, batch_size=100, learning_rate=3e-3, sub_sampling_factor=2,
                seed=0)
    model.learn(6000)
    assert 0.05 < _share_of_ones(model) < 0.4


def test_an_unreachable_limit_takes_recovery_steps_only(tmp_path) -> None:
    model = CPO("MlpPolicy", Greedy(), cost_limit=0.0, n_steps=100, batch_size=50, seed=1)
    model.set_logger(configure(str(tmp_path), ["csv"]))
    model.learn(600)
    import csv

    rows = [r for r in csv.DictReader((tmp_path / "progress.csv").open()) if r["cpo/recovery"]]
    assert len(rows) == 5 and all(float(r["cpo/recovery"]) == 1.0 for r in rows)
    assert model.last_step.case == "recovery" and model.last_step.g_coef == 0.0
    assert _share_of_ones(model) < 0.5


def test_saved_and_loaded_with_its_cost_critic(tmp_path) -> None:
    model = CPO("MlpPolicy", Greedy(), cost_limit=0.3, cost_signal="short_term", cost_gae_lambda=1.0, n_steps=64,
                batch_size=32, seed=0).learn(128)
    model.save(tmp_path / "cpo")
    loaded = CPO.load(tmp_path / "cpo", env=Greedy())
    assert (loaded.cost_limit, loaded.cost_signal, loaded.cost_gae_lambda) == (0.3, "short_term", 1.0)
    for a, b in zip(model.cost_critic.state_dict().values(), loaded.cost_critic.state_dict().values(), strict=True):
        assert th.equal(a, b)
    loaded.learn(64)  # goes on training
    assert model.fairness_config() == {"cost_limit": 0.3, "cost_signal": "short_term", "cost_gae_lambda": 1.0}


def test_a_trpo_zip_loads_as_trpo(tmp_path) -> None:
    TRPO("MlpPolicy", "CartPole-v1", n_steps=64, batch_size=32, seed=0).save(tmp_path / "trpo")
    model = CPO.load(tmp_path / "trpo")
    assert model.cost_limit is None and not model.fairness_active()
    with pytest.raises(ValueError, match=r"CPO.load: cost_limit=0.1, but the model was saved with cost_limit=None"):
        CPO.load(tmp_path / "trpo", cost_limit=0.1)


def test_a_loaded_model_keeps_its_constraint(tmp_path) -> None:
    CPO("MlpPolicy", Greedy(), cost_limit=0.3, n_steps=64, batch_size=32, seed=0).save(tmp_path / "cpo")
    assert CPO.load(tmp_path / "cpo", cost_limit=0.1).cost_limit == 0.1  # another limit: the same critic serves
    with pytest.raises(ValueError, match="keeps whether it has a constraint"):
        CPO.load(tmp_path / "cpo", cost_limit=None)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(cost_limit=-0.1), "cost_limit must be a finite number >= 0"),
        (dict(cost_limit="0.1"), "cost_limit must be a number"),
        (dict(cost_limit=math.inf), "cost_limit must be a finite number"),
        (dict(cost_limit=0.1, cost_signal="gap"), r"cost_signal must be one of \['short_term', 'long_term', 'cost'\]"),
        (dict(cost_limit=0.1, cost_gae_lambda=1.5), "cost_gae_lambda must be a probability"),
        (dict(cost_signal="long_term"), "cost_signal='long_term' is used only with a constraint"),
        (dict(cost_gae_lambda=0.9), "cost_gae_lambda=0.9 is used only with a constraint"),
    ],
)
def test_bad_settings_are_refused_at_construction(kwargs, match) -> None:
    with pytest.raises(ValueError, match=match):
        CPO("MlpPolicy", "CartPole-v1", **kwargs)


def test_an_env_without_fairness_signals_is_named() -> None:
    model = CPO("MlpPolicy", "CartPole-v1", cost_limit=0.1, n_steps=32, batch_size=32)
    with pytest.raises(ValueError, match=r"CPO\(cost_signal='short_term'\).*short_term_fairness"):
        model.learn(32)
