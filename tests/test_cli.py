"""The sb3-fair command: compare, train, evaluate (tiny budgets), and its errors for bad names."""

from __future__ import annotations

import json

import pytest

from sb3_fair.cli import main


def test_compare_prints_table_and_plot_and_logs_them_to_wandb(tmp_path, capsys, monkeypatch):
    """With --wandb (real wandb, offline): one run per model of the group, and a summary run holding the plot and the table."""
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path))
    plot = tmp_path / "tradeoff.png"
    main(["compare", "--task", "loan_applicants", "--seeds", "1", "--episodes", "3", "--eval-episodes", "2", "--plot", str(plot), "--wandb"])
    out = capsys.readouterr().out
    assert "FairDQN (FairQCM)" in out and "DQN (full memory)" in out and "DQN (no memory)" in out and "dp_abs" in out
    assert "120 training steps" in out  # --episodes 3 of 40 steps each
    assert plot.exists() and plot.stat().st_size > 1000
    runs = sorted((tmp_path / "wandb").glob("offline-run-*"))
    assert len(runs) == 4  # DQN without and with memory, FairDQN, and the summary
    # one summary run holds the plot and the table (found by its files: runs started within one second sort by random id)
    media = {run.name: [p.relative_to(run).as_posix() for p in run.rglob("*") if p.is_file()] for run in runs}
    summary = [files for files in media.values() if any(m.startswith("files/media/images/compare/plot") and m.endswith(".png")
                                                        for m in files)]
    assert len(summary) == 1, media
    assert any(m.startswith("files/media/table/compare/table") and m.endswith(".table.json") for m in summary[0]), media


def test_train_then_evaluate(tmp_path, capsys):
    path = tmp_path / "model.zip"
    main(["train", "--algo", "fair_dqn", "--env", "sb3_fair/DonutAllocationTabular-v0", "--timesteps", "300", "--save", str(path),
          "--eval-episodes", "2", "--quiet", "--json"])
    assert path.exists() and (tmp_path / "model.config.yml").exists()
    trained = json.loads(capsys.readouterr().out)["evaluation"]
    # the saved config says which algorithm and env: evaluate needs neither; its default episodes are train's own
    main(["evaluate", str(path), "--episodes", "2", "--json"])
    figures = json.loads(capsys.readouterr().out)["evaluation"]
    assert {"log_nash", "gini", "egalitarian", "episode_reward"} <= set(figures)
    assert figures == trained


def test_compare_harvest(tmp_path, capsys):
    plot = tmp_path / "harvest.png"
    main(["compare", "--task", "harvest", "--preset", "tiny", "--seeds", "1", "--episodes", "4", "--eval-episodes", "1", "--plot", str(plot)])
    out = capsys.readouterr().out
    assert "FairPPO (dp" in out and "dp_norm" in out and "pof_group_1" in out
    assert plot.exists()


@pytest.mark.parametrize("fairness", ["dp", "csp", "cf"])
def test_compare_harvest_uses_the_tuned_entry_and_a_like_for_like_baseline(fairness):
    """Without --episodes the harvest comparison trains for the tuned entry's budget; the baseline is SB3's PPO with
    the fair model's settings (for cf, the @dp settings with 4 plain games instead of 2 flipped pairs)."""
    from sb3_fair.cli import _task_configs, build_parser
    from sb3_fair.common.hyperparams import hyperparams_file, load_hyperparams

    args = build_parser().parse_args(["compare", "--task", "harvest", "--fairness", fairness])
    configs = _task_configs(args, seed=3)
    base, fair = configs["PPO"], configs[f"FairPPO ({fairness}, alpha=0.5, beta=0.5)"]
    assert (base.algo, fair.algo, base.seed, fair.seed) == ("ppo", "fair_ppo", 3, 3)
    assert fair.hyperparams["fairness"] == fairness and "fairness" not in base.hyperparams
    assert base.hyperparams["env_kwargs"] == {"preset": "small"} and base.hyperparams["n_envs"] == 4
    tuned = load_hyperparams(hyperparams_file("fair_ppo"), "sb3_fair/AllelopathicHarvest-v0")
    assert fair.n_timesteps == base.n_timesteps == tuned["n_timesteps"] == 500_000
    if fairness == "cf":
        assert fair.hyperparams["env_kwargs"]["counterfactual_pair"] == "flip" and fair.hyperparams["n_envs"] == 2
    else:
        for key in ("learning_rate", "n_epochs", "n_steps", "batch_size"):
            assert base.hyperparams[key] == fair.hyperparams[key] == tuned[key]


def test_compare_donut_shows_the_shaping_alone_and_with_counterfactuals():
    """The donut comparison: SB3's DQN without and with memory at the tuned settings, FairDQN with the entry's shaping
    but no counterfactuals, and the tuned entry itself."""
    from sb3_fair.cli import _task_configs, build_parser

    configs = _task_configs(build_parser().parse_args(["compare", "--task", "donut"]), seed=2)
    assert list(configs) == ["DQN (no memory)", "DQN (full memory)", "FairDQN (shaping only)", "FairDQN (FairQCM + shaping)"]
    algos = [c.algo for c in configs.values()]
    assert algos == ["dqn", "dqn", "fair_dqn", "fair_dqn"]
    flags = [(c.hyperparams.get("counterfactual"), c.hyperparams.get("potential_shaping")) for c in configs.values()]
    assert flags == [(None, None), (None, None), (False, True), (True, True)]
    assert len({c.n_timesteps for c in configs.values()}) == 1 and {c.seed for c in configs.values()} == {2}


def test_train_then_evaluate_f_ppo(tmp_path, capsys):
    path = tmp_path / "fppo.zip"
    main(["train", "--algo", "fair_ppo", "--env", "sb3_fair/EpidemicControl-v0", "--variant", "f_ppo", "-p", "n_steps=32",
          "batch_size=32", "env_kwargs.horizon=8", "--timesteps", "64", "--save", str(path), "--eval-episodes", "2", "--quiet"])
    main(["evaluate", str(path), "--env", "sb3_fair/EpidemicControl-v0", "--algo", "fair_ppo", "--episodes", "2"])
    out = capsys.readouterr().out
    assert out.count("short_term_mean") == 2 and "long_term_final" in out


def test_command_line_flags_fill_in_but_do_not_erase_an_experiment_file(tmp_path, monkeypatch):
    import sb3_fair.experiment as layer

    (tmp_path / "exp.yml").write_text("algo: ppo\nenv: CartPole-v1\nn_timesteps: 64\nverbose: 1\ntensorboard_log: tb\n"
                                      "eval_env_kwargs: {max_episode_steps: 50}\n")
    got = []

    def fake_train(config, resume=None):
        got.append(config)
        raise SystemExit(0)

    monkeypatch.setattr(layer, "train", fake_train)
    with pytest.raises(SystemExit):
        main(["train", "--config", str(tmp_path / "exp.yml"), "--seed", "4"])
    (config,) = got
    assert (config.verbose, config.tensorboard_log, config.eval_env_kwargs, config.seed) == (1, "tb", {"max_episode_steps": 50}, 4)


def test_train_a_multiagent_game_prints_the_group_table(capsys):
    main(["train", "--algo", "fair_ppo", "--env", "sb3_fair/AllelopathicHarvest-v0", "-p", "env_kwargs.preset=tiny", "n_envs=1",
          "n_steps=60", "batch_size=120", "--timesteps", "240", "--eval-episodes", "1", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert {"dp_norm", "episode_return"} <= set(out["evaluation"])
    assert set(out["table"]) == {"0", "1"} and out["table"]["0"]["agents"] == 2


@pytest.mark.parametrize("argv, message", [
    (["train", "--algo", "fair_ppx", "--env", "CartPole-v1"], "algo must be one of ["),
    (["train", "--algo", "ppo", "--env", "CartPol-v1", "--timesteps", "8"], "did you mean ['CartPole-v1'"),
    (["train", "--algo", "fair_ppo", "--env", "CartPole-v1", "-p", "n_stepz=8", "--timesteps", "8"],
     "['n_stepz'] is not an argument of FairPPO; accepted: ["),
    (["sweep", "--algo", "ppo", "--env", "CartPole-v1", "--timesteps", "8", "--resume"], "--resume needs the --name"),
    (["train", "--algo", "fair_ppo", "--env", "sb3_fair/EpidemicControl-v0", "--variant", "fppo"],
     "no variant 'fppo' of 'sb3_fair/EpidemicControl-v0'; its variants: ['a_ppo', 'f_ppo', 'f_ppo_l', 'ppo']"),
    (["train", "--algo", "fair_ppo", "--env", "CartPole-v1", "-p", "n_steps"], "an override is key=value"),
    (["train", "--algo", "fair_ppo", "--env", "CartPole-v1", "-p", "delta=-1", "fairness=long_term", "--timesteps", "8"], "delta"),
    (["train", "--algo", "ppo", "--env", "CartPole-v1"], "give n_timesteps (--timesteps)"),
    (["train", "--env", "CartPole-v1"], "train needs --algo and --env"),
    (["evaluate", "nothing.zip", "--algo", "ppo"], "no saved model"),
])
def test_bad_names_keys_and_values_fail_with_the_accepted_ones(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_an_experiment_file_that_is_not_valid_yaml_fails_naming_the_file_and_line(tmp_path, capsys):
    bad = tmp_path / "bad.yml"
    bad.write_text("algo: fair_dqn\nenv: sb3_fair/DonutAllocation-v0\nhyperparams:\n  learning_rate: 1e-3\n   batch_size: 3\n")
    with pytest.raises(SystemExit) as exit_info:
        main(["train", "--config", str(bad), "--timesteps", "10"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert f"{bad} is not valid YAML" in err and "line 5" in err
