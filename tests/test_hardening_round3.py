"""Issue 47 (hardening, round 3): no silent wrong results where wrappers stack, where a zip's settings were edited and
where ``load`` is given a keyword nothing reads; and clear errors, naming the argument, for string group labels,
env sizes that would end in ``MemoryError``, gaps that overflow float64 and a missing optional package."""

from __future__ import annotations

import json
import zipfile
from typing import Any, Callable

import gymnasium as gym
import numpy as np
import pytest

import sb3_fair  # noqa: F401  (registers the envs)
from sb3_fair import FairDQN, FairPPO
from sb3_fair import metrics as M
from sb3_fair.common.stakeholders import Stakeholders
from sb3_fair.envs import AllelopathicHarvestEnv, AttentionAllocationEnv, DonutAllocationEnv, PursuitEvasionEnv
from sb3_fair.envs.disparity import DisparityGame
from sb3_fair.wrappers import FairnessReward, MemoryAugmentation

# ---------------------------------------------------------------- one memory, one fairness reward per env
STACKS: list[tuple[str, Callable[[], Any], str]] = [
    ("memory twice", lambda: MemoryAugmentation(MemoryAugmentation(DonutAllocationEnv())),
     r"MemoryAugmentation: the env already has a MemoryAugmentation \(found at MemoryAugmentation\)"),
    ("memory over the reward over a memory",
     lambda: MemoryAugmentation(FairnessReward(MemoryAugmentation(DonutAllocationEnv()))),
     r"MemoryAugmentation: the env already has a MemoryAugmentation \(found at FairnessReward -> MemoryAugmentation\)"),
    ("reward twice", lambda: FairnessReward(FairnessReward(DonutAllocationEnv())),
     r"FairnessReward: the env already has a FairnessReward .*count the fairness term twice"),
    ("reward, TimeLimit, reward",
     lambda: FairnessReward(gym.wrappers.TimeLimit(FairnessReward(DonutAllocationEnv()), 10)),
     r"FairnessReward: the env already has a FairnessReward \(found at TimeLimit -> FairnessReward\)"),
    ("memory on the registered doughnut id", lambda: MemoryAugmentation(gym.make("sb3_fair/DonutAllocation-v0")),
     r"MemoryAugmentation: the env already has a MemoryAugmentation: the registered id 'sb3_fair/DonutAllocation-v0' "
     r"includes one .*memory=None"),
    ("reward on the registered lending id", lambda: FairnessReward(gym.make("sb3_fair/LoanApplicants-v0")),
     r"FairnessReward: the env already has a FairnessReward: the registered id 'sb3_fair/LoanApplicants-v0' includes one"),
    ("reward on the registered id without memory",
     lambda: FairnessReward(gym.make("sb3_fair/DonutAllocation-v0", memory=None)),
     r"the registered id 'sb3_fair/DonutAllocation-v0' includes one"),
]


@pytest.mark.parametrize("make, message", [c[1:] for c in STACKS], ids=[c[0] for c in STACKS])
def test_a_second_memory_or_fairness_reward_is_refused(make: Callable[[], Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make()


def test_one_of_each_still_composes() -> None:
    env = FairnessReward(MemoryAugmentation(DonutAllocationEnv()))
    env.reset(seed=0)
    env.step(0)
    made = gym.make("sb3_fair/DonutAllocation-v0")
    gym.make(made.spec).reset(seed=0)  # the spec rebuilds the registered stack (its wrappers are not doubled)
    own = MemoryAugmentation(gym.make("sb3_fair/DonutAllocation-v0", memory=None), kind="full", encoding="binary")
    gym.make(own.spec).reset(seed=0)
    FairDQN("MlpPolicy", own, counterfactual=True, buffer_size=100, learning_starts=10)


# ---------------------------------------------------------------- a zip's saved settings are checked at load
def _edit_zip(src: Any, dst: Any, **changes: Any) -> None:
    with zipfile.ZipFile(src) as archive:
        items = {name: archive.read(name) for name in archive.namelist()}
    data = json.loads(items["data"])
    data.update(changes)
    items["data"] = json.dumps(data).encode()
    with zipfile.ZipFile(dst, "w") as archive:
        for name, content in items.items():
            archive.writestr(name, content)


@pytest.fixture(scope="module")
def ppo_zip(tmp_path_factory) -> Any:
    path = tmp_path_factory.mktemp("zips") / "fppo.zip"
    FairPPO("MlpPolicy", "CartPole-v1", n_steps=64, fairness_coef=0.0).save(path)
    return path


EDITED = [
    ({"batch_size": 0}, r"FairPPO.load: hyper-parameter 'batch_size' must be an int >= 1, got 0 \(as saved in the zip\)"),
    ({"gamma": 2.0}, r"FairPPO.load: hyper-parameter 'gamma' must be a number >= 0 and <= 1, got 2.0 \(as saved in the zip\)"),
    ({"alpha": -1.0}, r"FairPPO.load: alpha must be a finite number >= 0, got -1.0 \(as saved in the zip\)"),
    ({"fairness": "bogus"}, r"FairPPO.load: fairness must be one of .* got 'bogus' \(as saved in the zip\)"),
    ({"delta": 0.3}, r"FairPPO.load: delta=0.3 is not used with fairness='dp'.* \(as saved in the zip\)"),
]


@pytest.mark.parametrize("changes, message", EDITED, ids=[next(iter(c[0])) for c in EDITED])
def test_an_edited_zip_is_checked_as_the_constructor_checks(ppo_zip, tmp_path, changes, message) -> None:
    _edit_zip(ppo_zip, tmp_path / "edited.zip", **changes)
    with pytest.raises(ValueError, match=message):
        FairPPO.load(tmp_path / "edited.zip")


def test_a_good_setting_given_to_load_replaces_a_bad_one_in_the_zip(ppo_zip, tmp_path) -> None:
    _edit_zip(ppo_zip, tmp_path / "edited.zip", alpha=-1.0)
    assert FairPPO.load(tmp_path / "edited.zip", alpha=0.25).alpha == 0.25


def test_an_sb3_setting_given_to_load_is_checked(ppo_zip) -> None:
    with pytest.raises(ValueError, match=r"FairPPO.load: hyper-parameter 'batch_size' must be an int >= 1, got 0$"):
        FairPPO.load(ppo_zip, batch_size=0)


# ---------------------------------------------------------------- keywords to load that nothing would read
@pytest.mark.parametrize("kwargs, message", [
    ({"bogus": 3}, r"FairPPO.load: unknown keyword argument 'bogus': it is neither a setting saved in the zip nor an "
                   r"argument of FairPPO"),
    ({"fairnes_coef": 1.0}, r"unknown keyword argument 'fairnes_coef'.*did you mean 'fairness_coef'\?"),
    ({"delta": 0.1}, r"FairPPO.load: delta=0.1 is not used with fairness='dp': only fairness='long_term' uses it"),
], ids=["unknown", "typo", "unused by the method"])
def test_a_keyword_load_would_not_use_is_refused(ppo_zip, kwargs, message) -> None:
    with pytest.raises(ValueError, match=message):
        FairPPO.load(ppo_zip, **kwargs)


def test_sb3s_load_keywords_and_saved_attributes_still_work(ppo_zip, tmp_path) -> None:
    model = FairPPO.load(ppo_zip, env=gym.make("CartPole-v1"), device="cpu", custom_objects={"gamma": 0.9},
                         print_system_info=False, force_reset=True, learning_rate=1e-4, verbose=0,
                         tensorboard_log=None, wandb=False, fairness_window=5)
    assert (model.gamma, model.learning_rate, model.fairness_window) == (0.9, 1e-4, 5)
    FairDQN("MlpPolicy", "CartPole-v1").save(tmp_path / "dqn.zip")
    assert FairDQN.load(tmp_path / "dqn.zip", exploration_fraction=0.2, loss="mse").loss == "mse"


# ---------------------------------------------------------------- clear errors naming the argument (class 7)
Case = tuple[str, Callable[[], Any], type, str]
CLEAR: list[Case] = [
    # string group labels: TypeError inside np.mod before
    ("dp string groups", lambda: M.demographic_parity([1, 2, 3, 4], ["a", "a", "b", "b"]), ValueError,
     r"groups must hold integer ids .* got labels \['a', 'a', 'b', 'b'\]: map them to ids first"),
    ("csp string factors", lambda: M.conditional_statistical_parity([1, 2, 3, 4], [0, 0, 1, 1], ["x", "y", "x", "y"]),
     ValueError, r"factors must hold integer ids"),
    ("contrasts string groups", lambda: M.group_contrasts(np.array(["a", "b"])), ValueError, r"groups must hold integer ids"),
    ("stakeholders string groups", lambda: Stakeholders(names=("a", "b"), groups=["x", "y"]), ValueError,
     r"stakeholders: groups must be integers"),
    # sizes that ended in MemoryError (or never finished)
    ("donut n_customers 1e9", lambda: DonutAllocationEnv(n_customers=10**9), ValueError,
     r"n_customers must be an int in \[2, 10000\] \(MAX_STAKEHOLDERS"),
    ("disparity n_agents 1e9", lambda: DisparityGame(n_agents=10**9), ValueError,
     r"n_agents must be an even int in \[2, 10000\] \(MAX_STAKEHOLDERS"),
    ("harvest n_agents 1e9", lambda: AllelopathicHarvestEnv(n_agents=10**9, width=10_000, height=10_000), ValueError,
     r"n_agents must be an int in \[4, 10000\]"),
    ("pursuit n_pursuers 1e5", lambda: PursuitEvasionEnv(n_pursuers=10**5), ValueError,
     r"n_pursuers must be an int in \[2, 9\] \(MAX_PURSUERS: the agent symmetry enumerates all n! permutations\)"),
    ("attention sites 1e4", lambda: AttentionAllocationEnv(initial_rates=[1.0] * 10**4, increase_rates=[0.0] * 10**4),
     ValueError, r"initial_rates must be at most 1000 numbers \(MAX_SITES"),
    ("attention observation", lambda: AttentionAllocationEnv(initial_rates=[1.0] * 1000, increase_rates=[0.0] * 1000,
                                                             history_len=10**4),
     ValueError, r"history_len \* 4 \* sites must be at most 1e\+07 \(MAX_OBSERVATION"),
    # a gap beyond float64: an error, not inf
    ("dp beyond float64", lambda: M.demographic_parity([1e308, 1e308, -1e308, -1e308], [0, 0, 1, 1]), ValueError,
     r"the demographic-parity gap is -1e\+308 - 1e\+308, beyond float64's range"),
    ("cf beyond float64", lambda: M.counterfactual_fairness([1e308, 1e308], [-1e308, -1e308]), ValueError,
     r"the counterfactual-fairness gap .* beyond float64's range"),
    ("pairwise beyond float64", lambda: M.demographic_parity_pairwise([1e308, 1e308, -1e308, -1e308], [0, 0, 1, 1]),
     ValueError, r"the pairwise demographic-parity gap .* beyond float64's range"),
]


@pytest.mark.parametrize("case", CLEAR, ids=[c[0] for c in CLEAR])
def test_bad_input_is_a_clear_error_naming_the_argument(case: Case) -> None:
    _, call, error, message = case
    with pytest.raises(error, match=message):
        call()


def test_the_caps_leave_the_sizes_in_use() -> None:
    DonutAllocationEnv(n_customers=10_000).reset(seed=0)
    DisparityGame(n_agents=10_000)
    PursuitEvasionEnv(n_pursuers=4)
    AttentionAllocationEnv(initial_rates=[1.0] * 1000, increase_rates=[0.0] * 1000).reset(seed=0)


@pytest.mark.parametrize("call, expected", [
    (lambda: M.demographic_parity_norm([1e308, 1e308, -1e308, 1e308], [0, 0, 1, 1]), -1.0),
    (lambda: M.demographic_parity_norm([1e308, 1e308, -1e308, -1e308], [0, 0, 1, 1]), -1.0),
    (lambda: M.demographic_parity_norm([-1e308, -1e308, 1e308, 1e308], [0, 0, 1, 1]), 1.0),
    (lambda: M.normalized_counterfactual_fairness([1e308, 1e308], [-1e308, -1e308]), 1.0),
    (lambda: M.conditional_statistical_parity_norm([1e308, 1e308, -1e308, 1e308], [0, 0, 1, 1], [0, 0, 0, 0])[0], -1.0),
    (lambda: M.demographic_parity([1e308, 1e308, -1e308, 1e308], [0, 0, 1, 1]), -1e308),
    (lambda: M.group_means([1e308, 1e308, 1.0, 3.0], [0, 0, 1, 1])[0], 1e308),
    (lambda: M.counterfactual_fairness([1e308, 1e308], [1e308, -1e308]), 1e308),
    (lambda: M.demographic_parity_pairwise([1e308, 1e308, -1e308, 1e308], [0, 0, 1, 1]), -1e308),
], ids=["ndp", "ndp opposite", "ndp negative", "ncf", "ncsp", "dp", "group means", "cf", "pairwise"])
def test_huge_finite_returns_give_finite_gaps_not_nan(call: Callable[[], float], expected: float) -> None:
    with np.errstate(all="raise"):  # no overflow warning either
        assert call() == pytest.approx(expected)


def test_ordinary_returns_give_the_same_gaps() -> None:
    r, g = [1.0, 2.0, 3.0, 4.0], [0, 0, 1, 1]
    assert M.demographic_parity(r, g) == 2.0
    assert M.demographic_parity_norm(r, g) == -(3.0 - 7.0) / 10.0
    assert M.demographic_parity(r, np.array([0.0, 0.0, 1.0, 1.0])) == 2.0  # whole floats are still group ids


def test_a_missing_optional_package_names_it_and_the_pip_command(tmp_path, monkeypatch) -> None:
    import builtins

    from sb3_fair.experiment.registry import make_env

    real_import = builtins.__import__

    def no_moviepy(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "moviepy" or name.startswith("moviepy."):
            raise ImportError("No module named 'moviepy'", name="moviepy")
        return real_import(name, *args, **kwargs)

    monkeypatch.chdir(tmp_path)  # the video folder must be inside the working folder
    monkeypatch.setattr(builtins, "__import__", no_moviepy)
    import sys

    monkeypatch.delitem(sys.modules, "moviepy", raising=False)
    monkeypatch.delitem(sys.modules, "gymnasium.utils.save_video", raising=False)
    with pytest.raises(ImportError, match=r"env_wrapper: gymnasium\.wrappers\..*RecordVideo needs moviepy, which is not "
                                          r"installed .*pip install moviepy"):
        make_env("CartPole-v1", env_kwargs={"render_mode": "rgb_array"},
                 env_wrapper=[{"gymnasium.wrappers.RecordVideo": {"video_folder": "videos"}}])


# ------------------------------------------------------------------------------------ issue 46's smaller items (7)
def test_recent_episodes_take_a_slice() -> None:
    from sb3_fair.common.callbacks import EpisodeFigures, FairnessCallback

    callback = FairnessCallback(window=3, episodes=[{"x": float(i)} for i in range(5)])
    assert isinstance(callback.episodes, EpisodeFigures) and len(callback.episodes) == 3  # bounded, newest kept
    assert callback.episodes[-2:] == [{"x": 3.0}, {"x": 4.0}] and callback.episodes[-1] == {"x": 4.0}
    callback.episodes.append({"x": 5.0})
    assert [e["x"] for e in callback.episodes[:]] == [3.0, 4.0, 5.0]


def test_a_memory_without_a_bound_names_the_horizon_fallback() -> None:
    from gymnasium.wrappers import TimeLimit

    from sb3_fair.envs import DonutAllocationEnv
    from sb3_fair.wrappers import MemoryAugmentation

    def NoHorizon() -> DonutAllocationEnv:  # an env with stakeholders that declares no episode length
        env = DonutAllocationEnv()
        env.horizon = None
        return env

    with pytest.raises(ValueError, match=r"encoding='scaled' needs a bound .* max_value=\.\.\., or an env with a horizon "
                                         r"\(env.unwrapped.horizon\) or a TimeLimit"):
        MemoryAugmentation(NoHorizon(), encoding="scaled")
    assert MemoryAugmentation(NoHorizon(), encoding="scaled", max_value=50).memory_spec.max_value == 50
    wrapped = MemoryAugmentation(TimeLimit(NoHorizon(), 40), encoding="scaled")  # a TimeLimit without a registered id
    assert wrapped.memory_spec.max_value == 40


def test_a_game_without_figures_is_told_the_games_contract(caplog) -> None:
    """Issue 46, item 7: the warning for a game without figures named Gymnasium's FairnessMonitor and make_vec_env."""
    import logging

    from sb3_fair import FairPPO
    from sb3_fair.envs import DisparityGame
    from sb3_fair.wrappers import make_multiagent_vec_env

    with caplog.at_level(logging.WARNING, logger="sb3_fair"):
        FairPPO("MlpPolicy", make_multiagent_vec_env(DisparityGame(n_agents=4, max_steps=4), monitor=False), fairness_coef=0.0,
                n_steps=8, batch_size=16)
    said = " ".join(r.getMessage() for r in caplog.records)
    assert "this game reports no fairness figures" in said and "make_multiagent_vec_env" in said and "make_vec_env" not in said.replace(
        "make_multiagent_vec_env", "")
