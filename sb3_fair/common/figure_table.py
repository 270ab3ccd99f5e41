"""The one table of fairness figures: each figure has one name in the monitor, the trackers, evaluation, the CLI and the logs.

Every figure is a function of one episode's per-stakeholder (per-agent) returns and their groups
(plus legitimate factors and counterfactual twins where they exist), computed by
:mod:`sb3_fair.metrics`. :func:`episode_figures` computes the applicable ones; the fairness
callbacks log their mean over recent episodes as ``fairness/<name>``.

Every signed group gap is positive when the protected group is ahead (``dp``, ``dp_norm``,
``csp_mean``, ``csp_norm_<k>``, ``cf_gap``, ``cf_norm``); the ``_abs`` figures are their sizes. The
normalised (``_norm``) figures have the magnitude of fair-PPO's Table 1, which prints them with the
opposite sign (La Malfa et al. 2025, arXiv:2502.03953).

======================  =========================================================================
name                    figure
======================  =========================================================================
``group_<g>_mean``      mean return of group ``g`` (one entry per group present)
``utilitarian``         sum of the returns
``egalitarian``         minimum return
``log_nash``            sum of ``log(1 + return)``; left out of an episode with a return <= -1
``gini``                Gini index of the returns; left out of an episode with a negative return
``max_unfairness``      largest ``|return_i - mean|``
``group_gap``           max minus min group mean (with two or more groups)
``dp``                  demographic parity gap: protected group's mean minus the others'
``dp_abs``              ``|dp|``
``dp_norm``             normalised DP of fair-PPO's Table 1, ``(R_s - R_ns) / max(|R_s| + |R_ns|, 1)``
``csp_mean``            conditional statistical parity: DP gap within strata, size-weighted mean
``csp_mean_abs``        the same mean of ``|gap|``
``csp_norm_<k>``        normalised DP within stratum ``k`` of the legitimate factor (family ``csp_norm``)
``cf_gap``              counterfactual fairness: mean over twin pairs of protected minus unprotected twin
``cf_gap_abs``          ``|cf_gap|``
``cf_norm``             normalised counterfactual fairness of fair-PPO's Table 1, oriented as ``cf_gap``
======================  =========================================================================

The DP and CSP figures need exactly two groups in the episode, one of them the protected group;
CSP needs factors, CF twins with at least one pair of one protected and one unprotected member (pairs
whose members share a group are left out).

Renamed in 0.5.0 (:data:`RENAMED_FIGURES`), each with its sign flipped to the one convention (the
magnitude is unchanged): ``dp_normalized`` -> ``dp_norm``, ``csp_<k>`` -> ``csp_norm_<k>`` (family
``csp_strata`` -> ``csp_norm``), ``cf`` -> ``cf_gap``, ``cf_abs`` -> ``cf_gap_abs``, ``cf_normalized`` ->
``cf_norm``. The old names are refused with the new one (:func:`check_not_renamed`), so that no saved
config or dashboard silently reads the opposite sign.

Two figures have a restricted domain (:data:`DOMAINS`), that of their metric function: ``log_nash``
(Σ log(1 + u_i) is undefined for ``u_i <= -1``; Alamdari et al. 2024, §6.1) and ``gini`` (the Gini
index is a share of the total, meaningless once a return is negative; its metric needs ``u_i >= 0``).
An episode outside a figure's domain has no value for it: the figure is left out of that episode's
figures (so the means over recent episodes and evaluation's averages use the episodes where it is
defined) and :func:`episode_figures` reports it through ``on_out_of_domain``, with which the
monitors warn once per figure. Called directly, the metric functions raise a ``ValueError``
outside their domain. References: Alamdari, Klassen, Creager, McIlraith (2024), "Remembering
to Be Fair: Non-Markovian Fairness in Sequential Decision Making", arXiv:2312.04772 (welfare);
fair-PPO (the group figures): see :mod:`sb3_fair.metrics`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, SupportsFloat, cast

import numpy as np

from sb3_fair import metrics


@dataclass(frozen=True)
class _Episode:
    returns: np.ndarray
    groups: np.ndarray
    factors: np.ndarray | None
    twins: np.ndarray | None
    protected: int

    @property
    def two_groups(self) -> bool:
        return bool(np.unique(self.groups).size == 2 and np.any(self.groups == self.protected))


def _csp_strata(ep: _Episode) -> bool:
    if not ep.two_groups or ep.factors is None:
        return False
    return any(
        np.any(ep.groups[ep.factors == k] == ep.protected) and np.any(ep.groups[ep.factors == k] != ep.protected)
        for k in np.unique(ep.factors)
    )


def _cf_pairs(ep: _Episode) -> bool:
    return ep.twins is not None and metrics.counterfactual_pairs(ep.groups, ep.twins, ep.protected)[0].size > 0


def _cf(ep: _Episode) -> float:
    return metrics.counterfactual_gap(ep.returns, ep.groups, ep.twins, ep.protected)


def _csp(ep: _Episode) -> dict[str, Any]:
    return metrics.conditional_statistical_parity(ep.returns, ep.groups, ep.factors, ep.protected)


_Compute = Callable[[_Episode], dict[str, float]]
_Applies = Callable[[_Episode], bool]

#: ``name -> (applies to this episode?, figures)``; a family such as ``group_means`` gives several entries
FIGURES: dict[str, tuple[_Applies, _Compute]] = {
    "group_means": (
        lambda ep: True,
        lambda ep: {f"group_{g}_mean": v for g, v in metrics.group_means(ep.returns, ep.groups).items()},
    ),
    "utilitarian": (lambda ep: True, lambda ep: {"utilitarian": metrics.utilitarian(ep.returns)}),
    "egalitarian": (lambda ep: True, lambda ep: {"egalitarian": metrics.egalitarian(ep.returns)}),
    "log_nash": (lambda ep: True, lambda ep: {"log_nash": metrics.log_nash(ep.returns)}),  # domain: DOMAINS
    "gini": (lambda ep: True, lambda ep: {"gini": metrics.gini(ep.returns)}),
    "max_unfairness": (
        lambda ep: True,
        lambda ep: {"max_unfairness": float(np.max(np.abs(metrics.unfairness(ep.returns))))},
    ),
    "group_gap": (
        lambda ep: np.unique(ep.groups).size >= 2,
        lambda ep: {"group_gap": -metrics.parity(list(metrics.group_means(ep.returns, ep.groups).values()))},
    ),
    "dp": (
        lambda ep: ep.two_groups,
        lambda ep: {"dp": metrics.demographic_parity(ep.returns, ep.groups, ep.protected)},
    ),
    "dp_abs": (
        lambda ep: ep.two_groups,
        lambda ep: {"dp_abs": abs(metrics.demographic_parity(ep.returns, ep.groups, ep.protected))},
    ),
    "dp_norm": (
        lambda ep: ep.two_groups,
        lambda ep: {"dp_norm": metrics.demographic_parity_norm(ep.returns, ep.groups, ep.protected)},
    ),
    "csp_mean": (_csp_strata, lambda ep: {"csp_mean": _csp(ep)["mean"]}),
    "csp_mean_abs": (_csp_strata, lambda ep: {"csp_mean_abs": _csp(ep)["mean_abs"]}),
    "csp_norm": (
        _csp_strata,
        lambda ep: {
            f"csp_norm_{k}": v
            for k, v in metrics.conditional_statistical_parity_norm(
                ep.returns, ep.groups, ep.factors, ep.protected
            ).items()
        },
    ),
    "cf_gap": (_cf_pairs, lambda ep: {"cf_gap": _cf(ep)}),
    "cf_gap_abs": (_cf_pairs, lambda ep: {"cf_gap_abs": abs(_cf(ep))}),
    "cf_norm": (
        _cf_pairs,
        lambda ep: {"cf_norm": metrics.counterfactual_gap_norm(ep.returns, ep.groups, ep.twins, ep.protected)},
    ),
}
#: every figure of the table
FIGURE_NAMES: tuple[str, ...] = tuple(FIGURES)
#: ``name -> (the episode's returns are in the figure's domain?, why not, in words)`` for the figures whose metric
#: has a restricted domain; outside it the figure is left out of the episode's figures
DOMAINS: dict[str, tuple[Callable[[np.ndarray], bool], str]] = {
    "log_nash": (lambda r: bool(np.all(r > -1)), "log-Nash welfare sum_i log(1 + u_i) is undefined for a return <= -1"),
    "gini": (lambda r: bool(np.all(r >= 0)), "the Gini index is not meaningful for negative returns"),
}


#: figure names of sb3-fair < 0.5.0 that were renamed when their sign flipped to the one convention (positive = the
#: protected group ahead): ``old -> new``; ``csp_<k>`` (a stratum's figure) became ``csp_norm_<k>`` likewise
RENAMED_FIGURES: dict[str, str] = {
    "dp_normalized": "dp_norm",
    "csp_strata": "csp_norm",
    "cf": "cf_gap",
    "cf_abs": "cf_gap_abs",
    "cf_normalized": "cf_norm",
}
_OLD_STRATUM = re.compile(r"^csp_(-?\d+)$")


def renamed_figure(name: str) -> str | None:
    """The 0.5.0 name of ``name`` if it is a figure name of sb3-fair < 0.5.0 whose sign flipped (:data:`RENAMED_FIGURES`,
    ``csp_<k>``), else None. A logged key such as ``fairness/cf`` or ``eval/dp_normalized`` is matched by its last part.
    """
    prefix, _, last = name.rpartition("/")
    new = RENAMED_FIGURES.get(last)
    stratum = _OLD_STRATUM.match(last)
    if stratum is not None:
        new = f"csp_norm_{stratum.group(1)}"
    if new is None:
        return None
    return f"{prefix}/{new}" if prefix else new


def check_not_renamed(name: Any, where: str) -> None:
    """A ValueError naming ``where`` when ``name`` is a figure name that 0.5.0 renamed (:func:`renamed_figure`)."""
    new = renamed_figure(name) if isinstance(name, str) else None
    if new is not None:
        raise ValueError(
            f"{where}: figure {name!r} was renamed to {new!r} in 0.5.0; its sign is now positive = protected group ahead"
        )


def check_figure_names(names: Iterable[str], argument: str = "metrics") -> tuple[str, ...]:
    """``names``, checked against :data:`FIGURE_NAMES`; the error names ``argument`` and the accepted values."""
    if isinstance(names, str):
        names = [names]
    elif isinstance(names, bytes) or not np.iterable(names):
        raise ValueError(
            f"{argument} must be a figure name or a list of them; accepted values: {list(FIGURE_NAMES)}, got {names!r}"
        )
    for name in names:
        check_not_renamed(name, argument)
        if not isinstance(name, str) or name not in FIGURES:
            raise ValueError(f"{argument}: unknown figure {name!r}; accepted values: {list(FIGURE_NAMES)}")
    return tuple(names)


def episode_figures(
    returns: Any,
    groups: Any,
    factors: Any | None = None,
    twins: Any | None = None,
    protected: int = 1,
    names: Sequence[str] | None = None,
    on_out_of_domain: Callable[[str, str], None] | None = None,
) -> dict[str, float]:
    """The figures of one episode that apply to it (table in the module docstring), by their one name.

    A figure whose domain (:data:`DOMAINS`) the returns leave, e.g. ``gini`` of an episode with a
    negative return, is left out (never NaN).

    :param returns: each stakeholder's (agent's) episode return.
    :param groups: each stakeholder's protected attribute.
    :param factors: each stakeholder's legitimate factor (adds CSP).
    :param twins: each agent's counterfactual twin, as an index into ``returns`` (adds CF where a pair has one
        protected and one unprotected member).
    :param protected: the group value of the protected stakeholders.
    :param names: the figures to compute (default: all of :data:`FIGURE_NAMES`); those that do not
        apply to this episode are left out.
    :param on_out_of_domain: called as ``on_out_of_domain(name, reason)`` for each figure left out
        because the returns are outside its domain.
    :return: ``{figure: float}``.
    """
    ep = _Episode(
        np.asarray(returns, dtype=np.float64),
        np.asarray(groups, dtype=np.int64),
        None if factors is None else np.asarray(factors, dtype=np.int64),
        None if twins is None else np.asarray(twins, dtype=np.int64),
        int(protected),
    )
    out: dict[str, float] = {}
    for name in FIGURE_NAMES if names is None else names:
        applies, compute = FIGURES[name]
        if name in DOMAINS and not DOMAINS[name][0](ep.returns):
            if on_out_of_domain is not None:
                on_out_of_domain(name, DOMAINS[name][1])
            continue
        if applies(ep):
            out.update({k: float(v) for k, v in compute(ep).items()})
    return out


def scalar_figures(summary: dict[str, Any]) -> dict[str, float]:
    """The scalar entries of an ``info["fairness"]`` summary (leaves out the ``returns`` array)."""
    # NumPy's np.isscalar also admits str, bytes and complex; a summary's scalars are real numbers
    return {k: float(cast(SupportsFloat, v)) for k, v in summary.items() if np.isscalar(v)}


__all__ = [
    "DOMAINS",
    "FIGURES",
    "FIGURE_NAMES",
    "RENAMED_FIGURES",
    "check_figure_names",
    "check_not_renamed",
    "episode_figures",
    "renamed_figure",
    "scalar_figures",
]
