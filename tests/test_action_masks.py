"""Action masks of Allelopathic Harvest and sb3-contrib's ``MaskablePPO`` through the PettingZoo -> VecEnv adapter."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported
from stable_baselines3.common.callbacks import BaseCallback
from test_harvest import blank  # the hand-made game state of the harvest tests

from sb3_fair.envs import AllelopathicHarvestEnv, DisparityGame
from sb3_fair.envs.harvest import ACTIONS, OBSTRUCT, RECOLOUR, RIGHT, RIPEN_OR_EAT, STAY, UP
from sb3_fair.wrappers import make_multiagent_vec_env
from sb3_fair.wrappers.multiagent import unwrap_vec_env

T, F = True, False


def direct_masks(vec_env) -> np.ndarray:
    """The masks of every slot read from the game instances themselves (instance-major)."""
    return np.concatenate([e.action_masks() for e in unwrap_vec_env(vec_env).par_envs])


def sample_valid(rng: np.random.Generator, masks: np.ndarray) -> np.ndarray:
    return np.array([rng.choice(np.flatnonzero(row)) for row in masks])


def test_known_masks_on_a_hand_made_state():
    # tiny: 6 wide, 5 high, obstruct_range 2; agents 0, 1 prefer red, 2, 3 blue
    env = AllelopathicHarvestEnv.from_preset("tiny")
    assert env.action_masks().all()  # before the first reset nothing is known, nothing is masked
    blank(env, [(0, 0), (4, 5), (2, 2), (4, 0)], groups=[0, 0, 0, 0])
    env.colour[0, 0] = 0  # a red bush under agent 0
    #                           stay up down left right ripen recolour obstruct
    expected = np.array([[T, F, T, F, T, T, F, T],   # corner; own-colour bush, alone; agent 2 at distance 2
                         [T, T, F, T, F, F, F, F],   # corner; no bush; opponents at distance 3 and 5
                         [T, T, T, T, T, F, F, T],   # inside; no bush; agent 0 at distance 2
                         [T, T, F, F, T, F, F, F]])  # corner; no bush; opponents at distance 4 and 5
    np.testing.assert_array_equal(env.action_masks(), expected)
    for i, agent in enumerate(env.possible_agents):
        np.testing.assert_array_equal(env.action_mask(agent), expected[i])
    with pytest.raises(KeyError, match="unknown agent"):
        env.action_mask("agent_9")

    env.colour[0, 0] = 1  # the bush has the other colour: recolouring it pays
    assert env.action_masks()[0, RECOLOUR]
    env.colour[0, 0] = 0
    env.pos[3] = (0, 0)  # a rival able to act shares the own-colour bush: recolouring can block it
    m = env.action_masks()
    assert m[0, RECOLOUR] and m[3, RECOLOUR] and m[3, RIPEN_OR_EAT] and m[3, OBSTRUCT]
    env.frozen_until[3] = env.t + 5  # frozen: only stay, and no longer a rival or a target
    m = env.action_masks()
    np.testing.assert_array_equal(m[3], np.eye(len(ACTIONS), dtype=bool)[STAY])
    assert not m[0, RECOLOUR] and m[0, OBSTRUCT]  # agent 2 is still in range
    env.frozen_until[2] = env.t + 5
    m = env.action_masks()
    assert not m[0, OBSTRUCT] and not m[1, OBSTRUCT]  # every opponent is frozen
    assert not m[2, 1:].any()


def test_impaired_agents_only_stay_on_odd_steps():
    env = AllelopathicHarvestEnv.from_preset("small", seed=0)
    env.reset(seed=0)
    impaired = env.groups == 1
    assert 0 < impaired.sum() < env.n_agents
    stay_only = np.eye(len(ACTIONS), dtype=bool)[STAY]
    for t in range(6):
        m = env.action_masks()
        assert m[:, STAY].all()
        # any agent off the border row/column can move somewhere; on the small grid every agent can
        assert (m[~impaired, UP:RIGHT + 1].any(axis=1)).all()
        if t % 2:
            assert (m[impaired] == stay_only).all()
        else:
            assert m[impaired, UP:RIGHT + 1].any(axis=1).all()
        env.step_array(np.full(env.n_agents, STAY))


def test_masked_actions_act_exactly_as_stay():
    """Every masked action, played alone, leaves the game and the rewards as ``stay`` does; every
    valid one except recolouring an own-colour bush (valid only to contest a rival) changes them."""
    env = AllelopathicHarvestEnv.from_preset("small", spawn_interval=10**6)  # no spawn draws to compare
    env.reset(seed=1)
    rng = np.random.default_rng(0)

    def outcome(actor: int, action: int) -> tuple[np.ndarray, ...]:
        twin = copy.deepcopy(env)
        a = np.full(env.n_agents, STAY)
        a[actor] = action
        rewards = twin.step_array(a)[1]
        return twin.pos, twin.colour, twin.ripe, twin.frozen_until, rewards

    n_masked = 0
    for _ in range(25):
        masks = env.action_masks()
        cell_colour = env.colour[env.pos[:, 0], env.pos[:, 1]]
        for i in range(env.n_agents):
            stay = outcome(i, STAY)
            for action in range(1, len(ACTIONS)):
                same = all(np.array_equal(x, y) for x, y in zip(stay, outcome(i, action)))
                if not masks[i, action]:
                    n_masked += 1
                    assert same, (i, ACTIONS[action])
                elif not (action == RECOLOUR and cell_colour[i] == env.preferences[i]):
                    assert not same, (i, ACTIONS[action])
        env.step_array(sample_valid(rng, masks))
    assert n_masked > 100


def test_vec_env_masks_one_row_per_slot():
    vec_env = make_multiagent_vec_env(AllelopathicHarvestEnv.from_preset("small"), n_instances=2)
    assert is_masking_supported(vec_env) and is_masking_supported(unwrap_vec_env(vec_env))
    assert not is_masking_supported(make_multiagent_vec_env(DisparityGame(n_agents=4)))
    vec_env.seed(0)
    vec_env.reset()
    masks = get_action_masks(vec_env)
    assert masks.shape == (vec_env.num_envs, len(ACTIONS)) == (16, 8) and masks.dtype == bool
    np.testing.assert_array_equal(masks, direct_masks(vec_env))
    assert not np.array_equal(masks[:8], masks[8:])  # two different games, each slot its own row
    rows = vec_env.env_method("action_masks", indices=[3, 12])
    np.testing.assert_array_equal(np.stack(rows), masks[[3, 12]])
    # other methods still answer for the whole instance of each slot
    states = vec_env.env_method("state", indices=[0, 1])
    np.testing.assert_array_equal(states[0], states[1])


def test_no_empty_row_over_a_random_rollout_with_resets():
    vec_env = make_multiagent_vec_env(AllelopathicHarvestEnv.from_preset("small"), n_instances=2)
    vec_env.seed(3)
    vec_env.reset()
    games = unwrap_vec_env(vec_env).par_envs
    rng = np.random.default_rng(3)
    ends = 0
    for _ in range(320):  # past the 300-step game: both instances reset by themselves
        masks = get_action_masks(vec_env)
        assert masks.any(axis=1).all() and masks[:, STAY].all()
        np.testing.assert_array_equal(masks, direct_masks(vec_env))
        for k, game in enumerate(games):  # the mask is the state the next action is taken in
            if game.t % 2:
                assert not masks[8 * k : 8 * k + 8][game.groups == 1, 1:].any()
        _, _, dones, _ = vec_env.step(sample_valid(rng, masks))
        ends += int(dones.all())
    assert ends == 1


class MaskCheck(BaseCallback):
    """Checks at every rollout step that the masks MaskablePPO used are the games' own and that no
    sampled action is masked."""

    def _on_training_start(self) -> None:
        self.expected = direct_masks(self.training_env)
        self.n_checked = 0

    def _on_step(self) -> bool:
        used, actions = self.locals["action_masks"], self.locals["actions"]
        np.testing.assert_array_equal(used, self.expected)
        assert used[np.arange(len(actions)), actions].all()
        self.expected = direct_masks(self.training_env)
        self.n_checked += 1
        return True


def test_maskable_ppo_trains_and_never_picks_a_masked_action():
    vec_env = make_multiagent_vec_env(AllelopathicHarvestEnv.from_preset("small"), n_instances=2)
    check = MaskCheck()
    model = MaskablePPO("MlpPolicy", vec_env, n_steps=64, batch_size=64, seed=0)
    model.learn(256, callback=check)
    assert check.n_checked == 64 and model.num_timesteps == 64 * 16
    obs = vec_env.reset()
    for _ in range(10):
        masks = get_action_masks(vec_env)
        actions, _ = model.predict(obs, action_masks=masks, deterministic=True)
        assert masks[np.arange(len(actions)), actions].all()
        obs, *_ = vec_env.step(actions)
