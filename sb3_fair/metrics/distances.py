"""Distances between distributions and spreads of vectors: Wasserstein-1 (1-D and between point clouds), the L2 gap
of two pmfs, smoothed histograms, the largest deviation from the mean. The long-term gaps of Hu et al. (2024,
arXiv:2401.06318) are built from them."""

from __future__ import annotations

from typing import Any

import numpy as np

from sb3_fair.metrics._checks import _as_array, _as_vector, _nonnegative_number
from sb3_fair.metrics.welfare import unfairness


def wasserstein_1(support: Any, p: Any, q: Any) -> float:
    """Exact 1-D Wasserstein-1 distance between two weighted distributions on one ordered support.

    Hu et al. 2024, Def. 2 (the long-term fairness gap between the groups' credit distributions).
    Computed with :func:`scipy.stats.wasserstein_distance`; weights need not be normalised.
    """
    from scipy.stats import wasserstein_distance

    x = _as_vector(support, "support")
    a = _as_vector(p, "p")
    b = _as_vector(q, "q")
    if a.shape != x.shape or b.shape != x.shape:
        raise ValueError("support, p and q must have the same length")
    if np.any(a < 0) or np.any(b < 0) or a.sum() <= 0 or b.sum() <= 0:
        raise ValueError("p and q must be non-negative with positive mass")
    return float(wasserstein_distance(x, x, u_weights=a, v_weights=b))


def point_cloud_wasserstein(x: Any, y: Any) -> float:
    """Exact Wasserstein-1 between two equal-size clouds of points with uniform weights, Euclidean cost.

    The optimal plan between two uniform clouds of n points is a matching (Birkhoff), found by
    :func:`scipy.optimize.linear_sum_assignment`; the distance is the mean matched distance. Hu et
    al.'s (2024) figures plot this statistic (with geomloss's Sinkhorn at blur 0.01, which is close
    to exact) between the groups' per-episode vectors at each time step: lending, the two groups'
    credit pmfs over 10 episodes (Fig. 1b); epidemic, the two communities' S/I/R counts over 200
    episodes (Fig. 4b).

    :param x: shape ``(n, d)`` (or ``(n,)`` for points on a line).
    :param y: the same shape as ``x``.
    """
    from scipy.optimize import linear_sum_assignment
    from scipy.spatial.distance import cdist

    a = _as_array(x, "x")
    b = _as_array(y, "y")
    a = a[:, None] if a.ndim == 1 else a
    b = b[:, None] if b.ndim == 1 else b
    if a.ndim != 2 or a.shape != b.shape or a.shape[0] == 0:
        raise ValueError(
            f"x and y must be non-empty clouds of the same shape (n, d), got {np.shape(x)} and {np.shape(y)}"
        )
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise ValueError("x and y must be finite")
    cost = cdist(a, b)
    rows, cols = linear_sum_assignment(cost)
    return float(cost[rows, cols].mean())


def l2_distribution_gap(p: Any, q: Any) -> float:
    """Euclidean distance between two probability mass functions (the distance Hu et al.'s (2024) plots use)."""
    a = _as_vector(p, "p")
    b = _as_vector(q, "q")
    if a.shape != b.shape:
        raise ValueError(f"p and q must have the same length, got {a.size} and {b.size}")
    return float(np.linalg.norm(a - b))


def smoothed_distribution(counts: Any, prior: Any, weight: float) -> np.ndarray:
    """``(counts + weight * prior) / (sum(counts) + weight)``: a histogram smoothed with pseudo-counts.

    Used for the windowed credit distributions whose Wasserstein-1 distance is Hu et al.'s (2024,
    arXiv:2401.06318, §VI-A) long-term gap: ``weight`` pseudo-applicants spread as ``prior`` (the
    group's current true pmf) are added to the group's window counts, so a group with few or no
    applicants in the window gets (nearly) its true pmf instead of a one- or zero-sample histogram.
    With ``weight = 0`` it is the raw empirical distribution.

    :param counts: non-negative counts per bin (e.g. a group's applicants per credit cluster).
    :param prior: non-negative weights per bin, same length, positive total; normalised here.
    :param weight: the number of pseudo-counts k >= 0 given to ``prior``.
    :return: float64 pmf over the bins (sums to 1).
    :raises ValueError: on bad inputs, or when ``counts`` sum to 0 and ``weight`` is 0 (undefined).
    """
    c = _as_vector(counts, "counts")
    q = _as_vector(prior, "prior")
    k = _nonnegative_number(weight, "weight")
    if c.shape != q.shape:
        raise ValueError(f"counts and prior must have the same length, got {c.shape} and {q.shape}")
    if not (np.all(np.isfinite(c)) and np.all(np.isfinite(q))) or np.any(c < 0) or np.any(q < 0) or q.sum() <= 0:
        raise ValueError("counts must be finite and >= 0, prior finite and >= 0 with positive mass")
    total = c.sum() + k
    if total <= 0:
        raise ValueError("smoothed_distribution is undefined for empty counts with weight 0")
    return (c + k * q / q.sum()) / total


def count_vector_distance(u: Any, v: Any) -> float:
    """1-D Wasserstein-1 between the *entries* of two count vectors, read as two samples of values.

    The long-term gap of Hu et al.'s (2024) lending code (§VI-A, training signal): the groups'
    windowed credit-cluster count vectors are handed to a 1-D optimal-transport loss as clouds of
    points whose positions are the counts. The result equals the mean absolute difference of the
    sorted vectors. It is invariant to permuting the entries, so it does **not** measure a shift
    along the credit axis (two pmfs one cluster apart give 0); use :func:`wasserstein_1` for that.
    Provided to reproduce the authors' signal. Computed with :func:`scipy.stats.wasserstein_distance`.

    :param u: the first count vector (e.g. group 0's windowed applicants per credit cluster).
    :param v: the second count vector (any non-zero length; the same length in the lending env).
    :return: the 1-D Wasserstein-1 distance between the entries of ``u`` and of ``v``, in count units.
    """
    from scipy.stats import wasserstein_distance

    return float(wasserstein_distance(_as_vector(u, "u"), _as_vector(v, "v")))


def _geomloss_samples_loss() -> Any:
    """geomloss's ``SamplesLoss`` (an optional dependency), or an ImportError naming the extra that installs it."""
    try:
        from geomloss import SamplesLoss
    except ImportError as error:
        raise ImportError(
            'sinkhorn_count_distance needs geomloss: pip install "sb3-fair[authors]" (or pip install geomloss)'
        ) from error
    return SamplesLoss


def sinkhorn_count_distance(u: Any, v: Any, blur: float = 0.01) -> float:
    """:func:`count_vector_distance` as Hu et al.'s (2024) lending code computes it: geomloss's debiased Sinkhorn
    divergence (``SamplesLoss("sinkhorn", p=1, blur=blur)``, its default ε-scaling) between the entries of the two
    count vectors read as 1-D point clouds with uniform weights.

    The authors' training signal as their code sees it. It is an approximation of the exact 1-D W1 and reads below it
    (about 1 lower on average, up to 4.5, for random count vectors of a 300-applicant window, geomloss 0.2.5); in
    the authors' code F-PPO's early training changes with this difference (``benchmarks/RESULTS.md``). Needs geomloss
    (``pip install "sb3-fair[authors]"``); computed in float64 on the CPU.

    :param u: the first count vector.
    :param v: the second count vector.
    :param blur: geomloss's ``blur`` (the authors': 0.01).
    :return: the Sinkhorn divergence, in count units.
    """
    samples_loss = _geomloss_samples_loss()
    import torch as th

    a, b = _as_vector(u, "u"), _as_vector(v, "v")
    if max(a.max(), b.max()) == min(a.min(), b.min()):  # one value everywhere: geomloss cannot scale a zero diameter
        return 0.0
    x = th.as_tensor(a, dtype=th.float64).view(-1, 1)
    y = th.as_tensor(b, dtype=th.float64).view(-1, 1)
    return float(samples_loss("sinkhorn", p=1, blur=blur)(x, y).item())


def max_mean_deviation(values: Any, normalize: bool = False) -> float:
    """Largest deviation from the mean, ``max_k |v_k - mean(v)|``, optionally divided by ``max(v)``.

    Hu et al.'s (2024) long-term gap of attention allocation (§VI-B): on the sites' true incident
    rates, unnormalised (their evaluation), or on the incidents counted per site over a window,
    divided by the largest count (their training signal; ``normalize=True``, counts >= 0, 0 when they are all 0).

    :param values: a non-empty 1-D array, one number per site: e.g. the rates Λ or the incident counts h.
    :param normalize: divide by ``max(v)``; the values must then be >= 0, and all zeros give 0.
    :return: ``max_k |v_k - mean(v)|``, or that divided by ``max(v)`` when ``normalize``.
    """
    v = _as_vector(values, "values")
    if not isinstance(normalize, (bool, np.bool_)):
        raise ValueError(f"normalize must be True or False, got {normalize!r}")
    dev = float(np.max(np.abs(unfairness(v))))
    if not normalize:
        return dev
    if np.any(v < 0):
        raise ValueError(f"max_mean_deviation with normalize=True needs values >= 0 (counts), got {v.tolist()}")
    top = float(v.max())
    return dev / top if top > 0 else 0.0
