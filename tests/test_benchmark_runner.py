"""``benchmarks/runner.py``: trials as data, ids from their content, resume by skipping finished trials, each record
written once, and the same bytes locally (in this process or a process pool) and on Ray."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import runner

SPECS = [{"x": x, "seed": 10 + x, "settings": {"n": 3}} for x in range(3)]


def draws(spec: dict) -> dict:
    """A tiny deterministic trial: seeded draws (the result) and its wall time (the sidecar)."""
    rng = np.random.default_rng(spec["seed"])
    return {"x2": spec["x"] ** 2, "draws": rng.random(spec["settings"]["n"]).tolist()}


def draws_timed(spec: dict) -> tuple[dict, dict]:
    return draws(spec), {"seconds": 0.5}


def half_done(spec: dict) -> dict:
    if spec["x"] == 1:
        raise runner.Unfinished("stopped at the deadline")
    if spec["x"] == 2:
        raise ValueError("a bad setting")
    return draws(spec)


def record_bytes(folder: Path) -> dict[str, bytes]:
    """Every compared file of a benchmark's folder (the records, not their sidecars), by name."""
    return {p.name: p.read_bytes() for p in sorted(folder.glob("*.json")) if not p.name.endswith(runner.META_SUFFIX)}


def test_ids_come_from_the_content() -> None:
    a = runner.trial_id({"x": 1, "y": [1, 2]})
    assert a == runner.trial_id({"y": [1, 2], "x": 1}) and len(a) == 16  # key order does not matter
    assert a != runner.trial_id({"x": 2, "y": [1, 2]})
    assert runner.trial_id({"x": 1, "y": [1, 2]}, label="donut FairQCM/0") == f"donut-FairQCM-0-{a}"
    trials = runner.make_trials([*SPECS, SPECS[0]])
    assert [t.spec for t in trials] == SPECS  # each spec once, in order
    with pytest.raises(ValueError, match="plain JSON values"):
        runner.make_trials([{"x": (1, 2)}])


def test_local_run_writes_each_record_once_and_resumes(tmp_path: Path) -> None:
    summary = runner.run("demo", SPECS, draws_timed, results=tmp_path, local=True, quiet=True)
    folder = tmp_path / "demo"
    ids = [t.id for t in runner.make_trials(SPECS)]
    assert sorted(summary.written) == sorted(ids) and not summary.skipped
    record = json.loads((folder / f"{ids[0]}.json").read_text())
    assert record == {"id": ids[0], "spec": SPECS[0], "result": draws(SPECS[0])}
    meta = json.loads((folder / f"{ids[0]}{runner.META_SUFFIX}").read_text())
    assert meta["seconds"] == 0.5 and meta["runner"] == "local" and {"host", "pid", "started", "finished"} <= set(meta)
    assert not list(folder.glob(".*.tmp"))  # no temp file left behind
    before = {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in folder.iterdir()}

    again = runner.run("demo", SPECS, draws_timed, results=tmp_path, local=True, quiet=True)
    assert again.written == [] and sorted(again.skipped) == sorted(ids)
    assert {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in folder.iterdir()} == before  # nothing rewritten

    # an interrupted call: one record missing; the same command runs that trial only
    (folder / f"{ids[1]}.json").unlink()
    third = runner.run("demo", SPECS, draws_timed, results=tmp_path, local=True, quiet=True)
    assert third.written == [ids[1]] and sorted(third.skipped) == sorted([ids[0], ids[2]])
    assert [r["spec"] for r in runner.load(tmp_path, "demo")] == [json.loads((folder / f"{i}.json").read_text())["spec"]
                                                                   for i in sorted(ids)]
    assert all(r["meta"]["seconds"] == 0.5 for r in runner.load(tmp_path, "demo"))


def test_write_once_never_replaces(tmp_path: Path) -> None:
    path = tmp_path / "a" / "r.json"
    assert runner.write_once(path, {"v": 1}) is True
    assert runner.write_once(path, {"v": 2}) is False
    assert json.loads(path.read_text()) == {"v": 1} and sorted(p.name for p in path.parent.iterdir()) == ["r.json"]


def test_unfinished_and_failed_trials_leave_no_record(tmp_path: Path) -> None:
    summary = runner.run("demo", SPECS, half_done, results=tmp_path, local=True, quiet=True)
    ids = [t.id for t in runner.make_trials(SPECS)]
    assert summary.written == [ids[0]]
    assert summary.unfinished == {ids[1]: "stopped at the deadline"}
    assert list(summary.failed) == [ids[2]] and "ValueError: a bad setting" in summary.failed[ids[2]]
    assert sorted(record_bytes(tmp_path / "demo")) == [f"{ids[0]}.json"]
    with pytest.raises(SystemExit, match="1 trial"):
        runner.check_summary(summary)


def test_a_process_pool_gives_the_same_records(tmp_path: Path) -> None:
    runner.run("demo", SPECS, draws, results=tmp_path / "one", local=True, jobs=1, quiet=True)
    runner.run("demo", SPECS, draws, results=tmp_path / "pool", local=True, jobs=2, quiet=True)
    one, pool = record_bytes(tmp_path / "one" / "demo"), record_bytes(tmp_path / "pool" / "demo")
    assert len(one) == len(SPECS) and one == pool


def test_ray_gives_the_same_records_as_the_local_run(tmp_path: Path) -> None:
    pytest.importorskip("ray")
    local = runner.run("demo", SPECS, draws_timed, results=tmp_path / "local", local=True, quiet=True)
    ray_run = runner.run("demo", SPECS, draws_timed, results=tmp_path / "ray", jobs=1, quiet=True)  # ray.init(num_cpus=1)
    assert sorted(ray_run.written) == sorted(local.written)
    assert record_bytes(tmp_path / "ray" / "demo") == record_bytes(tmp_path / "local" / "demo")
    meta = runner.load(tmp_path / "ray", "demo")[0]["meta"]
    assert meta["runner"] == "ray (local)" and "ray_node" in meta and meta["seconds"] == 0.5
    # resume on Ray too: nothing left to run, so Ray is not even started
    again = runner.run("demo", SPECS, draws_timed, results=tmp_path / "ray", jobs=1, quiet=True)
    assert again.written == [] and len(again.skipped) == len(SPECS)


def test_results_folder_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(runner.RESULTS_ENV, raising=False)
    assert runner.resolve_results(None) == runner.REPO / "results"
    assert runner.resolve_results(None, tmp_path / "d") == tmp_path / "d"
    monkeypatch.setenv(runner.RESULTS_ENV, str(tmp_path / "env"))
    assert runner.resolve_results(None, tmp_path / "d") == tmp_path / "env"
    assert runner.resolve_results(str(tmp_path / "flag"), tmp_path / "d") == tmp_path / "flag"
