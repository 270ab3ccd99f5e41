"""``python benchmarks/fair_ppo.py --quick``: the whole pipeline (train through the experiment runner,
evaluate per group, report, plot) writes only under ``--out``."""

from __future__ import annotations

import json

import pytest

import fair_ppo as benchmark
from sb3_fair.experiment import ExperimentConfig


def test_quick_run_writes_section_png_and_records(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # anything written outside --out would land here
    out = tmp_path / "out_dir"
    benchmark.main(["--quick", "--workers", "1", "--out", str(out)])

    assert sorted(p.name for p in tmp_path.iterdir()) == ["out_dir"]
    text = (out / "RESULTS.md").read_text()
    assert "## FairPPO (La Malfa et al. 2025): `python benchmarks/fair_ppo.py --quick`" in text
    assert "![fair-ppo](fair_ppo_harvest.png)" in text
    assert (out / "fair_ppo_harvest.png").stat().st_size > 0
    runs = out / "out" / "fair_ppo"
    names = sorted(p.name for p in runs.glob("*.json"))
    # PPO and each metric's first setting of Table 1
    assert names == ["cf_1_1_0.json", "csp_0.75_0.25_0.json", "dp_0_0.25_0.json", "ppo_0_0_0.json", "throughput.json"]
    for name in names[:-1]:
        record = json.loads((runs / name).read_text())
        assert set(record) == {"metric", "alpha", "beta", "seed", "steps", "eval_episodes", "seconds", "eval"}
        assert record["steps"] == 4800 and record["eval_episodes"] == 2 and record["seconds"] > 0
        assert {"dp_normalized", "csp_0", "csp_1", "cf_normalized", "table"} <= set(record["eval"])
        assert set(record["eval"]["table"]) == {"0", "1"}
    tp = json.loads((runs / "throughput.json").read_text())
    assert set(tp) == {"env", "ppo", "wall_seconds"} and tp["ppo"]["steps"] == 4800
    for metric in ("DP", "CSP", "CF"):
        assert f"| {metric} | PPO (0, 0) |" in text

    # --no-train re-summarises the records without training again
    (out / "RESULTS.md").unlink()
    benchmark.main(["--quick", "--no-train", "--out", str(out)])
    assert "## FairPPO (La Malfa et al. 2025)" in (out / "RESULTS.md").read_text()


@pytest.mark.parametrize("metric", ["ppo", "dp", "csp", "cf"])
def test_job_configs_are_the_scripts_settings(metric):
    """The runs' settings: the shipped @dp / @cf entries (PPO: the same without the penalty)."""
    config = benchmark.job_config(metric, 0.25, 0.75, 2, 9600)
    assert isinstance(config, ExperimentConfig)
    assert (config.seed, config.n_timesteps, config.eval_episodes) == (2, 9600, 0)
    hp = config.hyperparams
    assert (hp["n_steps"], hp["batch_size"], hp["n_epochs"], hp["ent_coef"]) == (150, 600, 4, 0.01)
    assert hp.get("learning_rate", 3e-4) == 3e-4 and hp.get("gamma", 0.99) == 0.99
    if metric == "ppo":
        assert config.algo == "ppo" and hp["n_envs"] == 4 and hp["env_kwargs"] == {"preset": "small"}
        return
    assert config.algo == "fair_ppo"
    assert (hp["fairness"], hp["alpha"], hp["beta"], hp.get("fairness_coef", 1.0)) == (metric, 0.25, 0.75, 1.0)
    if metric == "cf":
        assert hp["n_envs"] == 2 and hp["env_kwargs"] == {"preset": "small", "counterfactual_pair": "flip"}
    else:
        assert hp["n_envs"] == 4 and hp["env_kwargs"] == {"preset": "small"}
