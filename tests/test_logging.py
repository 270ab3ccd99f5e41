"""fairness/* in SB3's logger (CSV, TensorBoard) and Weights & Biases in offline mode."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from logged_csv import read_csv
from stable_baselines3 import DQN
from stable_baselines3.common.logger import configure

from sb3_fair import FairDQN
from sb3_fair.common.callbacks import FairnessCallback
from sb3_fair.envs import make_donut_allocation, make_loan_applicants
from sb3_fair.wrappers import FairnessMonitor

SMALL = dict(learning_starts=50, buffer_size=1000, batch_size=16, train_freq=4, target_update_interval=100)


def test_plain_dqn_with_callback_logs_fairness_csv(tmp_path):
    model = DQN("MlpPolicy", FairnessMonitor(make_loan_applicants()), **SMALL)
    model.set_logger(configure(str(tmp_path), ["csv"]))
    model.learn(40 * 6, callback=FairnessCallback(), log_interval=2)
    rows = read_csv(tmp_path / "progress.csv")
    assert rows and "fairness/dp_abs" in rows[0] and "rollout/ep_rew_mean" in rows[0]
    assert any(row["fairness/dp_abs"] not in ("", None) for row in rows)
    assert "fairness/group_1_mean" in rows[0]


def test_fair_dqn_logs_fairness_and_counterfactual_rate(tmp_path):
    model = FairDQN("MlpPolicy", make_donut_allocation(), counterfactual=True, tensorboard_log=str(tmp_path / "tb"), **SMALL)
    model.learn(100 * 3, log_interval=1)
    model.set_logger(configure(str(tmp_path / "csv"), ["csv"]))
    model.learn(100 * 3, log_interval=1, reset_num_timesteps=False)
    rows = read_csv(tmp_path / "csv" / "progress.csv")
    last = rows[-1]
    assert float(last["fairness/counterfactuals_per_step"]) > 0
    assert float(last["fairness/log_nash"]) > 0
    assert any(p.name.startswith("events.out.tfevents") for p in (tmp_path / "tb").rglob("*"))


def test_wandb_offline_run_streams_metrics_and_config(tmp_path, monkeypatch):
    wandb = pytest.importorskip("wandb")
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    from wandb.sdk.wandb_run import Run

    logged = []
    original_log = Run.log

    def spy(self, data, *args, **kwargs):
        logged.append((kwargs.get("step"), dict(data)))
        return original_log(self, data, *args, **kwargs)

    monkeypatch.setattr(Run, "log", spy)
    model = FairDQN("MlpPolicy", make_donut_allocation(), counterfactual=True, wandb={"dir": str(tmp_path), "project": "sb3-fair-test"}, **SMALL)
    model.learn(100 * 3, log_interval=1)
    run = model.fairness_callback.wandb_run
    assert run is not None and run.settings.mode == "offline"
    assert run.config["counterfactual"] is True
    assert run.config["memory_kind"] == "full"
    assert run.config["reward_welfare"] == "log_nash"
    # metrics streamed during training, at increasing steps, next to the reward
    fair_steps = [step for step, data in logged if "fairness/log_nash" in data]
    assert len(fair_steps) >= 2 and fair_steps == sorted(fair_steps) and fair_steps[0] < 300
    assert any("rollout/ep_rew_mean" in data and "fairness/counterfactuals_per_step" in data for _, data in logged)
    assert wandb.run is None, "the run FairDQN started is finished when training ends"
    assert list(tmp_path.rglob("*.wandb")), "offline run file was not written"
    # a second model gets its own run
    model2 = FairDQN("MlpPolicy", make_donut_allocation(), wandb={"dir": str(tmp_path), "project": "sb3-fair-test"}, **SMALL)
    model2.learn(200)
    assert model2.fairness_callback.wandb_run.id != run.id


def test_wandb_joins_a_run_the_user_started(tmp_path, monkeypatch):
    wandb = pytest.importorskip("wandb")
    monkeypatch.setenv("WANDB_SILENT", "true")
    user_run = wandb.init(mode="offline", dir=str(tmp_path), project="sb3-fair-test")
    model = FairDQN("MlpPolicy", make_loan_applicants(), wandb=True, **SMALL)
    model.learn(40 * 3)
    assert wandb.run is user_run and user_run.config["counterfactual"] is False
    user_run.finish()


def test_wandb_failure_never_stops_training(tmp_path, monkeypatch):
    wandb = pytest.importorskip("wandb")
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")

    def broken_init(*args, **kwargs):
        raise RuntimeError("no W&B today")

    monkeypatch.setattr(wandb, "init", broken_init)
    model = FairDQN("MlpPolicy", make_donut_allocation(), wandb=True, **SMALL)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.learn(200)
    assert model.num_timesteps == 200
    assert any("Weights & Biases" in str(w.message) for w in caught)


def test_long_term_signals_are_the_rollout_mean_even_when_another_callback_dumps(tmp_path):
    from stable_baselines3.common.callbacks import BaseCallback

    from sb3_fair import FairPPO
    from sb3_fair.envs import DelayedImpactLendingEnv

    class DumpEveryFiveSteps(BaseCallback):  # as SB3's EvalCallback dumps in the middle of a rollout
        def _on_step(self):
            if self.n_calls % 5 == 0:
                self.logger.dump(self.num_timesteps)
            return True

    seen = []

    class Signals(BaseCallback):
        def _on_step(self):
            seen.append(self.locals["infos"][0]["short_term_fairness"])
            return True

    model = FairPPO("MlpPolicy", DelayedImpactLendingEnv(horizon=40), n_steps=16, batch_size=16, n_epochs=1, seed=0,
                    fairness_coef=0.0)
    model.set_logger(configure(str(tmp_path), ["csv"]))
    model.learn(16, callback=[DumpEveryFiveSteps(), Signals()])
    model.logger.close()
    rows = [row for row in read_csv(tmp_path / "progress.csv") if row.get("fairness/short_term")]
    assert len(rows) == 1 and float(rows[0]["fairness/short_term"]) == pytest.approx(np.mean(seen))
