"""Envs that sb3-fair did not write (MO-Gymnasium, mpe2, PettingZoo's butterfly games), declared with
DeclareStakeholders / ParallelDeclareStakeholders: the contract is found everywhere, survives every copy, and the Fair
classes train on them with the fairness figures logged (issue 46)."""

from __future__ import annotations

import copy
import pickle
import warnings

import cloudpickle
import gymnasium as gym
import numpy as np
import pytest
from stable_baselines3 import DQN, PPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.logger import configure
from stable_baselines3.common.vec_env import SubprocVecEnv

from pettingzoo import ParallelEnv

from sb3_fair import CPO, FairDQN, FairPPO, Stakeholders
from sb3_fair.common.callbacks import FairnessCallback
from sb3_fair.common.evaluation import evaluate_fairness
from sb3_fair.common.protocol import get_env_attr, get_stakeholders, is_stakeholders_supported
from sb3_fair.wrappers import (
    BlackDeath,
    DeclareStakeholders,
    FairnessMonitor,
    ParallelDeclareStakeholders,
    ParallelFairnessMonitor,
    ParallelFairnessSignals,
    make_multiagent_vec_env,
)

mo_gym = pytest.importorskip("mo_gymnasium", reason='the foreign extra: pip install -e ".[test]"')
pytest.importorskip("mpe2", reason='the foreign extra: pip install -e ".[test]"')
from mo_gymnasium.wrappers import LinearReward  # noqa: E402
from mpe2 import simple_adversary_v3, simple_spread_v3, simple_tag_v3  # noqa: E402
from pettingzoo.butterfly import knights_archers_zombies_v11 as kaz  # noqa: E402
from pettingzoo.test import parallel_api_test  # noqa: E402

warnings.filterwarnings("ignore", message=".*precision lowered.*")
FISH_WOOD = {"names": ["fish", "wood"], "groups": [0, 1]}


def fishwood(**kwargs) -> gym.Env:
    """MO-Gymnasium's fishwood-v0 (its two objectives as two stakeholders), scalarised for SB3 by MO-Gymnasium."""
    env = DeclareStakeholders(mo_gym.make("fishwood-v0"), stakeholders=FISH_WOOD, **kwargs)
    return LinearReward(env, weight=np.array([0.5, 0.5]))


def spread(**kwargs):
    """mpe2's simple_spread_v3: four agents, the first two the protected group; local rewards so that they differ."""
    game = simple_spread_v3.parallel_env(N=4, max_cycles=10, local_ratio=0.5, **kwargs)
    return ParallelDeclareStakeholders(game, stakeholders=[1, 1, 0, 0])


def zombies(max_cycles: int = 25):
    """PettingZoo's Knights-Archers-Zombies: archers (protected) and knights; agents die (zombies every 2 steps, and an
    agent that touches the bottom line dies, so that random play loses agents within a few dozen steps)."""
    game = kaz.parallel_env(max_cycles=max_cycles, spawn_delay=2, max_zombies=20, line_death=True)
    return ParallelDeclareStakeholders(game, stakeholders=[1, 1, 0, 0])


def fairness_columns(tmp_path, model, steps, callback=None) -> set[str]:
    model.set_logger(configure(str(tmp_path), ["csv"]))
    model.learn(steps, callback=callback, log_interval=1)
    header = (tmp_path / "progress.csv").read_text().splitlines()[0].split(",")
    return {c for c in header if c.startswith("fairness/")}


# ---------------------------------------------------------------------------- the one look-up
def test_a_wrapper_declaration_is_found_through_every_layer():
    env = fishwood()
    sh = get_stakeholders(env)
    assert sh.names == ("fish", "wood") and is_stakeholders_supported(env)
    assert get_env_attr(env, "stakeholders") is sh  # Gymnasium's get_wrapper_attr: the wrapper's own
    assert not hasattr(env.unwrapped, "stakeholders")  # the user's env is not edited
    vec = make_vec_env(fishwood, n_envs=2)
    assert get_stakeholders(vec).names == sh.names and get_stakeholders(vec).groups.tolist() == [0, 1]
    assert get_stakeholders(FairnessMonitor(env)) is sh


def test_the_declaration_survives_every_copy():
    env = fishwood()
    for clone in (pickle.loads(cloudpickle.dumps(env)), copy.deepcopy(env), gym.make(env.spec)):
        assert get_stakeholders(clone).names == ("fish", "wood")
        clone.reset(seed=0)
        assert clone.step(0)[4]["benefits"].shape == (2,)
    game = spread()
    for clone in (pickle.loads(cloudpickle.dumps(game)), copy.deepcopy(game)):
        assert get_stakeholders(clone).groups.tolist() == [1, 1, 0, 0]
    # SuperSuit copies each game instance with cloudpickle; mpe2's games are EzPickle (rebuilt from their arguments)
    vec = make_multiagent_vec_env(spread(), n_instances=3)
    assert [get_stakeholders(g).groups.tolist() for g in vec.unwrapped.par_envs] == [[1, 1, 0, 0]] * 3


def test_stakeholders_set_on_an_ezpickle_game_are_lost_in_the_copies_and_said_so():
    """The issue's first report: the attribute set on mpe2's bare game (EzPickle) is dropped by SuperSuit's copy; the error names the
    wrapper that keeps it."""
    game = simple_spread_v3.parallel_env(N=4)
    game.unwrapped.stakeholders = Stakeholders(names=tuple(game.possible_agents), groups=np.array([1, 1, 0, 0]))
    with pytest.raises(ValueError, match=r"stakeholders were lost when SuperSuit copied it.*ParallelDeclareStakeholders"):
        make_multiagent_vec_env(game, n_instances=2)


def test_subprocess_vec_env_finds_the_declaration():
    vec = make_vec_env(fishwood, n_envs=2, vec_env_cls=SubprocVecEnv, vec_env_kwargs={"start_method": "spawn"})
    try:
        assert get_stakeholders(vec).names == ("fish", "wood")
        vec.reset()
        _, _, _, infos = vec.step(np.array([0, 1]))
        assert all(info["benefits"].shape == (2,) for info in infos)
    finally:
        vec.close()


# ---------------------------------------------------------------------------- a MO-Gymnasium env
def test_fishwood_benefits_are_its_vector_reward():
    env = DeclareStakeholders(mo_gym.make("fishwood-v0"), stakeholders=FISH_WOOD)
    env.reset(seed=0)
    total = np.zeros(2)
    for _ in range(50):
        _, reward, _, _, info = env.step(1)
        np.testing.assert_array_equal(info["benefits"], reward)
        total += info["benefits"]
    assert total[1] > 0  # wood was gathered


def test_fair_dqn_trains_on_fishwood_and_logs_the_figures(tmp_path):
    model = FairDQN("MlpPolicy", fishwood(), learning_starts=50, seed=0, verbose=0)
    assert model.env.env_is_wrapped(FairnessMonitor) == [True]  # the Fair class added the monitor: it found the declaration
    columns = fairness_columns(tmp_path, model, 400)
    assert {"fairness/dp", "fairness/group_0_mean", "fairness/group_1_mean", "fairness/log_nash"} <= columns
    res = evaluate_fairness(model, fishwood(), n_episodes=1)
    assert {"dp", "log_nash", "utilitarian"} <= set(res)


def test_plain_sb3_with_the_monitor_and_callback_logs_the_figures(tmp_path):
    model = DQN("MlpPolicy", FairnessMonitor(fishwood()), learning_starts=50, seed=0, verbose=0)
    columns = fairness_columns(tmp_path, model, 400, callback=FairnessCallback())
    assert "fairness/dp" in columns


# ---------------------------------------------------------------------------- an mpe2 game
def test_the_declared_mpe2_game_passes_pettingzoo_api_test():
    parallel_api_test(spread(), num_cycles=20)


def test_fair_ppo_trains_on_mpe2_with_the_penalty_and_the_figures(tmp_path):
    vec = make_multiagent_vec_env(spread(), n_instances=2)
    model = FairPPO("MlpPolicy", vec, fairness="dp", alpha=0.5, beta=0.5, n_steps=40, batch_size=80, n_epochs=1, seed=0)
    columns = fairness_columns(tmp_path, model, 640)  # the update's figures are logged with the next rollout's
    assert {"fairness/dp", "fairness/dp_abs", "fairness/penalty_retro", "fairness/adv_weight_std"} <= columns
    tracker = model.fairness_term.tracker
    assert tracker._cur[0].tolist() == [1, 1, 0, 0] * 2  # the groups of the declaration, slot by slot


def test_fair_ppo_at_zero_weight_is_ppo_on_mpe2():
    ppo = PPO("MlpPolicy", make_multiagent_vec_env(spread(), 2), n_steps=20, batch_size=40, n_epochs=1, seed=3)
    ppo.learn(80)  # built and trained before the other: each seeds the global generators when it is built
    fair = FairPPO("MlpPolicy", make_multiagent_vec_env(spread(), 2), n_steps=20, batch_size=40, n_epochs=1, seed=3,
                   fairness_coef=0.0)
    fair.learn(80)
    for a, b in zip(ppo.policy.parameters(), fair.policy.parameters()):
        assert np.array_equal(a.detach().numpy(), b.detach().numpy())


# ---------------------------------------------------------------------------- agents that die
def test_a_game_whose_agents_die_is_refused_with_the_fix():
    vec = make_multiagent_vec_env(zombies(max_cycles=400), n_instances=1)
    vec.seed(0)
    vec.reset()
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="black_death=True"):
        for _ in range(400):
            vec.step(rng.integers(0, 6, size=4))


def test_black_death_keeps_every_slot_and_zero_benefits_after_death():
    game = BlackDeath(ParallelFairnessMonitor(zombies(max_cycles=400)))
    obs, _ = game.reset(seed=0)
    rng = np.random.default_rng(0)
    returns, dead_seen, summary = np.zeros(4), False, None
    while game.agents:
        live = set(game.env.agents)
        obs, rewards, terms, truncs, infos = game.step({a: int(rng.integers(6)) for a in game.agents})
        assert set(obs) == set(game.possible_agents) == set(infos)  # every agent, every step
        for i, a in enumerate(game.possible_agents):
            assert "benefits" in infos[a]
            if a not in live:  # dead before this step: nothing received, marked inactive, zero observation
                dead_seen = True
                assert infos[a]["active"] is False and rewards[a] == 0.0 and not np.any(obs[a])
                assert infos[a]["benefits"][i] == 0.0
        returns += next(iter(infos.values()))["benefits"]
        summary = next((i["fairness"] for i in infos.values() if "fairness" in i), summary)
    assert dead_seen and summary is not None
    np.testing.assert_allclose(summary["returns"], returns)


class Leaving(ParallelEnv):
    """Four agents whose observation is the step count; agent a0 leaves at step 2, the episode ends after 5."""

    metadata = {"name": "leaving"}
    possible_agents = ["a0", "a1", "a2", "a3"]
    stakeholders = Stakeholders(names=("a0", "a1", "a2", "a3"), groups=np.array([1, 1, 0, 0]))

    def observation_space(self, agent):
        return gym.spaces.Box(-10, 10, (1,))

    def action_space(self, agent):
        return gym.spaces.Discrete(2)

    def reset(self, seed=None, options=None):
        self.t, self.agents = 0, list(self.possible_agents)
        return {a: np.array([0.0], np.float32) for a in self.agents}, {a: {} for a in self.agents}

    def step(self, actions):
        assert set(actions) == set(self.agents)
        self.t += 1
        here = list(self.agents)
        obs = {a: np.array([float(self.t)], np.float32) for a in here}
        benefits = np.array([1.0 if a in here else 0.0 for a in self.possible_agents])
        infos = {a: {"benefits": benefits} for a in here}
        terms = {a: a == "a0" and self.t == 2 for a in here}
        truncs = {a: self.t == 5 for a in here}
        self.agents = [a for a in here if not (terms[a] or truncs[a])]
        return obs, {a: 1.0 for a in here}, terms, truncs, infos


def test_an_agent_is_absent_from_the_step_it_leaves():
    """The review's case: at the step a0 leaves, the next observation is already an absent one (zero, inactive) while
    its reward of that step is the game's; at the game's last step every observation is the game's."""
    game = BlackDeath(Leaving())
    game.reset(seed=0)
    seen = []
    while game.agents:
        obs, rewards, terms, truncs, infos = game.step({a: 0 for a in game.agents})
        seen.append((float(obs["a0"][0]), rewards["a0"], infos["a0"]["active"], terms["a0"], truncs["a0"]))
    assert seen == [(1.0, 1.0, True, False, False), (0.0, 1.0, False, False, False), (0.0, 0.0, False, False, False),
                    (0.0, 0.0, False, False, False), (0.0, 0.0, False, False, True)]
    assert float(obs["a1"][0]) == 5.0 and infos["a1"]["active"]  # the terminal observation a time limit bootstraps from


def test_fair_ppo_trains_on_knights_archers_zombies_with_black_death(tmp_path):
    vec = make_multiagent_vec_env(zombies(max_cycles=20), n_instances=2, black_death=True)
    model = FairPPO("MlpPolicy", vec, fairness="dp", n_steps=32, batch_size=64, n_epochs=1, seed=0)
    columns = fairness_columns(tmp_path, model, 512)
    assert {"fairness/dp", "fairness/group_1_mean"} <= columns


def test_the_penalty_leaves_out_the_prospects_of_absent_agents():
    """Rows whose agent is not in the game (BlackDeath's zero observation) are marked inactive, row for row, and their
    prospective return is 0 in the penalty, not the critic's value of a zero observation."""
    vec = make_multiagent_vec_env(zombies(max_cycles=60), n_instances=2, black_death=True)
    model = FairPPO("MlpPolicy", vec, fairness="dp", alpha=0.0, beta=1.0, n_steps=60, batch_size=120, n_epochs=1, seed=0)
    seen = {}
    original = model.train

    def train():
        buf, tracker = model.rollout_buffer, model.fairness_term.tracker
        seen["active"] = tracker.active.copy()
        seen["zero_obs"] = ~buf.observations.reshape(buf.buffer_size, buf.n_envs, -1).any(axis=-1)
        original()

    model.train = train
    model.learn(480)
    active = seen["active"]
    assert (~active).any() and active.any()
    np.testing.assert_array_equal(~active, seen["zero_obs"])


# ---------------------------------------------------------------------------- agents with different spaces
def test_different_spaces_are_refused_or_padded():
    def tag():
        game = simple_tag_v3.parallel_env(num_good=1, num_adversaries=2, num_obstacles=0, max_cycles=10)
        return ParallelDeclareStakeholders(game, stakeholders=[0, 0, 1])

    with pytest.raises(ValueError, match=r"different observation spaces.*pad=True"):
        make_multiagent_vec_env(tag())
    vec = make_multiagent_vec_env(tag(), n_instances=2, pad=True)
    assert vec.observation_space.shape == (10,) and vec.num_envs == 6
    PPO("MlpPolicy", vec, n_steps=16, batch_size=48, n_epochs=1, seed=0).learn(96)


# ---------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "stakeholders, benefits, match",
    [
        ({"groups": [0, 1, 1]}, "reward", r"3 stakeholders, but the env's reward has 2 objectives"),
        ({"groups": [0, 1], "colour": [1, 2]}, "reward", r"unknown keys \['colour'\]"),
        ({"names": ["fish"]}, "reward", "no 'groups'"),
        ("fish", "reward", "stakeholders must be"),
        (FISH_WOOD, "vector", r"benefits must be one of \['reward'\], 'info:<key>'"),
        (Stakeholders(names=("a", "b"), groups=np.array([0, 1])), 3, "benefits must be one of"),
    ],
)
def test_bad_declarations_are_refused_at_construction(stakeholders, benefits, match):
    with pytest.raises(ValueError, match=match):
        DeclareStakeholders(mo_gym.make("fishwood-v0"), stakeholders=stakeholders, benefits=benefits)


@pytest.mark.parametrize(
    "fn, match",
    [
        (lambda obs, r, te, tr, info: [1.0, 2.0, 3.0], r"benefits='short'.*one entry per stakeholder \(2\)"),
        (lambda obs, r, te, tr, info: [float("nan"), 0.0], r"benefits='short'.*must be finite: stakeholder 'fish'"),
    ],
)
def test_a_benefits_function_that_returns_wrong_values_is_refused_at_the_first_step(fn, match):
    fn.__name__ = "short"
    env = DeclareStakeholders(mo_gym.make("fishwood-v0"), stakeholders=FISH_WOOD, benefits=fn)
    env.reset(seed=0)
    with pytest.raises(ValueError, match=match):
        env.step(0)


def test_an_info_key_that_is_missing_is_named():
    env = DeclareStakeholders(mo_gym.make("fishwood-v0"), stakeholders=FISH_WOOD, benefits="info:gains")
    env.reset(seed=0)
    with pytest.raises(ValueError, match="benefits='info:gains': the step's info has no key 'gains'"):
        env.step(0)


def test_game_declarations_are_checked():
    with pytest.raises(ValueError, match=r"4 groups for 3 stakeholders"):
        ParallelDeclareStakeholders(simple_spread_v3.parallel_env(N=3), stakeholders=[1, 1, 0, 0])
    with pytest.raises(ValueError, match="a game's stakeholders are its agents"):
        ParallelDeclareStakeholders(
            simple_spread_v3.parallel_env(N=2), stakeholders=Stakeholders(names=("x", "y"), groups=np.array([0, 1]))
        )
    with pytest.raises(ValueError, match="already declares 4"):
        ParallelDeclareStakeholders(spread(), stakeholders=[1, 1, 0, 0])
    game = ParallelDeclareStakeholders(simple_spread_v3.parallel_env(N=2), stakeholders=[0, 1],
                                       benefits=lambda rewards, infos: [0.0])
    game.reset(seed=0)
    with pytest.raises(ValueError, match=r"benefits='<lambda>'.*one entry per stakeholder \(2\)"):
        game.step({a: 0 for a in game.agents})
    with pytest.raises(ValueError, match="black_death must be True or False"):
        make_multiagent_vec_env(spread(), black_death="yes")


# ---------------------------------------------------------------------------- config files
def test_a_config_declares_a_third_party_game_and_env():
    from sb3_fair.experiment.registry import make_env

    declare = [{"sb3_fair.wrappers.ParallelDeclareStakeholders": {"stakeholders": {"groups": [1, 1, 0, 0]}}}]
    kwargs = {"N": 4, "max_cycles": 10, "local_ratio": 0.5, "pad": False, "black_death": False}
    vec = make_env("mpe2.simple_spread_v3:parallel_env", n_envs=2, env_kwargs=kwargs, env_wrapper=declare, trusted=True)
    assert vec.num_envs == 8 and get_stakeholders(vec).groups.tolist() == [1, 1, 0, 0]
    FairPPO("MlpPolicy", vec, fairness="dp", n_steps=20, batch_size=80, n_epochs=1, seed=0).learn(160)
    with pytest.raises(ValueError, match=r"env_wrapper: 'sb3_fair.wrappers.DeclareStakeholders' is a gymnasium.core.Wrapper"):
        make_env("mpe2.simple_spread_v3:parallel_env", env_kwargs={"N": 4}, trusted=True,
                 env_wrapper=[{"sb3_fair.wrappers.DeclareStakeholders": {"stakeholders": [1, 1, 0, 0]}}])
    # MO-Gymnasium's LinearReward takes a NumPy weight, which a config cannot write: the module that registers the env
    # scalarises it, and the declaration reads the objectives where LinearReward keeps them
    gym.register("ThirdParty/FishWood-v0", entry_point=scalarised_fishwood)
    env_wrapper = [{"sb3_fair.wrappers.DeclareStakeholders": {"stakeholders": FISH_WOOD, "benefits": "info:vector_reward"}}]
    vec = make_env("ThirdParty/FishWood-v0", n_envs=2, env_wrapper=env_wrapper)  # sb3-fair's own wrapper: no trust
    assert get_stakeholders(vec).names == ("fish", "wood") and vec.env_is_wrapped(FairnessMonitor) == [True, True]
    vec.reset()
    assert vec.step(np.array([0, 1]))[3][0]["benefits"].shape == (2,)


def scalarised_fishwood() -> gym.Env:
    return LinearReward(mo_gym.make("fishwood-v0"), weight=np.array([0.5, 0.5]))


# ---------------------------------------------------------------------------- F-PPO, A-PPO and CPO on the derived gaps
class Infos(BaseCallback):
    def __init__(self):
        super().__init__()
        self.rows = []

    def _on_step(self):
        self.rows.append([dict(i) for i in self.locals["infos"]])
        return True


@pytest.mark.parametrize("game_name", ["adversary", "zombies"])
@pytest.mark.parametrize("algo", ["long_term", "a_ppo", "cpo"])
def test_every_long_term_method_sees_the_derived_gap_on_a_foreign_game(game_name, algo):
    """ParallelFairnessSignals on mpe2's simple_adversary (padded) and on Knights-Archers-Zombies (black death: its absent agents'
    infos carry the game's signals too): the rollout's Δs / Δl / cost rows are those the infos reported."""
    if game_name == "adversary":  # the adversary (group 1) and the two good agents: dense rewards of their own
        game = ParallelDeclareStakeholders(simple_adversary_v3.parallel_env(N=2, max_cycles=25), [1, 0, 0])
    else:  # each step in the game is a benefit: the gap is between the archers' and the knights' survival
        raw = kaz.parallel_env(max_cycles=40, spawn_delay=2, max_zombies=20, line_death=True)
        agents = raw.possible_agents
        game = ParallelDeclareStakeholders(raw, [1, 1, 0, 0], benefits=lambda rewards, infos: [a in infos for a in agents])
    signals = ParallelFairnessSignals(game, window=3, cost="short_term")
    vec = make_multiagent_vec_env(signals, n_instances=1, black_death=game_name == "zombies",
                                  pad=game_name == "adversary")
    steps, record = 32, Infos()
    if algo == "cpo":
        model = CPO("MlpPolicy", vec, cost_limit=0.05, cost_signal="cost", n_steps=steps, batch_size=64, seed=0)
    else:
        model = FairPPO("MlpPolicy", vec, fairness=algo, n_steps=steps, batch_size=64, n_epochs=1, seed=0)
    model.learn(2 * steps * vec.num_envs, callback=record)
    last = record.rows[-steps:]
    short = np.array([[i["short_term_fairness"] for i in row] for row in last])
    assert np.any(short > 0)
    if algo == "cpo":
        np.testing.assert_array_equal(np.array(model._cost_tracker.rows), [[i["cost"] for i in row] for row in last])
        return
    n = vec.num_envs
    np.testing.assert_array_equal(np.asarray(model.rollout_buffer.short_term).reshape(n, steps).T, short)
    long = np.array([[i["long_term_fairness"] for i in row] for row in last])
    np.testing.assert_array_equal(np.asarray(model.rollout_buffer.long_term).reshape(n, steps).T, long)


class NoRendering(gym.Env):
    metadata = {"render_modes": []}
    observation_space = gym.spaces.Box(0, 1, (1,))
    action_space = gym.spaces.Discrete(2)

    def __init__(self, render_mode=None):
        self.render_mode = render_mode

    def reset(self, *, seed=None, options=None):
        return np.zeros(1, dtype=np.float32), {}

    def step(self, action):
        return np.zeros(1, dtype=np.float32), 0.0, True, False, {}


def test_configs_do_not_ask_an_env_for_a_render_mode_it_lacks(recwarn):
    from sb3_fair.experiment.registry import make_env

    gym.register("ThirdParty/NoRendering-v0", entry_point=NoRendering)
    vec = make_env("ThirdParty/NoRendering-v0", n_envs=1)
    assert vec.envs[0].unwrapped.render_mode is None
    assert not [w for w in recwarn if "render_mode" in str(w.message)]
    assert make_env("CartPole-v1").envs[0].unwrapped.render_mode == "rgb_array"  # SB3's default where it renders


def test_the_monitor_never_hides_the_envs_own_stakeholders():
    """Review finding: FairnessMonitor's copy of the stakeholders shadowed the env's own through get_env_attr; an env
    that redraws them at reset is now seen, and monitored, with the new episode's."""

    class Redraw(gym.Env):
        observation_space = gym.spaces.Box(0, 1, (1,))
        action_space = gym.spaces.Discrete(2)

        def reset(self, *, seed=None, options=None):
            super().reset(seed=seed)
            self.stakeholders = Stakeholders(names=("a", "b"), groups=self.np_random.permutation([0, 1]))
            return np.zeros(1, np.float32), {}

        def step(self, action):
            return np.zeros(1, np.float32), 0.0, True, False, {"benefits": np.array([1.0, 0.0])}

    bare = Redraw()
    bare.reset(seed=0)
    monitor = FairnessMonitor(bare)
    for seed in range(4):
        monitor.reset(seed=seed)
        assert get_stakeholders(monitor) is bare.stakeholders
        info = monitor.step(0)[4]
        expected = 1.0 if bare.stakeholders.groups[0] == 1 else -1.0  # stakeholder 'a' got 1, 'b' nothing
        assert info["fairness"]["dp"] == expected
