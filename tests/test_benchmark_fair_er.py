"""``python benchmarks/fair_er.py`` (Fair-ER / Fair-E on pursuit-evasion): the smoke run trains through the
experiment runner, evaluates at each speed, and writes its records, its RESULTS.md section and its plot
under ``--out`` only."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import fair_er as benchmark
from sb3_fair.experiment import build_model

HEADING = "## Fair-ER / Fair-E (Grupen et al. 2022): `python benchmarks/fair_er.py --quick`"
RECORD_KEYS = {"variant", "seed", "steps", "max_steps", "eval_episodes", "curriculum", "speeds", "size", "seconds", "eval", "config"}


def test_config_matches_the_benchmark_hyperparameters() -> None:
    """The runner builds the model the benchmark always built: SB3's DDPG defaults except these."""
    job = dict(variant="Fair-E", seed=3, steps=1000, max_steps=50, eval_episodes=1, curriculum=[1.2, 0.4], speeds=[1.2], size=4.0)
    config = benchmark.experiment_config(job)
    assert config.algo == "fair_ddpg" and config.env == "sb3_fair/PursuitEvasion-v0" and config.eval_episodes == 0
    model = build_model(config)
    assert type(model.policy).__name__ == "FairEPolicy" and model.equivariance_coef == 0.0 and model.seed == 3
    assert (model.learning_rate, model.batch_size, model.buffer_size, model.learning_starts, model.gamma, model.tau) == (
        1e-3, 256, 200_000, 1000, 0.99, 0.005)
    assert np.allclose(model.action_noise._sigma, 0.2 * np.ones(6)) and np.allclose(model.action_noise._mu, 0.0)
    assert model.policy_kwargs["net_arch"] == [128, 128]
    assert model.get_env().get_attr("max_steps") == [50] and model.get_env().get_attr("size") == [4.0]
    assert config.hyperparams["callback"] == {"sb3_fair.envs.pursuit:SpeedCurriculum": {"start": 1.2, "end": 0.4}}
    lam = build_model(benchmark.experiment_config({**job, "variant": "lambda=0.9"}))
    assert type(lam.policy).__name__ == "TD3Policy" and lam.equivariance_coef == 0.9


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_quick_writes_records_section_and_plot_under_out(tmp_path, monkeypatch) -> None:
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)  # anything written to a relative path would land here
    out = tmp_path / "out"
    benchmark.main(["--quick", "--workers", "1", "--variants", "lambda=0.5", "Fair-E", "--out", str(out)])

    runs = out / "out" / "fair_er"
    records = {p.name: json.loads(p.read_text()) for p in runs.glob("*_0.json")}
    assert set(records) == {"lambda=0.5_0.json", "Fair-E_0.json"}
    for record in records.values():
        assert set(record) == RECORD_KEYS
        assert record["steps"] == 1200 and record["max_steps"] == 50 and record["seconds"] > 0
        assert set(record["eval"]) == {str(v) for v in benchmark.SPEEDS}
        for figures in record["eval"].values():
            assert set(figures) == {"team_fairness", "capture_success", "mean_length"}
            assert 0.0 <= figures["capture_success"] <= 1.0 and 0 < figures["mean_length"] <= 50
        assert record["config"]["algo"] == "fair_ddpg" and record["config"]["n_timesteps"] == 1200
    assert records["Fair-E_0.json"]["config"]["hyperparams"]["policy"] == "sb3_fair.ddpg.policies:FairEPolicy"
    tp = json.loads((runs / "throughput.json").read_text())
    assert {"steps", "ddpg_steps_per_s", "fair0_steps_per_s", "fair05_steps_per_s", "ratio_lambda0", "wall_seconds"} <= set(tp)

    text = (out / "RESULTS.md").read_text()
    assert text.count(HEADING + "\n") == 1
    section = text.split(HEADING, 1)[1]
    assert "| lambda=0.5 | 1 |" in section and "| Fair-E | 1 |" in section and "| greedy (App. C) | — |" in section
    assert "| lambda=0 | 1 |" not in section  # not trained, so not in the table
    assert "![fair-er](fair_er_pursuit.png)" in section
    assert (out / "fair_er_pursuit.png").stat().st_size > 0
    assert list(cwd.iterdir()) == []

    # --no-train re-summarises the runs on disk, replacing the section where it stands
    benchmark.main(["--quick", "--no-train", "--out", str(out)])
    again = (out / "RESULTS.md").read_text()
    assert again.count(HEADING + "\n") == 1 and "| Fair-E | 1 |" in again
    assert sorted(p.name for p in out.iterdir()) == ["RESULTS.md", "fair_er_pursuit.png", "out"]
    assert list(cwd.iterdir()) == []


def test_entry_config_is_fair_td3s_entry_with_only_policy_and_lambda_changed() -> None:
    """``--entry``: FairTD3 at sb3-fair's tuned pursuit entry; the variants change the policy and lambda alone."""
    from sb3_fair.experiment import ExperimentConfig

    settings = benchmark.entry_settings()
    assert settings == {"steps": 50_000, "max_steps": 200, "size": 4.0, "curriculum": [2.0, 1.0]}
    entry = ExperimentConfig.from_hyperparams("fair_td3", benchmark.ENV_ID).hyperparams
    job = dict(variant="Fair-E", seed=2, steps=1000, eval_episodes=1, speeds=[1.5], entry=True, **{
        k: v for k, v in settings.items() if k != "steps"})
    fair_e = benchmark.experiment_config(job)
    assert fair_e.algo == "fair_td3" and fair_e.seed == 2 and fair_e.n_timesteps == 1000 and fair_e.eval_episodes == 0
    assert fair_e.hyperparams == {**entry, "policy": "FairEPolicy", "equivariance_coef": 0.0}
    assert type(build_model(fair_e).policy).__name__ == "FairEPolicy"
    td3 = benchmark.experiment_config({**job, "variant": "lambda=0"})
    assert td3.hyperparams == {**entry, "equivariance_coef": 0.0}
    assert benchmark.out_dir(Path("runs"), (2.0, 1.0), 4.0, entry=True) == Path("runs") / "td3_entry"
    # --entry --size: the entry with its torus alone changed, in a folder of its own
    small = benchmark.experiment_config({**job, "size": 2.0})
    assert small.hyperparams == {**entry, "policy": "FairEPolicy", "equivariance_coef": 0.0,
                                 "env_kwargs": {**entry["env_kwargs"], "size": 2.0}}
    assert benchmark.out_dir(Path("runs"), (2.0, 1.0), 2.0, entry=True) == Path("runs") / "td3_entry_size_2"


@pytest.mark.parametrize("flag", [["--steps", "100"], ["--curriculum", "1", "0.5"], ["--max-steps=20"], ["--max", "20"]])
def test_entry_refuses_the_settings_it_takes_from_the_entry(flag, tmp_path, capsys) -> None:
    with pytest.raises(SystemExit):
        benchmark.main(["--entry", "--out", str(tmp_path), *flag])
    assert "--entry takes the entry's own settings; leave out " + flag[0].split("=")[0] in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_entry_quick_writes_paired_tests_against_td3(tmp_path) -> None:
    out = tmp_path / "out"
    benchmark.main(["--entry", "--quick", "--seeds", "2", "--workers", "1", "--variants", "lambda=0", "Fair-E", "--out", str(out)])
    runs = out / "out" / "fair_er" / "td3_entry"
    assert sorted(p.name for p in runs.iterdir()) == ["Fair-E_0.json", "lambda=0_0.json"]  # --quick: one seed
    record = json.loads((runs / "Fair-E_0.json").read_text())
    assert record["entry"] is True and record["config"]["algo"] == "fair_td3" and set(record["eval"]) == {
        str(v) for v in benchmark.ENTRY_SPEEDS}
    text = (out / "RESULTS.md").read_text()
    heading = "## Fair-ER / Fair-E at FairTD3's tuned entry (Grupen et al. 2022): `python benchmarks/fair_er.py --entry --quick"
    assert text.count(heading) == 1
    section = text.split(heading, 1)[1]
    assert "| lambda=0 | 1 |" in section and "| Fair-E | 1 |" in section and "| lambda=0.9 |" not in section
    assert "| Fair-E | 2 | n = 1, no test" in section  # one seed: no test, the difference only
    assert "Per seed at |v_p| = 2 (capture success / I(R;Z)):" in section
    assert (out / "fair_er_pursuit_td3_entry.png").stat().st_size > 0
    assert not (out / "out" / "fair_er" / "throughput.json").exists()

    # the entry on another torus: its own records, figure and section; the 4 x 4 section stays, and rewriting it
    # replaces only itself
    benchmark.main(["--entry", "--quick", "--size", "2", "--speeds", "1", "0.8", "--workers", "1", "--variants", "lambda=0",
                    "--out", str(out)])
    small = json.loads((out / "out" / "fair_er" / "td3_entry_size_2" / "lambda=0_0.json").read_text())
    assert small["size"] == 2.0 and small["config"]["hyperparams"]["env_kwargs"]["size"] == 2.0 and set(small["eval"]) == {"1.0", "0.8"}
    assert (out / "fair_er_pursuit_td3_entry_size_2.png").stat().st_size > 0
    benchmark.main(["--entry", "--quick", "--no-train", "--out", str(out)])
    text = (out / "RESULTS.md").read_text()
    assert text.count(heading + " --seeds 1`") == 1
    assert text.count(heading + " --size 2 --speeds 1 0.8 --seeds 1`") == 1
    assert "(2 x 2 torus instead of the entry's 4 x 4, " in text


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_entry_report_pairs_fair_er_with_fair_e(tmp_path) -> None:
    """Known answer: with Fair-E runs beside a lambda > 0 run, the section pairs each lambda > 0 with Fair-E by seed
    (the paper's §5.3 comparison), besides every variant against TD3."""
    out = tmp_path / "out"
    runs = out / "out" / "fair_er" / "td3_entry_size_2"
    runs.mkdir(parents=True)
    entry = benchmark.entry_settings()
    capture = {"lambda=0": [1.0, 0.5], "lambda=0.5": [1.0, 0.5], "Fair-E": [0.5, 0.5]}
    fairness = {"lambda=0": [1.0, 1.2], "lambda=0.5": [0.4, 0.7], "Fair-E": [0.1, 0.2]}
    for variant in capture:
        for seed in (0, 1):
            record = dict(variant=variant, seed=seed, steps=1200, max_steps=50, eval_episodes=2, curriculum=list(entry["curriculum"]),
                          speeds=[2.0], size=2.0, entry=True, seconds=1.0,
                          eval={"2.0": dict(capture_success=capture[variant][seed], team_fairness=fairness[variant][seed], mean_length=9.0)})
            (runs / f"{variant}_{seed}.json").write_text(json.dumps(record))
    benchmark.main(["--entry", "--quick", "--no-train", "--size", "2", "--speeds", "2", "--out", str(out)])
    section = (out / "RESULTS.md").read_text().split("Each Fair-ER variant minus Fair-E, paired by seed", 1)[1]
    rows = [line for line in section.splitlines() if line.startswith("| lambda=")]
    assert rows == ["| lambda=0.5 | 2 | 0.250 ± 0.354 (n = 2; paired t p = 0.500, Wilcoxon p = 1.000 over the 1 non-zero differences)"
                    " | 0.400 ± 0.141 (n = 2; paired t p = 0.156, Wilcoxon p = 0.500) |"]  # TD3 is not compared with Fair-E
