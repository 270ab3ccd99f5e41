"""``python benchmarks/fairqcm_tabular.py`` (tabular FairQCM, Alamdari et al. 2024, Algorithm 1 and A.2): the
Q-learning update, A.2's per-state ε, the counterfactual updates against hand-computed transitions, the tables'
spans and pairs, and a ``--quick`` smoke run."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

import fairqcm_tabular as benchmark
import runner
import sb3_fair  # noqa: F401  (registers the ids)


def make(method: str, seed: int = 0) -> benchmark.TabularQ:
    spec = benchmark.METHODS[method]
    return benchmark.TabularQ(gym.make(benchmark.ENV_ID, memory=spec["memory"]), spec["counterfactual"], seed,
                              **benchmark.choices(method))


def test_q_update_is_a2s_q_learning_step():
    agent = make("Full")
    x, y = np.zeros(15, dtype=np.float32), np.ones(15, dtype=np.float32)
    agent.update(x, 1, 2.0, y, terminal=False)  # Q(y) = 0: 0 + 0.1 * (2 + 0.99 * 0 - 0)
    assert agent.values(x)[1] == pytest.approx(0.2)
    agent.values(y)[2] = 10.0
    agent.update(x, 1, 2.0, y, terminal=False)  # 0.2 + 0.1 * (2 + 0.99 * 10 - 0.2)
    assert agent.values(x)[1] == pytest.approx(0.2 + 0.1 * (2 + 9.9 - 0.2))
    agent.update(x, 0, 1.0, y, terminal=True)  # a true end does not bootstrap
    assert agent.values(x)[0] == pytest.approx(0.1)
    assert agent.updates == 3 and list(agent.values(x)) == pytest.approx([0.1, 1.37, 0.0])


def test_epsilon_per_state_decays_at_each_visit_to_at_least_02():
    agent = make("Full")
    x, y = np.zeros(15, dtype=np.float32), np.ones(15, dtype=np.float32)
    for _ in range(40):
        agent.act(x)
    agent.act(y)
    assert agent.eps[x.tobytes()] == pytest.approx(0.2) and agent.eps[y.tobytes()] == pytest.approx(0.95)
    for _ in range(5):
        agent.act(x)
    assert agent.eps[x.tobytes()] == pytest.approx(0.2)


def test_greedy_breaks_ties_at_random():
    agent = make("Full", seed=3)
    x = np.zeros(15, dtype=np.float32)
    assert {agent.greedy(x) for _ in range(60)} == {0, 1, 2}
    agent.values(x)[2] = 1.0
    assert {agent.greedy(x) for _ in range(20)} == {2}


def first_step_agent(method: str, present_0: bool, monkeypatch) -> tuple[benchmark.TabularQ, list, np.ndarray]:
    """An agent of ``method`` whose episode is one step from a state where customer 0 is (or is not) present and
    which serves customer 0; returns it, the updates it made, and the first observation."""
    agent = make(method)
    seen: list = []
    real_update = agent.update

    def record(obs, action, reward, next_obs, terminal):
        seen.append((np.asarray(obs).copy(), action, reward, np.asarray(next_obs).copy(), terminal))
        real_update(obs, action, reward, next_obs, terminal)

    monkeypatch.setattr(agent, "update", record)
    monkeypatch.setattr(agent, "act", lambda obs: 0)
    env = agent.env
    for seed in range(100):
        obs, _ = env.reset(seed=seed)
        if bool(obs[0]) == present_0:
            break
    step = env.step
    agent.env.reset = lambda seed=None: (obs, {})

    def one_step(action):
        out = step(action)
        return out[0], out[1], out[2], True, out[4]

    agent.env.step = one_step
    agent.train_episode(seed=0)
    return agent, seen, obs


def test_fairqcm_updates_every_counterfactual_transition_of_the_step(monkeypatch):
    """At the first step the memory is (0, 0, 0): A.2's set is every m' in {1, 2}^3 (8 memories). With customer 0
    present and served, each counterfactual transition goes from m' to m' + e_0 with reward sum_i log(m'_i + 1) of
    the next memory (the env's log-Nash reward); all 9 updates (real first) are made with alpha = 0.1."""
    agent, seen, obs = first_step_agent("FairQCM", present_0=True, monkeypatch=monkeypatch)
    assert len(seen) == 9 and agent.updates == 9
    real, cfs = seen[0], seen[1:]
    assert real[2] == pytest.approx(math.log(2))  # counts (1, 0, 0): log 2 + log 1 + log 1
    spec = agent.fair_dqn.memory_spec
    from sb3_fair.common.fairqcm.memory import decode_memory

    memories = sorted(tuple(decode_memory(spec, o[3:])) for o, *_ in cfs)
    assert memories == sorted(tuple(float(v) for v in m) for m in np.array(np.meshgrid([1, 2], [1, 2], [1, 2])).T.reshape(-1, 3))
    for o, action, reward, n, terminal in cfs:
        m, m_next = decode_memory(spec, o[3:]), decode_memory(spec, n[3:])
        assert action == 0 and not terminal
        assert list(m_next) == [m[0] + 1, m[1], m[2]]
        assert reward == pytest.approx(float(np.log(m_next + 1).sum()), rel=1e-6)
        assert list(o[:3]) == list(obs[:3]) and list(n[:3]) == list(real[3][:3])  # the same s and s'


def test_summary_keeps_the_spans_and_a_block_curve():
    scores, delivered = [float(e) for e in range(250)], [e % 13 for e in range(250)]
    s = benchmark.summary(scores, delivered)
    assert s["spans"] == benchmark.spans(scores) and s["delivered_spans"] == benchmark.spans(delivered)
    assert s["curve"] == [49.5, 149.5]  # two whole blocks of 100 episodes; the last 50 are left out


def test_spans_and_paired_known_answer():
    assert benchmark.spans([1.0] * 2 + [3.0] * 2 + [5.0] * 2 + [7.0] * 4) == [4.6, 1.0, 3.0, 5.0, 7.0]
    assert benchmark.window_names(10) == ["whole run", "episodes 1–2", "episodes 3–4", "episodes 5–6", "episodes 7–10"]
    records = [{"method": m, "seed": s, "episodes": 10, "spans": [base + s + (d if m == "FairQCM" else 0.0)] * 5}
               for s, d in enumerate([1.0, 2.0, 3.0]) for m, base in (("FairQCM", 10.0), ("Full", 10.0))]
    lines = benchmark.paired(records, "FairQCM", benchmark.BASELINES)
    assert lines[0] == "| FairQCM − | whole run | episodes 1–2 | episodes 3–4 | episodes 5–6 | episodes 7–10 |"
    assert len(lines) == 3  # Min and Reset have no runs: no row
    cells = [c.strip() for c in lines[2].strip("|").split("|")]
    assert cells[0] == "Full" and all(c.startswith("higher in 3/3; 2.00 ± 1.00 (n = 3; paired t p = 0.074") for c in cells[1:])


@pytest.mark.slow
def test_quick_run_writes_its_section_and_records(tmp_path, monkeypatch):
    out, cwd = tmp_path / "out_dir", tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    benchmark.main(["--quick", "--out", str(out), "--jobs", "1", "--local"])
    assert not any(cwd.iterdir()), "a --quick run wrote outside --out"
    text = (out / "RESULTS.md").read_text()
    assert "## Tabular FairQCM (Alamdari et al. 2024, A.2), smoke run: `python benchmarks/fairqcm_tabular.py --quick`" in text
    assert "| FairQCM − | whole run |" in text and "| greedy rule (fewest so far among present) |" in text
    runs = out / "results" / "fairqcm_tabular" / "quick"  # the records: <out>/results with --out
    saved = runner.load(out / "results", "fairqcm_tabular/quick")
    records = [{**r["spec"], **r["result"], **r["meta"]} for r in saved]
    assert sorted(r["method"] for r in records) == sorted(benchmark.METHODS)
    assert all(r["spec"]["spec"] == benchmark.plain_spec(r["spec"]["method"]) for r in saved)  # its settings in the id
    names = sorted(p.name.rsplit("-", 1)[0] for p in runs.glob("*.json") if runner.RECORD_NAME.search(p.name))
    assert names[0] == "FairQCM_0_600"
    assert "FairQCM__as_the_authors__ql_py_0_600" in names  # a file name without spaces or quotes
    episodes = benchmark.QUICK["steps"] // 12
    for r in records:
        assert r["episodes"] == episodes and len(r["spans"]) == len(r["delivered_spans"]) == 1 + len(benchmark.WINDOWS)
        assert all(0 <= d <= 12 for d in r["delivered_spans"]) and len(r["curve"]) == episodes // benchmark.CURVE_BLOCK
        # FairQCM makes up to 8 counterfactual updates per step beside the real one (the authors' code: 9, m_t too)
        steps = episodes * 12
        assert (r["updates"] > steps) == benchmark.METHODS[r["method"]]["counterfactual"] and r["updates"] <= 10 * steps


def test_authors_updates_hold_m_t_and_move_memory_after_a_wasted_doughnut(monkeypatch):
    """The authors' ql.py: its set {m_i, m_i + 1}^3 holds m_t and 7 others, and after a wasted doughnut each of the 8
    memories (m_t too) still goes to m~ + e_a, with reward 0. sb3-fair's own rows (offsets 0 and 1, Eq. 2): the 7
    others, and a wasted doughnut leaves each where it was. On a delivered doughnut the authors' m_t row is the real
    transition again."""
    from sb3_fair.common.fairqcm.memory import decode_memory

    corners = [(a, b, c) for a in (0.0, 1.0) for b in (0.0, 1.0) for c in (0.0, 1.0)]
    for method, members in (("FairQCM, offsets 0 and 1", corners[1:]), ("FairQCM, as the authors' ql.py", corners)):
        agent, seen, obs = first_step_agent(method, present_0=False, monkeypatch=monkeypatch)
        spec = agent.fair_dqn.memory_spec
        real, cfs = seen[0], seen[1:]
        assert real[2] == 0.0 and list(decode_memory(spec, real[3][3:])) == [0, 0, 0]  # wasted: the memory stays
        assert sorted(tuple(decode_memory(spec, o[3:])) for o, *_ in cfs) == sorted(members)
        for o, action, reward, n, _ in cfs:
            m, m_next = decode_memory(spec, o[3:]), decode_memory(spec, n[3:])
            moved = [m[0] + 1, m[1], m[2]]
            assert reward == 0.0 and list(m_next) == (moved if len(members) == 8 else list(m))
    agent, seen, obs = first_step_agent("FairQCM, as the authors' ql.py", present_0=True, monkeypatch=monkeypatch)
    assert len(seen) == 9
    assert np.array_equal(seen[1][0], seen[0][0]) and np.array_equal(seen[1][3], seen[0][3])
    assert seen[1][2] == pytest.approx(seen[0][2])  # the same reward (float32 in the counterfactual rows)


def test_authors_epsilon_decays_only_when_exploring():
    """ql.py multiplies a state's ε by 0.95 only on a visit that explores, while it is above 0.2 (so it can end just
    below 0.2); A.2's text (the other rows) decays it at every visit, to at least 0.2."""
    agent = make("FairQCM, as the authors' ql.py", seed=0)
    x = np.zeros(15, dtype=np.float32)
    explored = 0
    for _ in range(200):
        before = agent.eps.get(x.tobytes(), 1.0)
        agent.act(x)
        after = agent.eps[x.tobytes()] if x.tobytes() in agent.eps else 1.0
        assert after in (before, before * 0.95)
        explored += after != before
    eps = agent.eps[x.tobytes()]
    assert 0.2 * 0.95 <= eps <= 0.2 and explored == round(np.log(eps) / np.log(0.95))


def test_versus_authors_known_answer():
    records = [{"method": m, "seed": s, "episodes": 10, "spans": [v + s] * 5, "delivered_spans": [11.0] * 5}
               for s in range(3) for m, v in (("Full", 30.0), ("FairQCM, as the authors' ql.py", 36.0))]
    authors = {"episodes": 10, "runs": {"Full": [[20.0 + s] * 5 + [10.0] for s in range(3)],
                                        "FairQCM": [[36.0 + s] * 5 + [12.0] for s in range(3)]}}
    lines = benchmark.versus_authors(records, authors)
    assert len(lines) == 4
    full = [c.strip() for c in lines[2].strip("|").split("|")]
    # every ours above every theirs: exact two-sided Mann-Whitney p = 2 / C(6, 3) = 0.10; equal samples: p = 1
    assert full[:3] == ["Full / Full", "3 / 3", "31.00 / 21.00 (0.10)"] and full[-1] == "11.00 / 10.00"
    fair = [c.strip() for c in lines[3].strip("|").split("|")]
    assert fair[:3] == ["FairQCM, as the authors' ql.py / FairQCM", "3 / 3", "37.00 / 37.00 (1.00)"]
    assert benchmark.versus_authors(records, {**authors, "episodes": 20}) == []  # another run length: no table
