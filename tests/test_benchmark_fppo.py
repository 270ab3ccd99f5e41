"""``python benchmarks/fppo.py`` (F-PPO, Hu, Lear, Zhang 2024): the smoke run goes through train -> evaluate ->
report -> PNG, writes only under ``--out``, and a run resumed from its checkpoint goes on where it stopped."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import fppo as benchmark

RECORD_KEYS = {"part", "method", "seed", "timesteps", "chunk", "deadline", "eval_episodes", "quick", "steps", "train_s",
               "iterations", "evaluation"}
EVALUATION_KEYS = {"short_term_mean", "long_term_final", "paper_short_term_final", "paper_short_term_mean",
                   "paper_long_term_final", "utility", "episode_reward", "curves", "curve_step"}


def test_quick_run_reports_under_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)  # nothing may land in the working directory
    out = tmp_path / "out_dir"
    benchmark.main(["--part", "epidemic", "--quick", "--workers", "1", "--out", str(out)])
    text = (out / "RESULTS.md").read_text()
    assert "## F-PPO smoke run, epidemic (Hu et al. 2024, Fig. 4)" in text
    assert "| F-PPO, massaged at evaluation | 1 |" in text and "The paper's headline claims" in text
    assert "\n## F-PPO, epidemic" not in text  # a smoke run never takes a real run's section
    runs = out / "out" / "fppo" / "quick"
    assert (runs / "fppo_epidemic.png").stat().st_size > 0
    assert "![epidemic](out/fppo/quick/fppo_epidemic.png)" in text
    assert not list(out.glob("*.png"))
    for method in benchmark.METHODS:
        record = json.loads((runs / f"epidemic_{method}_0_512.json").read_text())
        assert RECORD_KEYS <= set(record), set(record) ^ RECORD_KEYS
        assert record["steps"] == 512 and len(record["iterations"]) == 2 and len(record["iterations"][0]) == 3
        assert EVALUATION_KEYS <= set(record["evaluation"])
        assert len(record["evaluation"]["curves"]["paper_long_term"]) == benchmark.QUICK_HORIZON["epidemic"]
        assert (runs / f"epidemic_{method}_0_512.zip").is_file()
    assert "tau" in json.loads((runs / "epidemic_f_ppo_0_512.json").read_text())["evaluation_massaged"]
    assert "evaluation" in json.loads((runs / "epidemic_reference_0.json").read_text())
    assert not list(cwd.iterdir())
    # the report again, from the runs on disk: its section is replaced where it stands, not appended
    (out / "RESULTS.md").write_text(text + "\n## A later section\n\nkept\n")
    benchmark.main(["--part", "epidemic", "--quick", "--report-only", "--out", str(out)])
    again = (out / "RESULTS.md").read_text()
    assert again.count("## F-PPO smoke run, epidemic") == 1 and again.rstrip().endswith("kept")


def test_resumed_run_goes_on_from_its_checkpoint(tmp_path: Path) -> None:
    runs = str(tmp_path)
    job = {"part": "epidemic", "method": "f_ppo_l", "seed": 0, "timesteps": 256, "chunk": 256, "deadline": float("inf"),
           "eval_episodes": 1, "quick": True}
    first = benchmark.run_job(job, runs)
    assert first["steps"] == 256 and len(first["iterations"]) == 1 and "evaluation" in first
    # the same run with a larger budget: its checkpoint and record under the new budget's names, as after an interruption
    longer = {**job, "timesteps": 512}
    for old, new in zip(benchmark.paths(job, runs), benchmark.paths(longer, runs)):
        shutil.copy(old, new)
    assert benchmark.saved_timesteps(benchmark.paths(longer, runs)[0]) == 256
    record = benchmark.run_job(longer, runs)
    assert record["timesteps"] == 512 and record["steps"] == 512
    assert len(record["iterations"]) == 2 and record["iterations"][0] == first["iterations"][0]
    assert "evaluation" in record and record["train_s"] > first["train_s"]


def test_configs_are_the_presets() -> None:
    from sb3_fair.common.hyperparams import algo_kwargs
    from sb3_fair.ppo.presets import preset_kwargs

    for part in ("lending", "attention", "epidemic"):
        for method in benchmark.METHODS:
            config = benchmark.experiment_config(part, method, seed=2, n_timesteps=1000)
            kwargs = algo_kwargs(config.hyperparams)
            if isinstance(kwargs.get("fairness_coef"), list):
                kwargs["fairness_coef"] = tuple(kwargs["fairness_coef"])
            assert kwargs == preset_kwargs(benchmark.PRESET[part], method), (part, method)
            assert (config.algo, config.variant, config.seed, config.eval_episodes) == ("fair_ppo", method, 2, 0)
