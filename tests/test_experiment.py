"""The experiment layer: hyper-parameter files in RL Zoo's format, configs and overrides, the registry, train(config)."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
import torch as th
from sb3_contrib import MaskablePPO, RecurrentPPO
from stable_baselines3 import PPO
from stable_baselines3.common.callbacks import BaseCallback
from torch import nn

from sb3_fair import FairDQN, FairPPO
from sb3_fair.common.hyperparams import (
    LinearSchedule,
    hyperparams_file,
    load_hyperparams,
    read_hyperparams_file,
    resolve_hyperparams,
    variants,
)
from sb3_fair.experiment import (
    ExperimentConfig,
    apply_overrides,
    build_model,
    canonical_algo,
    get_algo_class,
    load_model,
    make_env,
    train,
)
from sb3_fair.experiment.registry import ALGOS, register_multiagent_env
from sb3_fair.ppo.policies import MlpTrunk

DONUT = "sb3_fair/DonutAllocation-v0"


# --- hyper-parameter files -------------------------------------------------------------------------------------------

def test_every_shipped_entry_resolves_and_names_only_arguments_of_its_algorithm(tmp_path) -> None:
    import inspect

    from sb3_fair.common.hyperparams import HYPERPARAMS_DIR, ZOO_KEYS, algo_kwargs

    files = sorted(HYPERPARAMS_DIR.glob("*.yml"))
    assert {f.stem for f in files} >= {"fair_dqn", "fair_ppo"}
    for f in files:
        cls = get_algo_class(f.stem)
        for key, entry in read_hyperparams_file(f).items():
            if key.startswith("_"):
                continue  # YAML anchors shared by entries
            kwargs = algo_kwargs(entry)
            assert "n_timesteps" in entry and "policy" in entry, (f.name, key)
            assert not set(kwargs) & set(ZOO_KEYS)
            # FairX takes its parent's arguments through **kwargs: check against both signatures
            accepted = {p for c in cls.__mro__ if "__init__" in vars(c) for p in inspect.signature(c.__init__).parameters}
            assert set(kwargs) <= accepted, (f.name, key, set(kwargs) - accepted)


def test_entries_variants_and_default_follow_rl_zoos_rules() -> None:
    path = hyperparams_file("fair_ppo")
    assert variants(path, "sb3_fair/EpidemicControl-v0") == ["a_ppo", "f_ppo", "f_ppo_l", "ppo"]
    # the env's own entry is the paper's F-PPO preset; an unknown env falls back to "default"
    assert load_hyperparams(path, "sb3_fair/EpidemicControl-v0") == load_hyperparams(path, "sb3_fair/EpidemicControl-v0", "f_ppo")
    assert load_hyperparams(path, "CartPole-v1") == {"policy": "MlpPolicy", "n_timesteps": 100000}
    with pytest.raises(ValueError, match="no variant 'f_ppo' of 'CartPole-v1'"):
        load_hyperparams(path, "CartPole-v1", "f_ppo")  # never the default for a named variant


def test_objects_written_as_strings_are_resolved() -> None:
    out = resolve_hyperparams({
        "policy_kwargs": {"features_extractor_class": "sb3_fair.ppo.policies:MlpTrunk", "activation_fn": "torch.nn:ReLU"},
        "massaging_tau": "sb3_fair.common.long_term.advantages:lending_massaging_threshold",
        "learning_rate": "lin_0.001", "clip_range": 0.2, "device": "cuda:0", "fairness": "long_term",
    })
    assert out["policy_kwargs"] == {"features_extractor_class": MlpTrunk, "activation_fn": nn.ReLU}
    from sb3_fair.common.long_term.advantages import lending_massaging_threshold

    assert out["massaging_tau"] is lending_massaging_threshold
    assert isinstance(out["learning_rate"], LinearSchedule) and out["learning_rate"](0.5) == pytest.approx(0.0005)
    assert out["device"] == "cuda:0" and out["fairness"] == "long_term"  # plain strings stay strings
    # RL Zoo's own forms
    zoo = resolve_hyperparams({"policy_kwargs": "dict(net_arch=[64, 64], activation_fn=nn.Tanh)",
                               "policy": "stable_baselines3.ppo.MlpPolicy"})
    assert zoo["policy_kwargs"] == {"net_arch": [64, 64], "activation_fn": nn.Tanh}
    assert zoo["policy"] is PPO.policy_aliases["MlpPolicy"]


@pytest.mark.parametrize("entry, message", [
    ({"activation_fn": "torch.nn:NoSuchLayer"}, "hyper-parameter 'activation_fn': cannot import 'torch.nn:NoSuchLayer'"),
    ({"policy_kwargs": "dict(net_arch=[64,"}, "hyper-parameter 'policy_kwargs': cannot read"),
    ({"policy_kwargs": "[1, 2]"}, "hyper-parameter 'policy_kwargs': must give a dict"),
    ({"learning_rate": "lin_fast"}, "a linear schedule is written lin_<finite number>"),
])
def test_unresolvable_values_name_their_key(entry, message) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace("[", r"\[")):
        resolve_hyperparams(entry)


def test_presets_come_from_the_yaml_files() -> None:
    """One source of truth: from_preset reads the same entries as the CLI (known values from the papers' code)."""
    from sb3_fair.dqn import preset_kwargs as dqn_preset
    from sb3_fair.ppo.presets import PAPER_TIMESTEPS, preset_kwargs

    assert PAPER_TIMESTEPS == {"delayed_impact_lending": 700_000, "attention": 2_000_000, "epidemic": 500_000}
    lending = preset_kwargs("delayed_impact_lending", "f_ppo")
    assert lending["fairness_coef"] == (1.12, 1.0) and lending["delta"] == 0.005 and lending["n_steps"] == 2000
    assert lending["policy_kwargs"]["features_extractor_class"] is MlpTrunk
    fairqcm = dqn_preset("loan_applicants", True)
    assert fairqcm["counterfactual_offsets"] == (0, 1, 2, 3, 4, 5) and fairqcm["batch_size"] == 512
    assert dqn_preset("donut", False)["buffer_size"] == 400 and dqn_preset("donut", True)["buffer_size"] == 6400
    assert load_hyperparams(hyperparams_file("fair_dqn"), "sb3_fair/LoanApplicants-v0", "paper_fairqcm")["env_kwargs"] == {"memory": "min"}


# --- configs ---------------------------------------------------------------------------------------------------------

def test_overrides_reach_into_mappings_parse_numbers_and_remove_keys() -> None:
    base = {"learning_rate": 0.1, "policy_kwargs": {"net_arch": [8]}, "env_kwargs": {"preset": "small"}, "gamma": 0.9}
    out = apply_overrides(base, ["learning_rate=1e-4", "policy_kwargs.net_arch=[64, 64]", "env_kwargs.preset=tiny", "gamma=null",
                                 "n_steps=128", "fairness=dp", "massaging=true"])
    assert out == {"learning_rate": 1e-4, "policy_kwargs": {"net_arch": [64, 64]}, "env_kwargs": {"preset": "tiny"},
                   "n_steps": 128, "fairness": "dp", "massaging": True, "gamma": None}
    assert base["policy_kwargs"] == {"net_arch": [8]}  # not changed in place
    with pytest.raises(ValueError, match="policy_kwargs is written as a string"):
        apply_overrides({"policy_kwargs": "dict(net_arch=[8])"}, ["policy_kwargs.net_arch=[4]"])
    with pytest.raises(ValueError, match="gamma is 0.9, not a mapping"):
        apply_overrides(base, ["gamma.x=1"])


@pytest.mark.parametrize("text, value", [("1e-4", 1e-4), (".5", 0.5), ("010", 10), ("-3", -3), ("1e4", 10000.0), ("[64,64]", [64, 64]),
                                         ("[tanh, relu]", ["tanh", "relu"]), ("true", True), ("None", None), ("null", None),
                                         ("no", "no"), ("3:30", "3:30"), ("long_term", "long_term"), ('{"a": 1}', {"a": 1})])
def test_command_line_values_are_read_without_yaml_1_1_surprises(text, value) -> None:
    from sb3_fair.experiment.config import parse_value

    assert parse_value(text) == value and type(parse_value(text)) is type(value)


def test_an_empty_override_value_is_refused() -> None:
    with pytest.raises(ValueError, match="needs a value after '='"):
        apply_overrides({}, ["gamma="])


def test_config_round_trips_and_checks_its_fields(tmp_path) -> None:
    cfg = ExperimentConfig.from_hyperparams("FairPPO", "sb3_fair/AllelopathicHarvest-v0", overrides=["alpha=1.0"], seed=3)
    assert cfg.algo == "fair_ppo" and cfg.n_timesteps == 500_000 and cfg.hyperparams["alpha"] == 1.0
    assert ExperimentConfig.from_dict(json.loads(json.dumps(cfg.to_dict()))) == cfg
    cfg.save(tmp_path / "c.yml")
    assert ExperimentConfig.from_file(tmp_path / "c.yml") == cfg
    assert cfg.replace(seed=4, hyperparams={"env_kwargs.preset": "tiny"}).hyperparams["env_kwargs"] == {"preset": "tiny"}
    for bad, message in [({"seed": -1}, "seed must be an int >= 0"), ({"n_timesteps": 1.5}, "n_timesteps must be an int >= 1"),
                         ({"wandb": "yes"}, "wandb must be True, False or a dict"), ({"colour": 1}, "unknown config keys ['colour']")]:
        with pytest.raises(ValueError, match=message.replace("[", r"\[")):
            ExperimentConfig.from_dict({**cfg.to_dict(), **bad})


def test_saved_configs_write_python_objects_as_paths(tmp_path) -> None:
    cfg = ExperimentConfig.from_hyperparams("fair_ppo", "sb3_fair/EpidemicControl-v0", overrides={"policy_kwargs.activation_fn": nn.Tanh},
                                            n_timesteps=64)
    cfg.save(tmp_path / "c.yml")
    assert "activation_fn: torch.nn.modules.activation:Tanh" in (tmp_path / "c.yml").read_text()
    back = ExperimentConfig.from_file(tmp_path / "c.yml")
    assert resolve_hyperparams(back.hyperparams)["policy_kwargs"]["activation_fn"] is nn.Tanh


def test_experiment_file_starts_from_the_shipped_entry(tmp_path) -> None:
    (tmp_path / "exp.yml").write_text("algo: fair_ppo\nenv: sb3_fair/EpidemicControl-v0\nvariant: f_ppo_l\nseed: 2\n"
                                      "hyperparams:\n  delta: 0.01\n  n_steps: 64\n")
    cfg = ExperimentConfig.from_file(tmp_path / "exp.yml", overrides=["batch_size=32"], n_timesteps=128)
    assert (cfg.seed, cfg.n_timesteps, cfg.variant) == (2, 128, "f_ppo_l")
    assert cfg.hyperparams["delta"] == 0.01 and cfg.hyperparams["n_steps"] == 64 and cfg.hyperparams["batch_size"] == 32
    assert cfg.hyperparams["fairness_coef"] == [0.25, 0.25]  # from the shipped f_ppo_l entry
    # a file's mapping is merged into the entry's at every depth; -p and explicit fields win over the file
    (tmp_path / "lend.yml").write_text("algo: fair_dqn\nenv: sb3_fair/LoanApplicants-v0\nvariant: paper_fairqcm\nverbose: 1\n"
                                       "n_timesteps: 50\nhyperparams:\n  env_kwargs: {horizon: 20}\n  max_counterfactuals: null\n")
    lend = ExperimentConfig.from_file(tmp_path / "lend.yml", overrides=["gamma=0.5", "n_timesteps=70"])
    assert lend.hyperparams["env_kwargs"] == {"memory": "min", "horizon": 20} and lend.hyperparams["max_counterfactuals"] is None
    assert (lend.hyperparams["gamma"], lend.n_timesteps, lend.verbose) == (0.5, 70, 1)
    assert ExperimentConfig.from_file(tmp_path / "lend.yml", n_timesteps=90, overrides=["n_timesteps=70"]).n_timesteps == 90
    (tmp_path / "bad.yml").write_text("algo: ppo\nenv: CartPole-v1\nlearnig_rate: 0.1\n")
    with pytest.raises(ValueError, match=r"unknown keys \['learnig_rate'\]"):
        ExperimentConfig.from_file(tmp_path / "bad.yml")


# --- registry --------------------------------------------------------------------------------------------------------

def test_algorithm_names_as_rl_zoo_spells_them_and_class_names() -> None:
    assert canonical_algo("FairPPO") == canonical_algo("fairppo") == canonical_algo("fair-ppo") == "fair_ppo"
    assert get_algo_class("MaskablePPO") is get_algo_class("ppo_mask") is MaskablePPO
    assert get_algo_class("ppo_lstm") is RecurrentPPO and get_algo_class("RecurrentPPO") is RecurrentPPO
    for name in ALGOS:
        assert get_algo_class(name).__name__ == ALGOS[name].rpartition(":")[2]


def test_games_have_ids_and_a_counterfactual_pair_option() -> None:
    vec = make_env("sb3_fair/AllelopathicHarvest-v0", n_envs=2, env_kwargs={"preset": "tiny"})
    assert vec.num_envs == 2 * 4
    pair = make_env("sb3_fair/AllelopathicHarvest-v0", n_envs=1, env_kwargs={"preset": "tiny", "counterfactual_pair": "flip"})
    assert pair.num_envs == 2 * 4  # each game beside its twin
    with pytest.raises(ValueError, match="n_agents must be an even int"):
        make_env("sb3_fair/DisparityGame-v0", env_kwargs={"n_agents": 3})

    from sb3_fair.envs import DisparityGame

    register_multiagent_env("tests/SmallDisparity-v0", lambda **kw: DisparityGame(n_agents=4, **kw))
    assert make_env("tests/SmallDisparity-v0").num_envs == 4


# --- train(config) ---------------------------------------------------------------------------------------------------

def test_the_layer_builds_what_from_preset_builds() -> None:
    """The same entry, the same seed: the same network as the algorithm's own from_preset."""
    cfg = ExperimentConfig.from_hyperparams("fair_dqn", DONUT, variant="paper_fairqcm", n_timesteps=1)
    ours = build_model(cfg)
    theirs = FairDQN.from_preset("donut", DONUT, counterfactual=True, seed=0)
    assert ours.batch_size == theirs.batch_size == 2048 and ours.counterfactual
    for a, b in zip(ours.policy.parameters(), theirs.policy.parameters()):
        assert th.equal(a, b)


@pytest.mark.parametrize("hyperparams, message", [
    ({"seed": 3}, "['seed'] is set by the experiment"),
    ({"n_stepz": 8}, "['n_stepz'] is not an argument of PPO; accepted: ["),
    ({"learning_rate": "abc"}, "hyper-parameter 'learning_rate': SB3 calls it (a schedule)"),
    ({"policy_kwargs": {"foo": 1}}, "PPO could not be built from"),
    ({"env_kwargs": {"foo": 1}}, "env 'CartPole-v1' refused env_kwargs {'foo': 1}"),
    ({"normalize": {"foo": 1}}, "hyper-parameter 'normalize' takes VecNormalize's arguments"),
    ({"noise_type": 5}, "hyper-parameter 'noise_type' must be 'normal' or 'ornstein-uhlenbeck'"),
])
def test_bad_hyperparameters_are_named(hyperparams, message) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        build_model(ExperimentConfig(algo="ppo", env="CartPole-v1", hyperparams=hyperparams, n_timesteps=8))


def test_whole_floats_become_ints_where_the_algorithm_takes_ints() -> None:
    model = build_model(ExperimentConfig(algo="dqn", env="CartPole-v1", hyperparams={"buffer_size": 1e4, "learning_starts": 1e2},
                                         n_timesteps=8))
    assert model.buffer_size == 10000 and isinstance(model.learning_starts, int)


class _Seen(BaseCallback):
    def __init__(self) -> None:
        super().__init__()
        self.keys: set[str] = set()

    def _on_step(self) -> bool:
        return True

    def _on_rollout_end(self) -> None:
        self.keys |= set(self.logger.name_to_value)


def test_sb3_baselines_log_fairness_figures_too(tmp_path) -> None:
    seen = _Seen()
    cfg = ExperimentConfig(algo="ppo", env=DONUT, hyperparams={"n_steps": 256, "batch_size": 64}, n_timesteps=512, eval_episodes=2,
                           save_path=str(tmp_path / "ppo.zip"))
    result = train(cfg, callback=seen)
    assert {"fairness/egalitarian", "fairness/gini"} <= seen.keys
    assert isinstance(result.model, PPO) and result.n_timesteps == 512
    assert {"egalitarian", "log_nash", "episode_reward"} <= set(result.evaluation)
    model, saved = load_model(tmp_path / "ppo.zip")
    assert isinstance(model, PPO) and saved == cfg


def test_a_team_env_is_evaluated_with_team_fairness() -> None:
    """On pursuit-evasion (stakeholders plus an agent symmetry) train() reports paper 002's I(R;Z) and capture
    success, computed by evaluate_team_fairness on the same episodes (seeded 10000 + seed on), beside the monitor's
    figures. A fast team on a small torus captures in most episodes, so the figures are not all zero."""
    from sb3_fair.common.evaluation import evaluate_team_fairness
    from sb3_fair.envs import PursuitEvasionEnv

    arena = {"max_steps": 40, "pursuer_speed": 3.0, "size": 2}
    cfg = ExperimentConfig(algo="fair_td3", env="sb3_fair/PursuitEvasion-v0", n_timesteps=64, eval_episodes=6,
                           hyperparams={"learning_starts": 32, "env_kwargs": arena, "policy_kwargs": {"net_arch": [8]}})
    result = train(cfg)
    ev = result.evaluation
    assert {"team_fairness", "capture_success", "episode_reward", "episode_reward_std", "episode_length", "gini"} <= set(ev)
    assert 0 < ev["capture_success"] and 0 < ev["team_fairness"] <= np.log2(3) + 1e-9
    same = evaluate_team_fairness(result.model, PursuitEvasionEnv(**arena), n_episodes=6, seed=10_000)
    assert (ev["team_fairness"], ev["capture_success"], ev["episode_reward"], ev["episode_length"]) == (
        same["team_fairness"], same["capture_success"], same["mean_return"], same["mean_length"])
    other = evaluate_team_fairness(result.model, PursuitEvasionEnv(**arena), n_episodes=6, seed=0)
    assert (other["mean_return"], other["mean_length"]) != (same["mean_return"], same["mean_length"])


def test_a_recurrent_policy_keeps_its_state_through_a_team_evaluation() -> None:
    from sb3_fair.common.evaluation import evaluate_team_fairness
    from sb3_fair.envs import PursuitEvasionEnv

    class Recorder:
        def __init__(self, env):
            self.calls, self.env = [], env

        def predict(self, obs, state=None, episode_start=None, deterministic=True):
            self.calls.append((state, bool(episode_start[0])))
            return self.env.action_space.sample(), len(self.calls)

    env = PursuitEvasionEnv(max_steps=5)
    rec = Recorder(env)
    evaluate_team_fairness(rec, env, n_episodes=2)
    assert rec.calls == [(None, True), (1, False), (2, False), (3, False), (4, False),
                         (None, True), (6, False), (7, False), (8, False), (9, False)]


def test_a_normalised_run_is_evaluated_with_its_statistics(tmp_path) -> None:
    cfg = ExperimentConfig(algo="ppo", env="CartPole-v1", hyperparams={"normalize": True, "n_steps": 64, "batch_size": 32}, n_timesteps=128,
                           eval_episodes=1, save_path=str(tmp_path / "m.zip"))
    train(cfg)
    assert (tmp_path / "m.vecnormalize.pkl").is_file()
    model, _ = load_model(tmp_path / "m.zip")
    norm = model.get_vec_normalize_env()
    assert norm is not None and not norm.training and norm.obs_rms.count > 128


def test_resume_goes_on_from_a_checkpoint(tmp_path) -> None:
    cfg = ExperimentConfig(algo="fair_ppo", env="CartPole-v1", hyperparams={"n_steps": 64, "batch_size": 32, "fairness_coef": 0.0},
                           n_timesteps=128, eval_episodes=1, checkpoint_every=64, save_path=str(tmp_path / "m.zip"))
    train(cfg)
    checkpoint = tmp_path / "m" / "model_64_steps.zip"
    assert checkpoint.is_file() and (tmp_path / "m" / "model.config.yml").is_file()
    result = train(cfg.replace(n_timesteps=192, checkpoint_every=None, save_path=None), resume=checkpoint)
    assert result.resumed_at == 64 and result.n_timesteps == 192
    model, saved = load_model(checkpoint)  # a checkpoint: the folder's config says what it is
    assert isinstance(model, FairPPO) and saved.algo == "fair_ppo"


def test_a_resumed_run_is_reseeded_past_its_start_and_reproducible(tmp_path) -> None:
    """Resuming at step N seeds the fresh env and the generators with seed + N: the resumed part does not replay the
    run's first episodes, and two resumes from one checkpoint train the same weights."""
    cfg = ExperimentConfig(algo="dqn", env="CartPole-v1", hyperparams={"learning_starts": 0, "buffer_size": 500, "batch_size": 16},
                           n_timesteps=100, eval_episodes=0, checkpoint_every=50, checkpoint_buffers=2, save_path=str(tmp_path / "m.zip"),
                           seed=3)
    first_obs = _FirstObs()
    train(cfg, callback=first_obs)
    resumed, resumed_obs = [], []
    for _ in range(2):
        seen = _FirstObs()
        resumed.append(train(cfg.replace(n_timesteps=150, checkpoint_every=None, save_path=None), callback=seen,
                             resume=tmp_path / "m" / "model_50_steps.zip"))
        resumed_obs.append(seen.obs)
    a, b = (r.model.policy.state_dict() for r in resumed)
    assert all(th.equal(a[k], b[k]) for k in a)
    assert np.array_equal(resumed_obs[0], resumed_obs[1]) and not np.array_equal(resumed_obs[0], first_obs.obs)


class _FirstObs(BaseCallback):
    """The observation training starts from."""

    def _on_training_start(self) -> None:
        self.obs = np.array(self.model._last_obs, copy=True)

    def _on_step(self) -> bool:
        return True


def test_train_goes_on_from_a_model_in_memory_and_takes_an_evaluation_seed(tmp_path, monkeypatch) -> None:
    """Chunks: train(config with a larger n_timesteps, model=result.model) continues the same model to that total; eval_seed
    picks the evaluation episodes; no empty /tmp/SB3-<time> logger folder is left behind."""
    import tempfile

    from sb3_fair.experiment.run import evaluate

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    cfg = ExperimentConfig(algo="fair_dqn", env=DONUT, hyperparams={"learning_starts": 0, "buffer_size": 500, "batch_size": 16},
                           n_timesteps=100, eval_episodes=2, eval_seed=7)
    first = train(cfg)
    second = train(cfg.replace(n_timesteps=300), model=first.model)
    assert second.model is first.model and second.n_timesteps == 300
    assert second.evaluation == evaluate(second.model, DONUT, 2, seed=7)[0]
    assert not list(tmp_path.glob("SB3-*"))
    assert first.model.logger.output_formats == [] and not first.model._custom_logger  # SB3 configures the next learn
    with pytest.raises(ValueError, match="resume .* or model"):
        train(cfg, resume=tmp_path / "x.zip", model=first.model)
    with pytest.raises(ValueError, match="model must be a PPO"):
        train(cfg.replace(algo="ppo"), model=first.model)
    with pytest.raises(ValueError, match="was not trained on 'CartPole-v1'"):
        train(ExperimentConfig(algo="fair_dqn", env="CartPole-v1", n_timesteps=400), model=first.model)
    with pytest.raises(ValueError, match="eval_seed must be an int >= 0"):
        ExperimentConfig(algo="dqn", env=DONUT, n_timesteps=10, eval_seed=-1)


def test_checkpoints_count_steps_not_vecenv_steps_and_keep_their_statistics(tmp_path) -> None:
    cfg = ExperimentConfig(algo="ppo", env="CartPole-v1", hyperparams={"n_envs": 2, "n_steps": 32, "batch_size": 32, "normalize": True},
                           n_timesteps=256, eval_episodes=1, checkpoint_every=128, save_path=str(tmp_path / "m.zip"))
    train(cfg)
    assert sorted(p.name for p in (tmp_path / "m").glob("model_*_steps.zip")) == ["model_128_steps.zip", "model_256_steps.zip"]
    model, _ = load_model(tmp_path / "m" / "model_128_steps.zip")
    assert model.get_vec_normalize_env() is not None  # model_vecnormalize_128_steps.pkl


def test_wandb_one_run_per_experiment_grouped_and_tagged(tmp_path, monkeypatch) -> None:
    """With the real wandb, offline: train() owns the run; the Fair algorithm joins it instead of starting a second."""
    import wandb

    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path))
    inits = []
    real_init = wandb.init
    monkeypatch.setattr(wandb, "init", lambda *a, **kw: inits.append(kw) or real_init(*a, **kw))

    class Grab(BaseCallback):
        def _on_step(self) -> bool:
            self.run = (wandb.run.group, sorted(wandb.run.tags), dict(wandb.run.config))
            return True

    grab = Grab()
    cfg = ExperimentConfig(algo="fair_dqn", env=DONUT, variant=None, hyperparams={"learning_starts": 50, "buffer_size": 400, "batch_size": 32},
                           n_timesteps=200, eval_episodes=1, wandb=True, group="sweep-1")
    result = train(cfg, callback=grab)
    assert len(inits) == 1
    group, tags, config = grab.run
    assert group == "sweep-1" and tags == sorted(["fair_dqn", DONUT])
    assert config["experiment"]["algo"] == "fair_dqn" and config["experiment"]["hyperparams"]["buffer_size"] == 400
    assert config["algo"] == "FairDQN" and config["buffer_size"] == 400  # the model's own settings beside it
    assert wandb.run is None  # finished after the evaluation
    assert np.isfinite(result.evaluation["episode_reward"])
    # a run the user started is joined and left open
    outer = wandb.init(project="mine", mode="offline", dir=str(tmp_path))
    train(cfg.replace(n_timesteps=100, wandb=True))
    assert wandb.run is outer
    outer.log({"still": 1})
    outer.finish()


def test_fair_ppo_entry_trains_on_the_game_and_logs_its_group_table_to_wandb(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path))
    cfg = ExperimentConfig.from_hyperparams("fair_ppo", "sb3_fair/AllelopathicHarvest-v0", variant="cf",
                                            overrides=["env_kwargs.preset=tiny", "n_envs=1", "n_steps=60", "batch_size=120"],
                                            n_timesteps=120, eval_episodes=1, wandb=True)
    result = train(cfg)
    (run,) = (tmp_path / "wandb").glob("offline-run-*")
    tables = sorted(p.name for p in (run / "files" / "media" / "table" / "eval").glob("*.table.json"))
    assert [t.split("_")[0] for t in tables] == ["figures", "per"]  # eval/figures and eval/per_group
    per_group = json.loads(next((run / "files" / "media" / "table" / "eval").glob("per_group*.table.json")).read_text())
    assert per_group["columns"][0] == "group" and [row[0] for row in per_group["data"]] == [0, 1]
    assert isinstance(result.model, FairPPO) and result.model.fairness == "cf"
    assert "cf_norm" in result.evaluation or any(k.startswith("cf") for k in result.evaluation)


def test_example_experiment_files_load_and_name_only_arguments_of_their_algorithm() -> None:
    from pathlib import Path

    from sb3_fair.experiment.registry import check_keys

    files = sorted((Path(__file__).resolve().parent.parent / "examples" / "experiments").glob("*.yml"))
    assert len(files) >= 3
    for f in files:
        cfg = ExperimentConfig.from_file(f)
        check_keys(cfg.algo, list(cfg.hyperparams))
        assert cfg.n_timesteps >= 1


def test_a_masking_model_is_evaluated_under_the_env_masks_also_when_normalised(monkeypatch) -> None:
    import gymnasium as gym
    from sb3_contrib.common.envs import InvalidActionEnvDiscrete
    from sb3_contrib.common.maskable import evaluation as maskable_evaluation

    from sb3_fair.experiment import evaluate
    from sb3_fair.experiment.evaluation import _NormalizedPredictor

    if "tests/InvalidActionDiscrete-v0" not in gym.registry:
        gym.register("tests/InvalidActionDiscrete-v0", entry_point=InvalidActionEnvDiscrete, kwargs={"dim": 8, "n_invalid_actions": 4},
                     max_episode_steps=10)
    calls = []
    real = maskable_evaluation.evaluate_policy
    monkeypatch.setattr(maskable_evaluation, "evaluate_policy", lambda *a, **kw: calls.append(kw) or real(*a, **kw))
    model = MaskablePPO("MlpPolicy", "tests/InvalidActionDiscrete-v0", n_steps=16, batch_size=16)
    figures, _ = evaluate(model, "tests/InvalidActionDiscrete-v0", n_episodes=2)
    assert len(calls) == 1 and figures["episode_length"] == 10
    # the normalising wrapper keeps predict's signature, so evaluators still see action_masks
    import inspect

    wrapped = _NormalizedPredictor(model, vec_normalize=None)  # the statistics are only used when it predicts
    assert "action_masks" in inspect.signature(wrapped.predict).parameters
