"""``python benchmarks/pursuit_rewards.py`` (mutual or individual reward, Grupen et al. 2022 §5.1): the pursuers as
agents of a PettingZoo game, who is paid, the joint policy the evaluation plays, and the smoke run."""

from __future__ import annotations

import threading

import numpy as np
import pursuit_rewards as benchmark
import pytest
import runner

from sb3_fair.wrappers import make_multiagent_vec_env



def stems(folder):
    """The records' names in a results folder without their trial ids' hash (sidecars left out)."""
    return sorted(p.name.rsplit("-", 1)[0] for p in folder.glob("*.json") if runner.RECORD_NAME.search(p.name))

def _capture_by_pursuer_1(reward: str) -> tuple[dict, dict]:
    game = benchmark.PursuerTeam(reward, size=6.0, pursuer_speed=0.0, evader_speed=0.0)
    game.reset(seed=0)
    game.env.evader = np.array([3.0, 3.0])
    game.env.pursuers = np.array([[1.0, 1.0], [3.05, 3.0], [5.0, 1.0]])  # pursuer 1 within the capture radius
    _, rewards, terms, _, infos = game.step({a: np.zeros(2, np.float32) for a in game.possible_agents})
    assert all(terms.values()) and game.agents == []
    return rewards, infos


def test_individual_reward_pays_the_capturer_only() -> None:
    rewards, infos = _capture_by_pursuer_1("individual")
    assert rewards == pytest.approx({"pursuer_0": -0.1, "pursuer_1": 49.9, "pursuer_2": -0.1})
    assert [infos[a]["capturer"] for a in sorted(infos)] == [False, True, False]
    rewards, _ = _capture_by_pursuer_1("mutual")
    assert rewards == pytest.approx({a: 49.9 for a in rewards})


def test_views_and_the_joint_policy() -> None:
    """Each pursuer sees its block of the joint observation and its one-hot; the joint policy concatenates the shared
    network's headings in pursuer order."""
    game = benchmark.PursuerTeam("mutual")
    obs, _ = game.reset(seed=1)
    joint = game.env._obs()
    for i, agent in enumerate(game.possible_agents):
        np.testing.assert_allclose(obs[agent][:6], joint[6 * i: 6 * i + 6])
        np.testing.assert_array_equal(obs[agent][6:], np.eye(3)[i])

    class Chase:  # heads straight at the evader: the view's first two entries
        def predict(self, views, deterministic=True):
            return views[:, :2], None

    action, _ = benchmark.TeamPolicy(Chase(), 3).predict(joint)
    np.testing.assert_allclose(action, joint.reshape(3, 6)[:, :2].ravel())
    batch, _ = benchmark.TeamPolicy(Chase(), 3).predict(np.stack([joint, joint]))
    assert batch.shape == (2, 6)


def test_team_policy_plays_one_model_per_pursuer() -> None:
    class Fixed:  # always the same heading
        def __init__(self, heading):
            self.heading = np.asarray(heading, np.float32)

        def predict(self, view, deterministic=True):
            assert view.shape == (6,)  # one pursuer's view, no index
            return self.heading, None

    policy = benchmark.TeamPolicy([Fixed([1, 0]), Fixed([0, 1]), Fixed([-1, 0])], 3, agent_id=False)
    action, _ = policy.predict(np.zeros(9 * 2, np.float32))
    np.testing.assert_array_equal(action, [1, 0, 0, 1, -1, 0])
    with pytest.raises(ValueError, match="one per pursuer"):
        benchmark.TeamPolicy([Fixed([1, 0])], 3)


def _play_seats(lockstep: benchmark.Lockstep, steps: int) -> list:
    """Each seat in its own thread: reset with seed 3, then ``steps`` steps heading (i, 0); returns each seat's
    (first observation, transitions)."""
    out: list = [None] * lockstep.n

    def seat_loop(i: int) -> None:
        seat = benchmark.Seat(lockstep, i)
        obs, _ = seat.reset(seed=3 if i == 0 else None)
        out[i] = (obs, [seat.step(np.array([0.1 * i, 0.0], np.float32)) for _ in range(steps)])

    threads = [threading.Thread(target=seat_loop, args=(i,)) for i in range(lockstep.n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return out


def test_lockstep_seats_play_one_game_together() -> None:
    """Separate learners: each seat resets and steps the shared game once per round with every pursuer's action and
    gets its own view and reward; it is the same game as stepping the PettingZoo env with the joint action."""
    lockstep = benchmark.Lockstep(benchmark.PursuerTeam("individual", agent_id=False, size=4.0))
    seat = benchmark.Seat(lockstep, 1)
    assert seat.observation_space.shape == (6,) and seat.action_space.shape == (2,)
    seat.pursuer_speed = 0.7
    assert lockstep.game.env.pursuer_speed == 0.7
    played = _play_seats(lockstep, 5)

    game = benchmark.PursuerTeam("individual", agent_id=False, size=4.0, pursuer_speed=0.7)
    obs, _ = game.reset(seed=3)
    for i, agent in enumerate(game.possible_agents):
        np.testing.assert_array_equal(played[i][0], obs[agent])
    for step in range(5):
        obs, rewards, *_ = game.step({a: np.array([0.1 * i, 0.0], np.float32) for i, a in enumerate(game.possible_agents)})
        for i, agent in enumerate(game.possible_agents):
            np.testing.assert_array_equal(played[i][1][step][0], obs[agent])
            assert played[i][1][step][1] == rewards[agent]


def test_lockstep_stops_every_seat_when_one_fails() -> None:
    lockstep = benchmark.Lockstep(benchmark.PursuerTeam("mutual", agent_id=False))
    errors = []

    def seat_loop(i: int) -> None:
        try:
            seat = benchmark.Seat(lockstep, i)
            if i == 2:
                lockstep.barrier.abort()  # what train_separate does when a learner raises
                return
            seat.reset(seed=0)
        except threading.BrokenBarrierError as err:
            errors.append(err)

    threads = [threading.Thread(target=seat_loop, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not any(t.is_alive() for t in threads) and len(errors) == 2


def test_speed_curriculum_reaches_the_game() -> None:
    venv = make_multiagent_vec_env(benchmark.PursuerTeam("individual", size=4.0))
    venv.env_method("set_wrapper_attr", "pursuer_speed", 0.7)
    assert [p.unwrapped.env.pursuer_speed for p in venv.par_envs] == [0.7]


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="reward must be one of"):
        benchmark.PursuerTeam("shared")
    with pytest.raises(ValueError, match="observation='relative'"):
        benchmark.PursuerTeam(observation="absolute")


def test_quick_run_writes_records_and_section_under_out(tmp_path, monkeypatch) -> None:
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    benchmark.main(["--quick", "--seeds", "1", "--jobs", "1", "--local", "--out", str(tmp_path / "out")])
    assert not any(cwd.iterdir())
    text = (tmp_path / "out" / "RESULTS.md").read_text()
    assert "## Mutual or individual reward (Grupen et al. 2022, §5.1), smoke run: `python benchmarks/pursuit_rewards.py --quick`" in text
    assert "| mutual | 1 | " in text and "| individual | 1 | " in text
    runs = tmp_path / "out" / "results" / "pursuit_rewards" / "quick"  # the records: <out>/results with --out
    assert stems(runs) == ["individual_size4_0", "mutual_size4_0"]
    saved = runner.load(tmp_path / "out" / "results", "pursuit_rewards/quick")
    assert all(set(r["result"]) == {"eval"} and r["meta"]["seconds"] > 0 for r in saved)

    # one learner per pursuer: its own records and section, the shared-network section kept
    benchmark.main(["--quick", "--seeds", "1", "--learners", "separate", "--jobs", "1", "--local", "--out", str(tmp_path / "out")])
    text = (tmp_path / "out" / "RESULTS.md").read_text()
    assert text.count("`python benchmarks/pursuit_rewards.py --quick`") == 1
    assert text.count("`python benchmarks/pursuit_rewards.py --quick --learners separate`") == 1
    assert "one per pursuer (as the paper)" in text
    assert [n for n in stems(runs) if "separate" in n] == ["individual_separate_size4_0", "mutual_separate_size4_0"]


def test_a_call_with_more_seeds_replaces_the_section_of_its_setting(tmp_path, monkeypatch) -> None:
    """The section key is the setting (size, learners) without the seed count: more seeds replace the old section,
    another setting gets its own."""
    written = []
    monkeypatch.setattr(benchmark.Output, "write_section", lambda self, key, text: written.append((key, text.splitlines()[0])))
    score = {"capture_success": 0.5, "team_fairness": 0.1, "mean_length": 100.0}
    for learners, seeds in (({"learners": "separate"}, 3), ({}, 10)):  # finished runs on disk: nothing to train
        for seed in range(seeds):
            for reward in benchmark.REWARDS:
                job = dict(reward=reward, seed=seed, size=2.0, env_steps=benchmark.ENV_STEPS, episodes=30,
                           speeds=list(benchmark.SPEEDS), **learners)
                tid = runner.trial_id(job, benchmark.job_file(job).removesuffix(".json"))
                runner.write_once(runner.record_path(tmp_path / "results", "pursuit_rewards", tid),
                                  {"id": tid, "spec": job, "result": {"eval": {str(v): score for v in benchmark.SPEEDS}}})
                runner.write_once(runner.meta_path(tmp_path / "results", "pursuit_rewards", tid), {"seconds": 1.0})
    for argv in (["--seeds", "3", "--size", "2", "--learners", "separate"], ["--seeds", "10", "--size", "2"]):
        benchmark.main([*argv, "--jobs", "1", "--out", str(tmp_path)])
    assert written[0] == ("`python benchmarks/pursuit_rewards.py --size 2 --learners separate --seeds ",
                          "## Mutual or individual reward (Grupen et al. 2022, §5.1): "
                          "`python benchmarks/pursuit_rewards.py --size 2 --learners separate --seeds 3`")
    assert written[1][0] == "`python benchmarks/pursuit_rewards.py --size 2 --seeds "
    assert written[0][0] not in written[1][1] and written[1][0] not in written[0][1]
