"""Configs are data, outputs stay in their folder, checkpoints stay small (issue 26): what a shared experiment
file, a ``-p`` override or the config saved beside a model may and may not do."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml
from stable_baselines3 import DQN, SAC
from stable_baselines3.common.callbacks import BaseCallback
from torch import nn, optim

from sb3_fair import FairDQN
from sb3_fair.common.hyperparams import (
    MAX_YAML_NODES,
    import_object,
    load_yaml,
    parse_dict_expression,
    resolve_hyperparams,
)
from sb3_fair.experiment import ExperimentConfig, build_model, load_model, train
from sb3_fair.experiment.checkpoints import CompactCheckpointCallback, save_replay_buffer
from sb3_fair.experiment.config import check_name
from sb3_fair.experiment.run import save

TRUST = r"--trust-config"


@pytest.fixture
def marker(tmp_path: Path) -> Path:
    """A file that only code run from a config would create."""
    return tmp_path / "pwned"


# --- nothing in a config is eval'd -------------------------------------------------------------------------------------

def test_rl_zoo_dict_strings_are_read_as_data(marker: Path) -> None:
    out = parse_dict_expression("dict(net_arch=dict(pi=[64], vf=[64]), activation_fn=nn.Tanh, log_std_init=-2.5, ortho_init=False, "
                                "optimizer_class=th.optim.Adam, optimizer_kwargs=dict(eps=1e-5), extra={'a': (1, None)})")
    assert out == {"net_arch": {"pi": [64], "vf": [64]}, "activation_fn": nn.Tanh, "log_std_init": -2.5, "ortho_init": False,
                   "optimizer_class": optim.Adam, "optimizer_kwargs": {"eps": 1e-5}, "extra": {"a": (1, None)}}
    for text in (f"dict(a=th.os.system('touch {marker}'))", f"dict(a=__import__('os').system('touch {marker}'))",
                 "dict(a=(lambda: 1)())", "dict(**{'a': 1})", "dict(a=[x for x in range(3)])", "dict(a=1 + 1)",
                 f"dict(a=open('{marker}', 'w'))", "dict(a=nn.Module.__subclasses__)", "dict(a=th.load)"):
        with pytest.raises(ValueError):
            parse_dict_expression(text)
    assert not marker.exists()


@pytest.mark.parametrize("key, value", [
    ("massaging_tau", "builtins:exec"),
    ("learning_rate", "os:system"),
    ("policy", "subprocess.Popen"),
    ("replay_buffer_class", "os.system"),
    ("policy_kwargs", {"activation_fn": "os:system"}),
    ("policy_kwargs", {"features_extractor_class": "sb3_fair.experiment.run:train"}),
    ("exploration_fraction", "stable_baselines3.common.save_util:load_from_pkl"),
    ("learning_rate", "stable_baselines3:DQN.load"),  # a method is not a top-level name
    ("learning_rate", "sb3_fair.common.hyperparams:importlib"),  # a module re-exported by an allowed one
    ("learning_rate", "sb3_fair.common._private:x"),
])
def test_objects_outside_the_allow_list_are_refused(key, value) -> None:
    with pytest.raises(ValueError, match=rf"hyper-parameter '{key}': .*configs are data.*{TRUST}"):
        resolve_hyperparams({key: value})


@pytest.mark.parametrize("key, value, base", [
    ("policy_kwargs", {"activation_fn": "torch.nn:Linear"}, None),  # a Module, so allowed
    ("policy_kwargs", {"activation_fn": "sb3_fair.metrics:gini"}, "torch.nn.Module"),
    ("policy_kwargs", {"features_extractor_class": "torch.nn:ReLU"}, "BaseFeaturesExtractor"),
    ("policy_kwargs", {"optimizer_class": "torch.nn:ReLU"}, "torch.optim.Optimizer"),
    ("replay_buffer_class", "stable_baselines3.common.buffers.RolloutBuffer", "ReplayBuffer"),
    ("policy", "stable_baselines3.common.torch_layers.NatureCNN", "BasePolicy"),
])
def test_a_key_whose_role_is_known_names_a_class_of_that_kind(key, value, base) -> None:
    if base is None:
        assert resolve_hyperparams({key: value})[key]["activation_fn"] is nn.Linear
        return
    with pytest.raises(ValueError, match=rf"must name a subclass of .*{base}"):
        resolve_hyperparams({key: value})


def test_shipped_kinds_of_value_still_resolve() -> None:
    from sb3_fair.common.long_term.advantages import lending_massaging_threshold
    from sb3_fair.envs.pursuit import SpeedCurriculum
    from sb3_fair.ppo.policies import MlpTrunk

    out = resolve_hyperparams({"policy_kwargs": {"features_extractor_class": "sb3_fair.ppo.policies:MlpTrunk", "activation_fn": "torch.nn:ReLU"},
                               "massaging_tau": "sb3_fair.common.long_term.advantages:lending_massaging_threshold",
                               "policy": "stable_baselines3.dqn.MlpPolicy"})
    assert out["policy_kwargs"] == {"features_extractor_class": MlpTrunk, "activation_fn": nn.ReLU}
    assert out["massaging_tau"] is lending_massaging_threshold
    assert import_object("sb3_fair.envs.pursuit:SpeedCurriculum", role="callback") is SpeedCurriculum
    assert import_object("gymnasium.wrappers.TimeLimit", role="env_wrapper").__name__ == "TimeLimit"


def _user_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, source: str) -> None:
    """A user's module ``name`` on the path (not on the allow-list), imported afresh by the next import."""
    (tmp_path / f"{name}.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop(name, None)


def _own_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, marker: Path) -> str:
    """A user's module whose import and wrapper leave the marker: what --trust-config lets a config name."""
    _user_module(tmp_path, monkeypatch, "my_code",
                 "import gymnasium as gym\n"
                 f"MARKER = {str(marker)!r}\n"
                 "class MarkWrapper(gym.Wrapper):\n"
                 "    def __init__(self, env):\n"
                 "        super().__init__(env)\n"
                 "        open(MARKER, 'w').close()\n")
    return "my_code.MarkWrapper"


def test_user_code_needs_an_explicit_opt_in(tmp_path, monkeypatch, marker) -> None:
    wrapper = _own_module(tmp_path, monkeypatch, marker)
    fields = dict(algo="dqn", env="CartPole-v1", hyperparams={"policy": "MlpPolicy", "env_wrapper": wrapper}, n_timesteps=1, eval_episodes=0)
    with pytest.raises(ValueError, match=rf"hyper-parameter 'env_wrapper': 'my_code.MarkWrapper' is not in a package a config may name.*{TRUST}"):
        ExperimentConfig(**fields)  # refused when the config is made, before anything is imported
    assert not marker.exists() and "my_code" not in sys.modules
    cfg = ExperimentConfig(**fields, trusted=True)
    assert not marker.exists(), "a trusted config imports nothing until the model is built"
    build_model(cfg)  # the opt-in: the wrapper runs
    assert marker.exists()
    assert cfg.replace(seed=2).trusted, "replace keeps the opt-in"
    assert "trusted" not in cfg.to_dict(), "the opt-in is never written down"
    with pytest.raises(ValueError, match=TRUST):
        cfg.replace(trusted=False)


def test_the_opt_in_cannot_come_from_a_file(tmp_path) -> None:
    f = tmp_path / "exp.yml"
    f.write_text("algo: dqn\nenv: CartPole-v1\ntrusted: true\n")
    with pytest.raises(ValueError, match=r"unknown keys \['trusted'\]"):
        ExperimentConfig.from_file(f)
    cfg = ExperimentConfig(algo="dqn", env="CartPole-v1", n_timesteps=10)
    cfg.save(tmp_path / "saved.yml")
    assert "trusted" not in (tmp_path / "saved.yml").read_text()
    with pytest.raises(ValueError, match="unknown config keys"):
        ExperimentConfig.from_dict({**cfg.to_dict(), "trusted": True})


def test_env_ids_that_import_a_module_need_the_opt_in() -> None:
    with pytest.raises(ValueError, match=rf"env 'os:system' would import the module 'os'.*{TRUST}"):
        ExperimentConfig(algo="dqn", env="os:system", n_timesteps=1)
    assert ExperimentConfig(algo="dqn", env="os:system", n_timesteps=1, trusted=True).env == "os:system"


def test_a_saved_models_config_is_data_too(tmp_path, monkeypatch, marker) -> None:
    """The ``m.config.yml`` beside a model is read by load_model / ``sb3-fair evaluate``: edited to name code, it is refused."""
    from sb3_fair import cli

    cfg = ExperimentConfig(algo="dqn", env="CartPole-v1", hyperparams={"policy": "MlpPolicy", "learning_starts": 0}, n_timesteps=8,
                           eval_episodes=0)
    model = build_model(cfg)
    save(model, cfg, tmp_path / "m.zip")
    wrapper = _own_module(tmp_path, monkeypatch, marker)
    saved = tmp_path / "m.config.yml"
    data = yaml.safe_load(saved.read_text())
    data["hyperparams"]["env_wrapper"] = wrapper
    saved.write_text(yaml.safe_dump(data))
    with pytest.raises(ValueError, match=TRUST):
        load_model(tmp_path / "m.zip")
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["evaluate", str(tmp_path / "m.zip"), "--episodes", "1"])
    assert exit_info.value.code == 2 and not marker.exists()
    cli.main(["evaluate", str(tmp_path / "m.zip"), "--episodes", "1", "--trust-config"])
    assert marker.exists()


def test_cli_overrides_are_data(tmp_path, marker, capsys) -> None:
    from sb3_fair import cli

    for param in (f"policy_kwargs=dict(net_arch=[8], activation_fn=th.os.system('touch {marker}'))",
                  "callback=os.system", f"env_wrapper={{os.system: {{command: 'touch {marker}'}}}}", "normalize=__import__('os')"):
        with pytest.raises(SystemExit) as exit_info:
            cli.main(["train", "--algo", "dqn", "--env", "CartPole-v1", "--timesteps", "8", "-p", param, "--eval-episodes", "1"])
        assert exit_info.value.code == 2, param
        assert not marker.exists(), param
    assert "configs are data" in capsys.readouterr().err


def test_callbacks_must_be_callbacks() -> None:
    fields = dict(algo="dqn", env="CartPole-v1", n_timesteps=8, eval_episodes=0)
    with pytest.raises(ValueError, match=r"hyper-parameter 'callback': callback must name a subclass of .*BaseCallback"):
        ExperimentConfig(**fields, hyperparams={"policy": "MlpPolicy", "callback": "sb3_fair.metrics.gini"})
    cfg = ExperimentConfig(**fields, hyperparams={"policy": "MlpPolicy", "callback": {"sb3_fair.envs.pursuit:SpeedCurriculum": {"colour": 1}}})
    with pytest.raises(ValueError, match=r"hyper-parameter 'callback': 'sb3_fair.envs.pursuit:SpeedCurriculum' refused its arguments"):
        train(cfg, callback=_Steps())



# --- nothing a config names is called before the whole config is accepted (issue 47) ----------------------------------

@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list:
    """``sb3_fair.metrics:recorded`` (a function) and ``sb3_fair.metrics:Recorded`` (a class that is no Module, optimiser,
    buffer, policy or noise), both on the allow-list; every call of either is appended to the list."""
    import sb3_fair.metrics

    seen: list = []

    def recorded(*args, **kwargs):
        seen.append(("recorded", args))
        return 1e-3

    class Recorded:
        def __init__(self, *args, **kwargs) -> None:
            seen.append(("Recorded", args))

    for obj in (recorded, Recorded):
        obj.__module__ = "sb3_fair.metrics"
        monkeypatch.setattr(sb3_fair.metrics, obj.__name__, obj, raising=False)
    return seen


@pytest.mark.parametrize("algo, key", [("ppo", "learning_rate"), ("ppo", "clip_range"), ("ppo", "clip_range_vf"),
                                       ("ars", "delta_std"), ("fair_ppo", "massaging_tau"), ("dqn", "learning_rate")])
@pytest.mark.parametrize("name", ["recorded", "Recorded"])
def test_an_allow_listed_function_is_no_schedule_and_is_never_called(algo, key, name, calls, tmp_path) -> None:
    """SB3 calls a schedule while it builds the model (FairPPO calls massaging_tau on iteration 0): a config whose
    schedule names another function or class of the allow-list is refused when it is read, before anything is called."""
    hyperparams = {key: f"sb3_fair.metrics:{name}"}
    with pytest.raises(ValueError, match=rf"hyper-parameter '{key}': .*calls it \(a schedule\) .* must be a number"):
        ExperimentConfig(algo=algo, env="CartPole-v1", n_timesteps=8, hyperparams=hyperparams)
    f = tmp_path / "exp.yml"
    f.write_text(yaml.safe_dump({"algo": algo, "env": "CartPole-v1", "n_timesteps": 8, "hyperparams": hyperparams}))
    with pytest.raises(ValueError, match=rf"hyper-parameter '{key}': "):
        ExperimentConfig.from_file(f)
    with pytest.raises(ValueError, match=rf"hyper-parameter '{key}': "):
        ExperimentConfig.from_dict({"algo": algo, "env": "CartPole-v1", "n_timesteps": 8, "hyperparams": hyperparams})
    assert calls == []


def test_a_refused_schedule_leaves_the_global_generators_alone() -> None:
    """SB3's set_random_seed, given as a learning rate, used to reseed the caller's generators before the model failed."""
    import random

    import torch as th

    random.seed(123)
    np.random.seed(123)
    th.manual_seed(123)
    before = (random.getstate(), np.random.get_state()[1].copy(), th.random.get_rng_state().clone())
    with pytest.raises(ValueError, match=r"hyper-parameter 'learning_rate': .*must be a number.*got "
                                         r"'stable_baselines3.common.utils:set_random_seed'"):
        build_model(ExperimentConfig(algo="ppo", env="CartPole-v1", n_timesteps=8,
                                     hyperparams={"policy": "MlpPolicy", "learning_rate": "stable_baselines3.common.utils:set_random_seed"}))
    after = (random.getstate(), np.random.get_state()[1], th.random.get_rng_state())
    assert before[0] == after[0] and np.array_equal(before[1], after[1]) and th.equal(before[2], after[2])


@pytest.mark.parametrize("key", ["activation_fn", "features_extractor_class", "optimizer_class"])
def test_a_class_of_the_wrong_kind_is_refused_without_being_instantiated(key, calls) -> None:
    """Written as a path or given in Python, policy_kwargs' classes must be of their kind, checked with issubclass."""
    import sb3_fair.metrics

    for value in ("sb3_fair.metrics:Recorded", sb3_fair.metrics.Recorded, "sb3_fair.metrics:recorded", sb3_fair.metrics.recorded):
        with pytest.raises(ValueError, match=rf"hyper-parameter 'policy_kwargs': {key} must name a subclass of"):
            ExperimentConfig(algo="ppo", env="CartPole-v1", n_timesteps=8, hyperparams={"policy_kwargs": {key: value}})
    for key_, value in (("replay_buffer_class", sb3_fair.metrics.Recorded), ("policy", sb3_fair.metrics.Recorded)):
        with pytest.raises(ValueError, match=rf"hyper-parameter '{key_}': {key_} must name a subclass of"):
            ExperimentConfig(algo="dqn", env="CartPole-v1", n_timesteps=8, hyperparams={key_: value})
    assert calls == []


def test_what_the_experiment_builds_cannot_be_named_and_its_keys_are_checked_first() -> None:
    fields = dict(algo="td3", env="Pendulum-v1", n_timesteps=8)
    for value in ("stable_baselines3.common.noise:NormalActionNoise", "sb3_fair.metrics:gini"):
        with pytest.raises(ValueError, match=r"hyper-parameter 'action_noise': SB3 calls it at every step; a config writes "
                                             r"noise_type and noise_std instead"):
            ExperimentConfig(**fields, hyperparams={"action_noise": value})
    with pytest.raises(ValueError, match=r"'noise_type' must be 'normal' or 'ornstein-uhlenbeck' \(or null\), got 'gaussian'"):
        ExperimentConfig(**fields, hyperparams={"noise_type": "gaussian"})
    with pytest.raises(ValueError, match=r"'noise_std' must be a finite number >= 0"):
        ExperimentConfig(**fields, hyperparams={"noise_type": "normal", "noise_std": -1})
    with pytest.raises(ValueError, match=r"hyper-parameter 'policy': 'MlpPolicyy' is not a policy of TD3: one of "):
        ExperimentConfig(**fields, hyperparams={"policy": "MlpPolicyy"})
    from stable_baselines3.common.noise import NormalActionNoise

    noise = NormalActionNoise(np.zeros(1), np.ones(1))  # an instance, in Python
    assert ExperimentConfig(**fields, hyperparams={"action_noise": noise, "noise_type": "normal", "noise_std": 0.2}).trusted is False


def test_the_documented_schedules_still_work(tmp_path) -> None:
    from sb3_fair.common.hyperparams import LinearSchedule
    from sb3_fair.common.long_term.advantages import attention_massaging_threshold, lending_massaging_threshold

    for hyperparams in ({"learning_rate": 3e-4, "clip_range": 0.2, "clip_range_vf": None}, {"learning_rate": 1, "clip_range": "lin_0.2"},
                        {"learning_rate": "lin_3e-4", "clip_range_vf": "lin_0.5"}, {"learning_rate": LinearSchedule(1e-3)},
                        {"massaging_tau": 0.1}, {"massaging_tau": "sb3_fair.common.long_term:lending_massaging_threshold"},
                        {"massaging_tau": "sb3_fair.common.long_term.advantages:attention_massaging_threshold"},
                        {"policy": "stable_baselines3.ppo.MlpPolicy"}):
        ExperimentConfig(algo="fair_ppo", env="CartPole-v1", n_timesteps=8, hyperparams=hyperparams)
    (tmp_path / "exp.yml").write_text("algo: ppo\nenv: CartPole-v1\nn_timesteps: 8\nhyperparams:\n  learning_rate: 3e-4\n")
    with pytest.raises(ValueError, match=r"got '3e-4' \(YAML reads 3e-4 as a string: write it with a point"):
        ExperimentConfig.from_file(tmp_path / "exp.yml")  # YAML 1.1 reads 3e-4 as text, which SB3 would refuse later
    model = build_model(ExperimentConfig(algo="ppo", env="CartPole-v1", n_timesteps=8,
                                         hyperparams={"policy": "MlpPolicy", "learning_rate": "lin_3e-4", "clip_range": 0.1, "n_steps": 16,
                                                      "batch_size": 16}))
    assert model.lr_schedule(1.0) == pytest.approx(3e-4) and model.clip_range(0.5) == pytest.approx(0.1)
    fair = build_model(ExperimentConfig.from_hyperparams("fair_ppo", "sb3_fair/DelayedImpactLending-v0", variant="f_ppo", n_timesteps=8))
    assert fair.massaging_tau is lending_massaging_threshold and attention_massaging_threshold(0) == 0.0


def _own_schedule(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    _user_module(tmp_path, monkeypatch, "my_schedules",
                 f"CALLS = {str(tmp_path / 'calls')!r}\n"
                 "NOT_A_SCHEDULE = 'fast'\n"
                 "def decay(progress):\n"
                 "    with open(CALLS, 'a') as f:\n"
                 "        f.write(f'{progress}\\n')\n"
                 "    return 1e-3 * progress\n")
    return tmp_path / "calls"


def test_a_trusted_config_may_name_its_own_schedule_as_sb3_allows(tmp_path, monkeypatch) -> None:
    """With trusted=True a schedule may be any callable of the progress (SB3's Schedule), imported and called only when
    the model is built; a value that is no schedule at all is still refused, before anything is called."""
    calls = _own_schedule(tmp_path, monkeypatch)
    fields = dict(algo="ppo", env="CartPole-v1", n_timesteps=8)
    hyperparams = {"policy": "MlpPolicy", "n_steps": 16, "batch_size": 16, "learning_rate": "my_schedules:decay"}
    with pytest.raises(ValueError, match=rf"'my_schedules:decay' is not in a package a config may name.*{TRUST}"):
        ExperimentConfig(**fields, hyperparams=hyperparams)
    cfg = ExperimentConfig(**fields, hyperparams=hyperparams, trusted=True)
    assert "my_schedules" not in sys.modules, "a trusted config imports nothing until the model is built"
    model = build_model(cfg)
    assert model.lr_schedule(0.5) == pytest.approx(5e-4) and calls.read_text().splitlines()[0] == "1"  # SB3 called it
    calls.unlink()
    with pytest.raises(ValueError, match=r"hyper-parameter 'learning_rate': .*or a callable of the remaining progress; got "
                                         r"'my_schedules:NOT_A_SCHEDULE'"):
        build_model(cfg.replace(hyperparams={"learning_rate": "my_schedules:NOT_A_SCHEDULE"}))
    for value in ("3e-4", True, "fast"):  # no import needed to refuse these
        with pytest.raises(ValueError, match=r"hyper-parameter 'learning_rate': .*must be a number"):
            ExperimentConfig(**fields, hyperparams={"learning_rate": value}, trusted=True)
    with pytest.raises(ValueError, match=r"hyper-parameter 'action_noise'"):
        ExperimentConfig(**fields, hyperparams={"action_noise": "my_schedules:decay"}, trusted=True)
    assert not calls.exists()

# --- YAML is bounded ----------------------------------------------------------------------------------------------------

def _laughs(levels: int = 9) -> str:
    lines = ["lol0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"lol{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]" for i in range(1, levels + 1)]
    return "\n".join(lines) + "\n"


def test_yaml_alias_bombs_are_refused_quickly(tmp_path) -> None:
    from sb3_fair import cli

    bomb = _laughs()
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match=rf"bomb.yml: YAML expands to more than {MAX_YAML_NODES:,} values"):
        load_yaml(bomb, "bomb.yml")
    (tmp_path / "exp.yml").write_text("algo: dqn\nenv: CartPole-v1\nn_timesteps: 10\nhyperparams:\n  policy_kwargs:\n"
                                      + "".join("    " + line + "\n" for line in bomb.splitlines()))
    with pytest.raises(ValueError, match="YAML expands to more than"):
        ExperimentConfig.from_file(tmp_path / "exp.yml")
    (tmp_path / "hp.yml").write_text("CartPole-v1:\n  policy: MlpPolicy\n  n_timesteps: 10\n  extra:\n"
                                     + "".join("    " + line + "\n" for line in bomb.splitlines()))
    with pytest.raises(ValueError, match="YAML expands to more than"):
        ExperimentConfig.from_hyperparams("dqn", "CartPole-v1", file=tmp_path / "hp.yml")
    with pytest.raises(SystemExit):
        cli.main(["train", "--config", str(tmp_path / "exp.yml")])
    assert time.perf_counter() - t0 < 10


def test_yaml_recursion_and_depth_are_refused_and_anchors_still_work() -> None:
    with pytest.raises(ValueError, match="recursive alias"):
        load_yaml("a: &a [1, *a]", "r.yml")
    with pytest.raises(ValueError, match="nested deeper than"):
        load_yaml("[" * 150 + "]" * 150, "d.yml")
    data = load_yaml("base: &b {lr: 1, arch: [64]}\nrun: *b\n", "ok.yml")
    assert data == {"base": {"lr": 1, "arch": [64]}, "run": {"lr": 1, "arch": [64]}}
    data["run"]["arch"].append(32)
    assert data["base"]["arch"] == [64], "an alias is a copy: changing one place never changes another"
    with pytest.raises(ValueError, match="not valid YAML"):
        load_yaml("a: !!python/object/apply:os.system ['true']", "tag.yml")


# --- outputs stay in their folder -------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["../escape", "/tmp/abs", "a/b", "..", ".", "", " ", "a\\b", "a\nb", "x" * 201])
def test_run_group_and_variant_names_are_plain(name) -> None:
    for field in ("name", "group"):
        with pytest.raises(ValueError, match=rf"{field} must be a plain name"):
            ExperimentConfig(algo="dqn", env="CartPole-v1", n_timesteps=1, **{field: name})
    with pytest.raises(ValueError, match="must be a plain name"):
        check_name(name, "name")


def test_cli_names_cannot_leave_the_output_folder(tmp_path, monkeypatch) -> None:
    from sb3_fair import cli

    work = tmp_path / "outer" / "work"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    for name in ("../../escaped", str(tmp_path / "abs"), "a/b"):
        with pytest.raises(SystemExit) as exit_info:
            cli.main(["train", "--algo", "dqn", "--env", "CartPole-v1", "--timesteps", "8", "--checkpoint-every", "4", "--name", name])
        assert exit_info.value.code == 2
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["sweep", "--algo", "dqn", "--env", "CartPole-v1", "--timesteps", "8", "--name", "../escape", "--storage", "sweeps"])
    assert exit_info.value.code == 2
    assert list(work.iterdir()) == [] and list((tmp_path / "outer").iterdir()) == [work]
    assert not (tmp_path / "abs").exists() and not list(tmp_path.rglob("escape*"))


def test_checkpoints_without_save_path_go_under_checkpoints_of_the_working_folder(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    cfg = ExperimentConfig(algo="dqn", env="sb3_fair/DonutAllocation-v0", hyperparams={"policy": "MlpPolicy", "learning_starts": 0},
                           n_timesteps=20, eval_episodes=0, checkpoint_every=10)
    assert cfg.run_name == "dqn-sb3_fair_DonutAllocation-v0-seed0"
    train(cfg)
    files = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file())
    folder = "checkpoints/dqn-sb3_fair_DonutAllocation-v0-seed0/"
    assert files == [folder + f for f in ("model.config.yml", "model_10_steps.zip", "model_20_steps.zip",
                                          "model_replay_buffer_20_steps.pkl")]


# --- checkpoints stay small --------------------------------------------------------------------------------------------

def _equal_buffers(a, b) -> None:
    assert type(a) is type(b) and set(vars(a)) == set(vars(b))
    for key, value in vars(a).items():
        other = vars(b)[key]
        if isinstance(value, np.ndarray) and value.dtype == object:  # HER's infos: dicts
            assert value.shape == other.shape and all(x == y for x, y in zip(value.ravel(), other.ravel())), key
        elif isinstance(value, np.ndarray):  # byte for byte: -0.0 is not 0.0
            assert value.dtype == other.dtype and value.shape == other.shape and value.tobytes() == other.tobytes(), key
        elif isinstance(value, dict) and value and all(isinstance(v, np.ndarray) for v in value.values()):
            assert all(value[k].shape == other[k].shape and value[k].tobytes() == other[k].tobytes() for k in value), key
        elif key not in ("device", "env"):  # HER's env is set by load_replay_buffer to the loading model's own
            assert value == other, key


@pytest.mark.parametrize("make", [
    lambda: DQN("MlpPolicy", "CartPole-v1", buffer_size=50_000, learning_starts=0, seed=0),
    lambda: DQN("MlpPolicy", "CartPole-v1", buffer_size=50_000, learning_starts=0, seed=0, optimize_memory_usage=True,
                replay_buffer_kwargs={"handle_timeout_termination": False}),
    lambda: SAC("MlpPolicy", "Pendulum-v1", buffer_size=50_000, learning_starts=50, seed=0),
], ids=["dqn", "dqn-memory-optimised", "sac"])
def test_a_compact_buffer_loads_back_bit_for_bit(make, tmp_path) -> None:
    model = make()
    model.learn(150)
    size = save_replay_buffer(model.replay_buffer, tmp_path / "b.pkl")
    model.save_replay_buffer(tmp_path / "full.pkl")
    assert size < (tmp_path / "full.pkl").stat().st_size / 20
    fresh = type(model)("MlpPolicy", model.get_env(), buffer_size=50_000)
    fresh.load_replay_buffer(tmp_path / "b.pkl")  # SB3's own loader reads it
    _equal_buffers(model.replay_buffer, fresh.replay_buffer)


def test_a_her_buffer_loads_back_with_its_infos_and_negative_zeros(tmp_path) -> None:
    from stable_baselines3 import HerReplayBuffer
    from stable_baselines3.common.envs import BitFlippingEnv

    def make() -> DQN:
        return DQN("MultiInputPolicy", BitFlippingEnv(n_bits=4, continuous=False, max_steps=4), replay_buffer_class=HerReplayBuffer,
                   replay_buffer_kwargs={"n_sampled_goal": 2, "goal_selection_strategy": "future"}, buffer_size=1000,
                   learning_starts=10, seed=0)

    model = make()
    model.learn(60)
    model.replay_buffer.rewards[model.replay_buffer.pos - 1] = -0.0  # a written row whose value is a zero
    save_replay_buffer(model.replay_buffer, tmp_path / "b.pkl")
    other = make()
    other.load_replay_buffer(tmp_path / "b.pkl", truncate_last_traj=False)
    _equal_buffers(model.replay_buffer, other.replay_buffer)


def test_fairqcm_counterfactual_buffer_loads_back_bit_for_bit(tmp_path) -> None:
    from sb3_fair.envs import DonutAllocationEnv, make_donut_allocation
    from sb3_fair.wrappers import FairnessReward, MemoryAugmentation

    dict_env = FairnessReward(MemoryAugmentation(DonutAllocationEnv(), encoding="binary", dict_observation=True), welfare="log_nash")
    for env in (make_donut_allocation(), dict_env):
        policy = "MultiInputPolicy" if hasattr(env.observation_space, "spaces") else "MlpPolicy"
        model = FairDQN(policy, env, counterfactual=True, buffer_size=20_000, learning_starts=0, seed=0)
        model.learn(120)
        assert model.replay_buffer.pos > 120, "real and counterfactual rows"
        save_replay_buffer(model.replay_buffer, tmp_path / "b.pkl")
        other = FairDQN(policy, env, counterfactual=True, buffer_size=20_000)
        other.load_replay_buffer(tmp_path / "b.pkl")
        _equal_buffers(model.replay_buffer, other.replay_buffer)


def test_checkpoint_disk_use_follows_what_was_stored(tmp_path) -> None:
    """SB3's CheckpointCallback pickles the preallocated 1,000,000-row buffer at every checkpoint (~340 MB each for
    the doughnut task, 1 GB for this run); sb3-fair's writes the filled rows and keeps the newest buffer only."""
    cfg = ExperimentConfig.from_hyperparams("fair_dqn", "sb3_fair/DonutAllocation-v0", n_timesteps=600, eval_episodes=0,
                                            checkpoint_every=200, save_path=str(tmp_path / "m.zip"))
    assert cfg.hyperparams.get("buffer_size", 1_000_000) == 1_000_000
    result = train(cfg)
    files = sorted(p.name for p in (tmp_path / "m").iterdir())
    assert files == ["model.config.yml", "model_200_steps.zip", "model_400_steps.zip", "model_600_steps.zip",
                     "model_replay_buffer_600_steps.pkl"]
    on_disk = sum(p.stat().st_size for p in (tmp_path / "m").iterdir() if p.suffix in (".zip", ".pkl"))
    assert result.checkpoint_bytes == on_disk < 20_000_000


def test_checkpoint_buffers_keeps_the_newest_n(tmp_path) -> None:
    model = DQN("MlpPolicy", "CartPole-v1", buffer_size=5_000, learning_starts=0, seed=0)
    callback = CompactCheckpointCallback(25, str(tmp_path), name_prefix="m", save_replay_buffer=True, keep_buffers=2)
    model.learn(100, callback=callback)
    assert sorted(p.name for p in tmp_path.glob("*.pkl")) == ["m_replay_buffer_100_steps.pkl", "m_replay_buffer_75_steps.pkl"]
    assert len(list(tmp_path.glob("*.zip"))) == 4
    with pytest.raises(ValueError, match="keep_buffers must be an int >= 0"):
        CompactCheckpointCallback(25, str(tmp_path), keep_buffers=-1)
    with pytest.raises(ValueError, match="checkpoint_buffers must be an int >= 0"):
        ExperimentConfig(algo="dqn", env="CartPole-v1", n_timesteps=1, checkpoint_buffers=-1)


def test_resuming_without_a_buffer_says_so(tmp_path) -> None:
    cfg = ExperimentConfig(algo="dqn", env="CartPole-v1", hyperparams={"policy": "MlpPolicy", "learning_starts": 0, "buffer_size": 500},
                           n_timesteps=100, eval_episodes=0, checkpoint_every=50, save_path=str(tmp_path / "m.zip"))
    train(cfg)
    assert not (tmp_path / "m" / "model_replay_buffer_50_steps.pkl").exists()
    with pytest.warns(UserWarning, match="no replay buffer beside model_50_steps.zip"):
        train(cfg.replace(n_timesteps=120, checkpoint_every=None, save_path=None), resume=tmp_path / "m" / "model_50_steps.zip")


# --- values that used to pass the checks and fail later -----------------------------------------------------------------

class _Steps(BaseCallback):
    def _on_step(self) -> bool:
        raise AssertionError("training started")


def test_values_that_would_fail_mid_training_are_refused_before(tmp_path) -> None:
    cfg = ExperimentConfig(algo="ppo", env="CartPole-v1", hyperparams={"policy": "MlpPolicy", "batch_size": 64.5, "n_steps": 128},
                           n_timesteps=256, eval_episodes=0)
    with pytest.raises(ValueError, match=r"hyper-parameter 'batch_size' must be an int, got 64.5"):
        train(cfg, callback=_Steps())
    assert build_model(cfg.replace(hyperparams={"batch_size": 64.0})).batch_size == 64  # a whole float is an int
    (tmp_path / "file").write_text("")
    for bad in (tmp_path / "file" / "m.zip", tmp_path):
        with pytest.raises(ValueError, match="save_path"):
            train(cfg.replace(hyperparams={"batch_size": 64}, save_path=str(bad)), callback=_Steps())


@pytest.mark.parametrize("method", ["fair_ppo", "fair_er", "fairqcm", "fppo"])
def test_the_method_benchmarks_refuse_zero_seeds(method, capsys) -> None:
    import importlib

    extra = ["--part", "lending"] if method == "fppo" else []
    with pytest.raises(SystemExit) as exit_info:
        importlib.import_module(method).main([*extra, "--seeds", "0"])
    assert exit_info.value.code == 2 and "argument --seeds: must be an int >= 1, got '0'" in capsys.readouterr().err


# --- sweeps start their own Ray unless told to join one -----------------------------------------------------------------

class _Stop(Exception):
    pass


@pytest.mark.parametrize("address, expected", [(None, {"address": "local", "include_dashboard": False}), ("auto", {"address": "auto"})])
def test_sweeps_start_a_local_ray_of_their_own(address, expected, monkeypatch, tmp_path) -> None:
    """A cluster that ended uncleanly leaves its address in /tmp/ray/ray_current_cluster, which a plain ray.init()
    joins (and then refuses num_cpus); address="local" always starts a fresh one."""
    ray = pytest.importorskip("ray")
    from sb3_fair.experiment.sweep import sweep

    seen = {}

    def init(**kwargs):
        seen.update(kwargs)
        raise _Stop

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", init)
    with pytest.raises(_Stop):
        sweep(ExperimentConfig(algo="dqn", env="CartPole-v1", n_timesteps=8), name="s", storage=tmp_path, address=address)
    assert {k: seen[k] for k in expected} == expected
    assert ("num_cpus" in seen) == (address is None)


def test_deeply_nested_values_are_refused_not_a_recursion_error() -> None:
    from sb3_fair.experiment.config import parse_value

    for text in ("[" * 20_000 + "]" * 20_000, "[" * 150 + "]" * 150, '{"a": ' * 150 + "1" + "}" * 150):
        with pytest.raises(ValueError, match="nested deeper than 100 levels"):
            parse_value(text)
    assert parse_value("[[1, 2], {\"a\": [3]}]") == [[1, 2], {"a": [3]}]


def test_a_checkpoint_every_step_of_a_huge_budget_is_refused() -> None:
    with pytest.raises(ValueError, match=r"checkpoint_every=1 would write 1,000,000,000,000 checkpoints .* at most 10,000: "
                                         r"give checkpoint_every >= 100,000,000"):
        ExperimentConfig(algo="dqn", env="CartPole-v1", n_timesteps=10**12, checkpoint_every=1)
    assert ExperimentConfig(algo="dqn", env="CartPole-v1", n_timesteps=10_000, checkpoint_every=1).checkpoint_every == 1


@pytest.mark.parametrize("key, value, message", [
    ("gamma", 2, r"'gamma' must be a number >= 0 and <= 1, got 2"),
    ("gamma", -0.5, r"'gamma' must be a number >= 0 and <= 1"),
    ("gae_lambda", 5, r"'gae_lambda' must be a number >= 0 and <= 1"),
    ("clip_range", -1, r"'clip_range' must be a number > 0"),
    ("max_grad_norm", -1, r"'max_grad_norm' must be a number > 0"),
    ("ent_coef", float("nan"), r"'ent_coef' must be a number >= 0, got nan"),
    ("vf_coef", float("inf"), r"'vf_coef' must be a number >= 0, got inf"),
    ("n_epochs", 0, r"'n_epochs' must be an int >= 1, got 0"),
    ("policy_kwargs", {"net_arch": [-1]}, r"'policy_kwargs.net_arch' must list layer sizes \(ints >= 1\), got \[-1\]"),
])
def test_sb3_arguments_out_of_range_are_refused_before_anything_is_built(key, value, message) -> None:
    cfg = ExperimentConfig(algo="ppo", env="CartPole-v1", hyperparams={"policy": "MlpPolicy", key: value}, n_timesteps=64)
    with pytest.raises(ValueError, match=rf"hyper-parameter {message}"):
        build_model(cfg)


@pytest.mark.parametrize("key, value", [("buffer_size", 0), ("exploration_fraction", 2), ("target_update_interval", 0),
                                        ("learning_starts", -5), ("tau", 5), ("exploration_final_eps", -1), ("train_freq", 0),
                                        ("train_freq", [0, "step"])])
def test_dqn_arguments_out_of_range_are_refused(key, value) -> None:
    cfg = ExperimentConfig(algo="dqn", env="CartPole-v1", hyperparams={"policy": "MlpPolicy", key: value}, n_timesteps=64)
    with pytest.raises(ValueError, match=rf"hyper-parameter '{key}' must be"):
        build_model(cfg)
    # strings, schedules and (n, unit) pairs in range still pass
    sac = ExperimentConfig(algo="sac", env="Pendulum-v1", hyperparams={"ent_coef": "auto_0.1", "train_freq": [1, "episode"],
                                                                     "learning_rate": "lin_0.001"}, n_timesteps=8)
    assert build_model(sac).ent_coef == "auto_0.1"


def test_unwritable_save_paths_and_eval_env_arguments_are_refused_before_training(tmp_path) -> None:
    cfg = ExperimentConfig(algo="ppo", env="CartPole-v1", hyperparams={"policy": "MlpPolicy", "n_steps": 64, "batch_size": 64},
                           n_timesteps=64, eval_episodes=1)
    if Path("/proc").is_dir():  # mkdir fails there even for root, whom os.access answers yes
        with pytest.raises(ValueError, match=r"save_path: cannot write '/proc/sb3_fair_test/m.zip'"):
            train(cfg.replace(save_path="/proc/sb3_fair_test/m.zip"), callback=_Steps())
    with pytest.raises(ValueError, match=r"refused eval_env_kwargs \{'bogus': 1\}"):
        train(cfg.replace(eval_env_kwargs={"bogus": 1}), callback=_Steps())


def test_a_method_benchmarks_out_must_be_a_folder(tmp_path, capsys) -> None:
    import fairqcm

    (tmp_path / "file").write_text("")
    with pytest.raises(SystemExit) as exit_info:
        fairqcm.main(["--out", str(tmp_path / "file")])
    assert exit_info.value.code == 2 and "argument --out" in capsys.readouterr().err


@pytest.mark.parametrize("key, spec", [
    ("env_wrapper", [{"stable_baselines3.common.monitor.Monitor": {"filename": "/tmp/elsewhere/evil"}}]),
    ("env_wrapper", {"gymnasium.wrappers.RecordVideo": {"video_folder": "../../videos"}}),
    ("vec_env_wrapper", {"stable_baselines3.common.vec_env.VecMonitor": {"filename": "~/evil"}}),
    ("callback", [{"stable_baselines3.common.callbacks.CheckpointCallback": {"save_freq": 32, "save_path": "/tmp/elsewhere"}}]),
    ("callback", {"stable_baselines3.common.callbacks.EvalCallback": {"eval_env": None, "log_path": "../x"}}),
])
def test_wrapper_and_callback_files_stay_in_the_working_folder(key, spec) -> None:
    fields = dict(algo="ppo", env="CartPole-v1", n_timesteps=64)
    with pytest.raises(ValueError, match=rf"hyper-parameter '{key}': .* would write .*outside the working folder"):
        ExperimentConfig(**fields, hyperparams={"policy": "MlpPolicy", key: spec})
    assert ExperimentConfig(**fields, hyperparams={"policy": "MlpPolicy", key: spec}, trusted=True).trusted


def test_wrapper_files_inside_the_working_folder_are_written(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    cfg = ExperimentConfig(algo="ppo", env="CartPole-v1", n_timesteps=64, eval_episodes=0,
                           hyperparams={"policy": "MlpPolicy", "n_steps": 32, "batch_size": 32,
                                        "env_wrapper": [{"stable_baselines3.common.monitor.Monitor": {"filename": "logs/run"}}],
                                        "callback": [{"stable_baselines3.common.callbacks.CheckpointCallback":
                                                      {"save_freq": 32, "save_path": "ckpt", "name_prefix": "x"}}]})
    train(cfg)
    assert (tmp_path / "logs" / "run.monitor.csv").is_file() and (tmp_path / "ckpt" / "x_64_steps.zip").is_file()


def test_ids_that_import_what_their_env_kwargs_name_need_the_opt_in() -> None:
    for env in ("GymV21Environment-v0", "GymV26Environment-v0"):
        with pytest.raises(ValueError, match=rf"env '{env}' imports the old-gym env its env_kwargs name .*{TRUST}"):
            ExperimentConfig(algo="ppo", env=env, n_timesteps=8)


def test_linear_schedules_are_checked_as_their_start_value() -> None:
    for key, value, message in (("clip_range", "lin_-0.001", r"'clip_range' must be a number > 0, got -0.001"),
                                ("learning_rate", "lin_0", r"'learning_rate' must be a number > 0, got 0.0"),
                                ("clip_range", "lin_nan", r"lin_<finite number>"), ("learning_rate", "lin_inf", r"lin_<finite number>")):
        with pytest.raises(ValueError, match=message):
            build_model(ExperimentConfig(algo="ppo", env="CartPole-v1", hyperparams={"policy": "MlpPolicy", key: value}, n_timesteps=8))


def test_every_grid_value_is_checked_before_ray_starts(monkeypatch, tmp_path) -> None:
    ray = pytest.importorskip("ray")
    from sb3_fair.experiment.sweep import sweep

    monkeypatch.setattr(ray, "init", lambda **kwargs: (_ for _ in ()).throw(AssertionError("ray started")))
    with pytest.raises(ValueError, match=r"hyper-parameter 'policy': 'os.system' is not in a package a config may name"):
        sweep(ExperimentConfig(algo="dqn", env="CartPole-v1", n_timesteps=8), grid={"policy": ["MlpPolicy", "os.system"]},
              storage=tmp_path)


def test_a_sweep_trial_takes_the_opt_in_from_its_caller_never_from_its_parameters(tmp_path, monkeypatch, marker) -> None:
    """Ray saves a trial's parameters and restores them on a resume: a ``trusted`` among them (as sb3-fair used to save,
    or as anyone may write) grants nothing; only the process that runs the sweep gives the opt-in."""
    from sb3_fair.experiment.sweep import trial_configs

    wrapper = _own_module(tmp_path, monkeypatch, marker)
    base = ExperimentConfig(algo="dqn", env="CartPole-v1", n_timesteps=8, group="s")
    params = {"base": base.to_dict(), "overrides": {"env_wrapper": wrapper}, "seeds": [0, 1], "trusted": True}
    with pytest.raises(ValueError, match=rf"hyper-parameter 'env_wrapper': 'my_code.MarkWrapper' is not in a package .*{TRUST}"):
        trial_configs(params)
    configs = trial_configs(params, trusted=True, trial="t1")
    assert [(c.seed, c.name, c.trusted) for c in configs] == [(0, "s-t1-seed0", True), (1, "s-t1-seed1", True)]
    for bad in ({}, {"base": base.to_dict(), "seeds": []}, {"base": base.to_dict(), "seeds": ["0"]}, {"base": "x"}):
        with pytest.raises(ValueError, match=r"parameters of an sb3-fair sweep's trial|seed"):
            trial_configs(bad)
    assert not marker.exists() and "my_code" not in sys.modules


def test_buffers_that_do_not_fit_in_memory_name_their_hyper_parameters(monkeypatch) -> None:
    def no_memory(self):  # what NumPy raises for a buffer of buffer_size rows beyond the machine's memory
        raise MemoryError("Unable to allocate 14.9 GiB for an array with shape (1000000000, 1, 4) and data type float32")

    monkeypatch.setattr(DQN, "_setup_model", no_memory)
    cfg = ExperimentConfig(algo="dqn", env="CartPole-v1", hyperparams={"policy": "MlpPolicy", "buffer_size": 10**9}, n_timesteps=8)
    with pytest.raises(ValueError, match=r"DQN's buffers do not fit in memory \(Unable to allocate 14.9 GiB .*\); lower the "
                                         r"hyper-parameters that size them \(\{'buffer_size': 1000000000\}, n_envs 1\)"):
        build_model(cfg)
