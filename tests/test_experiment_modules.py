"""``sb3_fair.experiment`` by idea (issue 48): each module holds what its docstring says, the names of the 0.4.0
``run`` module still import from there, and the comparison's statistics (``compare.py``) on hand-made results."""

from __future__ import annotations

import importlib
import math
import pickle
import re
from types import SimpleNamespace

import pytest

import sb3_fair.experiment as experiment
from sb3_fair.experiment.compare import (
    CompareTask,
    Comparison,
    Run,
    absent_figures,
    compare_runs,
    log_comparison,
    seed_figures,
    seed_statistics,
)

#: module -> the names it defines (not imports)
HOMES = {
    "sb3_fair.experiment.build": ("build_model", "RESERVED_KEYS", "_vec_normalize", "_action_noise", "_zoo_callbacks"),
    "sb3_fair.experiment.evaluation": ("evaluate", "evaluate_saved", "_evaluate", "_NormalizedPredictor"),
    "sb3_fair.experiment.persistence": (
        "save",
        "load_model",
        "saved_config_path",
        "saved_vecnormalize_path",
        "checkpoint_folder",
        "checkpoints_in",
        "run_lock_path",
        "check_run_files",
        "_resume",
    ),
    "sb3_fair.experiment.training": ("train", "train_all", "check_configs", "torch_threads", "ExperimentResult"),
    "sb3_fair.experiment.files": ("check_output_path", "existing_ancestor", "atomic_path", "RunLock"),
    "sb3_fair.experiment.compare": ("compare_runs", "seed_figures", "seed_statistics", "log_comparison", "Comparison"),
}
#: the public names of sb3_fair.experiment.run in 0.4.0 (its __all__, and the public constants and helpers beside it)
RUN_NAMES = (
    "CONFIG_SUFFIX",
    "ExperimentResult",
    "build_model",
    "check_configs",
    "check_output_path",
    "check_run_files",
    "checkpoint_folder",
    "checkpoints_in",
    "evaluate",
    "existing_ancestor",
    "load_model",
    "run_lock_path",
    "save",
    "saved_config_path",
    "torch_threads",
    "train",
    "train_all",
    "RESERVED_KEYS",
    "RUN_IDENTITY",
    "VECNORMALIZE_SUFFIX",
    "saved_vecnormalize_path",
)


@pytest.mark.parametrize("module", sorted(HOMES))
def test_each_module_defines_what_it_holds(module) -> None:
    mod = importlib.import_module(module)
    for name in HOMES[module]:
        obj = getattr(mod, name)
        if callable(obj) and hasattr(obj, "__module__"):
            assert obj.__module__ == module, f"{module}.{name} is defined in {obj.__module__}"
    for name in getattr(mod, "__all__", ()):
        assert hasattr(mod, name), f"{module}.__all__ names {name!r}, which it does not hold"
    # every name its docstring refers to without a module path is one of its own
    local = set(re.findall(r":(?:func|class|data|attr|meth):`([A-Za-z_][A-Za-z0-9_]*)`", mod.__doc__ or ""))
    assert {name for name in local if not hasattr(mod, name)} == set(), mod.__doc__


def test_the_package_exports_the_same_names_from_the_new_modules() -> None:
    from sb3_fair.experiment import build, evaluation, persistence, training

    assert sorted(experiment.__all__) == sorted(
        [
            "ALGOS",
            "MULTIAGENT_ENVS",
            "ExperimentConfig",
            "ExperimentResult",
            "algo_names",
            "apply_overrides",
            "build_model",
            "canonical_algo",
            "evaluate",
            "get_algo_class",
            "load_model",
            "make_env",
            "register_multiagent_env",
            "train",
        ]
    )
    assert experiment.train is training.train and experiment.ExperimentResult is training.ExperimentResult
    assert experiment.build_model is build.build_model and experiment.evaluate is evaluation.evaluate
    assert experiment.load_model is persistence.load_model


@pytest.mark.parametrize("name", RUN_NAMES)
def test_the_names_of_run_still_import_from_it_as_the_same_objects(name) -> None:
    from sb3_fair.experiment import run

    homes = [module for module in HOMES if hasattr(importlib.import_module(module), name)]
    assert name in run.__all__ and homes, name
    assert all(getattr(run, name) is getattr(importlib.import_module(module), name) for module in homes)
    assert experiment.run is run  # still an attribute of the package


def test_an_object_pickled_under_the_old_run_path_loads() -> None:
    """A pickle naming sb3_fair.experiment.run.<class or function> (0.4.0's paths) finds today's object."""
    from sb3_fair.experiment.training import ExperimentResult, train

    for name, expected in (("ExperimentResult", ExperimentResult), ("train", train)):
        assert pickle.loads(f"csb3_fair.experiment.run\n{name}\n.".encode()) is expected
    assert ExperimentResult.__module__ == "sb3_fair.experiment.training"


# ------------------------------------------------------------------------------- the comparison's statistics
TASK = CompareTask(
    name="mine",
    algo="fair_ppo",
    env="sb3_fair/DisparityGame-v0",
    figures=["episode_reward", "dp_norm", "pof_group_0", "pof_group_1", "gini"],
    runs={"PPO": Run(baseline=True), "FairPPO": Run()},
    absolute=["dp_norm"],
    price_of_fairness=True,
)


def _result(reward: float, dp_norm: float, g0: float, g1: float, step: int) -> SimpleNamespace:
    return SimpleNamespace(
        evaluation={"episode_reward": reward, "dp_norm": dp_norm},
        table={0: {"mean_return": g0}, 1: {"mean_return": g1}},
        curve=[(step, {"episode_reward": reward})],
        returns=None,
    )


RUNS = [
    (seed, name, SimpleNamespace(algo=algo))
    for seed in (0, 1)
    for name, algo in (("PPO", "ppo"), ("FairPPO", "fair_ppo"))
]
RESULTS = [
    _result(30.0, -0.2, 10.0, 20.0, 1),  # seed 0, PPO
    _result(31.0, -0.1, 9.0, 22.0, 2),  # seed 0, FairPPO: -10 % for group 0, +10 % for group 1
    _result(10.0, 0.4, 4.0, 5.0, 3),  # seed 1, PPO
    _result(10.0, 0.1, 5.0, 5.0, 4),  # seed 1, FairPPO: +25 %, 0 %
]


def test_seed_figures_take_absolute_values_and_the_price_of_fairness_against_the_seeds_baseline() -> None:
    per_seed, curves, returns = seed_figures(TASK, RUNS, RESULTS)
    assert list(per_seed) == ["PPO", "FairPPO"]
    assert per_seed["PPO"] == [
        {"episode_reward": 30.0, "dp_norm": 0.2, "pof_group_0": 0.0, "pof_group_1": 0.0},
        {"episode_reward": 10.0, "dp_norm": 0.4, "pof_group_0": 0.0, "pof_group_1": 0.0},
    ]
    fair = per_seed["FairPPO"]
    assert [r["dp_norm"] for r in fair] == [0.1, 0.1]
    assert [r["pof_group_0"] for r in fair] == pytest.approx([-10.0, 25.0])
    assert [r["pof_group_1"] for r in fair] == pytest.approx([10.0, 0.0])
    assert curves == {
        "PPO": [[(1, {"episode_reward": 30.0})], [(3, {"episode_reward": 10.0})]],
        "FairPPO": [[(2, {"episode_reward": 31.0})], [(4, {"episode_reward": 10.0})]],
    }
    assert returns == {"PPO": [None, None], "FairPPO": [None, None]}
    # without the price of fairness: no pof figures; the results themselves are left as they were
    plain = CompareTask(**{**TASK.__dict__, "price_of_fairness": False, "absolute": []})
    rows, _, _ = seed_figures(plain, RUNS, RESULTS)
    assert rows["PPO"][0] == {"episode_reward": 30.0, "dp_norm": -0.2} and RESULTS[0].evaluation["dp_norm"] == -0.2


def test_seed_statistics_are_the_mean_and_sd_over_the_seeds_with_nan_for_a_figure_no_run_reported() -> None:
    per_seed, _, _ = seed_figures(TASK, RUNS, RESULTS)
    table, spread = seed_statistics(per_seed, TASK.figures)
    assert table["PPO"]["episode_reward"] == 20.0 and spread["PPO"]["episode_reward"] == 10.0
    assert table["FairPPO"]["episode_reward"] == 20.5 and spread["FairPPO"]["episode_reward"] == 10.5
    assert table["PPO"]["dp_norm"] == pytest.approx(0.3) and spread["PPO"]["dp_norm"] == pytest.approx(0.1)
    fair, fair_sd = table["FairPPO"], spread["FairPPO"]
    assert (fair["pof_group_0"], fair_sd["pof_group_0"]) == pytest.approx((7.5, 17.5))  # -10 % and +25 %
    assert (fair["pof_group_1"], fair_sd["pof_group_1"]) == pytest.approx((5.0, 5.0))  # +10 % and 0 %
    assert math.isnan(table["PPO"]["gini"]) and math.isnan(spread["FairPPO"]["gini"])
    assert absent_figures(per_seed, TASK.figures) == ["gini"]


def test_compare_runs_trains_through_train_all_and_gathers_the_statistics(monkeypatch) -> None:
    from sb3_fair.experiment import training

    calls = []

    def fake_train_all(configs, jobs=1, on_start=None, on_done=None):
        calls.append((configs, jobs, on_start, on_done))
        return RESULTS

    monkeypatch.setattr(training, "train_all", fake_train_all)
    start, done = (lambda i, c: None), (lambda i, r: None)
    comparison = compare_runs(TASK, RUNS, jobs=3, on_start=start, on_done=done)
    assert calls == [([c for _, _, c in RUNS], 3, start, done)]
    assert comparison.results == RESULTS and comparison.runs == RUNS
    assert comparison.per_seed == seed_figures(TASK, RUNS, RESULTS)[0]
    assert comparison.table["FairPPO"]["pof_group_0"] == pytest.approx(7.5) and comparison.absent == ["gini"]
    assert comparison.spread["PPO"]["episode_reward"] == 10.0


def test_log_comparison_logs_the_table_of_means_and_sds_with_the_plot(monkeypatch) -> None:
    from sb3_fair.common import wandb_logging

    logged = []
    monkeypatch.setattr(wandb_logging, "log_summary_run", lambda *a, **k: logged.append((a, k)))
    per_seed, curves, returns = seed_figures(TASK, RUNS, RESULTS)
    table, spread = seed_statistics(per_seed, ["episode_reward"])
    one = CompareTask(**{**TASK.__dict__, "figures": ["episode_reward"]})
    comparison = Comparison(one, RUNS, RESULTS, per_seed, curves, returns, table, spread)
    log_comparison(comparison, "compare-mine-summary", "compare-mine", {"task": "mine"}, plot="p.png")
    ((args, kwargs),) = logged
    assert args == ("compare-mine-summary", "compare-mine", {"task": "mine"})
    assert kwargs["images"] == {"compare/plot": "p.png"}
    assert kwargs["tables"] == {
        "compare/table": (
            ["method", "episode_reward", "episode_reward_sd"],
            [["PPO", 20.0, 10.0], ["FairPPO", 20.5, 10.5]],
        )
    }


def test_a_name_set_on_run_is_set_where_the_runner_calls_it(monkeypatch) -> None:
    """``run.save = ...`` (or a monkeypatch of it) reaches the runner, as when run.py held it; undone, all is back."""
    from sb3_fair.experiment import build, persistence, run, training

    real_save, real_build = persistence.save, build.build_model

    def replacement(*args, **kwargs):
        raise OSError("replaced")

    monkeypatch.setattr(run, "save", replacement)
    monkeypatch.setattr(run, "build_model", replacement)
    assert run.save is training.save is persistence.save is replacement
    assert run.build_model is build.build_model is training.build_model is persistence.build_model is replacement
    monkeypatch.undo()
    assert run.save is training.save is persistence.save is real_save
    assert run.build_model is build.build_model is training.build_model is persistence.build_model is real_build
