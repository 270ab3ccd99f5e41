"""Sweeps on Ray Tune: parsing, the Pareto front, and a real 2-trial sweep on a local Ray (one failing trial)."""

from __future__ import annotations

import csv
import json
import pickle
import re
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from sb3_fair.experiment import ExperimentConfig
from sb3_fair.experiment.sweep import parse_grid, parse_space, points
from wandb_records import offline_runs


def test_grid_and_space_parsing() -> None:
    assert parse_grid(["alpha=0,0.5,1", "policy_kwargs.net_arch=[64,64],[32]", "fairness=dp,cf"]) == {
        "alpha": [0, 0.5, 1], "policy_kwargs.net_arch": [[64, 64], [32]], "fairness": ["dp", "cf"]}
    assert parse_space(["learning_rate=loguniform(1e-5,1e-3)", "n_steps=choice(64,128)", "n_epochs=randint(1,10)"]) == {
        "learning_rate": ("loguniform", 1e-5, 1e-3), "n_steps": ("choice", 64, 128), "n_epochs": ("randint", 1, 10)}
    with pytest.raises(ValueError, match="--grid takes key=v1,v2"):
        parse_grid(["alpha"])
    with pytest.raises(ValueError, match="--space takes key=<uniform|loguniform|randint|choice>"):
        parse_space(["alpha=normal(0,1)"])
    with pytest.raises(ValueError, match="low < high"):
        parse_space(["alpha=uniform(1,0)"])


def test_pareto_front_of_points_with_seed_spread() -> None:
    rows = [  # two seeds of three points; point b is dominated by a (less useful, less fair)
        {"status": "TERMINATED", "hp/alpha": "a", "eval/episode_reward": 10.0, "eval/gini": 0.2},
        {"status": "TERMINATED", "hp/alpha": "a", "eval/episode_reward": 12.0, "eval/gini": 0.4},
        {"status": "TERMINATED", "hp/alpha": "b", "eval/episode_reward": 9.0, "eval/gini": 0.5},
        {"status": "TERMINATED", "hp/alpha": "b", "eval/episode_reward": 9.0, "eval/gini": 0.5},
        {"status": "TERMINATED", "hp/alpha": "c", "eval/episode_reward": 5.0, "eval/gini": 0.1},
        {"status": "ERROR", "hp/alpha": "d"},
        {"status": "TERMINATED", "hp/alpha": "e", "eval/episode_reward": float("nan"), "eval/gini": 0.0},  # no place on the plane
    ]
    by_point = {p["point"]["alpha"]: p for p in points(rows, "episode_reward", "gini")}
    assert set(by_point) == {"a", "b", "c"}
    assert by_point["a"]["utility"] == 11.0 and by_point["a"]["utility_std"] == 1.0 and by_point["a"]["unfairness"] == pytest.approx(0.3)
    assert [by_point[k]["pareto"] for k in "abc"] == [True, False, True]


def test_a_signed_gap_counts_by_its_size_on_the_pareto_plane() -> None:
    # dp_norm is signed: -0.3 is as unfair as +0.3, and further from parity than -0.1
    rows = [{"status": "TERMINATED", "hp/alpha": a, "eval/episode_reward": r, "eval/dp_norm": dp}
            for a, r, dp in [("0", 10.0, -0.3), ("1", 9.0, -0.1), ("2", 8.0, 0.3)]]
    by_point = {p["point"]["alpha"]: p for p in points(rows, "episode_reward", "dp_norm")}
    assert [by_point[a]["unfairness"] for a in "012"] == [0.3, 0.1, 0.3]
    assert [by_point[a]["pareto"] for a in "012"] == [True, True, False]


def test_sweep_needs_a_sound_request() -> None:
    pytest.importorskip("ray")
    from sb3_fair.experiment.sweep import sweep

    base = ExperimentConfig(algo="ppo", env="CartPole-v1", n_timesteps=64)
    for kwargs, message in [({"grid": {"alpha": [0, 1]}}, r"\['alpha'\] is not an argument of PPO"),
                            ({"search": "optuna", "space": {"learning_rate": ("uniform", 0.1, 0.2)}}, "needs the metric"),
                            ({"space": {"learning_rate": ("uniform", 0.1, 0.2)}}, "space needs search='optuna'"),
                            ({"seeds": 0}, "seeds must be an int >= 1"),
                            ({"search": "optuna", "space": {"learning_rate": ("uniform", 0.1, 0.2)}, "metric": "episode_reward"},
                             "metric must be a reported figure, 'eval/<figure>'")]:
        with pytest.raises(ValueError, match=message):
            sweep(base, **kwargs)
    # a value SB3 refuses when it builds the model is reported before Ray starts, not in every trial that has it
    with pytest.raises(ValueError, match=r"run 'ppo-CartPole-v1-seed0': .*n_steps"):
        sweep(base, grid={"n_steps": [8, 0]})
    with pytest.raises(ValueError, match="policy_kwargs is written as a string"):  # refused before Ray starts, not in every trial
        sweep(base.replace(hyperparams={"policy_kwargs": "dict(net_arch=[8])"}), grid={"policy_kwargs.net_arch": [[4]]})


EXPERIMENT = ("algo: fair_ppo\nenv: sb3_fair/DisparityGame-v0\nn_timesteps: 64\neval_episodes: 1\n"
              "hyperparams:\n  env_kwargs: {n_agents: 4, max_steps: 8}\n  n_steps: 8\n  batch_size: 32\n  n_epochs: 1\n")


@pytest.fixture(scope="module")
def user_code(tmp_path_factory) -> Iterator[tuple[str, Path]]:
    """A user's module (not on the allow-list) that leaves a marker file whenever it is imported, in a folder that the
    Ray workers of :func:`local_ray` find on their path: what only ``--trust-config`` lets a config name."""
    folder = tmp_path_factory.mktemp("user_code")
    marker = folder / "imported"
    (folder / "sweep_user_code.py").write_text(
        "import pathlib\n"
        "import gymnasium as gym\n"
        f"pathlib.Path({str(marker)!r}).touch()\n"
        "class MarkWrapper(gym.Wrapper):\n"
        "    def reset(self, **kwargs):\n"
        "        raise RuntimeError('bogus: this wrapper fails when training starts')\n")
    sys.path.insert(0, str(folder))  # the sweep's own process builds each grid value's model once before Ray starts
    yield "sweep_user_code", marker
    sys.path.remove(str(folder))


@pytest.fixture(scope="module")
def local_ray(user_code):
    """One embedded Ray for the module's sweeps (sweep() uses a running Ray and leaves it running)."""
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False,
             runtime_env={"env_vars": {"PYTHONPATH": str(user_code[1].parent)}})
    yield ray
    ray.shutdown()


def test_a_real_two_trial_sweep_on_local_ray_reports_a_failed_trial_and_resumes(tmp_path, capsys, local_ray) -> None:
    """Two trials on an embedded Ray: one trains, one fails while training (a learning rate of 1e30 makes the policy's
    parameters NaN); the table, CSV and plot hold both; resume re-runs the failure only."""
    from sb3_fair.cli import main

    (tmp_path / "exp.yml").write_text(EXPERIMENT)
    argv = [str(tmp_path / "exp.yml"), "--grid", "learning_rate=0.0003,1.0e+30", "--name", "two", "--storage",
            str(tmp_path / "sweeps"), "--quiet"]
    main(["sweep", *argv])
    out = capsys.readouterr().out
    assert "1 of 2 trials finished" in out and "failed: " in out and "NaN or inf" in out
    with open(tmp_path / "sweeps" / "two" / "results.csv") as f:
        rows = list(csv.DictReader(f))
    assert sorted(r["status"] for r in rows) == ["ERROR", "TERMINATED"]
    done = next(r for r in rows if r["status"] == "TERMINATED")
    assert float(done["hp/learning_rate"]) == 0.0003 and float(done["eval/episode_return"]) >= 0 and "eval/dp_norm" in done
    assert (tmp_path / "sweeps" / "two" / "pareto.png").is_file()
    # the same name again: refused without --resume; with it, the finished trial is kept and the failed one re-runs (and fails)
    with pytest.raises(SystemExit):
        main(["sweep", *argv])
    assert "exists" in capsys.readouterr().err
    import signal

    before = signal.getsignal(signal.SIGINT)
    main(["sweep", *argv, "--resume"])
    assert "1 of 2 trials finished" in capsys.readouterr().out
    assert signal.getsignal(signal.SIGINT) is before  # Ray Tune's Ctrl+C handler is not left behind


def test_an_optuna_search_samples_its_space_and_averages_seeds(tmp_path, local_ray) -> None:
    from sb3_fair.experiment.sweep import sweep

    (tmp_path / "exp.yml").write_text(EXPERIMENT)
    base = ExperimentConfig.from_file(tmp_path / "exp.yml")
    out = sweep(base, search="optuna", space={"learning_rate": ("loguniform", 1e-4, 1e-3)}, samples=2, seeds=2,
                metric="eval/episode_return", storage=tmp_path / "sweeps")
    assert [r["status"] for r in out.table] == ["TERMINATED", "TERMINATED"]
    for row in out.table:
        assert 1e-4 <= row["hp/learning_rate"] <= 1e-3 and row["seed"] == [0, 1]
        assert "eval/episode_return_seed_std" in row  # the trial's two seeds, averaged


def test_the_table_labels_each_trial_by_what_it_reported() -> None:
    """A trial with an error is ERROR, one that reported its figures TERMINATED, one stopped before reporting UNFINISHED."""
    from types import SimpleNamespace

    from sb3_fair.experiment.sweep import _table

    def result(path, error=None, metrics=None):
        return SimpleNamespace(path=path, error=error, metrics=metrics, config={"seeds": 0, "overrides": {"alpha": 1}})

    rows = _table([result("/s/t2", metrics={"eval/gini": 0.1, "train/n_timesteps": 64.0, "time_total_s": 3.0}),
                   result("/s/t1", error=RuntimeError("first line\nValueError: n_steps must be > 0")),
                   result("/s/t3", metrics={"time_total_s": 1.0}), result("/s/t4", metrics=None)])
    assert [(r["trial"], r["status"]) for r in rows] == [("t1", "ERROR"), ("t2", "TERMINATED"), ("t3", "UNFINISHED"), ("t4", "UNFINISHED")]
    assert rows[0]["error"] == "RuntimeError: ValueError: n_steps must be > 0"
    assert rows[1]["eval/gini"] == 0.1 and "time_total_s" not in rows[1] and rows[1]["hp/alpha"] == 1


def test_with_wandb_every_trial_is_one_named_run_in_the_sweeps_group(tmp_path, local_ray) -> None:
    """Real wandb, offline: two trials give two runs (the algorithm starts no second one) named after the sweep, the trial
    and the seed, grouped and tagged by the sweep, plus the sweep's summary run."""
    from sb3_fair.experiment.sweep import sweep

    (tmp_path / "exp.yml").write_text(EXPERIMENT)
    # trusted: W&B's folder is outside the working folder (a test's tmp_path), which only the opt-in allows
    base = ExperimentConfig.from_file(tmp_path / "exp.yml").replace(wandb={"mode": "offline", "dir": str(tmp_path)}, trusted=True)
    out = sweep(base, grid={"n_steps": [8]}, seeds=2, name="wb", storage=tmp_path / "sweeps")
    assert [r["status"] for r in out.table] == ["TERMINATED", "TERMINATED"]
    runs = offline_runs(tmp_path / "wandb")  # read through W&B's own records, once its service has written them all
    assert all(run["finished"] for run in runs), runs
    assert sorted(run["job_type"] for run in runs) == ["", "", "summary"], runs
    trial_runs = [run for run in runs if run["job_type"] != "summary"]
    (summary,) = [run for run in runs if run["job_type"] == "summary"]
    assert summary["name"] == "wb-summary" and summary["group"] == "wb"
    for run in runs:
        assert run["group"] == "wb" and run["tags"] == ["fair_ppo", "sb3_fair/DisparityGame-v0", "sweep:wb"], run
    names = sorted(run["name"] for run in trial_runs)
    assert all(re.fullmatch(r"wb-trainable_[0-9a-f]+_\d+-seed\d", n) for n in names), names
    assert [n[-5:] for n in names] == ["seed0", "seed1"]


def _tampered(path: Path, edit: bool) -> None:
    """``path`` deleted, or edited to say that the sweep is trusted where the trials used to read it: a JSON file's mapping
    and every trial's parameters in it (Ray's experiment state nests each trial's JSON in a string) get
    ``trusted: true``; a pickle becomes one of ``{"trusted": True}``, any other file the text ``{"trusted": true}``."""
    if not edit:
        path.unlink()
        return

    def trusted(node, top=False):
        if isinstance(node, dict):
            out = {k: trusted(v) for k, v in node.items()}
            return {**out, "trusted": True} if top or "base" in node else out
        if isinstance(node, list):
            return [trusted(v) for v in node]
        if isinstance(node, str) and node.lstrip().startswith("{"):
            try:
                return json.dumps(trusted(json.loads(node)))
            except ValueError:
                return node
        return node

    if path.suffix == ".pkl":
        path.write_bytes(pickle.dumps({"trusted": True}))
        return
    try:
        path.write_text(json.dumps(trusted(json.loads(path.read_text()), top=True)))
    except ValueError:  # not JSON (CSV, a plot, JSON lines, an empty file)
        path.write_text('{"trusted": true}')


def test_the_opt_in_is_never_saved_and_a_resume_asks_for_it_again(tmp_path, local_ray, user_code) -> None:
    """Issue 47: a sweep started with trusted=True kept the opt-in in Ray's saved trial configs, and one JSON file beside
    them was the only guard. Now no file holds it: resumed without it, a sweep whose trials name code of the user's is
    refused before any trial runs, whatever was deleted from its folder or edited in it to say trusted: true."""
    from sb3_fair.experiment.sweep import sweep

    module, marker = user_code
    base = ExperimentConfig(algo="ppo", env="CartPole-v1", n_timesteps=16, eval_episodes=1,
                            hyperparams={"policy": "MlpPolicy", "n_steps": 16, "batch_size": 16, "n_epochs": 1})
    storage = tmp_path / "sweeps"
    grid = {"env_wrapper": [f"{module}.MarkWrapper"]}  # imports the user's code, then fails: a resume re-runs it
    with pytest.raises(ValueError, match=r"--trust-config"):
        sweep(base, grid=grid, name="t", storage=storage)
    out = sweep(base.replace(trusted=True), grid=grid, name="t", storage=storage)
    assert [row["status"] for row in out.errors] == ["ERROR"] and "bogus" in out.errors[0]["error"]
    assert marker.exists(), "the trial ran with the opt-in of the call that started it"
    sys.modules.pop(module, None)  # imported here too, trusted, by the check before Ray started
    folder = storage / "t"
    for params in folder.rglob("params.json"):
        assert "trusted" not in json.loads(params.read_text()), "the opt-in is never saved"
    files = sorted(p.relative_to(folder) for p in folder.rglob("*") if p.is_file())
    assert len(files) >= 8 and any(p.name == "tuner.pkl" for p in files) and any(p.name.startswith("experiment_state") for p in files)
    marker.unlink()
    cases = [(f, edit) for f in files for edit in (False, True)] + [(Path("sb3_fair_trust.json"), True)]  # the old guard file
    unreadable = []
    for i, (relative, edit) in enumerate(cases):
        copy = storage / f"c{i}"
        shutil.copytree(folder, copy)
        if (copy / relative).exists():
            _tampered(copy / relative, edit)
        else:
            (copy / relative).write_text('{"trusted": true}')
        with pytest.raises(ValueError, match=r"sweep 'c\d+' cannot be resumed") as refused:
            sweep(base, name=f"c{i}", storage=storage, resume=True)
        message = str(refused.value)
        if "records of its trials" in message:  # Ray cannot restore the sweep at all: nothing runs either
            unreadable.append(str(relative))
        else:
            assert f"'{module}.MarkWrapper' is not in a package a config may name" in message and "--trust-config" in message, (
                relative, message)
        assert not marker.exists() and module not in sys.modules, (relative, edit)
    assert all(name.startswith(("tuner.pkl", "experiment_state")) for name in unreadable), unreadable
    # with the opt-in, given again, the failed trial runs again: the trials take it from the call that resumes them
    out = sweep(base.replace(trusted=True), name="t", storage=storage, resume=True)
    assert [row["status"] for row in out.table] == ["ERROR"] and marker.exists()


def test_every_grid_point_is_built_before_ray_starts(monkeypatch) -> None:
    """Up to MAX_CHECKED_POINTS points, every grid point is checked (built once) before Ray starts; past it, each value."""
    pytest.importorskip("ray")
    from sb3_fair.experiment import sweep as sweep_module, training

    checked = []

    class Stop(Exception):
        pass

    def record(configs):
        checked.append(sorted((c.hyperparams.get("n_steps", 0), c.hyperparams.get("batch_size", 0)) for c in configs))
        raise Stop

    monkeypatch.setattr(training, "check_configs", record)
    base = ExperimentConfig(algo="ppo", env="CartPole-v1", n_timesteps=64)
    grid = {"n_steps": [8, 16], "batch_size": [4, 8]}
    with pytest.raises(Stop):
        sweep_module.sweep(base, grid=grid)
    assert checked[-1] == [(8, 4), (8, 8), (16, 4), (16, 8)]
    monkeypatch.setattr(sweep_module, "MAX_CHECKED_POINTS", 3)
    with pytest.raises(Stop):
        sweep_module.sweep(base, grid=grid)
    assert checked[-1] == [(0, 4), (0, 8), (8, 0), (16, 0)]  # each value alone (0: the entry's own)
