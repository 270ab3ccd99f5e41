"""What the method benchmarks (``fairqcm.py``, ``fair_er.py``, ``fair_ppo.py``, ``fppo.py``) share: where
they write, the archive of the records kept before the runner, timing models against each other, and replacing one
section of ``RESULTS.md``.

These scripts live in the repository, not in the installed package: run them from a clone
(``python benchmarks/fairqcm.py --quick``); the tests put ``benchmarks/`` on the import path.

The method benchmarks are on the runner (``runner.py``: ``fairqcm.py``, ``fppo.py``, ``pursuit_rewards.py``,
``fairqcm_tabular.py``, ``fair_ppo.py``, ``contrib_algorithms.py``, ``fair_er.py``): they write their records to
``<results>/<benchmark>/`` (:func:`results_root`) and read the records kept before it from the archive
(:data:`ARCHIVE`, :func:`archived`). :attr:`Output.runs` (``<out>/out/<name>/``, restored from the archive for the
repository's ``benchmarks/``) is what a script not on the runner would keep its records in."""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import multiprocessing as mp
import tarfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

#: the folder of this file: the repository's ``benchmarks/``, the default output folder of every benchmark
HERE = Path(__file__).resolve().parent
DEFAULT_OUT = str(HERE)
#: figures measured by running the papers' authors' code (numbers only)
DATA = HERE / "data"
#: every run record the repository kept in ``benchmarks/out/`` before the runner (issue 48), byte for byte, as
#: ``out/<name>/<file>`` members of one xz-compressed tar; read, never written, by the benchmarks
ARCHIVE = HERE / "archive" / "records.tar.xz"


@functools.lru_cache(maxsize=2)
def _archive_members(path: str, mtime_ns: int) -> dict[str, bytes]:
    with tarfile.open(path, "r:xz") as tar:
        return {m.name: tar.extractfile(m).read() for m in tar if m.isfile()}  # type: ignore[union-attr]


def archive_files(prefix: str, archive: str | Path | None = ARCHIVE) -> dict[str, bytes]:
    """The archive's files under ``out/<prefix>`` (``"fairqcm/"``), by their path after ``out/``; none without an
    archive.

    :param prefix: the start of the files' paths after ``out/``.
    :param archive: the archive (default :data:`ARCHIVE`); None: no archive.
    """
    if archive is None or not Path(archive).is_file():
        return {}
    path = Path(archive).resolve()
    members = _archive_members(str(path), path.stat().st_mtime_ns)
    return {name[len("out/"):]: data for name, data in members.items() if name.startswith("out/" + prefix)}


def archived(prefix: str, archive: str | Path | None = ARCHIVE) -> dict[str, dict[str, Any]]:
    """The archived JSON records under ``out/<prefix>``, parsed, by their path after ``out/`` (:func:`archive_files`)."""
    return {name: json.loads(data) for name, data in archive_files(prefix, archive).items() if name.endswith(".json")}


def records_by_file(runs_name: str, folder: str, results: str | Path, quick: bool, archive: str | Path | None,
                    job_file: Callable[[dict[str, Any]], str], timings: tuple[str, ...] = ("seconds",),
                    check: Callable[[dict[str, Any], str], dict[str, Any]] | None = None) -> dict[str, dict[str, Any]]:
    """Every record of a benchmark, flat (:func:`runner.load_flat`), by its file name before the runner
    (``job_file(flat)``): the archived ones under ``out/<runs_name>/`` (not for a smoke run; a ``throughput.json``
    beside them is no record), then the runner's of ``folder`` in the order they finished, a later one of a name
    taking the place of an earlier (as a run trained again replaced its file). ``check(record, where)``, if given,
    checks each one and returns it."""
    import runner

    out: dict[str, dict[str, Any]] = {}
    if not quick:
        for name, record in archived(runs_name + "/", archive).items():
            if Path(name).name != "throughput.json":
                out[Path(name).name] = record if check is None else check(record, f"{archive}:out/{name}")
    for rid, flat in runner.load_flat(results, folder, timings):
        out[job_file(flat)] = flat if check is None else check(flat, rid)
    return out


def restore(name: str, folder: Path, archive: str | Path | None = ARCHIVE) -> int:
    """Write the archive's files of ``out/<name>/`` into ``folder`` (the files not there yet); their number."""
    n = 0
    for rel, data in archive_files(name + "/", archive).items():
        path = folder / rel[len(name) + 1:]
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            n += 1
    return n


def archive_arg(args: argparse.Namespace) -> Path | None:
    """The archive a benchmark reads beside its results: ``--archive FILE``; ``--archive none``: none; by default
    :data:`ARCHIVE` when ``--out`` is the repository's ``benchmarks/`` (its RESULTS.md is made from them), none
    otherwise."""
    value = getattr(args, "archive", None)
    if value is None:
        return ARCHIVE if Path(args.out).resolve() == HERE else None
    return None if value == "none" else Path(value)


def results_root(args: argparse.Namespace) -> Path:
    """The records' folder of a benchmark on the runner: ``--results``, else ``$SB3_FAIR_RESULTS``, else
    ``<out>/results`` when ``--out`` is not the repository's ``benchmarks/``, else the repository's ``results/``."""
    import runner

    default = None if Path(args.out).resolve() == HERE else Path(args.out) / "results"
    return runner.resolve_results(getattr(args, "results", None), default)


def add_runner_arguments(parser: argparse.ArgumentParser) -> None:
    """The runner's options (``--results``, ``--address``, ``--local``: :func:`runner.add_arguments`) and
    ``--archive FILE|none``."""
    import runner

    runner.add_arguments(parser)
    parser.add_argument("--archive", metavar="FILE", default=None,
                        help="the archived records read beside the results (default: benchmarks/archive/records.tar.xz "
                             "when --out is the repository's benchmarks/, else none; 'none': none)")


class Output:
    """Where a reproduction writes: ``<out>/RESULTS.md`` (its section), ``<out>/*.png`` and, for a script not on the
    runner (every method benchmark is), the runs' records and models under ``<out>/out/<name>/``.

    :param out: the output folder (created when first written to).
    :param name: the reproduction's folder under ``<out>/out/``.
    """

    def __init__(self, out: str | Path, name: str) -> None:
        self.root = Path(out)
        self.name = name

    @property
    def runs(self) -> Path:
        """``<out>/out/<name>/``; for the repository's ``benchmarks/``, restored from :data:`ARCHIVE` when missing."""
        runs = self.root / "out" / self.name
        if not runs.exists() and self.root.resolve() == HERE and (n := restore(self.name, runs)):
            print(f"restored {n} records of benchmarks/out/{self.name}/ from {ARCHIVE.relative_to(HERE.parent)}",
                  flush=True)
        return runs

    @property
    def results(self) -> Path:
        """The ``RESULTS.md`` file whose sections the reproduction replaces."""
        return self.root / "RESULTS.md"

    def png(self, filename: str) -> Path:
        """A plot's path beside ``RESULTS.md``."""
        self.root.mkdir(parents=True, exist_ok=True)
        return self.root / filename

    def write_section(self, key: str, text: str) -> None:
        """Replace (or append) the section of ``RESULTS.md`` whose heading contains ``key``."""
        self.root.mkdir(parents=True, exist_ok=True)
        write_section(self.results, key, text)


def check_configs(configs: list[Any]) -> None:
    """Every run's settings, checked before the first trains (:func:`sb3_fair.experiment.run.check_configs`: each
    distinct config built once): a bad setting of the last run is reported before the first has trained."""
    from sb3_fair.experiment.run import check_configs as check

    check(list(configs))


@contextlib.contextmanager
def worker_pool(processes: int) -> Iterator[Any]:
    """The benchmarks' process pool (``spawn``), whose workers end with the script: Ctrl+C and SIGTERM raise in this
    process (``Pool``'s exit then terminates the workers, and the script exits with one line and status 130 / 143), and
    on Linux each worker also ends when the script is killed outright (``sb3_fair.experiment.processes``)."""
    import sys

    from sb3_fair.experiment.processes import Terminated, terminate_raises, worker_dies_with_parent

    try:
        with terminate_raises(), mp.get_context("spawn").Pool(processes, initializer=worker_dies_with_parent) as pool:
            yield pool
    except KeyboardInterrupt as err:  # Pool's exit has terminated the workers: say so in one line, not a traceback
        what = "terminated (SIGTERM)" if isinstance(err, Terminated) else "interrupted"
        print(f"{Path(sys.argv[0]).name}: {what}; every worker process was ended (the records of finished runs are kept: "
              "the same command goes on from them)", file=sys.stderr, flush=True)
        raise SystemExit(143 if isinstance(err, Terminated) else 130) from None


def _folder(text: str) -> str:
    """An argparse ``type``: a folder path (made when needed); an existing file is refused."""
    from sb3_fair.experiment.run import existing_ancestor

    ancestor = existing_ancestor(text)
    if ancestor.exists() and not ancestor.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is not a folder ({ancestor} is a file)")
    return text


def reproduce_parser(method: str, doc: str | None) -> argparse.ArgumentParser:
    """The command line of ``python benchmarks/<method>.py``: the module docstring as its description, and
    ``--out DIR``, the folder of ``RESULTS.md``, the plots and the runs (default: the repository's ``benchmarks/``).

    :param method: the benchmark's name (``"fairqcm"`` ...), shown in the program name.
    :param doc: the description (the module's docstring).
    """
    parser = argparse.ArgumentParser(prog=f"python benchmarks/{method}.py", description=doc,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=DEFAULT_OUT, metavar="DIR", type=_folder,
                        help="folder of RESULTS.md, the PNGs and the runs under out/ (default: the repository's benchmarks/)")
    return parser


def median_steps_per_s(makers: dict[str, Callable[[], Any]], steps: int, repeats: int = 3,
                       clock: Callable[[], float] = time.perf_counter) -> dict[str, float]:
    """Median ``learn(steps)`` steps/s of each model built by ``makers``, the repeats interleaved so
    that every model sees the same machine noise.

    :param clock: wall time by default; ``time.process_time`` gives steps per CPU second, which
        other processes on the machine disturb less (for one-thread training, the same figure on
        an idle machine).
    """
    runs: dict[str, list[float]] = {name: [] for name in makers}
    for _ in range(repeats):
        for name, make in makers.items():
            model = make()
            t0 = clock()
            model.learn(steps)
            runs[name].append(steps / (clock() - t0))
    return {name: float(np.median(v)) for name, v in runs.items()}


def write_section(path: Path, key: str, text: str) -> None:
    """Replace the section whose heading contains ``key`` in RESULTS.md, where it stands (or append it).

    Only one section is ever replaced and none is removed. A hand-written section (its heading says
    "written by hand") is never replaced, even when it names the generated section it reads. When several
    headings contain ``key`` (e.g. a smoke run's beside the real run's), the one equal to ``text``'s own
    heading is replaced; when none of them is, ``text`` is appended with a warning naming them, so that a
    key shorter than its heading never overwrites another run's section.

    :param path: the ``RESULTS.md`` file (created with its title when missing).
    :param key: a part of the heading (after ``## ``) of the section to replace.
    :param text: the new section, its ``## `` heading first.
    """
    import warnings

    head = "# Benchmark results\n\nEvery figure below was measured by the command in its heading.\n\n"
    old = path.read_text() if path.exists() else head
    parts = [p.rstrip() + "\n" for p in old.split("\n## ")]
    body = text.strip().removeprefix("## ") + "\n"
    headings = [p.splitlines()[0] for p in parts]
    hits = [i for i, h in enumerate(headings) if i > 0 and key in h and "written by hand" not in h]
    own = [i for i in hits if headings[i] == body.splitlines()[0]]
    if own or len(hits) == 1:
        parts[(own or hits)[0]] = body
    else:
        if hits:
            warnings.warn(f"{path}: {len(hits)} sections' headings contain {key!r} and none is {body.splitlines()[0]!r}; "
                          "the new section is appended and every old one kept: "
                          + "; ".join(repr(headings[i]) for i in hits), stacklevel=2)
        parts.append(body)
    path.write_text("\n## ".join(parts))


def paired_test(a: dict[int, float], b: dict[int, float], fmt: str = "{:.3f}") -> str:
    """``a − b`` over the seeds both have (paired by seed number): the mean difference ± its standard
    deviation, and the two-sided p-values of the paired t-test and of the exact Wilcoxon signed-rank test
    (SciPy's). With 5 pairs the smallest Wilcoxon p is 0.0625: at 5 seeds only the t-test can go below 0.05.
    Zero differences (e.g. two runs that both capture in every episode) are left out of the Wilcoxon test, as
    Wilcoxon did (SciPy's ``zero_method="wilcox"``), and the text says over how many pairs it ran.

    :param a: seed -> value of the first method.
    :param b: seed -> value of the second.
    :param fmt: the format of the difference.
    """
    from scipy.stats import ttest_rel, wilcoxon

    seeds = sorted(set(a) & set(b))
    diff = np.array([a[s] - b[s] for s in seeds])
    if len(seeds) < 2:
        return f"n = {len(seeds)}, no test" + (f" (difference {fmt.format(diff[0])})" if len(seeds) else "")
    text = f"{fmt.format(diff.mean())} ± {fmt.format(diff.std(ddof=1))} (n = {len(seeds)}"
    if not np.any(diff):
        return text + ", all differences 0)"
    t = ttest_rel([a[s] for s in seeds], [b[s] for s in seeds]).pvalue
    nonzero = diff[diff != 0]  # the exact test needs no zero difference: Wilcoxon's own rule drops them
    w = wilcoxon(nonzero, method="exact").pvalue
    over = "" if len(nonzero) == len(diff) else f" over the {len(nonzero)} non-zero differences"
    return text + f"; paired t p {_p(t)}, Wilcoxon p {_p(w)}{over})"


def paired_table(scores: dict[tuple[str, int], list[float]], a: str, others: Any, cols: list[str], fmt: str = "{:.3f}",
                 seeds_column: bool = True) -> list[str]:
    """A Markdown table of ``a`` minus each of ``others``, seed by seed, in each column: in how many seeds ``a`` is
    higher, then :func:`paired_test`. Rows of methods without a seed in common with ``a`` are left out; with none
    left, no table (``[]``).

    :param scores: ``(method, seed) -> one value per column``.
    :param a: the method compared.
    :param others: the methods it is compared with, in the table's order.
    :param cols: the columns' names.
    :param fmt: the format of the differences.
    :param seeds_column: a column with the number of paired seeds.
    """
    seeds_head, seeds_rule = ("seeds | ", "---|") if seeds_column else ("", "")
    lines = [f"| {a} − | {seeds_head}" + " | ".join(cols) + " |", f"|---|{seeds_rule}" + "---|" * len(cols)]
    for b in others:
        seeds = sorted({s for (m, s) in scores if m == a} & {s for (m, s) in scores if m == b})
        if not seeds:
            continue
        cells = []
        for k in range(len(cols)):
            x, y = ({s: scores[(m, s)][k] for s in seeds} for m in (a, b))
            cells.append(f"higher in {sum(x[s] > y[s] for s in seeds)}/{len(seeds)}; {paired_test(x, y, fmt)}")
        lines.append(f"| {b} | " + (f"{len(seeds)} | " if seeds_column else "") + " | ".join(cells) + " |")
    return lines if len(lines) > 2 else []


def _p(p: float) -> str:
    """A p-value as the reports write it: ``= 0.013``, or ``< 0.001`` where three decimals would show 0.000."""
    return f"= {p:.3f}" if p >= 0.0005 else "< 0.001"
