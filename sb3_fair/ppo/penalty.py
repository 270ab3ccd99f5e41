"""fair-PPO's group penalty as a reweighting of each agent's advantage (paper 001 §4.2).

Derivation. Per game instance with n agents, FairPPO maximises

    J = (1/n) sum_x J_x - lambda * (alpha * D_retro + beta * D_pro),

paper 001's fair-PPO objective (the PPO loss plus ``lambda * L^fair``, Eqs. 5-7) with the penalty
``D = sum_k |C_k . v|`` written through the contrast matrix ``C`` of
:func:`sb3_fair.metrics.group_contrasts` (DP: one row, group means; CSP: one row per stratum of the
legitimate factor; CF: one row per agent and its counterfactual twin), where ``v`` is the vector of
the agents' returns realised so far in the episode (retrospective part) or of the critic's values
``V(o_x)`` (prospective part). Each entry of ``v`` estimates agent x's return, whose policy gradient
is ``grad J_x = E[A_x grad log pi(a_x | o_x)]``. Hence

    grad |C_k . v| = sign(C_k . v) sum_x C_kx grad J_x,

and the whole gradient is ``(1/n) sum_x w_x grad J_x`` with the per-agent weight

    w_x = 1 - lambda * n * sum_k C_kx * (alpha * sign(C_k . R) + beta * sign(C_k . V)),

i.e. PPO's clipped surrogate with ``A'_x = w_x * A_x``. For DP with groups G1 and G0 this is
``1 - lambda * n * c_x * (alpha * sign(D_retro) + beta * sign(D_pro))`` with
``c_x = +1/|G1|`` or ``-1/|G0|``. The signs are taken per instance and timestep (the realised part
from the rewards up to that step), so the agents of the group ahead get a smaller (possibly
negative) weight and those behind a larger one: the penalty moves the actor. The critic's
regression target is left alone.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sb3_fair.metrics import group_contrasts

METRICS = ("dp", "csp", "cf")


def advantage_weights(
    realised: np.ndarray,
    values: np.ndarray,
    groups: np.ndarray,
    agents_per_instance: int,
    metric: str = "dp",
    alpha: float = 0.5,
    beta: float = 0.5,
    coef: float = 1.0,
    factors: np.ndarray | None = None,
    twins: np.ndarray | None = None,
    protected: int = 1,
) -> tuple[np.ndarray, dict[str, float]]:
    """Per-sample advantage weights ``w`` of fair-PPO's penalty (module docstring) for a rollout.

    All arrays are ``(T, n_slots)`` with slots instance-major (``agents_per_instance`` agents per
    game instance). ``twins`` holds each slot's twin as an index *within its instance*.

    :return: ``(weights, stats)``; ``stats`` holds ``penalty_retro`` and ``penalty_pro``, the means
        of ``sum_k |C_k . R|`` and ``sum_k |C_k . V|`` over instances and steps.
    """
    T, N = realised.shape
    n = int(agents_per_instance)
    if N % n:
        raise ValueError(f"agents_per_instance ({n}) must divide the number of slots ({N})")
    shape = (T * (N // n), n)
    R = np.asarray(realised, dtype=np.float64).reshape(shape)
    V = np.asarray(values, dtype=np.float64).reshape(shape)
    G = np.asarray(groups).reshape(shape)
    F = None if factors is None else np.asarray(factors).reshape(shape)
    W = None if twins is None else np.asarray(twins).reshape(shape)
    weights = np.ones(shape)
    retro = np.zeros(shape[0])
    pro = np.zeros(shape[0])
    keys: dict[bytes, list[int]] = {}
    for row in range(shape[0]):
        key = G[row].tobytes() + (b"" if F is None else F[row].tobytes()) + (b"" if W is None else W[row].tobytes())
        keys.setdefault(key, []).append(row)
    for rows_list in keys.values():
        rows = np.asarray(rows_list)
        r0 = rows[0]
        C = group_contrasts(G[r0], metric, factors=None if F is None else F[r0], twins=None if W is None else W[r0], protected=protected)
        if C.shape[0] == 0:
            continue
        d_retro = R[rows] @ C.T
        d_pro = V[rows] @ C.T
        retro[rows] = np.abs(d_retro).sum(axis=1)
        pro[rows] = np.abs(d_pro).sum(axis=1)
        grad = (alpha * np.sign(d_retro) + beta * np.sign(d_pro)) @ C
        weights[rows] = 1.0 - coef * n * grad
    stats = {"penalty_retro": float(retro.mean()), "penalty_pro": float(pro.mean())}
    return weights.reshape(T, N), stats


def check_metric(metric: Any) -> str:
    """``metric`` if it is one of :data:`METRICS`; a clear error naming the argument otherwise."""
    if metric not in METRICS:
        raise ValueError(f"fairness must be one of {list(METRICS)}, got {metric!r}")
    return str(metric)
