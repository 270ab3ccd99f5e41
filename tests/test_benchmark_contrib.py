"""``python benchmarks/contrib_algorithms.py``: the doughnut part's paired tests."""

from __future__ import annotations

import contrib_algorithms as benchmark


def test_donut_pairs_known_answer() -> None:
    recurrent, ppo, fairqcm = benchmark.DONUT_METHODS
    results = [{"method": recurrent, "seed": s, "score": 300.0 + s} for s in range(3)]
    results += [{"method": ppo, "seed": s, "score": 1000.0 + 2 * s} for s in range(3)]
    results += [{"method": fairqcm, "seed": s, "score": 1000.0 + 2 * s + (1.0 if s else -1.0)} for s in range(4)]
    text = benchmark.donut_pairs(results)
    # PPO − recurrent: 700, 701, 702 (sd 1); FairQCM − PPO: -1, +1, +1 over the 3 seeds both have (seed 3 unpaired)
    assert f"| {ppo} − {recurrent} | 3 of 3 | 701.0 ± 1.0 (n = 3; paired t p < 0.001, Wilcoxon p = 0.250) |" in text
    assert f"| {fairqcm} − {ppo} | 2 of 3 | 0.3 ± 1.2 (n = 3; paired t p = 0.667" in text
    assert f"| {fairqcm} − {recurrent} | 3 of 3 |" in text
    assert benchmark.donut_pairs(results[:1]) == ""
