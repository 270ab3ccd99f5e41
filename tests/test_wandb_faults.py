"""Weights & Biases never loses or mixes data (issue 11 §4): the real ``wandb`` package, offline, with failures injected."""

from __future__ import annotations

import warnings

import pytest
from logged_csv import read_csv
from stable_baselines3.common.logger import configure

from sb3_fair import FairDQN
from sb3_fair.common import logging as fair_logging
from sb3_fair.envs import make_donut_allocation

wandb = pytest.importorskip("wandb")

SMALL = dict(learning_starts=50, buffer_size=1000, batch_size=16, train_freq=4, target_update_interval=100)


@pytest.fixture(autouse=True)
def _offline(monkeypatch, tmp_path):
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path))
    monkeypatch.setattr(fair_logging, "_ONLINE_FAILED", False)
    yield
    if wandb.run is not None:
        wandb.run.finish()


def _record_logs(run, monkeypatch, fail: "callable[[int], bool]" = lambda i: False) -> list[tuple[int, dict]]:
    """Wrap ``run.log``: record (step, data) of every call that succeeds; calls for which ``fail(i)`` raise."""
    sent, calls, original = [], [0], run.log

    def log(data, step=None, **kwargs):
        i = calls[0]
        calls[0] += 1
        if fail(i):
            raise ConnectionError(f"injected failure {i}")
        sent.append((step, dict(data)))
        return original(data, step=step, **kwargs)

    monkeypatch.setattr(run, "log", log)
    return sent


def test_two_learn_calls_on_a_user_run_keep_steps_monotonic(tmp_path, monkeypatch):
    """The second learn() restarts num_timesteps at 0: its dumps go after the first call's, none dropped or overwritten."""
    run = wandb.init(mode="offline", dir=str(tmp_path), project="sb3-fair-test")
    sent = _record_logs(run, monkeypatch)
    model = FairDQN("MlpPolicy", make_donut_allocation(), wandb=True, **SMALL)
    model.learn(300, log_interval=1)
    first = [step for step, _ in sent]
    model.learn(300, log_interval=1)  # reset_num_timesteps=True
    second = [step for step, _ in sent][len(first):]
    assert first and second
    assert first == sorted(first) and second == sorted(second)
    assert min(second) > max(first), "the second call must log after the first one's last step"
    assert run.step >= max(second)
    assert wandb.run is run, "a run the user started is left open"


def test_continued_learning_keeps_its_own_steps(tmp_path, monkeypatch):
    run = wandb.init(mode="offline", dir=str(tmp_path), project="sb3-fair-test")
    sent = _record_logs(run, monkeypatch)
    model = FairDQN("MlpPolicy", make_donut_allocation(), wandb=True, **SMALL)
    model.learn(300, log_interval=1)
    model.learn(300, log_interval=1, reset_num_timesteps=False)
    steps = [step for step, _ in sent]
    assert steps == sorted(steps) and max(steps) == model.num_timesteps == 600  # no offset when counting goes on


def _train_beside_csv(tmp_path, monkeypatch, fail) -> tuple:
    """FairDQN on a user's offline run whose ``run.log`` fails as ``fail`` says, with a CSV logger beside W&B.

    :return: the dumps W&B accepted, the model, the CSV rows and the warnings raised.
    """
    run = wandb.init(mode="offline", dir=str(tmp_path), project="sb3-fair-test")
    sent = _record_logs(run, monkeypatch, fail=fail)
    model = FairDQN("MlpPolicy", make_donut_allocation(), wandb=True, **SMALL)
    model.set_logger(configure(str(tmp_path / "csv"), ["csv"]))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.learn(600, log_interval=1)
    return sent, model, read_csv(tmp_path / "csv" / "progress.csv"), caught


def test_transient_log_failures_are_retried_and_nothing_is_lost(tmp_path, monkeypatch):
    sent, model, rows, caught = _train_beside_csv(tmp_path, monkeypatch, fail=lambda i: i in (1, 2, 4))
    output_report = model.fairness_callback.wandb_report
    assert output_report is not None and "3 failed run.log call(s)" in output_report and "0 lost" in output_report
    # every dump reached W&B once, in order, with the CSV's values
    steps = [step for step, _ in sent]
    assert steps == sorted(steps)
    assert len(sent) == len(rows), "one W&B dump per CSV row"
    for (_, data), row in zip(sent, rows):  # the same dumps, in the same order
        assert {k for k, v in row.items() if v not in ("", None)} == set(data)
        if row["time/total_timesteps"]:
            assert data["time/total_timesteps"] == float(row["time/total_timesteps"])
    assert sum("retried" in str(w.message) for w in caught) == 1, "the first failure is warned once"


def test_permanent_failure_is_counted_and_reported_and_csv_is_untouched(tmp_path, monkeypatch):
    _, model, rows, caught = _train_beside_csv(tmp_path, monkeypatch, fail=lambda i: i >= 2)
    assert model.num_timesteps == 600 and len(rows) >= 5
    report = model.fairness_callback.wandb_report
    assert report and f"{len(rows) - 2} lost" in report
    assert any(str(w.message) == report for w in caught), "the summary is warned at the end of training"


def test_failing_finish_is_reported_not_swallowed(tmp_path, monkeypatch):
    model = FairDQN("MlpPolicy", make_donut_allocation(), wandb={"dir": str(tmp_path), "project": "sb3-fair-test"}, **SMALL)
    from wandb.sdk.wandb_run import Run

    original = Run.finish

    def broken_finish(self, *args, **kwargs):
        original(self, *args, **kwargs)
        raise OSError("disk full")

    monkeypatch.setattr(Run, "finish", broken_finish)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.learn(200)
    assert model.num_timesteps == 200
    assert any("could not finish the run" in str(w.message) and "disk full" in str(w.message) for w in caught)


def test_online_start_without_network_falls_back_offline_once(tmp_path, monkeypatch):
    """An API key but no network: the online init is bounded, the run goes offline, and later runs skip the wait."""
    monkeypatch.setenv("WANDB_MODE", "online")
    real_init, attempts = wandb.init, []

    def init(*args, **kwargs):
        attempts.append((kwargs.get("mode"), kwargs.get("settings")))
        if kwargs.get("mode") == "online":
            raise TimeoutError("wandb.init timed out")  # what W&B raises once init_timeout has passed
        return real_init(*args, **kwargs)

    monkeypatch.setattr(wandb, "init", init)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):
            model = FairDQN("MlpPolicy", make_donut_allocation(), wandb={"dir": str(tmp_path)}, **SMALL)
            model.learn(100)
    modes = [mode for mode, _ in attempts]
    assert modes == ["online", "offline", "offline"], "the second model does not try online again"
    assert attempts[0][1].init_timeout == fair_logging.WANDB_INIT_TIMEOUT
    assert sum("logging offline" in str(w.message) for w in caught) == 1, "said once"
    assert list(tmp_path.rglob("*.wandb")), "the offline runs were written"
