"""``python benchmarks/fairqcm.py`` (FairQCM, Alamdari et al. 2024): the configs its runs train, and a
``--quick`` smoke run of the whole pipeline (train -> greedy evaluation -> RESULTS.md section -> PNGs)."""

from __future__ import annotations

import json

import pytest

import fairqcm as benchmark
import runner
from sb3_fair.experiment import build_model

#: a run's spec (the runner's trial) and its result; its training time is in the record's sidecar
SPEC_KEYS = {"task", "method", "seed", "episodes", "learning_rate", "eval_every", "eval_episodes"}
RESULT_KEYS = {"learning_rate", "curve", "train_returns", "per_episode", "counterfactuals", "config"}


def stems(folder):
    """The records' names in a results folder without their trial ids' hash (sidecars and other files left out)."""
    return sorted(p.name.rsplit("-", 1)[0] for p in folder.glob("*.json") if runner.RECORD_NAME.search(p.name))


def job(task: str, method: str, **extra):
    return {**dict(task=task, method=method, seed=0, episodes=2, learning_rate=None, eval_every=1, eval_episodes=1), **extra}


@pytest.mark.parametrize("task,method", [(t, m) for t, ms in benchmark.TASK_METHODS.items() for m in ms])
def test_job_config_is_the_paper_preset_with_the_methods_memory(task, method):
    spec = benchmark.TASK_METHODS[task][method]
    cfg = benchmark.job_config(job(task, method))
    assert cfg.algo == "fair_dqn" and cfg.env == benchmark.ENV_IDS[task]
    assert cfg.variant == spec["variant"] and cfg.hyperparams["counterfactual"] is spec["counterfactual"]
    assert cfg.hyperparams["env_kwargs"] == {"memory": spec["memory"]}
    assert cfg.n_timesteps == 2 * benchmark.HORIZON[task] and cfg.eval_episodes == 0
    assert cfg.hyperparams["learning_rate"] == 1e-4
    assert benchmark.job_config(job(task, method, learning_rate=3e-4)).hyperparams["learning_rate"] == 3e-4


def test_the_control_differs_from_fairqcm_by_the_counterfactuals_alone():
    """FairQCM-noCF: FairQCM's preset and memory (buffer, batch, learning_starts of ``paper_fairqcm``), without
    counterfactual transitions, and without the counterfactual settings it would not use (no warning)."""
    import warnings

    for task in benchmark.TASK_METHODS:
        fair = benchmark.job_config(job(task, "FairQCM")).hyperparams
        control = benchmark.job_config(job(task, "FairQCM-noCF")).hyperparams
        differ = {k for k in set(fair) | set(control) if fair.get(k) != control.get(k)}
        assert fair["counterfactual"] is True and control["counterfactual"] is False
        assert differ <= {"counterfactual", "counterfactual_offsets", "max_counterfactuals"}
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            model = build_model(benchmark.job_config(job(task, "FairQCM-noCF")))
        assert not model.counterfactual and model.batch_size == fair["batch_size"] and model.buffer_size == fair["buffer_size"]


def test_gaussian_lending_task_is_a3s_env_with_the_lending_presets():
    """A.3 keeps section 6.2's baselines: the same presets and methods, on the env with Gaussian credit changes."""
    assert benchmark.TASK_METHODS["lending_gaussian"] == benchmark.LENDING_METHODS
    for method in benchmark.LENDING_METHODS:
        gaussian = benchmark.job_config(job("lending_gaussian", method))
        fixed = benchmark.job_config(job("lending", method))
        assert gaussian.env == "sb3_fair/LoanApplicantsGaussian-v0" and gaussian.hyperparams == fixed.hyperparams
        env = build_model(gaussian).get_env().envs[0]
        assert env.unwrapped.credit_change == "gaussian"
    assert benchmark.make_env("lending_gaussian", "full").unwrapped.credit_change == "gaussian"
    assert benchmark.make_env("lending", "full").unwrapped.credit_change == "fixed"
    # the main text's case studies and the appendix's each have their section
    assert benchmark.SECTIONS[benchmark.MAIN_SECTION] == ("donut", "lending")
    assert sorted(t for ts in benchmark.SECTIONS.values() for t in ts) == sorted(benchmark.TASK_METHODS)


def test_ablation_configs():
    names = list(benchmark.ABLATIONS)
    both = benchmark.job_config(job("donut", "DQN-Full", ablation=names[0]))
    assert both.hyperparams["env_wrapper"] == benchmark.TERMINAL_HORIZON
    assert both.hyperparams["policy_kwargs"] == {"net_arch": [32, 16, 8], "ortho_init": False}
    init_only = benchmark.job_config(job("donut", "DQN-Full", ablation=names[2]))
    assert "env_wrapper" not in init_only.hyperparams
    decay = benchmark.job_config(job("donut", "FairQCM", ablation=names[3]))
    assert decay.hyperparams["exploration_decay"] == 0.999 and decay.hyperparams["policy_kwargs"]["ortho_init"] is True
    model = build_model(both)
    env = model.get_env()
    assert "TerminalHorizon" in repr(env.envs[0])
    env.reset()
    for _ in range(benchmark.HORIZON["donut"]):
        _, _, dones, infos = env.step([0])
    assert dones[0] and not infos[0]["TimeLimit.truncated"]  # the horizon reported as terminated, as in 0.1.0


def test_paired_table_pairs_seeds_by_number():
    """FairQCM − each baseline per seed: known differences give the count, the mean and the sd; a seed only one
    method has is left out."""
    def record(method, seed, score):
        return {"method": method, "seed": seed, "curve": [[e, score] for e in range(20, 1001, 20)]}

    results = [record("FairQCM", 0, 10.0), record("FairQCM", 1, 20.0), record("FairQCM", 2, 30.0), record("FairQCM", 3, 0.0),
               record("DQN-Min", 0, 9.0), record("DQN-Min", 1, 17.0), record("DQN-Min", 2, 35.0)]
    lines = benchmark.paired(results, "FairQCM", ["DQN-Full", "DQN-Min"])
    assert lines[0].startswith("| FairQCM − | seeds | whole curve | episodes 1–")
    assert len(lines) == 3  # DQN-Full has no runs: no row
    cells = [c.strip() for c in lines[2].strip("|").split("|")]
    assert cells[:2] == ["DQN-Min", "3"]
    # differences +1, +3, -5 in every window: mean -0.3, sd 4.2
    assert all(c.startswith("higher in 2/3; -0.3 ± 4.2 (n = 3; paired t p = ") for c in cells[2:])
    assert len(cells) == 2 + 1 + len(benchmark.WINDOWS)
    assert benchmark.paired(results, "FairQCM", ["DQN-Full"]) == []


def test_versus_authors_only_compares_both_fairqcms_with_the_authors_rnn():
    """The paper's RNN, run with the authors' code only: FairQCM's runs (sb3-fair's and the authors' code's) against
    it, per window, with Mann-Whitney U; no RNN figures, no table."""
    block = 20
    results = [{"method": "FairQCM", "seed": s, "curve": [[e, 1000.0 + s] for e in range(block, 1001, block)]} for s in range(3)]
    results.append({"method": "DQN-Full", "seed": 0, "curve": [[e, 0.0] for e in range(block, 1001, block)]})
    authors = {"FairQCM": [[900.0 + s] * 50 for s in range(3)], "RNN": [[500.0 + s] * 50 for s in range(3)]}
    lines = benchmark.versus_authors_only(results, authors, block)
    assert lines[0].startswith("| FairQCM, from | against (authors' code) | seeds | whole curve: FairQCM / it (p) |")
    assert len(lines) == 4
    ours, theirs = ([c.strip() for c in line.strip("|").split("|")] for line in lines[2:])
    # 3 against 3 seeds, every FairQCM seed above every RNN seed: exact two-sided Mann-Whitney p = 2 / C(6, 3) = 0.10
    assert ours[:4] == ["sb3-fair", "RNN", "3 / 3", "1001.0 ± 0.8 / 501.0 ± 0.8 (0.10)"]
    assert theirs[:4] == ["the authors' code", "RNN", "3 / 3", "901.0 ± 0.8 / 501.0 ± 0.8 (0.10)"]
    assert len(ours) == 3 + 1 + len(benchmark.WINDOWS)
    assert benchmark.versus_authors_only(results, {"FairQCM": authors["FairQCM"]}, block) == []


@pytest.mark.slow
def test_quick_run_writes_the_section_pngs_and_records(tmp_path, monkeypatch):
    out, cwd = tmp_path / "out_dir", tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    benchmark.main(["--quick", "--out", str(out)])

    assert not any(cwd.iterdir()), "a --quick run wrote outside --out"
    assert sorted(p.name for p in out.iterdir()) == ["RESULTS.md", "results"]  # the records: <out>/results by default
    text = (out / "RESULTS.md").read_text()
    assert "## FairQCM (Alamdari et al. 2024), smoke run: `python benchmarks/fairqcm.py --quick`" in text
    for heading in ("### Doughnut allocation (Fig. 2)", "### Simulated lending (Fig. 3)", "### Throughput"):
        assert heading in text
    assert text.count("| 1 target-network episode after each (the authors' protocol) |") == 2  # one table per task
    assert text.count("| FairQCM − | seeds | whole curve |") == 2  # the paired tests, one table per task
    runs = out / "results" / "fairqcm" / "quick"
    for task in ("donut", "lending"):
        png = runs / f"fairqcm_{task}.png"
        assert png.stat().st_size > 0
        assert f"![{task}](results/fairqcm/quick/fairqcm_{task}.png)" in text
    assert not list(out.glob("*.png")), "a --quick run must not replace the real PNGs beside RESULTS.md"

    saved = runner.load(out / "results", "fairqcm/quick")
    records = {(r["spec"]["task"], r["spec"]["method"]): {**r["spec"], **r["result"], **r["meta"]} for r in saved}
    assert set(records) == {("donut", m) for m in benchmark.DONUT_METHODS} | {("lending", m) for m in benchmark.LENDING_METHODS}
    for one in saved:
        assert set(one) == {"id", "spec", "result", "meta"} and set(one["spec"]) == SPEC_KEYS
        assert set(one["result"]) == RESULT_KEYS and one["id"] == runner.trial_id(one["spec"], benchmark.job_name(one["spec"]))
        assert one["meta"]["runner"] == "ray (local)"  # the default: a local Ray
    for (task, method), r in records.items():
        episodes = benchmark.QUICK_EPISODES[task]
        assert r["episodes"] == episodes and len(r["train_returns"]) == episodes
        assert [n for n, _ in r["curve"]] == list(range(3, episodes + 1, 3))
        # the authors' evaluation (target network) and the online network's, one greedy episode after each training one
        assert {k: len(v) for k, v in r["per_episode"].items()} == {"target": episodes, "online": episodes}
        assert r["learning_rate"] == 1e-4 and r["seconds"] > 0
        assert (r["counterfactuals"] > 0) == (method == "FairQCM")
        spec = (benchmark.DONUT_METHODS if task == "donut" else benchmark.LENDING_METHODS)[method]
        assert r["config"]["hyperparams"]["env_kwargs"] == {"memory": spec["memory"]}
        assert r["config"]["n_timesteps"] == episodes * benchmark.HORIZON[task]
    tp = json.loads((runs / "throughput.json").read_text())
    assert tp["dqn_steps_per_s"] > 0 and tp["fairdqn_cf_steps_per_s"] > 0


def test_authors_target_sync_copies_before_gradient_steps_0_interval_2interval():
    """The ablation's target copies follow the authors' count (gradient steps from the first), SB3's own are off."""
    name = [n for n, a in benchmark.ABLATIONS.items() if a.get("authors_target")]
    assert len(name) == 1
    cfg = benchmark.job_config(job("donut", "DQN-Full", ablation=name[0]))
    assert cfg.hyperparams["target_update_interval"] == benchmark.NEVER
    model = build_model(cfg.replace(n_timesteps=700))
    sync = benchmark.AuthorsTargetSync(100)
    copied_at = []

    class Spy(benchmark.BaseCallback):
        def _on_step(self) -> bool:
            before = sync.copies
            sync.on_step()
            if sync.copies > before:
                copied_at.append(self.model.num_timesteps)
            return True

    sync.init_callback(model)
    model.learn(700, callback=Spy())
    # learning_starts 400: gradient step k follows env step 401 + k; copies before k = 0, 100, 200
    assert model.learning_starts == 400 and copied_at == [401, 501, 601]
    import torch as th

    online, target = model.q_net.state_dict(), model.q_net_target.state_dict()
    assert any(not th.equal(online[k], target[k]) for k in online)  # trained since the last copy (env step 601)


def test_reinit_q_network_draws_other_weights_and_leaves_the_run_streams_alone():
    """The factor 'another initial network': other orthogonal weights, the target a copy, torch's stream untouched."""
    import torch as th

    name = benchmark.FACTORS["the Q-network drawn from another seed"]
    assert benchmark.ABLATIONS[name]["init_seed_offset"] == 1000
    cfg = benchmark.job_config(job("donut", "DQN-Full", ablation=name))
    assert cfg.hyperparams["policy_kwargs"]["ortho_init"] is True  # the preset otherwise
    model = build_model(cfg)
    before = [p.detach().clone() for p in model.q_net.parameters()]
    state = th.random.get_rng_state()
    reinit = benchmark.ReinitQNetwork(1000)
    reinit.init_callback(model)
    reinit.on_training_start({}, {})
    after = list(model.q_net.parameters())
    assert not all(th.equal(a, b) for a, b in zip(before, after))
    assert all(th.equal(a, b) for a, b in zip(after, model.q_net_target.parameters()))
    assert th.equal(th.random.get_rng_state(), state)
    # the same seed draws the same weights; orthogonal rows (gain 1) and zero biases, as ortho_init
    again, same = build_model(cfg), benchmark.ReinitQNetwork(1000)
    same.init_callback(again)
    same.on_training_start({}, {})
    assert all(th.equal(a, b) for a, b in zip(after, again.q_net.parameters()))
    first = next(m for m in model.q_net.modules() if isinstance(m, th.nn.Linear))
    w = first.weight.detach()
    assert th.allclose(w @ w.T, th.eye(w.shape[0]), atol=1e-5) and not first.bias.detach().any()


def test_factors_and_ablation_run_the_doughnut_task_only(capsys):
    for flags in (["--factors", "--tasks", "lending"], ["--ablation", "--tasks", "donut", "lending"],
                  ["--factors", "--ablation"]):
        with pytest.raises(SystemExit):
            benchmark.main([*flags, "--no-train"])
    assert "doughnut task only" in capsys.readouterr().err


@pytest.mark.slow
def test_quick_factors_run_writes_both_tables(tmp_path):
    out = tmp_path / "out_dir"
    benchmark.main(["--factors", "--quick", "--workers", "1", "--local", "--out", str(out)])
    text = (out / "RESULTS.md").read_text()
    assert "## FairQCM's stuck seeds, one factor at a time, smoke run: `python benchmarks/fairqcm.py --factors --quick`" in text
    for evaluation in benchmark.EVALUATIONS:
        assert f"| DQN-Full | {evaluation} | 1 |" in text
    for variant in ("the preset", *benchmark.FACTORS):
        assert f"| DQN-Full | {variant} | 1 |" in text
    names = stems(out / "results" / "fairqcm" / "quick")
    assert "donut_DQN-Full_0_lr0.0001" in names
    assert len([n for n in names if n.startswith("donut_DQN-Full_0_lr0.0001_ablation")]) == len(benchmark.FACTORS)


def test_ablation_leaves_out_the_factor_only_row_and_factors_refuse_other_records(tmp_path):
    assert benchmark.FACTORS["the Q-network drawn from another seed"] not in benchmark.ABLATION_ROWS
    assert benchmark.FACTORS["target copied as the authors' code counts"] in benchmark.ABLATION_ROWS
    # a main-run record trained with other settings is never shadowed by --factors' run of the same name
    spec = job("donut", "DQN-Full", episodes=300, eval_every=20, eval_episodes=5)
    tid = runner.trial_id(spec, benchmark.job_name(spec))
    path = runner.record_path(tmp_path / "results", "fairqcm", tid)
    runner.write_once(path, {"id": tid, "spec": spec, "result": {"learning_rate": 1e-4, "per_episode": {}}})
    before = path.read_bytes()
    with pytest.raises(SystemExit, match="trained with other settings"):
        benchmark.main(["--factors", "--seeds", "1", "--no-train", "--out", str(tmp_path)])
    assert path.read_bytes() == before


def test_factors_with_other_methods_write_their_own_section(tmp_path):
    """--factors --methods FairQCM once replaced the DQN-Full section (the key was the title alone): each command's
    section is now kept, and a second call replaces only its own."""
    results = tmp_path / "RESULTS.md"
    default = "## FairQCM's stuck seeds, one factor at a time: `python benchmarks/fairqcm.py --factors --seeds 1`"
    results.write_text(f"# Benchmark results\n\n{default}\n\nDQN-Full's tables.\n")
    for _ in range(2):
        benchmark.main(["--factors", "--seeds", "1", "--methods", "FairQCM", "--no-train", "--out", str(tmp_path)])
    text = results.read_text()
    assert f"{default}\n\nDQN-Full's tables." in text
    mine = "## FairQCM's stuck seeds, one factor at a time: `python benchmarks/fairqcm.py --factors --seeds 1 --methods FairQCM`"
    assert text.count(mine) == 1 and text.index(default) < text.index(mine)


@pytest.mark.slow
def test_quick_gaussian_run_writes_its_own_section_and_leaves_the_main_one(tmp_path):
    """``--tasks lending_gaussian`` (A.3) trains the lending methods on the Gaussian env and writes a section of its
    own: the main section (Figs. 2-3, with the throughput) already in RESULTS.md stays as it was."""
    out = tmp_path / "out_dir"
    out.mkdir()
    main = "## FairQCM (Alamdari et al. 2024), smoke run: `python benchmarks/fairqcm.py --quick`\n\nthe main run's figures\n"
    (out / "RESULTS.md").write_text("# Results\n\n" + main)
    benchmark.main(["--quick", "--tasks", "lending_gaussian", "--local", "--out", str(out)])

    text = (out / "RESULTS.md").read_text()
    assert main in text
    assert ("## FairQCM, lending with Gaussian credit changes (Alamdari et al. 2024, A.3), smoke run: "
            "`python benchmarks/fairqcm.py --quick --tasks lending_gaussian`") in text
    assert "### Simulated lending with Gaussian credit changes (A.3, Fig. 5)" in text and "### Throughput" not in text
    assert "| FairQCM − | seeds | whole curve |" in text
    runs = out / "results" / "fairqcm" / "quick"
    assert stems(runs) == sorted(f"lending_gaussian_{m}_0_lr0.0001" for m in benchmark.LENDING_METHODS)
    assert (runs / "fairqcm_lending_gaussian.png").stat().st_size > 0

    # the lending task's records start with "lending_" too: the main section's lending table counts its own only
    benchmark.main(["--quick", "--tasks", "lending", "--local", "--out", str(out)])
    text = (out / "RESULTS.md").read_text()
    lending = text[text.index("### Simulated lending (Fig. 3)"):text.index("### Throughput")]
    for method in benchmark.LENDING_METHODS:
        assert f"| {method} | 1 |" in lending


def test_every_runs_settings_are_checked_before_the_pool_starts(monkeypatch):
    """Issue 47: a bad setting of the last job is reported before any job trains (reproduction.check_configs)."""
    import reproduction

    started = []
    monkeypatch.setattr(reproduction.mp, "get_context", lambda *a: started.append(a) or pytest.fail("the pool started"))
    jobs = [job("donut", "FairQCM"), job("donut", "DQN-Full", learning_rate=-1.0)]
    with pytest.raises(ValueError, match=r"learning_rate' must be a number > 0, got -1.0"):
        benchmark._run_jobs(jobs, workers=2)
    assert started == []
