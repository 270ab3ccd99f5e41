"""``python benchmarks/fppo.py`` (F-PPO, Hu, Lear, Zhang 2024): the smoke run goes through train -> evaluate ->
report -> PNG, writes only under ``--out``, and a run resumed from its checkpoint goes on where it stopped."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

import fppo as benchmark
import runner

#: a finished run's record, flat (:func:`fppo.flat_records`): its spec, its result and the sidecar's timings
RECORD_KEYS = {"part", "method", "seed", "timesteps", "chunk", "eval_episodes", "quick", "steps", "train_s",
               "iterations", "evaluation"}
EVALUATION_KEYS = {"short_term_mean", "long_term_final", "paper_short_term_final", "paper_short_term_mean",
                   "paper_long_term_final", "utility", "episode_reward", "curves", "curve_step"}


def test_quick_run_reports_under_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)  # nothing may land in the working directory
    out = tmp_path / "out_dir"
    benchmark.main(["--part", "epidemic", "--quick", "--workers", "1", "--local", "--out", str(out)])
    text = (out / "RESULTS.md").read_text()
    assert "## F-PPO smoke run, epidemic (Hu et al. 2024, Fig. 4)" in text
    assert "| F-PPO, massaged at evaluation | 1 |" in text and "The paper's headline claims" in text
    assert "\n## F-PPO, epidemic" not in text  # a smoke run never takes a real run's section
    assert sorted(p.name for p in out.iterdir()) == ["RESULTS.md", "results"]  # the records: <out>/results by default
    runs = out / "results" / "fppo" / "quick"
    assert (runs / "fppo_epidemic.png").stat().st_size > 0
    assert "![epidemic](results/fppo/quick/fppo_epidemic.png)" in text
    assert not list(out.glob("*.png"))
    saved = runner.load(out / "results", "fppo/quick")
    assert sorted(r["spec"]["method"] for r in saved) == sorted([*benchmark.METHODS, "reference"])
    assert all(r["id"] == runner.trial_id(r["spec"], benchmark.run_name(r["spec"])) for r in saved)
    records = benchmark.flat_records(out / "results", quick=True)
    for method in benchmark.METHODS:
        record = records[f"epidemic_{method}_0_512"]
        assert RECORD_KEYS <= set(record), set(record) ^ RECORD_KEYS
        # Δs mean and std, massaged share, would-default share (NaN: the epidemic has none), steps within δ
        assert record["steps"] == 512 and len(record["iterations"]) == 2 and len(record["iterations"][0]) == 5
        assert EVALUATION_KEYS <= set(record["evaluation"])
        assert len(record["evaluation"]["curves"]["paper_long_term"]) == benchmark.QUICK_HORIZON["epidemic"]
        assert (out / "results" / "fppo" / "work" / "quick" / f"epidemic_{method}_0_512.zip").is_file()  # the model
    assert "tau" in records["epidemic_f_ppo_0_512"]["evaluation_massaged"]
    assert "evaluation" in records["epidemic_reference_0"]
    assert not list(cwd.iterdir())
    # the same command again: every trial has its record, nothing is trained or rewritten
    before = {p: p.read_bytes() for p in runs.glob("*.json")}
    benchmark.main(["--part", "epidemic", "--quick", "--workers", "1", "--local", "--out", str(out)])
    assert {p: p.read_bytes() for p in runs.glob("*.json")} == before
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


def test_authors_choices_change_one_thing_each() -> None:
    """f_ppo_authors is its preset variant; f_ppo_flip, f_ppo_dl and f_ppo_horizon are F-PPO with one of its three
    changes (the tie rule, the training Δl, the terminal horizon)."""
    from sb3_fair.common.hyperparams import algo_kwargs

    def config(method: str) -> tuple[dict, dict]:
        hyperparams = dict(benchmark.experiment_config("lending", method, seed=0, n_timesteps=1000).hyperparams)
        return hyperparams.pop("env_kwargs", {}), algo_kwargs(hyperparams)

    env_f, f_ppo = config("f_ppo")
    assert env_f == {}
    authors_env, authors = config("f_ppo_authors")
    assert authors_env == {"long_term": "counts_sinkhorn", "horizon_terminates": True}
    assert authors == {**f_ppo, "massaging_ties": "flip"}
    assert config("f_ppo_flip") == ({}, {**f_ppo, "massaging_ties": "flip"})
    assert config("f_ppo_dl") == ({"long_term": "counts_sinkhorn"}, f_ppo)
    assert config("f_ppo_horizon") == ({"horizon_terminates": True}, f_ppo)
    assert set(benchmark.AUTHORS_METHODS) <= set(benchmark.MASSAGING)


def test_authors_choices_are_lendings_only(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        benchmark.main(["--part", "epidemic", "--methods", "f_ppo_dl", "--report-only"])
    assert "lending's only" in capsys.readouterr().err


def test_report_reads_the_older_three_column_records(tmp_path: Path) -> None:
    """The archived epidemic records of seeds 0-2 (before the would-default and within-δ columns) still make the report,
    read from an archive as ``benchmarks/archive/records.tar.xz`` keeps them."""
    import io
    import re
    import tarfile

    from reproduction import archive_files

    archive = tmp_path / "records.tar.xz"
    with tarfile.open(archive, "w:xz") as tar:
        for name, data in archive_files("fppo/epidemic_").items():
            if re.fullmatch(r"fppo/epidemic_\w+_[012](_150000)?\.json", name):
                info = tarfile.TarInfo("out/" + name)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    benchmark.main(["--part", "epidemic", "--seeds", "3", "--timesteps", "150000", "--report-only", "--out", str(tmp_path),
                    "--archive", str(archive)])
    text = (tmp_path / "RESULTS.md").read_text()
    assert "| F-PPO | 3 | 74 | 0.695 ± 0.205 | 0.031 ± 0.003 | - | - |" in text and "paired t p =" in text
    # the per-seed table: a column per training seed, the values the claims pair (the reference's seeds are not paired)
    assert "| quantity | method | seed 0 | seed 1 | seed 2 |" in text
    assert "| Δl at the end, paper's statistic | F-PPO | 3.00 | 2.90 | 3.12 |" in text
    assert "| Δs during training, second half | F-PPO | 0.985 | 0.540 | 0.561 |" in text
    assert "| Δl at the end, paper's statistic | reference |" not in text


def test_paired_test_known_answer() -> None:
    from reproduction import paired_test

    a = {s: float(s + 1) for s in range(5)}
    b = {s: 0.0 for s in range(5)}
    b[7] = 3.0  # a seed the other method lacks is left out
    # differences 1..5: mean 3, sd sqrt(2.5); t = 3 / (sqrt(2.5) / sqrt(5)) = 4.243 on 4 df, p = 0.0132; the exact
    # Wilcoxon p of 5 positive differences is 2 / 2^5
    assert paired_test(a, b) == "3.000 ± 1.581 (n = 5; paired t p = 0.013, Wilcoxon p = 0.062)"
    assert paired_test({0: 1.0}, {0: 0.5}) == "n = 1, no test (difference 0.500)"
    # differences 10.0, 10.1, ..., 10.9: t far beyond 4 sd, written "< 0.001" and never "= 0.000"
    assert "paired t p < 0.001, Wilcoxon p = 0.002)" in paired_test({s: 10 + s / 10 for s in range(10)}, {s: 0.0 for s in range(10)})
    assert paired_test({0: 1.0, 1: 2.0}, {0: 1.0, 1: 2.0}).endswith("all differences 0)")
    # a zero difference is left out of the Wilcoxon test: 3 positive differences, exact two-sided p = 2 / 2^3
    text = paired_test({s: float(s) for s in range(4)}, {s: 0.0 for s in range(4)})
    assert text.endswith("Wilcoxon p = 0.250 over the 3 non-zero differences)") and text.startswith("1.500 ± 1.291 (n = 4;")


def test_counts_long_term_cannot_depend_on_the_action() -> None:
    """The applicant joins the window whatever the decision: the authors' training Δl (counts_sinkhorn) changes the
    same under both actions; the pmf measures change only when a loan is given."""
    import fppo_action_share as share

    counts = share.trajectory_terms("counts_sinkhorn", "random", 200, seed=0, delta=0.005)
    assert np.all(counts["change_diff"] == 0) and np.any(counts["change_taken"] != 0)
    assert np.all(counts["term_diff"] == counts["gate_diff"])  # the gate (Δs) is all that the action moves
    pmf = share.trajectory_terms("pmf_wasserstein", "random", 200, seed=0, delta=0.005)
    assert np.any(pmf["change_diff"] != 0)
    assert share.share(np.array([1.0, -1.0]), np.array([2.0, 2.0])) == 0.5


def test_authors_curve_beside_ours(tmp_path: Path) -> None:
    """``fppo_ties.py --compare-authors``: the authors' recorded training log per iteration window beside a run of ours
    (a progress.csv as SB3's CSV logger writes it; windows it does not cover show "-")."""
    import csv

    import fppo_ties

    run = tmp_path / "f_ppo_authors_0"
    run.mkdir()
    keys = ["fairness/short_term", "fairness/massaged_fraction", "lending/accept_rate", "lending/rollout_reward"]
    with open(run / "progress.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=keys)
        writer.writeheader()
        for i in range(1, 31):  # 30 iterations: Δs 0.1 before massaging, 0.01 after; half the actions massaged
            writer.writerow({"fairness/short_term": 0.1 if i <= 18 else 0.01, "fairness/massaged_fraction": 0.5 * (i > 18),
                             "lending/accept_rate": 0.4, "lending/rollout_reward": 10.0})
    data = Path(fppo_ties.__file__).parent / "data" / "authors_code_fppo.json"
    lines = fppo_ties.compare_authors(tmp_path, data)
    authors = json.loads(data.read_text())["runs"][0]["iterations"]
    before = np.mean([r["short_mean"] for r in authors[:18]])
    assert lines[2].startswith(f"| authors' code, F-PPO | 0 | {before:.3f} |")
    assert lines[3].startswith("| authors' code, exact W1 for their Sinkhorn | 0 |")
    assert lines[4] == ("| sb3-fair, `f_ppo_authors` | 0 | 0.100 | 0.010 | - | 0.500 | - | 0.400 | 0.400 | - | 10.000 | "
                        "10.000 | - |")
    assert not any("`f_ppo` |" in line for line in lines)  # no f_ppo run in the folder


def test_record_without_its_checkpoint_starts_over(tmp_path: Path) -> None:
    """An unfinished record whose model is not there (a record copied from another machine) trains from step 0,
    its iterations not appended to the old ones."""
    job = {"part": "epidemic", "method": "f_ppo_l", "seed": 0, "timesteps": 512, "chunk": 256, "deadline": float("inf"),
           "eval_episodes": 1, "quick": True}
    model_path, record_path = benchmark.paths(job, tmp_path)
    record_path.parent.mkdir(parents=True)
    record_path.write_text(json.dumps({**job, "steps": 256, "train_s": 5.0, "iterations": [[9.0, 9.0, 0.0]]}))
    record = benchmark.run_job(job, str(tmp_path))
    assert record["steps"] == 512 and len(record["iterations"]) == 2 and record["iterations"][0][0] != 9.0
    assert model_path.is_file()


@pytest.mark.parametrize("variant", ["f_ppo", "f_ppo_authors", "f_ppo_flip", "f_ppo_dl", "f_ppo_horizon"])
def test_ties_variants_build_their_models(variant: str) -> None:
    """Each fppo_ties variant is F-PPO with its changes: the env's long-term measure and horizon, the tie rule."""
    import fppo_ties

    model = fppo_ties.make_model(variant, seed=0)
    env = model.get_env().envs[0].unwrapped
    authors = variant == "f_ppo_authors"
    assert env.long_term == ("counts_sinkhorn" if variant in ("f_ppo_authors", "f_ppo_dl") else "wasserstein")
    assert env.horizon_terminates == (variant in ("f_ppo_authors", "f_ppo_horizon"))
    assert model.massaging_ties == ("flip" if authors or variant == "f_ppo_flip" else "keep")


def test_runs_are_chosen_one_by_one(capsys: pytest.CaptureFixture[str]) -> None:
    assert benchmark.method_seed("f_ppo_authors:3") == ("f_ppo_authors", 3)
    for bad in ("f_ppo", "f_ppo:x", "sac:1", "f_ppo:-1"):
        with pytest.raises(Exception, match="METHOD:SEED"):
            benchmark.method_seed(bad)
    with pytest.raises(SystemExit):
        benchmark.main(["--part", "attention", "--runs", "f_ppo_flip:0", "--report-only"])
    assert "lending's only" in capsys.readouterr().err


def test_authors_geomloss_variant_builds() -> None:
    import fppo_ties

    model = fppo_ties.make_model("f_ppo_authors_geomloss", seed=0)
    env = model.get_env().envs[0].unwrapped
    assert (env.long_term, env.horizon_terminates, model.massaging_ties) == ("counts_geomloss", True, "flip")


def test_write_section_replaces_one_section_and_removes_none(tmp_path: Path) -> None:
    from reproduction import write_section

    results = tmp_path / "RESULTS.md"
    write_section(results, "Run (x), smoke run", "## Run (x), smoke run: `x --quick`\n\nsmoke\n")
    write_section(results, "Other", "## Other: `y`\n\nother\n")
    # one heading contains the key: a real run's section replaces the smoke run's, where it stood
    write_section(results, "Run (x)", "## Run (x): `x`\n\nfirst\n")
    text = results.read_text()
    assert "smoke" not in text and text.index("first") < text.index("other")
    write_section(results, "Run (x), smoke run", "## Run (x), smoke run: `x --quick`\n\nsmoke again\n")  # appended
    # two headings contain the key: the one equal to the new heading is replaced, the other kept
    write_section(results, "Run (x)", "## Run (x): `x`\n\nsecond\n")
    text = results.read_text()
    assert "first" not in text and "second" in text and "smoke again" in text and "other" in text
    # two contain it and neither is the new heading: appended with a warning, nothing lost
    with pytest.warns(UserWarning, match="2 sections' headings contain 'Run \\(x\\)'"):
        write_section(results, "Run (x)", "## Run (x): `x --seeds 5`\n\nthird\n")
    text = results.read_text()
    assert all(word in text for word in ("second", "smoke again", "third", "other"))
    # a hand-written section is never replaced
    write_section(results, "Notes", "## Notes on Run (x) (written by hand)\n\nmine\n")
    write_section(results, "Notes on Run (x)", "## Notes on Run (x): `z`\n\ngenerated\n")
    assert "mine" in results.read_text() and "generated" in results.read_text()


def test_massaged_defaulters_counts_lending_rows_only() -> None:
    """The one count behind fppo's RolloutSignals and fppo_ties' MassagedDefaulters."""
    from types import SimpleNamespace

    infos = [{"would_repay": False}, {"would_repay": True}, {}, {"would_repay": False}]
    assert benchmark.massaged_defaulters(SimpleNamespace(massaged_rows=[0, 1, 2, 3]), infos) == (3, 2)
    assert benchmark.massaged_defaulters(SimpleNamespace(massaged_rows=[1]), infos) == (1, 0)
    assert benchmark.massaged_defaulters(SimpleNamespace(), infos) == (0, 0)  # no massaging


def test_cpo_and_its_unconstrained_control_share_every_setting_but_the_constraint(capsys: pytest.CaptureFixture[str]) -> None:
    """cpo is cpo.yml's @hu2024 entry (the F-PPO authors' CPO); trpo the same without the cost keys; attention only."""
    from sb3_fair.common.hyperparams import algo_kwargs

    cpo = benchmark.experiment_config("attention", "cpo", seed=1, n_timesteps=1000)
    trpo = benchmark.experiment_config("attention", "trpo", seed=1, n_timesteps=1000)
    assert (cpo.algo, cpo.variant, trpo.algo) == ("cpo", "hu2024", "trpo")
    constraint = {"cost_limit": 0.0005, "cost_signal": "short_term", "cost_gae_lambda": 1.0}
    assert algo_kwargs(dict(cpo.hyperparams)) == {**algo_kwargs(dict(trpo.hyperparams)), **constraint}
    with pytest.raises(SystemExit):
        benchmark.main(["--part", "epidemic", "--methods", "cpo", "--report-only"])
    assert "attention's only" in capsys.readouterr().err


def test_cpo_steps_table_known_answer() -> None:
    """Two runs: the shares of each case per run, averaged over runs, and the median ν of the constrained steps."""
    runs = [
        {"method": "cpo", "cpo_steps": [["constrained", 2.0, 0.5, True], ["constrained", 2.0, 1.5, False],
                                        ["recovery", None, None, True], ["unconstrained", 1.0, 0.0, True]]},
        {"method": "cpo", "cpo_steps": [["constrained", 2.0, 1.0, True], ["constrained", 2.0, 1.0, True],
                                        ["constrained", 2.0, 1.0, True], ["constrained", 2.0, 1.0, True]]},
        {"method": "ppo"},
    ]
    lines = benchmark.cpo_steps_table(runs)
    assert lines[-1] == "| CPO | 2 | 4 ± 0 | 0.12 ± 0.12 | 0.75 ± 0.25 | 0.12 ± 0.12 | 0.00 ± 0.00 | 0.88 ± 0.12 | 1.00 ± 0.00 |"
    assert benchmark.cpo_steps_table([{"method": "ppo"}]) == []


def test_constraint_effect_pairs_cpo_with_its_control() -> None:
    values = {"short_term": {"cpo": {0: 0.04, 1: 0.05}, "trpo": {0: 0.08, 1: 0.07}},
              "long_term": {"cpo": {0: 1.0, 1: 2.0}, "trpo": {0: 1.5, 1: 1.5}},
              "utility": {"cpo": {0: 2.0, 1: 2.0}, "trpo": {0: 2.5, 1: 2.5}}}
    training = {"cpo": {0: 0.04, 1: 0.04}, "trpo": {0: 0.06, 1: 0.08}}
    lines = benchmark.constraint_effect("attention", values, training)
    assert lines[-4].startswith("| Δs at the end, paper's statistic | 0.045 ± 0.005 | 0.075 ± 0.005 | -0.030 ± 0.014 (n = 2;")
    assert lines[-4].endswith("| 2 of 2 |") and lines[-2].endswith("| 1 of 2 |") and lines[-1].endswith("| 2 of 2 |")
    assert benchmark.constraint_effect("attention", {**values, "short_term": {"cpo": {0: 0.04}}}, training) == []
