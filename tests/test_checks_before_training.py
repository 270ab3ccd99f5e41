"""Every run's settings checked before the first trains, and clear errors instead of tracebacks or silent NaNs
(issue 47, classes 5, 6 and 7): compare / train_all, tasks files, checkpoints that their folder's config does not
describe, names too long in bytes."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from sb3_fair.experiment import ExperimentConfig, train
from sb3_fair.experiment.compare import check_figure, episode_steps, load_tasks, parse_task, plot_comparison
from sb3_fair.experiment.run import check_configs, train_all

DONUT = "sb3_fair/DonutAllocation-v0"
TASK = {"algo": "fair_dqn", "env": DONUT, "figures": ["episode_reward", "egalitarian"],
        "runs": {"DQN": {"baseline": True}, "FairDQN": {}}}


# ------------------------------------------------------------------------------ every run checked before the first
def test_a_bad_setting_of_the_last_run_is_reported_before_the_first_trains() -> None:
    good = ExperimentConfig(algo="dqn", env="CartPole-v1", n_timesteps=100, eval_episodes=0)
    bad = ExperimentConfig(algo="fair_dqn", env=DONUT, hyperparams={"batch_sise": 16}, n_timesteps=100, eval_episodes=0)
    started = []
    with pytest.raises(ValueError, match=r"run 'fair_dqn-.*': .*batch_sise"):
        train_all([good, bad], jobs=1, on_start=lambda i, c: started.append(i))
    assert started == []


def test_check_configs_builds_each_distinct_config_once(monkeypatch) -> None:
    from sb3_fair.experiment import training

    built = []
    real = training.build_model
    monkeypatch.setattr(training, "build_model", lambda c, *a, **k: built.append(c.seed) or real(c, *a, **k))
    configs = [ExperimentConfig(algo="dqn", env="CartPole-v1", n_timesteps=100, seed=s) for s in range(3)]
    check_configs(configs + [configs[0].replace(hyperparams={"batch_size": 8})])
    assert built == [0, 0]


# ------------------------------------------------------------------------------------------------ tasks files
@pytest.mark.parametrize("where, change, message", [
    ("figures", {"figures": ["episode_reward", "egalitrian"]}, r"figures\[1\]: unknown figure 'egalitrian'"),
    ("plot.curve", {"plot": {"curve": "dp_abz"}}, r"plot.curve: unknown figure 'dp_abz'"),
    ("plot.y", {"plot": {"y": ["giny"]}}, r"plot.y\[0\]: unknown figure 'giny'"),
    ("absolute", {"absolute": ["dp"]}, r"absolute\[0\]: 'dp' is not one of the task's figures"),
])
def test_a_tasks_file_naming_an_unknown_figure_is_refused(where, change, message) -> None:
    with pytest.raises(ValueError, match=message):
        parse_task("mine", {**TASK, **change}, "tasks.yml")


def test_figures_of_groups_strata_and_evaluators_are_accepted() -> None:
    for name in ("group_0_mean", "group_12_mean", "csp_norm_3", "pof_group_1", "episode_return", "team_fairness",
                 "long_term_final", "dp_norm"):
        assert check_figure(name, "x") == name
    for task in load_tasks().values():  # the shipped tasks
        assert task.figures


@pytest.mark.parametrize("content, message", [
    (None, r"tasks file '.*missing.yml' cannot be read \(No such file or directory\)"),
    (b"\xff\xfe\x00binary", r"cannot be read \(not UTF-8 text\)"),
    ("dir", r"cannot be read \(Is a directory\)"),
])
def test_an_unreadable_tasks_file_is_named(tmp_path, content, message) -> None:
    path = tmp_path / "missing.yml"
    if content == "dir":
        path.mkdir()
    elif content is not None:
        path.write_bytes(content)
    with pytest.raises(ValueError, match=message):
        load_tasks(path)


def test_episodes_need_an_env_with_a_horizon() -> None:
    with pytest.raises(ValueError, match=r"--episodes: 'CartPole-v1' has no fixed episode length"):
        episode_steps("CartPole-v1", {})
    assert episode_steps(DONUT, {}) > 0


def test_a_plot_panel_with_nothing_to_draw_says_so(tmp_path) -> None:
    task = parse_task("mine", {**TASK, "plot": {"curve": "dp_abs"}}, "tasks.yml")
    per_seed = {"DQN": [{"episode_reward": 1.0, "utilitarian": 1.0, "egalitarian": 0.0}]}
    curves = {"DQN": [[(10, {"episode_reward": 1.0})]]}
    with pytest.warns(UserWarning, match=r"plot.curve 'dp_abs': no training episode reported it"):
        plot_comparison(task, per_seed, tmp_path / "p.png", curves=curves)


# -------------------------------------------------------------------------- a checkpoint its config does not describe
def _edit_zip_data(path: Path, change) -> None:
    import json

    with zipfile.ZipFile(path) as z:
        members = {n: z.read(n) for n in z.namelist()}
    data = json.loads(members["data"])
    change(data)
    members["data"] = json.dumps(data).encode()
    with zipfile.ZipFile(path, "w") as z:
        for name, blob in members.items():
            z.writestr(name, blob)


def test_a_checkpoint_of_another_class_or_other_fairness_settings_is_refused(tmp_path) -> None:
    cfg = ExperimentConfig(algo="fair_dqn", env=DONUT, hyperparams={"learning_starts": 0, "buffer_size": 500,
                                                                    "batch_size": 16, "potential_shaping": False},
                           n_timesteps=100, eval_episodes=0, checkpoint_every=50, save_path=str(tmp_path / "m.zip"))
    train(cfg)
    checkpoint = tmp_path / "m" / "model_100_steps.zip"
    # the parent's zip put in its place: it would resume as plain DQN under a config that says FairDQN
    _edit_zip_data(checkpoint, lambda d: [d.pop(k) for k in ("_saved_by", "fairness_window")])
    with pytest.raises(ValueError, match=r"was saved by an SB3 / sb3-contrib model .* the config says algo 'fair_dqn'"):
        train(cfg.replace(n_timesteps=150), resume=checkpoint)
    train(cfg)  # the same run again, to get a clean checkpoint
    _edit_zip_data(checkpoint, lambda d: d.update(potential_shaping=True))
    with pytest.raises(ValueError, match=r"other fairness settings .*potential_shaping True in the checkpoint, False in the config"):
        train(cfg.replace(n_timesteps=150), resume=checkpoint)


def test_names_are_counted_in_bytes() -> None:
    with pytest.raises(ValueError, match=r"name must be a plain name \(1-200 bytes in UTF-8"):
        ExperimentConfig(algo="dqn", env="CartPole-v1", n_timesteps=10, name="é" * 101)  # 101 characters, 202 bytes
    assert ExperimentConfig(algo="dqn", env="CartPole-v1", n_timesteps=10, name="é" * 100).name == "é" * 100
