"""One runner for the method benchmarks: their trials as data, run on Ray or locally, each record written once.

A benchmark describes its trials as a list of *specs*, plain JSON-able dicts (method x env x seed x settings), and
a trial function ``fn(spec)`` that is deterministic given its spec (seeded from it). :func:`run` gives every trial an
id derived from its spec's content (:func:`trial_id`), skips the trials whose record exists (resume: the same command
goes on where an interrupted one stopped), runs the others and writes each finished trial's record once, atomically
(a temp file, then a hard link to the final name: a record is never rewritten, not even by a second runner).

Where the trials run:

* on Ray (the default): a local Ray of ``jobs`` CPUs (``ray.init(address="local")``), or an existing cluster
  (``address="auto"``, ``"HOST:6379"``, ``"ray://HOST:10001"``, as ``sb3-fair sweep --address``); one CPU per trial;
* without Ray (``local=True``): in this process one after the other (``jobs=1``), or in a pool of ``jobs`` processes.

Every trial runs with one torch thread. The records are the same bytes whichever way the trials ran.

Layout of ``<results>`` (``--results DIR``, else ``$SB3_FAIR_RESULTS``, else the benchmark's default)::

    <results>/<benchmark>/<trial-id>.json       {"id", "spec", "result"}: what a trial gave, compared across machines
    <results>/<benchmark>/<trial-id>.meta.json  where and when it ran (host, Ray node, pid, start, end, wall
                                                seconds) and the trial's own timings: never compared

A benchmark may keep its own files beside them (a summary such as ``throughput.json``, plots, checkpoints in a
subfolder): :func:`load` reads only the records, whose names end in the id's 16 hex digits and ``.json``.

Two result folders hold the same records when ``diff -r -x '*.meta.json' A B`` finds nothing.

A trial function returns its result (a JSON-able dict), or ``(result, meta)`` where ``meta`` holds what varies from
run to run (timings) and goes to the sidecar; it raises :class:`Unfinished` when it stopped before its end (a
deadline): no record is written and the same command goes on with it later.

Example::

    import runner

    def square(spec):  # a module-level function: Ray and the process pool import it by name
        return {"y": spec["x"] ** 2}

    summary = runner.run("demo", [{"x": x} for x in range(4)], square, results="results", local=True)
    print(summary.written)                      # the ids of the records written by this call
    records = runner.load("results", "demo")    # [{"id", "spec", "result", "meta"}, ...]
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import importlib
import json
import os
import platform
import re
import socket
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

#: the environment variable naming the results folder (below ``--results``, above a benchmark's default)
RESULTS_ENV = "SB3_FAIR_RESULTS"
#: the repository's root; its ``results/`` is the default results folder
REPO = Path(__file__).resolve().parent.parent
DEFAULT_RESULTS = REPO / "results"
#: the sidecar of a record: what is never compared
META_SUFFIX = ".meta.json"
#: the environment every trial runs in (one thread per BLAS; torch's threads are set by :func:`_execute`)
THREAD_ENV = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}

#: a record's file name: a trial id (16 hex digits, after an optional label and ``-``) and ``.json``
RECORD_NAME = re.compile(r"(^|-)[0-9a-f]{16}\.json$")

TrialFn = Callable[[dict[str, Any]], Any]


class Unfinished(Exception):
    """Raised by a trial function that stopped before its end (e.g. at a deadline): no record is written; its own
    checkpoints (if any) let the next call go on."""


def canonical(obj: Any) -> str:
    """The JSON text a trial's id is hashed from: keys sorted, no spaces, no NaN.

    :param obj: a plain JSON-able value (dicts, lists, strings, numbers, booleans, None).
    """
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=False)


def trial_id(spec: dict[str, Any], label: str | None = None) -> str:
    """A trial's id: the first 16 hex digits of the SHA-256 of :func:`canonical` ``(spec)``, after ``label`` (a
    readable prefix made of the spec, e.g. ``"donut_FairQCM_0"``) when one is given.

    :param spec: the trial's spec.
    :param label: a prefix (letters, digits, ``._-`` kept; anything else becomes ``-``).
    """
    digest = hashlib.sha256(canonical(spec).encode()).hexdigest()[:16]
    return digest if not label else f"{re.sub(r'[^A-Za-z0-9._-]+', '-', label)}-{digest}"


@dataclass(frozen=True)
class Trial:
    """One trial: its id and its spec (as JSON gives it back)."""

    id: str
    spec: dict[str, Any]


def make_trials(specs: list[dict[str, Any]], label: Callable[[dict[str, Any]], str] | None = None) -> list[Trial]:
    """The trials of ``specs``, in their order, each spec once.

    :param specs: plain JSON-able dicts; a spec that JSON would change (a tuple, a non-string key) is refused.
    :param label: the readable prefix of each id (:func:`trial_id`).
    """
    trials, seen = [], set()
    for spec in specs:
        plain = json.loads(canonical(spec))
        if plain != spec or not isinstance(spec, dict):
            raise ValueError(f"a trial spec must be a dict of plain JSON values (lists, not tuples): {spec!r}")
        tid = trial_id(spec, label(spec) if label else None)
        if tid not in seen:
            seen.add(tid)
            trials.append(Trial(tid, plain))
    return trials


def record_path(results: str | Path, benchmark: str, tid: str) -> Path:
    """``<results>/<benchmark>/<tid>.json``."""
    return Path(results) / benchmark / f"{tid}.json"


def meta_path(results: str | Path, benchmark: str, tid: str) -> Path:
    """``<results>/<benchmark>/<tid>.meta.json``: the record's sidecar."""
    return Path(results) / benchmark / f"{tid}{META_SUFFIX}"


def write_once(path: Path, obj: Any) -> bool:
    """Write ``obj`` as JSON (keys sorted) to ``path`` unless a file is there: to a temp file in the same folder,
    then a hard link to ``path`` (which fails when another writer got there first), so a reader never sees half a
    file and nothing is ever rewritten.

    :returns: whether this call wrote ``path``.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(obj, sort_keys=True) + "\n")
    try:
        os.link(tmp, path)
    except FileExistsError:
        return False
    except OSError:  # a filesystem without hard links: the rename (a race with another writer is possible there)
        if path.exists():
            return False
        os.replace(tmp, path)
        return True
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
    return True


def load(results: str | Path, benchmark: str) -> list[dict[str, Any]]:
    """Every record of ``benchmark``, in the order of their ids, each with its sidecar as ``"meta"`` (``{}`` when it
    has none).

    :param results: the results folder.
    :param benchmark: the benchmark's folder under it.
    """
    folder = Path(results) / benchmark
    out = []
    for path in sorted(folder.glob("*.json")):
        if not RECORD_NAME.search(path.name):  # a sidecar, or a benchmark's own summary file beside the records
            continue
        record = json.loads(path.read_text())
        meta = path.with_name(path.name[: -len(".json")] + META_SUFFIX)
        record["meta"] = json.loads(meta.read_text()) if meta.exists() else {}
        out.append(record)
    return out


def load_flat(results: str | Path, benchmark: str, timings: tuple[str, ...] = ("seconds",)) -> list[tuple[str, dict[str, Any]]]:
    """Every record of ``benchmark`` as ``(id, flat)``, in the order they finished: ``flat`` is its spec, its result
    and the sidecar's ``timings`` in one dict (a record as the benchmarks kept it before the runner).

    :param results: the results folder.
    :param benchmark: the benchmark's folder under it.
    :param timings: the sidecar's entries that go into ``flat`` (where the sidecar has them).
    """
    return [
        (r["id"], {**r["spec"], **r["result"], **{k: r["meta"][k] for k in timings if k in r["meta"]}})
        for r in sorted(load(results, benchmark), key=lambda r: r["meta"].get("finished", ""))
    ]


@dataclass
class Summary:
    """What one :func:`run` did, by trial id."""

    written: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    #: id -> why it stopped (:class:`Unfinished`'s message)
    unfinished: dict[str, str] = field(default_factory=dict)
    #: id -> the trial's traceback
    failed: dict[str, str] = field(default_factory=dict)
    wall_s: float = 0.0


def _execute(fn: TrialFn, spec: dict[str, Any]) -> tuple[str, Any, dict[str, Any]]:
    """Run one trial where it is scheduled (a Ray worker, a pool worker or this process), one torch thread.

    :returns: ``("done", result, meta)``, ``("unfinished", message, meta)`` or ``("failed", traceback, meta)``.
    """
    for key, value in THREAD_ENV.items():
        os.environ.setdefault(key, value)
    with contextlib.suppress(ImportError):
        import torch

        torch.set_num_threads(1)
    meta: dict[str, Any] = {"host": socket.gethostname(), "pid": os.getpid(), "python": platform.python_version(),
                            "started": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    with contextlib.suppress(Exception):  # the Ray node, when a Ray worker runs it
        import ray

        if ray.is_initialized():
            meta["ray_node"] = ray.get_runtime_context().get_node_id()
    t0 = time.perf_counter()
    try:
        out = fn(spec)
        status, payload = "done", out
        if isinstance(out, tuple):
            payload, extra = out
            meta.update(extra)
    except Unfinished as err:
        status, payload = "unfinished", str(err)
    except Exception:  # noqa: BLE001 (reported with its traceback; the other trials go on)
        status, payload = "failed", traceback.format_exc()
    meta.update(wall_s=time.perf_counter() - t0, finished=datetime.now(timezone.utc).isoformat(timespec="seconds"))
    return status, payload, meta


def _execute_star(args: tuple[int, TrialFn, dict[str, Any]]) -> tuple[int, tuple[str, Any, dict[str, Any]]]:
    index, fn, spec = args
    return index, _execute(fn, spec)


def importable(fn: TrialFn) -> TrialFn:
    """``fn`` itself, or, for a function of the script being run (module ``__main__``), the same function imported
    from that script by its module name (so that Ray and the process pool import it by name rather than copy it).
    A :func:`functools.partial` keeps its arguments."""
    import functools

    if isinstance(fn, functools.partial):
        return functools.partial(importable(fn.func), *fn.args, **fn.keywords)
    if getattr(fn, "__module__", None) == "__main__":
        main = sys.modules["__main__"]
        path = Path(getattr(main, "__file__", ""))
        if path.suffix == ".py" and str(path.parent.resolve()) in [str(Path(p).resolve()) for p in sys.path if p]:
            return getattr(importlib.import_module(path.stem), fn.__name__, fn)
    return fn


def _module_folders(fn: TrialFn) -> list[str]:
    """The folders the trial function's module is imported from (for the Ray workers' ``PYTHONPATH``)."""
    func = getattr(fn, "func", fn)
    module = sys.modules.get(getattr(func, "__module__", ""), None)
    file = getattr(module, "__file__", None)
    return [str(Path(file).resolve().parent)] if file else []


def _iter_local(items: list[tuple[int, TrialFn, dict[str, Any]]], jobs: int) -> Iterator[tuple[int, Any]]:
    if jobs <= 1 or len(items) <= 1:
        for item in items:
            yield _execute_star(item)
        return
    from reproduction import worker_pool

    with worker_pool(min(jobs, len(items))) as pool:
        yield from pool.imap_unordered(_execute_star, items, chunksize=1)


def init_ray(address: str | None = None, jobs: int | None = None, fn: TrialFn | None = None) -> bool:
    """Start (or join) the Ray the trials run on, unless one is running in this process already.

    :param address: an existing cluster; None: a local Ray of ``jobs`` CPUs (``address="local"``: never one that
        another process on this machine left behind).
    :param jobs: the local Ray's CPUs (default: one per core).
    :param fn: the trial function, whose module's folder goes on the workers' ``PYTHONPATH``.
    :returns: whether this call started it (and so should shut it down).
    """
    import ray

    if ray.is_initialized():
        return False
    # the workers import this module and the trial function's by name: their folders on the workers' path (a
    # cluster's other machines need the checkout at the same path)
    paths = [str(Path(__file__).resolve().parent), *(_module_folders(fn) if fn else []),
             *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    env = {**THREAD_ENV, "PYTHONPATH": os.pathsep.join(dict.fromkeys(paths))}
    env.update({k: os.environ[k] for k in ("WANDB_MODE", "MPLBACKEND") if k in os.environ})
    init: dict[str, Any] = ({"address": address} if address
                            else {"address": "local", "num_cpus": jobs or os.cpu_count() or 1, "include_dashboard": False})
    ray.init(log_to_driver=False, configure_logging=False, runtime_env={"env_vars": env}, **init)
    return True


def _iter_ray(items: list[tuple[int, TrialFn, dict[str, Any]]], jobs: int, address: str | None,
              fn: TrialFn) -> Iterator[tuple[int, Any]]:
    import ray

    started = init_ray(address, jobs, fn)
    remote = ray.remote(num_cpus=1, max_retries=0)(_execute_star)
    pending = {remote.remote(item): item[0] for item in items}
    try:
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                index = pending.pop(ref)
                try:
                    out = ray.get(ref)
                except ray.exceptions.RayError as err:  # the worker died (out of memory, a lost node): that trial fails
                    out = index, ("failed", f"{type(err).__name__}: {err}", {"wall_s": 0.0})
                yield out
    finally:
        for ref in pending:  # interrupted: the trials not finished are cancelled (their records are not written)
            with contextlib.suppress(Exception):
                ray.cancel(ref, force=True)
        if started:
            ray.shutdown()


def ray_available() -> bool:
    """Whether Ray can be imported here."""
    try:
        import ray  # noqa: F401
    except ImportError:
        return False
    return True


def run(benchmark: str, specs: list[dict[str, Any]], fn: TrialFn, *, results: str | Path | None = None,
        address: str | None = None, local: bool = False, jobs: int | None = None,
        label: Callable[[dict[str, Any]], str] | None = None, quiet: bool = False) -> Summary:
    """Run every trial of ``specs`` that has no record yet, writing each finished one's record once.

    :param benchmark: the benchmark's folder under ``results`` (``"fairqcm"``, ``"fppo/quick"``).
    :param specs: the trials' specs (:func:`make_trials`).
    :param fn: the trial function, a module-level function (or a :func:`functools.partial` of one): ``fn(spec)``
        returns the result, or ``(result, meta)``; it may raise :class:`Unfinished`.
    :param results: the results folder (default: ``$SB3_FAIR_RESULTS``, else the repository's ``results/``).
    :param address: an existing Ray cluster (``"auto"``, ``"HOST:6379"``, ``"ray://HOST:10001"``); None: a local Ray.
    :param local: without Ray: in this process (``jobs=1``) or in a pool of ``jobs`` processes.
    :param jobs: trials at a time on a local Ray or pool (default: one per core; a cluster runs as many as it has CPUs).
    :param label: the readable prefix of each trial's id (:func:`trial_id`).
    :param quiet: no line per trial.
    :returns: the :class:`Summary`; failed trials are in it (the others ran): the caller decides whether to stop.
    """
    t0 = time.perf_counter()
    root = Path(results) if results is not None else resolve_results(None)
    summary = Summary()
    todo = []
    for trial in make_trials(specs, label):
        if record_path(root, benchmark, trial.id).exists():
            summary.skipped.append(trial.id)
        else:
            todo.append(trial)
    if not todo:
        summary.wall_s = time.perf_counter() - t0
        return summary
    if not local and not ray_available():
        raise RuntimeError("Ray is not installed here: pip install 'ray[default]', or run without Ray (--local)")
    jobs = jobs or os.cpu_count() or 1
    if not local or jobs > 1:  # pickled to other processes: by name
        fn = importable(fn)
    items = [(i, fn, trial.spec) for i, trial in enumerate(todo)]
    where = "local" if local else (f"ray {address}" if address else "ray (local)")
    finished = _iter_local(items, jobs) if local else _iter_ray(items, jobs, address, fn)
    for index, (status, payload, meta) in finished:
        trial = todo[index]
        if status == "done":
            written = write_once(record_path(root, benchmark, trial.id), {"id": trial.id, "spec": trial.spec,
                                                                           "result": payload})
            if written:
                write_once(meta_path(root, benchmark, trial.id), {**meta, "runner": where})
                summary.written.append(trial.id)
            else:  # another runner wrote it meanwhile: its record stands
                summary.skipped.append(trial.id)
        elif status == "unfinished":
            summary.unfinished[trial.id] = payload
        else:
            summary.failed[trial.id] = payload
        if not quiet:
            print(f"[{status}] {benchmark}/{trial.id} {meta['wall_s']:.0f}s"
                  + (f": {payload}" if status == "unfinished" else ""), flush=True)
            if status == "failed":
                print(payload, file=sys.stderr, flush=True)
    summary.wall_s = time.perf_counter() - t0
    return summary


def resolve_results(value: str | Path | None, default: str | Path | None = None) -> Path:
    """The results folder: ``value`` (``--results``), else ``$SB3_FAIR_RESULTS``, else ``default``, else the
    repository's ``results/``."""
    chosen = value or os.environ.get(RESULTS_ENV) or default or DEFAULT_RESULTS
    return Path(chosen).expanduser()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The runner's options on a benchmark's command line: ``--results DIR``, ``--address ADDR``, ``--local``."""
    group = parser.add_argument_group("runner (benchmarks/runner.py)")
    group.add_argument("--results", metavar="DIR", default=None,
                       help=f"the records' folder: <DIR>/<benchmark>/<trial-id>.json (default: ${RESULTS_ENV}, else "
                            "<out>/results when --out is given, else the repository's results/)")
    group.add_argument("--address", metavar="ADDR", default=None,
                       help="an existing Ray cluster (auto, HOST:6379, ray://HOST:10001); default: a local Ray")
    group.add_argument("--local", action="store_true",
                       help="without Ray: in this process (--jobs 1) or a pool of --jobs processes; the same records")


def check_summary(summary: Summary) -> None:
    """Stop with one line per failed trial (after the others ran), as a benchmark's command does."""
    if summary.failed:
        raise SystemExit(f"{len(summary.failed)} trial(s) failed: {', '.join(summary.failed)} (tracebacks above; "
                         "the records of the others are written, and the same command runs only what is missing)")
