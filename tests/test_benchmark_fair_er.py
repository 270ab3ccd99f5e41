"""``python benchmarks/fair_er.py`` (Fair-ER / Fair-E on pursuit-evasion): the smoke run trains through the
experiment runner, each run a trial of ``benchmarks/runner.py``, evaluates at each speed, and writes its records, its
RESULTS.md section and its plot under ``--out`` only."""

from __future__ import annotations

import json
from pathlib import Path

import fair_er as benchmark
import numpy as np
import pytest
import runner

from sb3_fair.experiment import build_model

HEADING = "## Fair-ER / Fair-E (Grupen et al. 2022): `python benchmarks/fair_er.py --quick`"
SPEC_KEYS = {"variant", "seed", "steps", "max_steps", "eval_episodes", "curriculum", "speeds", "size"}


def _save(results, folder, record):
    """``record`` (flat, as before the runner) as the runner writes it to ``<results>/<folder>/``: spec, result, and
    the seconds in the sidecar."""
    spec = {k: v for k, v in record.items() if k not in ("seconds", "eval", "config")}
    tid = runner.trial_id(spec, benchmark.label(spec))
    result = {k: record[k] for k in ("eval", "config") if k in record}
    runner.write_once(runner.record_path(results, folder, tid), {"id": tid, "spec": spec, "result": result})
    runner.write_once(runner.meta_path(results, folder, tid), {"seconds": record["seconds"], "finished": tid})


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
    benchmark.main(["--quick", "--workers", "1", "--local", "--variants", "lambda=0.5", "Fair-E", "--out", str(out)])

    runs = out / "results" / "fair_er" / "quick"  # the records: <out>/results with --out, a smoke run's under quick/
    saved = runner.load(out / "results", "fair_er/quick")
    # each record's id labelled with its name before the runner
    assert sorted(r["id"].rsplit("-", 1)[0] for r in saved) == ["Fair-E_0", "lambda-0.5_0"]
    assert sorted(p.name for p in runs.glob("*.json")
                  if not runner.RECORD_NAME.search(p.name) and not p.name.endswith(runner.META_SUFFIX)) == ["throughput.json"]
    records = {benchmark.job_file(r["spec"]): {**r["spec"], **r["result"]} for r in saved}
    for r in saved:
        assert set(r["spec"]) == SPEC_KEYS and set(r["result"]) == {"eval", "config"} and r["meta"]["seconds"] > 0
    for record in records.values():
        assert record["steps"] == 1200 and record["max_steps"] == 50
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

    # --no-train re-summarises the records, replacing the section where it stands; a second call trains nothing
    stamps = {p.name: p.stat().st_mtime_ns for p in runs.glob("*.json") if p.name != "throughput.json"}
    benchmark.main(["--quick", "--no-train", "--out", str(out)])
    again = (out / "RESULTS.md").read_text()
    assert again.count(HEADING + "\n") == 1 and "| Fair-E | 1 |" in again
    assert sorted(p.name for p in out.iterdir()) == ["RESULTS.md", "fair_er_pursuit.png", "results"]
    benchmark.main(["--quick", "--workers", "1", "--local", "--variants", "lambda=0.5", "Fair-E", "--out", str(out)])
    assert {p.name: p.stat().st_mtime_ns for p in runs.glob("*.json") if p.name != "throughput.json"} == stamps
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
    assert not (tmp_path / "out").exists() and not (tmp_path / "results").exists()


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_entry_quick_writes_paired_tests_against_td3(tmp_path) -> None:
    out = tmp_path / "out"
    benchmark.main(["--entry", "--quick", "--seeds", "2", "--workers", "1", "--local", "--variants", "lambda=0", "Fair-E",
                    "--out", str(out)])
    saved = runner.load(out / "results", "fair_er/quick/td3_entry")
    assert sorted(r["id"].rsplit("-", 1)[0] for r in saved) == ["Fair-E_0", "lambda-0_0"]  # --quick: one seed
    record = next({**r["spec"], **r["result"]} for r in saved if r["spec"]["variant"] == "Fair-E")
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
    assert not list((out / "results").rglob("throughput.json"))

    # the entry on another torus: its own records, figure and section; the 4 x 4 section stays, and rewriting it
    # replaces only itself
    benchmark.main(["--entry", "--quick", "--size", "2", "--speeds", "1", "0.8", "--workers", "1", "--local", "--variants",
                    "lambda=0", "--out", str(out)])
    [small] = [{**r["spec"], **r["result"]} for r in runner.load(out / "results", "fair_er/quick/td3_entry_size_2")]
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
    entry = benchmark.entry_settings()
    capture = {"lambda=0": [1.0, 0.5], "lambda=0.5": [1.0, 0.5], "Fair-E": [0.5, 0.5]}
    fairness = {"lambda=0": [1.0, 1.2], "lambda=0.5": [0.4, 0.7], "Fair-E": [0.1, 0.2]}
    for variant in capture:
        for seed in (0, 1):
            record = dict(variant=variant, seed=seed, steps=1200, max_steps=50, eval_episodes=2, curriculum=list(entry["curriculum"]),
                          speeds=[2.0], size=2.0, entry=True, seconds=1.0,
                          eval={"2.0": dict(capture_success=capture[variant][seed], team_fairness=fairness[variant][seed], mean_length=9.0)})
            _save(out / "results", "fair_er/quick/td3_entry_size_2", record)  # as the runner writes them
    benchmark.main(["--entry", "--quick", "--no-train", "--size", "2", "--speeds", "2", "--out", str(out)])
    section = (out / "RESULTS.md").read_text().split("Each Fair-ER variant minus Fair-E, paired by seed", 1)[1]
    rows = [line for line in section.splitlines() if line.startswith("| lambda=")]
    assert rows == ["| lambda=0.5 | 2 | 0.250 ± 0.354 (n = 2; paired t p = 0.500, Wilcoxon p = 1.000 over the 1 non-zero differences)"
                    " | 0.400 ± 0.141 (n = 2; paired t p = 0.156, Wilcoxon p = 0.500) |"]  # TD3 is not compared with Fair-E


def _entry_record(variant, seed, capture, steps=50_000, speeds=(2.0,)):
    entry = benchmark.entry_settings()
    return dict(variant=variant, seed=seed, steps=steps, max_steps=200, eval_episodes=2, curriculum=list(entry["curriculum"]),
                speeds=list(speeds), size=4.0, entry=True, seconds=1.0,
                eval={str(v): dict(capture_success=capture, team_fairness=0.5, mean_length=9.0) for v in speeds})


def test_archived_records_are_read_in_place_and_a_newer_one_takes_their_place(tmp_path) -> None:
    """The records kept before the runner are read from the archive (``out/fair_er/<setting>/<name>.json``), only
    those of the setting's own folder; a runner record of the same run replaces the archived one; the archived runs
    are not trained again; a smoke run reads no archive."""
    import io
    import tarfile
    from types import SimpleNamespace

    archive = tmp_path / "records.tar.xz"
    with tarfile.open(archive, "w:xz") as tar:
        for name, obj in (("td3_entry/Fair-E_0.json", _entry_record("Fair-E", 0, 0.25)),
                          ("td3_entry/lambda=0_0.json", _entry_record("lambda=0", 0, 0.5)),
                          ("td3_entry_size_2/Fair-E_0.json", {**_entry_record("Fair-E", 0, 0.75), "size": 2.0}),
                          ("throughput.json", {"steps": 1, "wall_seconds": 1.0})):
            data = json.dumps(obj).encode()
            info = tarfile.TarInfo(f"out/fair_er/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    results = tmp_path / "results"
    entry = benchmark.entry_settings()
    have = benchmark.records(results, False, entry["curriculum"], 4.0, True, archive)
    assert [(r["variant"], r["eval"]["2.0"]["capture_success"]) for r in have] == [("Fair-E", 0.25), ("lambda=0", 0.5)]
    assert benchmark.records(results, True, entry["curriculum"], 4.0, True, archive) == []  # a smoke run reads no archive
    # the top folder's archived records are only its own (none here: not the entry's sub-folders), its throughput the archive's
    assert benchmark.records(results, False, benchmark.PAPER_CURRICULUM, 6.0, False, archive) == []
    assert benchmark.throughput_record(results, False, "fair_er", archive)["wall_seconds"] == 1.0
    assert benchmark.throughput_record(results, True, "fair_er/quick", archive) == {}
    # an archived run with the same settings is not trained again; one with other steps is
    job = {k: v for k, v in _entry_record("Fair-E", 0, 0.0).items() if k not in ("seconds", "eval")}
    assert benchmark._done(job, have) and not benchmark._done({**job, "steps": 1000}, have)
    assert not benchmark._done({**job, "seed": 1}, have)
    # a runner record of the same run takes the archived one's place in the report
    _save(results, "fair_er/td3_entry", _entry_record("Fair-E", 0, 1.0))
    have = benchmark.records(results, False, entry["curriculum"], 4.0, True, archive)
    args = SimpleNamespace(steps=50_000, max_steps=200, curriculum=entry["curriculum"], speeds=[2.0], size=4.0, entry=True)
    assert [(r["variant"], r["eval"]["2.0"]["capture_success"]) for r in benchmark.pick(have, args)] == [
        ("Fair-E", 1.0), ("lambda=0", 0.5)]
    # read in place: the report from the archive alone, nothing extracted
    out = tmp_path / "report"
    benchmark.main(["--entry", "--no-train", "--speeds", "2", "--eval-episodes", "2", "--seeds", "1", "--out", str(out),
                    "--archive", str(archive), "--results", str(tmp_path / "empty")])
    section = (out / "RESULTS.md").read_text()
    assert "| Fair-E | 1 | 0.25 ± 0.00 |" in section and "| lambda=0 | 1 | 0.50 ± 0.00 |" in section
    assert sorted(p.name for p in out.iterdir()) == ["RESULTS.md", "fair_er_pursuit_td3_entry.png"]
    assert not (tmp_path / "empty").exists()
