"""``python benchmarks/fair_ppo.py --quick``: the whole pipeline (train through the experiment runner, each run a
trial of ``benchmarks/runner.py``, evaluate per group, report, plot) writes only under ``--out``."""

from __future__ import annotations

import json

import fair_ppo as benchmark
import pytest
import runner

from sb3_fair.experiment import ExperimentConfig


def test_quick_run_writes_section_png_and_records(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # anything written outside --out would land here
    out = tmp_path / "out_dir"
    benchmark.main(["--quick", "--workers", "1", "--local", "--out", str(out)])

    assert sorted(p.name for p in tmp_path.iterdir()) == ["out_dir"]
    text = (out / "RESULTS.md").read_text()
    assert "## FairPPO (La Malfa et al. 2025): `python benchmarks/fair_ppo.py --quick`" in text
    assert "![fair-ppo](fair_ppo_harvest.png)" in text
    assert (out / "fair_ppo_harvest.png").stat().st_size > 0
    runs = out / "results" / "fair_ppo" / "quick"  # the records: <out>/results with --out, a smoke run's under quick/
    saved = runner.load(out / "results", "fair_ppo/quick")
    # PPO and each metric's first setting of Table 1, each record's id labelled with its name before the runner
    assert sorted(r["id"].rsplit("-", 1)[0] for r in saved) == ["cf_1_1_0", "csp_0.75_0.25_0", "dp_0_0.25_0", "ppo_0_0_0"]
    assert sorted(p.name for p in runs.glob("*.json")
                  if not runner.RECORD_NAME.search(p.name) and not p.name.endswith(runner.META_SUFFIX)) == ["throughput.json"]
    for r in saved:
        assert set(r["spec"]) == {"metric", "alpha", "beta", "seed", "steps", "eval_episodes"} and set(r["result"]) == {"eval"}
        record = {**r["spec"], **r["result"]}
        assert record["steps"] == 4800 and record["eval_episodes"] == 2 and r["meta"]["seconds"] > 0
        assert {"dp_norm", "csp_norm_0", "csp_norm_1", "cf_norm", "table"} <= set(record["eval"])
        assert set(record["eval"]["table"]) == {"0", "1"}
    tp = json.loads((runs / "throughput.json").read_text())
    assert set(tp) == {"env", "ppo", "wall_seconds"} and tp["ppo"]["steps"] == 4800
    for metric in ("DP", "CSP", "CF"):
        assert f"| {metric} | PPO (0, 0) |" in text

    assert "| metric | (alpha, beta) | unfairness per seed | setting − PPO |" in text

    # a second call trains nothing (every run has its record) and re-writes the same report
    stamps = {p.name: p.stat().st_mtime_ns for p in runs.glob("*.json")}
    (out / "RESULTS.md").unlink()
    benchmark.main(["--quick", "--workers", "1", "--local", "--out", str(out)])
    assert {p.name: p.stat().st_mtime_ns for p in runs.glob("*.json")} == stamps
    assert (out / "RESULTS.md").read_text() == text

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


def _record(metric, alpha, beta, seed, dp, returns, steps=9600):
    return {"metric": metric, "alpha": alpha, "beta": beta, "seed": seed, "steps": steps, "eval_episodes": 2, "seconds": 60.0,
            "eval": {"dp_norm": dp, "csp_norm_0": dp, "csp_norm_1": -dp, "cf_norm": dp,
                     "table": {"0": {"mean_return": returns[0]}, "1": {"mean_return": returns[1]}}}}


def test_claims_pair_each_setting_with_ppo_of_the_same_seed():
    """Known answers: DP (0.5, 0.5) fairer than PPO on all 3 seeds, at least 50 % fairer on 2 (0.2 <= 0.5 * 0.4,
    0.1 <= 0.5 * 0.4, 0.3 > 0.5 * 0.4); PoF unimpaired -50 %, impaired -20 % on every seed: a gap of -30 points."""
    results = [_record("ppo", 0.0, 0.0, s, 0.4, (100.0, 50.0)) for s in range(3)]
    results += [_record("dp", 0.5, 0.5, s, u, (50.0, 40.0)) for s, u in enumerate((0.2, 0.1, 0.3))]
    lines = benchmark.claims_lines(results)
    ppo_row = next(line for line in lines if line.startswith("| DP | PPO"))
    assert "0.400 / 0.400 / 0.400" in ppo_row
    row = next(line for line in lines if line.startswith("| DP | (0.5, 0.5)"))
    cells = [c.strip() for c in row.split("|")[1:-1]]
    assert cells[2] == "0.200 / 0.100 / 0.300"
    assert cells[3].startswith("-0.200 ± 0.100 (n = 3; paired t p = 0.074")
    assert cells[4:6] == ["3 of 3", "2 of 3"]
    assert cells[6].startswith("-30 ± 0 (n = 3; ")
    # settings without runs get no row
    assert not any(line.startswith("| DP | (1, 1)") for line in lines)


def _save(results, record):
    """``record`` (flat, as before the runner) as the runner writes it: spec, result, and the seconds in the sidecar."""
    spec = {k: record[k] for k in ("metric", "alpha", "beta", "seed", "steps", "eval_episodes")}
    tid = runner.trial_id(spec, benchmark.label(spec))
    runner.write_once(runner.record_path(results, "fair_ppo", tid), {"id": tid, "spec": spec, "result": {"eval": record["eval"]}})
    runner.write_once(runner.meta_path(results, "fair_ppo", tid), {"seconds": record["seconds"]})


def test_runs_with_a_record_are_not_trained_again_and_other_settings_are_refused(tmp_path):
    job = dict(metric="dp", alpha=0.5, beta=0.5, seed=1, steps=9600, eval_episodes=2)
    other = dict(job, seed=2)
    assert benchmark.job_file(job) == "dp_0.5_0.5_1.json" and benchmark.label(job) == "dp_0.5_0.5_1"
    _save(tmp_path, _record("dp", 0.5, 0.5, 1, 0.1, (1.0, 1.0)))
    have = benchmark.records(tmp_path, False, None)
    assert list(have) == ["dp_0.5_0.5_1.json"] and have["dp_0.5_0.5_1.json"]["seconds"] == 60.0
    assert benchmark.missing_jobs([job, other], have) == [other]
    with pytest.raises(SystemExit, match="--steps 9600 --eval-episodes 2, not 4800 and 2"):
        benchmark.missing_jobs([dict(job, steps=4800)], have)
    # past its deadline a run is not started: unfinished, and the runner writes no record of it
    with pytest.raises(runner.Unfinished):
        benchmark.run_trial(other, deadline=0.0)
    import functools

    summary = runner.run("fair_ppo", [other], functools.partial(benchmark.run_trial, deadline=0.0), results=tmp_path,
                         local=True, jobs=1, label=benchmark.label, quiet=True)
    assert list(summary.unfinished) == [runner.trial_id(other, benchmark.label(other))] and not summary.written
    assert list(benchmark.records(tmp_path, False, None)) == ["dp_0.5_0.5_1.json"]


def test_archived_records_are_read_in_place_and_a_newer_one_takes_their_place(tmp_path):
    """The records kept before the runner are read from the archive (``out/fair_ppo/<name>.json``); a runner record
    of the same run replaces the archived one; the archived throughput summary is the section's."""
    import io
    import tarfile

    archive = tmp_path / "records.tar.xz"
    with tarfile.open(archive, "w:xz") as tar:
        for name, obj in (("dp_0.5_0.5_1.json", _record("dp", 0.5, 0.5, 1, 0.1, (1.0, 1.0))),
                          ("throughput.json", {"env": {}, "ppo": {}, "wall_seconds": 1.0})):
            data = json.dumps(obj).encode()
            info = tarfile.TarInfo(f"out/fair_ppo/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    results = tmp_path / "results"
    assert benchmark.records(results, False, archive)["dp_0.5_0.5_1.json"]["eval"]["dp_norm"] == 0.1
    assert benchmark.records(results, True, archive) == {}  # a smoke run reads no archive
    assert benchmark.throughput_record(results, False, archive)["wall_seconds"] == 1.0
    assert benchmark.throughput_record(results, True, archive) == {}
    _save(results, _record("dp", 0.5, 0.5, 1, 0.2, (1.0, 1.0)))
    assert benchmark.records(results, False, archive)["dp_0.5_0.5_1.json"]["eval"]["dp_norm"] == 0.2


def test_cf_also_runs_low_settings_for_the_papers_high_alpha_beta_claim(tmp_path):
    """§6.1: CF improves only for high alpha and beta. The paper's four fairest CF settings all have alpha + beta >=
    0.75, so CF also runs three with alpha + beta <= 0.5; DP and CSP run only Table 1's four; --quick the first."""
    assert benchmark.settings("cf") == [(1.0, 1.0), (0.75, 0.5), (0.0, 0.75), (0.25, 0.75),
                                        (0.25, 0.0), (0.0, 0.25), (0.25, 0.25)]
    assert all(a + b >= 0.75 for a, b in benchmark.settings("cf")[:4])
    assert all(a + b <= 0.5 for a, b in benchmark.LOW_CF)
    assert benchmark.settings("dp") == [ab for ab, *_ in benchmark.PAPER["dp"]]
    assert benchmark.settings("csp", quick=True) == [(0.75, 0.25)] and benchmark.settings("cf", quick=True) == [(1.0, 1.0)]
    # a low setting's row: the paper has no Table 1 entry for it
    for seed in (0, 1):  # the records in <out>/results/fair_ppo/, as the runner writes them
        for record in (_record("ppo", 0.0, 0.0, seed, 0.4, (100.0, 50.0)), _record("cf", 0.25, 0.0, seed, 0.3, (90.0, 45.0))):
            _save(tmp_path / "results", record)
    benchmark.main(["--seeds", "2", "--steps", "9600", "--eval-episodes", "2", "--no-train", "--out", str(tmp_path)])
    text = (tmp_path / "RESULTS.md").read_text()
    assert "| CF | (0.25, 0) | 0.300 ± 0.000 | -25 ± 0 % | -10 ± 0 % | -10 ± 0 % | (Fig. 1 only) | — |" in text
    assert "| CF | (0.25, 0) | 0.300 / 0.300 | " in text
    assert "CF (0.25, 0.25) seed 1" in text  # listed as not trained yet
