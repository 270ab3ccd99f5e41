"""Allelopathic Harvest, the PettingZoo -> VecEnv adapter and the counterfactual pair (paper 001)."""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo.test import parallel_api_test, parallel_seed_test

from sb3_fair.envs import AllelopathicHarvestEnv, DisparityGame
from sb3_fair.envs.harvest import CHANNELS, OBSTRUCT, RECOLOUR, RIGHT, RIPEN_OR_EAT, STAY
from sb3_fair.wrappers import CounterfactualPair, make_multiagent_vec_env


def blank(env: AllelopathicHarvestEnv, positions: list[tuple[int, int]], groups: list[int]) -> None:
    """Put the env in a hand-made state: no bushes, agents at ``positions``, given groups."""
    env.reset(seed=0, options={"groups": np.array(groups)})
    env.colour[:] = -1
    env.ripe[:] = False
    env.age[:] = 0
    env.pos = np.array(positions, dtype=np.int64)


def act(env: AllelopathicHarvestEnv, **by_agent: int) -> np.ndarray:
    a = np.full(env.n_agents, STAY)
    for k, v in by_agent.items():
        a[int(k[1:])] = v
    return env.step_array(a)[1]


def tiny(**kw):
    return AllelopathicHarvestEnv.from_preset("tiny", spawn_interval=1000, **kw)


def test_parallel_api_and_presets():
    parallel_api_test(AllelopathicHarvestEnv.from_preset("small"), num_cycles=200)
    env = AllelopathicHarvestEnv()  # the paper's game
    assert (env.n_agents, env.width, env.height, env.n_bushes, env.max_steps) == (40, 25, 15, 60, 3000)
    obs, infos = env.reset(seed=1)
    assert len(obs) == 40 and int((env.colour >= 0).sum()) == 60
    groups = np.array([infos[a]["group"] for a in env.agents])
    factors = np.array([infos[a]["factor"] for a in env.agents])
    # half of each colour is impaired
    assert factors.sum() == 20 and groups[factors == 0].sum() == 10 and groups[factors == 1].sum() == 10
    assert env.stakeholders.n == 40 and np.array_equal(env.stakeholders.groups, groups)


def test_deterministic_under_seed():
    def run(seed):
        env = AllelopathicHarvestEnv.from_preset("small")
        obs, _ = env.reset(seed=seed)
        rng = np.random.default_rng(5)
        out = [np.stack(list(obs.values()))]
        for _ in range(50):
            obs, rew, *_ = env.step({a: int(rng.integers(8)) for a in env.agents})
            out.append(np.stack(list(obs.values())))
            out.append(np.array(list(rew.values())))
        return out

    a, b, c = run(3), run(3), run(4)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not all(np.array_equal(x, y) for x, y in zip(a, c))
    parallel_seed_test(lambda: AllelopathicHarvestEnv.from_preset("small"))
    parallel_seed_test(lambda: CounterfactualPair(lambda: AllelopathicHarvestEnv.from_preset("tiny")))


def test_ripen_eat_recolour_rewards():
    env = tiny()
    blank(env, [(1, 1), (2, 2), (3, 3), (0, 5)], [0, 0, 0, 0])  # agents 0, 1 prefer red; 2, 3 blue
    env.colour[1, 1] = 0  # red bush under red-preferring agent 0
    env.colour[2, 2] = 1  # blue bush under red-preferring agent 1
    env.colour[3, 3] = 0  # red bush under blue-preferring agent 2
    r = act(env, a0=RIPEN_OR_EAT, a1=RIPEN_OR_EAT, a2=RECOLOUR)
    assert r.tolist() == [3.0, 1.0, 5.0, 0.0]  # ripen own 3, ripen other 1, recolour 5
    assert env.ripe[1, 1] and env.ripe[2, 2] and env.colour[3, 3] == 1
    r = act(env, a0=RIPEN_OR_EAT, a1=RIPEN_OR_EAT, a2=RECOLOUR)
    assert r.tolist() == [5.0, 1.0, 0.0, 0.0]  # eat own 5, eat other 1, recolour own colour 0
    assert not env.ripe[1, 1] and not env.ripe[2, 2]


def test_one_winner_per_bush():
    env = tiny()
    blank(env, [(1, 1), (1, 1), (3, 3), (0, 5)], [0, 0, 0, 0])
    env.colour[1, 1] = 0
    r = act(env, a0=RIPEN_OR_EAT, a1=RIPEN_OR_EAT)
    assert sorted(r[:2].tolist()) == [0.0, 3.0] and env.ripe[1, 1]


def test_impaired_agents_act_every_second_step():
    env = tiny()
    blank(env, [(0, 0), (4, 0), (2, 0), (3, 0)], [1, 0, 0, 0])  # agent 0 impaired
    act(env, a0=RIGHT, a1=RIGHT)  # t = 0: both move
    assert env.pos[0].tolist() == [0, 1] and env.pos[1].tolist() == [4, 1]
    act(env, a0=RIGHT, a1=RIGHT)  # t = 1: the impaired agent's action is ignored
    assert env.pos[0].tolist() == [0, 1] and env.pos[1].tolist() == [4, 2]


def test_obstruction_freezes_for_a_finite_time():
    env = tiny(freeze_steps=3)
    blank(env, [(0, 0), (4, 5), (1, 1), (4, 0)], [0, 0, 0, 0])  # agent 2 (blue) next to agent 0 (red)
    r = act(env, a0=OBSTRUCT)
    assert r[0] == 3.0 and env.frozen_until[2] == 4
    for _ in range(3):  # t = 1, 2, 3: frozen, moves ignored
        act(env, a2=RIGHT)
        assert env.pos[2].tolist() == [1, 1]
    act(env, a2=RIGHT)  # t = 4: free again
    assert env.pos[2].tolist() == [1, 2]
    # out of range: nothing happens
    blank(env, [(0, 0), (4, 5), (4, 4), (4, 0)], [0, 0, 0, 0])
    assert act(env, a0=OBSTRUCT)[0] == 0.0


def test_bushes_die_and_spawn():
    env = AllelopathicHarvestEnv.from_preset("tiny", spawn_interval=2, bush_lifetime=5)
    blank(env, [(0, 0), (0, 1), (0, 2), (0, 3)], [0, 0, 1, 1])
    env.colour[2, 2] = 0  # a red bush about to die
    env.age[2, 2] = 3
    env.colour[4, 5] = 1  # a young blue bush
    act(env)  # t = 0: ages 4 and 1
    assert env.colour[2, 2] == 0 and int((env.colour >= 0).sum()) == 2
    act(env)  # t = 1: the red bush dies, then one bush spawns; only blue is left, so it is blue
    assert int((env.colour == 0).sum()) == 0
    assert int((env.colour == 1).sum()) == 2 and env.age[4, 5] == 2


def test_observation_matches_a_naive_reading():
    env = AllelopathicHarvestEnv.from_preset("small")
    env.reset(seed=2)
    rng = np.random.default_rng(0)
    for _ in range(30):
        env.step_array(rng.integers(0, 8, env.n_agents))
    env.ripe[env.colour >= 0] = rng.random(int((env.colour >= 0).sum())) < 0.5
    obs = env._observe()
    r, side = env.view_radius, 2 * env.view_radius + 1
    for i in range(env.n_agents):
        pref = env.preferences[i]
        want = np.zeros((side, side, len(CHANNELS)))
        for a, dy in enumerate(range(-r, r + 1)):
            for b, dx in enumerate(range(-r, r + 1)):
                y, x = env.pos[i, 0] + dy, env.pos[i, 1] + dx
                if not (0 <= y < env.height and 0 <= x < env.width):
                    want[a, b, 6] = 1
                    continue
                c = env.colour[y, x]
                if c >= 0:
                    want[a, b, (0 if c == pref else 2) + int(env.ripe[y, x])] = 1
                here = np.flatnonzero((env.pos[:, 0] == y) & (env.pos[:, 1] == x))
                if np.any(env.preferences[here] == pref):
                    want[a, b, 4] = 1
                if np.any(env.preferences[here] != pref):
                    want[a, b, 5] = 1
                if np.any(env.groups[here] == 1):
                    want[a, b, 7] = 1
        np.testing.assert_array_equal(obs[i, : side * side * len(CHANNELS)], want.ravel())
        assert obs[i, -6] == env.groups[i]


def test_render_and_bad_input():
    env = AllelopathicHarvestEnv.from_preset("tiny", render_mode="rgb_array")
    env.reset(seed=0)
    img = env.render()
    assert img.shape == (5 * 16, 6 * 16, 3) and img.dtype == np.uint8
    env = AllelopathicHarvestEnv.from_preset("tiny", render_mode="ansi")
    env.reset(seed=0)
    assert env.render().count("\n") == 6
    with pytest.raises(ValueError, match="n_agents"):
        AllelopathicHarvestEnv(n_agents=5)
    with pytest.raises(ValueError, match="preset"):
        AllelopathicHarvestEnv.from_preset("huge")
    with pytest.raises(ValueError, match="render_mode"):
        AllelopathicHarvestEnv(render_mode="human")
    with pytest.raises(ValueError, match="groups"):
        AllelopathicHarvestEnv.from_preset("tiny").reset(options={"groups": [0, 1]})


def test_vec_env_one_slot_per_agent():
    vec = make_multiagent_vec_env(AllelopathicHarvestEnv.from_preset("tiny"), n_instances=3)
    assert vec.num_envs == 12 and vec.agents_per_instance == 4
    vec.seed(7)
    obs = vec.reset()
    vec2 = make_multiagent_vec_env(AllelopathicHarvestEnv.from_preset("tiny"), n_instances=3)
    vec2.seed(7)
    np.testing.assert_array_equal(obs, vec2.reset())
    assert not np.array_equal(obs[:4], obs[4:8])  # instances are different games
    for t in range(60):
        obs, rew, dones, infos = vec.step(np.zeros(12, dtype=np.int64))
        assert all("group" in i and "factor" in i for i in infos)
    assert dones.all()
    # the game's fixed length is part of the task (and observed): terminal, not a time-limit cut
    assert all(not i["TimeLimit.truncated"] and "terminal_observation" in i and "episode" in i for i in infos)
    assert vec.get_attr("n_agents") == [4] * 12


def test_counterfactual_pair():
    pair = CounterfactualPair(lambda: AllelopathicHarvestEnv.from_preset("tiny"))
    parallel_api_test(pair, num_cycles=80)
    obs, infos = pair.reset(seed=4)
    assert len(pair.agents) == 8
    for i, a in enumerate(pair.possible_agents):
        twin = pair.possible_agents[infos[a]["twin"]]
        assert infos[twin]["twin"] == i and infos[twin]["group"] == 1 - infos[a]["group"]
        assert infos[a]["world"] == (i >= 4)
    assert np.array_equal(pair.factual.pos, pair.counterfactual.pos)
    assert np.array_equal(pair.factual.colour, pair.counterfactual.colour)
    extreme = CounterfactualPair(DisparityGame(n_agents=4), mode="extreme")
    _, infos = extreme.reset(seed=0)
    assert [infos[a]["group"] for a in extreme.possible_agents] == [0, 0, 0, 0, 1, 1, 1, 1]
    with pytest.raises(ValueError, match="mode"):
        CounterfactualPair(DisparityGame(), mode="swap")

    class NoOptions(DisparityGame):
        def reset(self, seed=None, options=None):
            return super().reset(seed=seed)

    with pytest.raises(ValueError, match="options"):
        CounterfactualPair(NoOptions(n_agents=4)).reset(seed=0)


@pytest.mark.parametrize("make_game", [lambda: AllelopathicHarvestEnv.from_preset("tiny"), lambda: DisparityGame(n_agents=4, max_steps=5)])
def test_games_end_terminated_at_their_fixed_length(make_game):
    """A game of fixed length whose observation shows the time ends terminated (paper 001's authors: value 0 after it)."""
    game = make_game()
    game.reset(seed=0)
    for t in range(game.max_steps):
        _, _, terms, truncs, _ = game.step({a: 0 for a in game.agents})
        assert not any(truncs.values())
        assert all(terms.values()) == (t == game.max_steps - 1)
    assert game.agents == []
