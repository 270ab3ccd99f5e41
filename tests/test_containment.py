"""Issue 47, class 2: every path a config makes an object write to is checked by where it leads (nested mappings,
file-name prefixes joined to their folder, bytes, symlinks followed) to stay in the working folder unless the config
is trusted; W&B's folders too. A refused config creates nothing, inside or outside."""

from __future__ import annotations

import base64
import os
import re
from pathlib import Path
from typing import Any

import pytest

from sb3_fair.common.hyperparams import check_arguments, check_contained, check_wandb_paths
from sb3_fair.experiment import ExperimentConfig, build_model, train

MONITOR = "stable_baselines3.common.monitor.Monitor"
CHECKPOINT = "stable_baselines3.common.callbacks.CheckpointCallback"
FAIRNESS = "sb3_fair.common.callbacks:FairnessCallback"
PPO = {"policy": "MlpPolicy", "n_steps": 32, "batch_size": 32, "n_epochs": 1}
OUTSIDE = r"outside the working folder .*--trust-config"


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``tmp_path/work`` as the working folder, with ``link`` in it: a symlink to ``tmp_path/outside``."""
    (tmp_path / "work").mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "work" / "link").symlink_to(tmp_path / "outside", target_is_directory=True)
    monkeypatch.chdir(tmp_path / "work")
    return tmp_path


def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def _cases(root: Path) -> list[tuple[str, Any, str]]:
    """(key, entry, the message's start) of each way out that the issue found."""
    out = str(root / "outside")
    return [
        # a path inside a nested mapping: a callback's own W&B run (FairnessCallback(wandb={"dir": ...}))
        ("callback", [{FAIRNESS: {"wandb": {"dir": out}}}], rf"'{FAIRNESS}' would write wandb\.dir='{re.escape(out)}'"),
        # a file-name prefix: CheckpointCallback writes <save_path>/<name_prefix>_<N>_steps.zip
        ("callback", {CHECKPOINT: {"save_freq": 32, "save_path": "ckpt", "name_prefix": "../../outside/rl_model"}},
         r"would write name_prefix='\.\./\.\./outside/rl_model' in save_path='ckpt'"),
        # a path given as bytes (YAML's !!binary)
        ("env_wrapper", [{MONITOR: {"filename": os.fsencode(out + "/m")}}], rf"would write filename='{re.escape(out)}/m'"),
        # a symlink inside the working folder that leads out of it
        ("callback", [{CHECKPOINT: {"save_freq": 32, "save_path": "link/ckpt"}}], r"would write save_path='link/ckpt'"),
        ("vec_env_wrapper", {"stable_baselines3.common.vec_env.VecMonitor": {"filename": "link"}},
         r"would write filename='link'"),
        # a file opened before a later TypeError (Monitor opens its CSV, then fails on info_keywords=5)
        ("env_wrapper", [{MONITOR: {"filename": "link/m", "info_keywords": 5}}], r"would write filename='link/m'"),
    ]


@pytest.mark.parametrize("case", range(6))
def test_each_way_out_is_refused_without_trust_and_creates_nothing(work: Path, case: int) -> None:
    key, spec, message = _cases(work)[case]
    fields: dict[str, Any] = dict(algo="ppo", env="CartPole-v1", n_timesteps=64, eval_episodes=0)
    with pytest.raises(ValueError, match=rf"hyper-parameter '{key}': .*{message}: .*{OUTSIDE}"):
        ExperimentConfig(**fields, hyperparams={**PPO, key: spec})
    assert _files(work / "outside") == [] and _files(work / "work") == ["link"]
    trusted = ExperimentConfig(**fields, hyperparams={**PPO, key: spec}, trusted=True)
    assert trusted.trusted and _files(work / "outside") == []


def test_trusted_configs_write_where_they_say(work: Path) -> None:
    spec = [{CHECKPOINT: {"save_freq": 32, "save_path": "link/ckpt", "name_prefix": "../rl_model"}}]
    cfg = ExperimentConfig(algo="ppo", env="CartPole-v1", n_timesteps=64, eval_episodes=0,
                           hyperparams={**PPO, "callback": spec, "env_wrapper": [{MONITOR: {"filename": "link/m"}}]},
                           trusted=True)
    train(cfg)
    assert {"rl_model_64_steps.zip", "m.monitor.csv"} <= set(_files(work / "outside"))


def test_a_yaml_binary_path_in_an_experiment_file_is_refused(work: Path) -> None:
    target = base64.b64encode(os.fsencode(str(work / "outside" / "ckpt"))).decode()
    (work / "work" / "exp.yml").write_text(
        "algo: ppo\nenv: CartPole-v1\nn_timesteps: 64\nhyperparams:\n  callback:\n"
        f"    - {CHECKPOINT}: {{save_freq: 32, save_path: !!binary {target}}}\n"
    )
    with pytest.raises(ValueError, match=rf"hyper-parameter 'callback': .* would write save_path='{re.escape(str(work))}/outside/ckpt'"):
        ExperimentConfig.from_file("exp.yml")
    assert ExperimentConfig.from_file("exp.yml", trusted=True).trusted


def test_wandb_folders_of_a_config_stay_in_the_working_folder(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sb3_fair.common.wandb_logging as wandb_logging

    started: list[dict[str, Any]] = []
    monkeypatch.setattr(wandb_logging, "start_wandb_run", lambda config, **init: started.append(init))
    base = ExperimentConfig(algo="ppo", env="CartPole-v1", n_timesteps=32, eval_episodes=0, hyperparams=PPO,
                            save_path="m.zip")
    out = str(work / "outside")
    esc = re.escape(out)
    for wandb, message in (({"dir": out}, rf"wandb would write dir='{esc}'"),
                           ({"dir": "link/wandb"}, r"wandb would write dir='link/wandb'"),
                           ({"dir": "~/wandb"}, r"dir='~/wandb': a home folder"),
                           ({"settings": {"root_dir": out}}, r"wandb would write settings\.root_dir=")):
        with pytest.raises(ValueError, match=rf"{message}.*--trust-config"):
            train(base.replace(wandb=wandb))
        assert started == [] and _files(work / "outside") == [] and _files(work / "work") == ["link"]
    train(base.replace(wandb={"dir": out}, trusted=True))  # the opt-in: W&B writes where the config says
    assert started[-1]["dir"] == out
    # a Fair algorithm's own wandb argument, in the hyper-parameters
    with pytest.raises(ValueError, match=rf"hyper-parameter 'wandb' would write dir='{esc}': .*{OUTSIDE}"):
        ExperimentConfig(algo="fair_ppo", env="CartPole-v1", n_timesteps=32, hyperparams={**PPO, "wandb": {"dir": out}})
    assert ExperimentConfig(algo="fair_ppo", env="CartPole-v1", n_timesteps=32, hyperparams={**PPO, "wandb": {"dir": out}},
                            trusted=True).trusted


def test_normal_configs_pass_and_write_inside(work: Path) -> None:
    cfg = ExperimentConfig(algo="ppo", env="CartPole-v1", n_timesteps=64, eval_episodes=0, hyperparams={
        **PPO,
        "env_wrapper": [{MONITOR: {"filename": "monitor.csv"}}],
        "callback": [{CHECKPOINT: {"save_freq": 32, "save_path": "ckpt", "name_prefix": "rl_model"}},
                     {FAIRNESS: {"window": 10, "wandb": {"dir": "wb", "project": "/not/a/path"}}}],
    })
    build_model(cfg).get_env().close()
    check_wandb_paths({"dir": "wb", "settings": {"root_dir": "."}, "project": "/x", "notes": "~"})
    check_arguments({"video_folder": "videos", "name_prefix": "../videos-2", "stats_key": "episode"}, "x")
    train(cfg.replace(hyperparams={"callback": [{CHECKPOINT: {"save_freq": 32, "save_path": "ckpt",
                                                              "name_prefix": "rl_model"}}]}))
    assert {"monitor.csv", "ckpt/rl_model_64_steps.zip"} <= set(_files(work / "work"))
    assert _files(work / "outside") == []


def test_check_contained_resolves_the_destination(work: Path) -> None:
    root = work / "work"
    assert check_contained("a/../b", "x") == root / "b"
    assert check_contained(Path("ckpt"), "x", base=b"runs") == root / "runs" / "ckpt"
    assert check_contained(None, "x") == root  # no path
    for value, message in (("link", "outside"), ("..", "outside"), (b"/etc", "outside"), ("~", "home folder"),
                           ("a\0b", "not a path that can be resolved")):
        with pytest.raises(ValueError, match=rf"^where: .*{message}"):
            check_contained(value, "where")
    (root / "loop").symlink_to(root / "loop")
    with pytest.raises(ValueError, match=r"where: "):
        check_contained("loop/x", "where")


def test_a_config_files_own_save_path_and_tensorboard_log_stay_inside(work: Path) -> None:
    """A config file's save_path / tensorboard_log lead inside the working folder, unless --save / --tensorboard-log (the
    user's own choice) replace them, or the file is trusted; a saved config's save_path may be the model beside it."""
    outside = work / "outside"
    exp = work / "work" / "exp.yml"
    for key, value in (("save_path", outside / "m.zip"), ("tensorboard_log", outside / "tb"), ("save_path", "../outside/m.zip")):
        exp.write_text(f"algo: ppo\nenv: CartPole-v1\nn_timesteps: 64\n{key}: {value}\n")
        with pytest.raises(ValueError, match=rf"exp.yml: {key}=.* would write: .*outside the working folder"):
            ExperimentConfig.from_file(exp)
        ExperimentConfig.from_file(exp, trusted=True)
        ExperimentConfig.from_file(exp, **{key: str(work / "work" / "mine")})  # the command line's --save wins
    # a run saved outside the working folder (the user's --save) resumes from there: its folder's config names it
    run = outside / "runs"
    cfg = ExperimentConfig(algo="dqn", env="CartPole-v1", hyperparams={"learning_starts": 0, "buffer_size": 200}, n_timesteps=64,
                           eval_episodes=0, checkpoint_every=32, save_path=str(run / "m.zip"))
    train(cfg)
    for saved in (run / "m" / "model.config.yml", run / "m.config.yml"):
        assert ExperimentConfig.from_file(saved).save_path == str(run / "m.zip")
    (run / "elsewhere.config.yml").write_text((run / "m.config.yml").read_text())
    with pytest.raises(ValueError, match=r"save_path=.* would write"):
        ExperimentConfig.from_file(run / "elsewhere.config.yml")
    assert not list(work.glob("work/*.zip"))
