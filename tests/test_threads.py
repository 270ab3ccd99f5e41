"""One torch thread per training process by default (``num_threads``), the caller's own setting restored after."""

from __future__ import annotations

import pytest
import torch as th
from stable_baselines3.common.callbacks import BaseCallback

from sb3_fair.experiment import ExperimentConfig, train
from sb3_fair.experiment.run import torch_threads


class _Threads(BaseCallback):
    """torch's thread count at every step."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: set[int] = set()

    def _on_step(self) -> bool:
        self.seen.add(th.get_num_threads())
        return True


@pytest.fixture
def two_threads():
    previous = th.get_num_threads()
    th.set_num_threads(2)
    yield
    th.set_num_threads(previous)


@pytest.mark.parametrize("num_threads, expected", [(1, 1), (2, 2), (None, 2)])
def test_train_runs_with_num_threads_and_restores_the_callers(two_threads, num_threads, expected) -> None:
    cfg = ExperimentConfig(algo="dqn", env="CartPole-v1", hyperparams={"policy": "MlpPolicy", "learning_starts": 0}, n_timesteps=32,
                           eval_episodes=1, **({} if num_threads == 1 else {"num_threads": num_threads}))
    assert ExperimentConfig(algo="dqn", env="CartPole-v1", n_timesteps=1).num_threads == 1, "the default"
    seen = _Threads()
    train(cfg, callback=seen)
    assert seen.seen == {expected}
    assert th.get_num_threads() == 2, "the caller's setting comes back"


def test_num_threads_is_checked_and_read_from_files_and_the_cli(tmp_path) -> None:
    from sb3_fair import cli

    with pytest.raises(ValueError, match=r"num_threads must be an int >= 1 or None, got 0"):
        ExperimentConfig(algo="dqn", env="CartPole-v1", n_timesteps=1, num_threads=0)
    (tmp_path / "exp.yml").write_text("algo: dqn\nenv: CartPole-v1\nn_timesteps: 8\nnum_threads: 2\n")
    assert ExperimentConfig.from_file(tmp_path / "exp.yml").num_threads == 2
    args = cli.build_parser().parse_args(["train", "--algo", "dqn", "--env", "CartPole-v1", "--timesteps", "8", "--num-threads", "3"])
    assert cli._config_from_args(args).num_threads == 3
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args(["compare", "--num-threads", "0"])


def test_torch_threads_restores_after_an_error(two_threads) -> None:
    with pytest.raises(RuntimeError):
        with torch_threads(1):
            assert th.get_num_threads() == 1
            raise RuntimeError
    assert th.get_num_threads() == 2


def test_runs_side_by_side_give_the_serial_results_seed_for_seed() -> None:
    """train_all with 2 worker processes: the same figures as one run after another in this process."""
    from sb3_fair.experiment.run import train_all

    base = ExperimentConfig.from_hyperparams("fair_dqn", "sb3_fair/DonutAllocation-v0", n_timesteps=300, eval_episodes=2)
    configs = [base.replace(seed=0), base.replace(seed=1, hyperparams={"counterfactual": False}),
               ExperimentConfig(algo="dqn", env="CartPole-v1", hyperparams={"policy": "MlpPolicy", "learning_starts": 0}, n_timesteps=200,
                                eval_episodes=2)]
    started, finished = [], []
    serial = train_all(configs, jobs=1)
    parallel = train_all(configs, jobs=2, on_start=lambda i, c: started.append(i), on_done=lambda i, r: finished.append(i))
    assert [r.evaluation for r in parallel] == [r.evaluation for r in serial]
    assert [r.config for r in parallel] == configs and all(r.model is None for r in parallel) and serial[0].model is not None
    assert started == [0, 1, 2] and sorted(finished) == [0, 1, 2]
    with pytest.raises(ValueError, match="jobs must be an int >= 1, got 0"):
        train_all(configs, jobs=0)


def test_a_failed_run_is_raised_after_the_others_finish() -> None:
    """A run that fails while training is raised after the others have finished; a setting a run's model refuses is
    raised before any run trains (issue 47: every run is built once first)."""
    from sb3_fair.experiment.run import train_all

    good = ExperimentConfig(algo="dqn", env="CartPole-v1", hyperparams={"policy": "MlpPolicy", "learning_starts": 0}, n_timesteps=50,
                            eval_episodes=1)
    diverges = ExperimentConfig(algo="fair_ppo", env="CartPole-v1", n_timesteps=64, eval_episodes=1,
                                hyperparams={"policy": "MlpPolicy", "fairness_coef": 0.0, "n_steps": 32, "batch_size": 32,
                                             "learning_rate": 1.0e30})  # the policy turns NaN at the first update
    done = []
    with pytest.raises(FloatingPointError, match=r"became NaN or inf during training"):
        train_all([diverges, good], jobs=2, on_done=lambda i, r: done.append(i))
    assert done == [1]
    bad = good.replace(hyperparams={"env_kwargs": {"colour": 1}})
    started = []
    with pytest.raises(ValueError, match=r"refused env_kwargs \{'colour': 1\}"):
        train_all([good, bad], jobs=2, on_start=lambda i, c: started.append(i))
    assert started == []


def test_compare_jobs_prints_the_serial_table(capsys) -> None:
    from sb3_fair import cli

    argv = ["compare", "--task", "donut", "--seeds", "1", "--episodes", "3", "--eval-episodes", "1", "--plot", "", "--quiet"]
    cli.main([*argv, "--jobs", "1"])
    serial = capsys.readouterr().out
    cli.main([*argv, "--jobs", "2"])
    parallel = capsys.readouterr().out
    assert "4 runs (4 agents x 1 seeds), 2 at a time" in parallel and "trained FairDQN (FairQCM + shaping), seed 0" in parallel
    rows = lambda out: [line for line in out.splitlines() if line.startswith("│")]  # noqa: E731
    assert rows(parallel) == rows(serial) and len(rows(serial)) == 4
