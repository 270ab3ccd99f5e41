"""``python benchmarks/contrib_algorithms.py``: the doughnut part's paired tests, its runs on the runner and the
archived records."""

from __future__ import annotations

import contrib_algorithms as benchmark


def test_donut_pairs_known_answer() -> None:
    recurrent, ppo, fairqcm = benchmark.DONUT_METHODS
    results = [{"method": recurrent, "seed": s, "score": 300.0 + s} for s in range(3)]
    results += [{"method": ppo, "seed": s, "score": 1000.0 + 2 * s} for s in range(3)]
    results += [{"method": fairqcm, "seed": s, "score": 1000.0 + 2 * s + (1.0 if s else -1.0)} for s in range(4)]
    text = benchmark.donut_pairs(results)
    # PPO − recurrent: 700, 701, 702 (sd 1); FairQCM − PPO: -1, +1, +1 over the 3 seeds both have (seed 3 unpaired)
    assert f"| {ppo} − {recurrent} | 3 of 3 | 701.0 ± 1.0 (n = 3; paired t p < 0.001, Wilcoxon p = 0.250) |" in text
    assert f"| {fairqcm} − {ppo} | 2 of 3 | 0.3 ± 1.2 (n = 3; paired t p = 0.667" in text
    assert f"| {fairqcm} − {recurrent} | 3 of 3 |" in text
    assert benchmark.donut_pairs(results[:1]) == ""


def test_quick_run_on_the_runner_writes_records_once_and_no_section(tmp_path, monkeypatch) -> None:
    """``--part harvest --quick --local``: each run a trial of ``benchmarks/runner.py``, its record under
    ``<out>/results/contrib/quick/`` (timings in the sidecar); a second call trains nothing; a smoke run writes no
    section and nothing outside ``--out``."""
    import runner

    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out_dir"
    benchmark.main(["--part", "harvest", "--quick", "--local", "--jobs", "1", "--out", str(out)])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out_dir"] and not (out / "RESULTS.md").exists()
    saved = runner.load(out / "results", "contrib/quick")
    assert sorted(r["id"].rsplit("-", 1)[0] for r in saved) == sorted(f"harvest_{m}_0" for m in benchmark.HARVEST_METHODS)
    for r in saved:
        assert r["spec"]["part"] == "harvest" and r["spec"]["quick"] is True and r["spec"]["steps"] == 4800
        assert set(r["result"]) == {"dp_norm", "dp_abs", "episode_return", "group_0", "group_1"}
        assert r["meta"]["seconds"] > 0 and r["meta"]["steps_per_s"] > 0
    folder = out / "results" / "contrib" / "quick"
    stamps = {p.name: p.stat().st_mtime_ns for p in folder.iterdir()}
    benchmark.main(["--part", "harvest", "--quick", "--local", "--jobs", "1", "--out", str(out)])
    assert {p.name: p.stat().st_mtime_ns for p in folder.iterdir()} == stamps


def test_archived_donut_records_are_read_in_place(tmp_path) -> None:
    """The 15 doughnut records kept before the runner come from the archive (seeds 0-4 of the three methods); the
    section they make has every method's row."""
    from reproduction import ARCHIVE

    jobs = [dict(method=m, seed=s, episodes=1000, eval_episodes=20,
                 **({"kwargs": benchmark.DONUT_RECURRENT_KWARGS} if m.startswith("RecurrentPPO") else {}))
            for s in range(5) for m in benchmark.DONUT_METHODS]
    found = benchmark.finished_runs("donut", jobs, tmp_path / "results", ARCHIVE)
    assert len(found) == 15 and all("seconds" in r and "score" in r for r in found)
    assert benchmark.finished_runs("donut", jobs, tmp_path / "results", None) == []
    benchmark.main(["--part", "donut", "--seeds", "5", "--report-only", "--out", str(tmp_path), "--archive", str(ARCHIVE)])
    text = (tmp_path / "RESULTS.md").read_text()
    assert all(f"| {m} | " in text for m in benchmark.DONUT_METHODS)
