"""Summarise conformance results (the JSON-lines files that ``run.sh`` writes via ``SB3_FAIR_RESULTS``).

Usage::

    python conformance/summarize.py RESULTS.jsonl [MORE.jsonl ...] [--baseline PARENTS.jsonl] [--ids]

Prints, per file, a markdown block: outcome counts, total test time, the tests that constructed a
substitute, and the failures grouped by their crash line (exception message with numbers and
memory addresses masked). With ``--baseline`` (a ``--parents`` run), each failure is marked
``(also fails with the parent)`` when it does, and the counts restricted to the same test ids are
shown. ``--ids`` lists every failing test id under its group (otherwise at most 3 per group).
"""

from __future__ import annotations

import argparse
import json
import re
import signal
from collections import Counter, defaultdict
from pathlib import Path


def parent_id(nodeid: str) -> str:
    """The test id the parents' run gives the same test: ``test_x[False-FairDQN]`` -> ``test_x[False-DQN]``."""
    return re.sub(r"(?<=[\[-])Fair(?=[A-Z][A-Za-z0-9]*[\]-])", "", nodeid)


def load(path: str) -> dict[str, dict]:
    records = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                rec = json.loads(line)
                records[rec["nodeid"]] = rec
    return records


def short_path(where: str) -> str:
    """``sb3_fair/...``, ``stable_baselines3/...``, ``tests/...`` or ``multiprocessing/...`` instead of the full path."""
    where = re.sub(r"^.*/lib/python3\.\d+/(site-packages/)?", "", where)
    where = re.sub(r"^.*/\.cache/conformance/ref-[0-9a-f]+/", "", where)
    return re.sub(r"^.*/\.cache/conformance/[^/]+/(tests/)", r"\1", where)


def cause_key(message: str) -> str:
    message = re.sub(r"^(ValueError: env) \w+ (does not honour)", r"\1 <Env> \2", message)
    message = re.sub(r"; got \w+$", "; got <type>", message)
    message = re.sub(r"0x[0-9a-f]+", "0x…", message)
    message = re.sub(r"/tmp/\S+", "/tmp/…", message)
    message = re.sub(r"(?<![A-Za-z_])\d+(\.\d+)?(e-?\d+)?", "N", message)
    return message.replace("`", "'")[:220]


def summarize(path: str, baseline: dict[str, dict] | None, all_ids: bool) -> str:
    recs = load(path)
    counts = Counter(r["outcome"] for r in recs.values())
    seconds = sum(r["duration"] for r in recs.values())
    out = [f"### {Path(path).name}", ""]
    out.append("counts: " + ", ".join(f"{n} {k}" for k, n in counts.most_common()) + f" (of {len(recs)}; test time {seconds:.0f} s)")
    touched = [r for r in recs.values() if r["constructed"]]
    if touched:
        tc = Counter(r["outcome"] for r in touched)
        out.append(f"tests constructing a substitute: {len(touched)} (" + ", ".join(f"{n} {k}" for k, n in tc.most_common()) + ")")
        per: dict[str, Counter] = defaultdict(Counter)
        for r in touched:
            for name in r["constructed"]:
                per[name][r["outcome"]] += 1
        if len(per) > 1:
            out.append("per substitute: " + "; ".join(f"{name}: " + ", ".join(f"{n} {k}" for k, n in c.most_common()) for name, c in sorted(per.items())))
    if baseline is not None:
        same = [baseline[parent_id(n)]["outcome"] for n in recs if parent_id(n) in baseline]
        bc = Counter(same)
        out.append(f"the same {len(same)} tests with the parents: " + ", ".join(f"{n} {k}" for k, n in bc.most_common()))
    out.append("")
    groups: dict[str, list[dict]] = defaultdict(list)
    for r in recs.values():
        if r["outcome"] in ("failed", "error", "xpassed"):
            groups[cause_key(r["crash"])].append(r)
    for key, rs in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        where = Counter(short_path(r["where"]) for r in rs).most_common(1)[0][0]
        out.append(f"- **{len(rs)}** × `{key}`  (at {where})")
        shown = rs if all_ids else rs[:3]
        for r in shown:
            note = ""
            pid = parent_id(r["nodeid"])
            if baseline is not None and pid in baseline and baseline[pid]["outcome"] in ("failed", "error"):
                note = " (also fails with the parent)"
            out.append(f"  - `{r['nodeid']}` [{r['outcome']} in {r['phase']}]{note}")
        if len(rs) > len(shown):
            out.append(f"  - … {len(rs) - len(shown)} more")
    out.append("")
    return "\n".join(out)


def main() -> None:
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet under `| head`
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--baseline")
    ap.add_argument("--ids", action="store_true")
    args = ap.parse_args()
    baseline = load(args.baseline) if args.baseline else None
    for f in args.files:
        print(summarize(f, baseline, args.ids))


if __name__ == "__main__":
    main()
