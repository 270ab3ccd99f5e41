"""No run's output is lost or overwritten (issue 47, class 1): atomic writes, one writer per run, no resume or fresh
run over another run's files, free space checked before training, a failed save that keeps the model, and workers
that end with the process that started them."""

from __future__ import annotations

import errno
import multiprocessing as mp
import os
import pickle
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sb3_fair.experiment import ExperimentConfig, train
from sb3_fair.experiment import files as F
from sb3_fair.experiment.checkpoints import save_replay_buffer
from sb3_fair.experiment.files import ModelNotSavedError, RunLock, RunLockedError, atomic_path
from sb3_fair.experiment.run import run_lock_path, train_all

DQN = {"learning_starts": 0, "buffer_size": 500, "batch_size": 16}


def _cfg(tmp_path: Path, **kw) -> ExperimentConfig:
    fields = {"n_timesteps": 100, "eval_episodes": 0, "checkpoint_every": 25, "save_path": str(tmp_path / "runs" / "m.zip"),
              "hyperparams": dict(DQN)}
    fields.update(kw)
    return ExperimentConfig(algo="dqn", env="CartPole-v1", **fields)


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# ------------------------------------------------------------------------------------------------ atomic writes
def test_atomic_path_renames_a_complete_file_and_leaves_the_old_one_on_failure(tmp_path) -> None:
    target = tmp_path / "x.bin"
    target.write_bytes(b"old")
    with pytest.raises(KeyboardInterrupt), atomic_path(target) as tmp:
        tmp.write_bytes(b"half")
        raise KeyboardInterrupt
    assert target.read_bytes() == b"old" and sorted(p.name for p in tmp_path.iterdir()) == ["x.bin"]
    with atomic_path(target) as tmp:
        tmp.write_bytes(b"new")
        assert target.read_bytes() == b"old"  # nothing at the final name until the block ends
    assert target.read_bytes() == b"new" and sorted(p.name for p in tmp_path.iterdir()) == ["x.bin"]


def test_an_interrupted_buffer_write_leaves_no_partial_file(tmp_path, monkeypatch) -> None:
    """Ctrl+C while the replay buffer is pickled used to leave a 0-byte (or truncated) buffer beside a complete zip."""
    model = train(_cfg(tmp_path, checkpoint_every=None, save_path=None)).model

    class Interrupted:  # the pickler, stopped by Ctrl+C half-way through the file
        def __init__(self, f, buffer) -> None:
            self.f = f

        def dump(self, obj) -> None:
            self.f.write(b"\x80\x05partial")
            raise KeyboardInterrupt

    monkeypatch.setattr("sb3_fair.experiment.checkpoints._CompactPickler", Interrupted)
    with pytest.raises(KeyboardInterrupt):
        save_replay_buffer(model.replay_buffer, tmp_path / "buffer.pkl")
    assert list(tmp_path.glob("*buffer*")) == []


# -------------------------------------------------------------------------------- no run writes over another's files
def test_resume_from_an_earlier_checkpoint_is_refused_and_the_run_is_untouched(tmp_path) -> None:
    cfg = _cfg(tmp_path)
    train(cfg)
    before = _files(tmp_path / "runs")
    assert "m/model_100_steps.zip" in before and "m.zip" in before
    with pytest.raises(ValueError, match=r"going on from step 25 would write over the later checkpoints .*model_100_steps"):
        train(cfg.replace(n_timesteps=200), resume=tmp_path / "runs" / "m" / "model_25_steps.zip")
    assert _files(tmp_path / "runs") == before
    # from the newest checkpoint the run goes on, into its own files
    result = train(cfg.replace(n_timesteps=150), resume=tmp_path / "runs" / "m" / "model_100_steps.zip")
    assert result.resumed_at == 100 and (tmp_path / "runs" / "m" / "model_150_steps.zip").is_file()
    # branching off from the earlier checkpoint into a new run leaves the old one as it was
    old = _files(tmp_path / "runs" / "m")
    branch = cfg.replace(n_timesteps=75, save_path=str(tmp_path / "runs" / "b.zip"))
    train(branch, resume=tmp_path / "runs" / "m" / "model_25_steps.zip")
    assert _files(tmp_path / "runs" / "m") == old and (tmp_path / "runs" / "b" / "model_75_steps.zip").is_file()


def test_a_model_saved_further_than_the_resume_point_is_not_overwritten(tmp_path) -> None:
    cfg = _cfg(tmp_path, checkpoint_every=None)
    train(cfg)  # runs/m.zip at 100 steps
    with pytest.raises(ValueError, match=r"would write over .*m.zip, this run's model at 100 steps"):
        train(cfg.replace(n_timesteps=200), model=train(cfg.replace(n_timesteps=50, save_path=None)).model)


def test_a_fresh_run_does_not_write_over_another_runs_files(tmp_path) -> None:
    cfg = _cfg(tmp_path)
    train(cfg)
    before = _files(tmp_path / "runs")
    with pytest.raises(ValueError, match=r"'.*m.zip' holds another run's files \(seed 0 there, 1 here\)"):
        train(cfg.replace(seed=1))
    with pytest.raises(ValueError, match=r"holds another run's files \(hyperparams"):
        train(cfg.replace(hyperparams={"batch_size": 32}))
    assert _files(tmp_path / "runs") == before
    train(cfg)  # the same run again (same algorithm, env, seed and settings) writes the same files
    assert _files(tmp_path / "runs").keys() == before.keys()
    # a file that is not a model zip is never overwritten
    other = tmp_path / "notes.zip"
    other.write_text("my notes")
    with pytest.raises(ValueError, match=r"notes.zip' exists and is not a model zip"):
        train(cfg.replace(save_path=str(other), checkpoint_every=None))
    assert other.read_text() == "my notes"


# ------------------------------------------------------------------------------------------------ one writer per run
def test_a_second_writer_of_a_run_is_refused(tmp_path) -> None:
    cfg = _cfg(tmp_path)
    with RunLock(run_lock_path(cfg), "the run"), pytest.raises(RunLockedError, match=rf"being written by process {os.getpid()}"):
        train(cfg)
    assert not (tmp_path / "runs" / "m.zip").exists()
    train(cfg)  # released: the run goes ahead, and its lock file goes with it
    assert (tmp_path / "runs" / "m.zip").is_file() and not run_lock_path(cfg).exists()


def _hold_lock(path: str, ready) -> None:
    with RunLock(path, "x"):
        ready.set()
        time.sleep(60)


def test_the_lock_holds_across_processes_and_dies_with_its_holder(tmp_path) -> None:
    ctx = mp.get_context("spawn")
    ready = ctx.Event()
    holder = ctx.Process(target=_hold_lock, args=(str(tmp_path / ".m.lock"), ready))
    holder.start()
    try:
        assert ready.wait(60)
        with pytest.raises(RunLockedError, match=rf"process {holder.pid}"):
            RunLock(tmp_path / ".m.lock", "the run").acquire()
    finally:
        holder.kill()  # no release: the operating system drops the lock with the process
        holder.join()
    with RunLock(tmp_path / ".m.lock", "the run"):
        pass


# ------------------------------------------------------------------------------------------ damaged checkpoints
def test_resume_of_a_damaged_checkpoint_names_the_file_and_offers_the_newest_complete_one(tmp_path) -> None:
    cfg = _cfg(tmp_path)
    train(cfg)
    folder = tmp_path / "runs" / "m"
    (folder / "model_replay_buffer_100_steps.pkl").write_bytes(b"")  # what an interrupted write used to leave
    (folder / "model_replay_buffer_75_steps.pkl").write_bytes(b"\x80\x05\x95")  # truncated
    with pytest.raises(ValueError, match=r"model_replay_buffer_100_steps.pkl is incomplete \(0 bytes\); the newest complete "
                                         r"checkpoint is .*model_50_steps.zip"):
        train(cfg.replace(n_timesteps=200), resume=folder / "model_100_steps.zip")
    data = (folder / "model_100_steps.zip").read_bytes()
    (folder / "model_100_steps.zip").write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match=r"model_100_steps.zip is not a complete zip"):
        train(cfg.replace(n_timesteps=200), resume=folder / "model_100_steps.zip")


def test_an_unreadable_buffer_is_named(tmp_path) -> None:
    cfg = _cfg(tmp_path, n_timesteps=48, checkpoint_every=48)
    train(cfg)
    buffer = tmp_path / "runs" / "m" / "model_replay_buffer_48_steps.pkl"
    buffer.write_bytes(pickle.dumps({"not": "a buffer"}))
    with pytest.raises(ValueError, match=r"its replay buffer model_replay_buffer_48_steps.pkl cannot be read"):
        train(cfg.replace(n_timesteps=100), resume=tmp_path / "runs" / "m" / "model_48_steps.zip")


def test_a_finished_run_goes_on_from_its_model_not_from_an_earlier_checkpoint(tmp_path) -> None:
    """DQN collects 4 steps at a time: 50 steps end at 52, after the last checkpoint (50)."""
    cfg = _cfg(tmp_path, n_timesteps=50)
    train(cfg)
    with pytest.raises(ValueError, match=r"this run's model at 52 steps: .* to train the finished run further, resume from "
                                         r"its model \(--resume .*m.zip\)"):
        train(cfg.replace(n_timesteps=100), resume=tmp_path / "runs" / "m" / "model_50_steps.zip")
    result = train(cfg.replace(n_timesteps=100), resume=tmp_path / "runs" / "m.zip")
    assert result.resumed_at == 52 and result.n_timesteps == 100


# ------------------------------------------------------------------------------------------------ a full disk
def test_free_space_is_checked_before_training(tmp_path, monkeypatch) -> None:
    import shutil

    real = shutil.disk_usage
    monkeypatch.setattr(F.shutil, "disk_usage", lambda p: real(p)._replace(free=100_000))
    started = []
    monkeypatch.setattr("stable_baselines3.DQN.learn", lambda *a, **kw: started.append(1))
    with pytest.raises(ValueError, match=r"save_path: the run will write about .* MB .* has 0.1 MB free"):
        train(_cfg(tmp_path))
    assert not started and not (tmp_path / "runs" / "m.zip").exists()


def test_the_estimate_covers_what_a_run_writes(tmp_path) -> None:
    cfg = _cfg(tmp_path, n_timesteps=400, checkpoint_every=100, hyperparams={**DQN, "buffer_size": 10_000})
    result = train(cfg)
    zip_size = (tmp_path / "runs" / "m.zip").stat().st_size
    assert zip_size <= F.model_bytes(result.model)
    buffer = (tmp_path / "runs" / "m" / "model_replay_buffer_400_steps.pkl").stat().st_size
    assert buffer <= F.replay_buffer_bytes(result.model, 400) < 2 * buffer + 64_000


def _disk_full(*args, **kwargs):
    raise OSError(errno.ENOSPC, "No space left on device")


def test_a_failed_final_save_keeps_the_model_and_leaves_no_partial_zip(tmp_path, monkeypatch) -> None:
    cfg = _cfg(tmp_path, checkpoint_every=None)
    monkeypatch.setattr("sb3_fair.experiment.training.save", _disk_full)
    with pytest.raises(ModelNotSavedError, match=r"could not be written to .*m.zip \(No space left on device\)") as info:
        train(cfg)
    assert info.value.model.num_timesteps == 100
    assert not (tmp_path / "runs" / "m.zip").exists()


def test_a_failed_checkpoint_stops_training_and_keeps_the_model(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr("sb3_fair.experiment.checkpoints.CompactCheckpointCallback._save_checkpoint", _disk_full)
    with pytest.raises(ModelNotSavedError, match=r"training stopped at 25 steps: a checkpoint could not be written") as info:
        train(_cfg(tmp_path))
    assert info.value.model.num_timesteps == 25


def test_the_cli_writes_an_unsaved_model_to_the_temporary_folder(tmp_path, monkeypatch, capsys) -> None:
    import tempfile

    from sb3_fair.cli import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr("sb3_fair.experiment.training.save", _disk_full)
    with pytest.raises(SystemExit) as exit_info:
        main(["train", "--algo", "dqn", "--env", "CartPole-v1", "--timesteps", "100", "--save", "m.zip", "-p",
              "learning_starts=0", "--eval-episodes", "1", "--quiet"])
    assert exit_info.value.code == 1
    err = capsys.readouterr().err
    rescued = list((tmp_path / "tmp").glob("sb3-fair-unsaved-*-m.zip"))
    assert len(rescued) == 1 and f"written to {rescued[0]} instead" in err and "No space left on device" in err


# ------------------------------------------------------------------------------------------ workers end with the run
def test_train_all_ends_its_workers_when_interrupted(tmp_path) -> None:
    configs = [_cfg(tmp_path, checkpoint_every=None, save_path=None, n_timesteps=n) for n in (50, 20_000, 20_000)]

    def interrupt(i, result):
        raise KeyboardInterrupt

    t0 = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        train_all(configs, jobs=2, on_done=interrupt)
    assert time.perf_counter() - t0 < 60  # not after the 20,000-step runs
    assert [p for p in mp.active_children() if p.is_alive()] == []


@pytest.mark.slow
def test_compare_ends_its_workers_on_sigterm(tmp_path) -> None:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "WANDB_MODE": "offline", "MPLBACKEND": "Agg"}
    proc = subprocess.Popen([sys.executable, "-m", "sb3_fair.cli", "compare", "--task", "donut", "--seeds", "2", "--jobs", "2"],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 120
        children: list[int] = []
        while time.time() < deadline and len(children) < 2:
            out = subprocess.run(["pgrep", "-P", str(proc.pid), "-f", "spawn_main"], capture_output=True, text=True).stdout
            children = [int(x) for x in out.split()]
            time.sleep(0.5)
        assert len(children) == 2
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 143 and "terminated (SIGTERM); every worker process was ended" in err
    time.sleep(1)
    assert not any(map(_running, children))


def _running(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie (one that ended and that nobody has reaped yet)."""
    try:
        state = next(line for line in Path(f"/proc/{pid}/status").read_text().splitlines() if line.startswith("State:"))
    except (OSError, StopIteration):
        return False
    return "Z" not in state.split()[1]


def _children(pid: int) -> list[int]:
    out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout
    return [int(x) for x in out.split()]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_the_benchmarks_pool_ends_its_workers_with_the_script(sig) -> None:
    """benchmarks/reproduction.py's worker_pool: SIGTERM goes through Pool's exit, which terminates the workers; after
    SIGKILL the kernel ends them (PR_SET_PDEATHSIG)."""
    script = ("import sys, time; sys.path.insert(0, 'benchmarks'); from reproduction import worker_pool\n"
              "with worker_pool(2) as pool:\n    print('up', flush=True); pool.map(time.sleep, [60, 60], chunksize=1)\n")
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=Path(__file__).parent.parent, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "up"
        deadline = time.time() + 60
        while time.time() < deadline and len([c for c in _children(proc.pid) if "spawn_main" in Path(f"/proc/{c}/cmdline").read_text()]) < 2:
            time.sleep(0.2)
        workers = [c for c in _children(proc.pid) if "spawn_main" in Path(f"/proc/{c}/cmdline").read_text()]
        assert len(workers) == 2
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    if sig == signal.SIGTERM:  # one line, not a traceback
        assert proc.returncode == 143 and "terminated (SIGTERM); every worker process was ended" in err, err
        assert "Traceback" not in err, err
    deadline = time.time() + 10
    while time.time() < deadline and any(map(_running, workers)):
        time.sleep(0.2)
    assert not any(map(_running, workers))
