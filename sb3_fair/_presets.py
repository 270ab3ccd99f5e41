"""The checks that ``FairDQN.from_preset`` and ``FairPPO.from_preset`` share: a preset's name, and an env that is
clearly not the preset's (:mod:`sb3_fair.dqn.presets`, :mod:`sb3_fair.ppo.presets`).

A module of the algorithms layer, below the algorithm subpackages, which may import it (``docs/development.md``, "The
package's layers"); up to 0.4 these lived in :mod:`sb3_fair.common.validation`, which is below the envs they check.
"""

from __future__ import annotations

from typing import Any

from sb3_fair.common.validation import env_class

#: preset names of earlier releases -> what they are now, per algorithm (for the error message)
RENAMED_PRESETS: dict[str, str] = {
    "lending": "'lending' named two presets of different envs up to 0.3.0: FairDQN.from_preset's is now 'loan_applicants' "
    "(sb3_fair/LoanApplicants-v0, Alamdari et al. 2024), FairPPO.from_preset's 'delayed_impact_lending' "
    "(sb3_fair/DelayedImpactLending-v0, Hu et al. 2024)",
}


def check_preset_name(name: Any, accepted: Any) -> None:
    """Raise a ValueError naming ``name`` and the ``accepted`` preset names (and what a renamed one became)."""
    if isinstance(name, str) and name in accepted:
        return
    note = f" ({RENAMED_PRESETS[name]})" if isinstance(name, str) and name in RENAMED_PRESETS else ""
    raise ValueError(f"preset must be one of {list(accepted)}, got {name!r}{note}")


def check_preset_env(env: Any, name: str, expected: dict[str, tuple[type, str]], settings: str) -> None:
    """Refuse an ``env`` that is clearly not the env of preset ``name``.

    Refused: an env whose bare class is another sb3-fair env (or a subclass of one) than the preset's,
    given as an id, an env (wrapped or not) or a VecEnv. Passed: the preset's env or a subclass of it, and
    any env the check cannot identify (an unregistered id, a user's own env class, a VecEnv of other processes
    without a registered spec).

    :param env: what ``from_preset`` got.
    :param name: the preset's name.
    :param expected: each preset's ``(env class, env id)``.
    :param settings: what the preset sets that belongs to its env (for the message).
    :raises ValueError: naming ``name``, the env and the preset that fits it, if any.
    """
    cls = env_class(env)
    want, want_id = expected[name]
    if cls is None or issubclass(cls, want) or not is_sb3_fair_env(cls):
        return
    given = f"{env!r} ({cls.__name__})" if isinstance(env, str) else cls.__name__
    fits = [other for other, (c, _) in expected.items() if issubclass(cls, c)]
    remedy = f"pass a {want.__name__} (e.g. {want_id!r}) for name={name!r}"
    hint = (
        f"use name={fits[0]!r} for {cls.__name__}, or {remedy}"
        if fits
        else f"{remedy} (no preset is made for {cls.__name__})"
    )
    raise ValueError(
        f"name={name!r} is the preset of {want_id} ({want.__name__}), but env is {given}: the preset's {settings} belong to "
        f"its own env, so this env would train with another task's settings; {hint}"
    )


def is_sb3_fair_env(cls: type) -> bool:
    """Whether ``cls`` is one of sb3-fair's envs (:mod:`sb3_fair.envs`) or a subclass of one."""
    return any(getattr(c, "__module__", "").startswith("sb3_fair.envs") for c in cls.__mro__)
