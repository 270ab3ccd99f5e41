"""The checks of a Fair class's ``load``: the zip's policy family against the class's, the keyword arguments and
settings given beside the zip (and those saved in it) against the constructor's rules.

:func:`constructor_arguments` and :func:`fairness_parameters` say which keyword arguments a class takes (the
experiment's config checks read them too).
"""

from __future__ import annotations

import io
import json
import pathlib
import warnings
import zipfile
from typing import Any, cast

from stable_baselines3.common.save_util import json_to_data, open_path


# the policy families whose classes the algorithms cannot exchange, most specific first
def _policy_families() -> list[tuple[type, str]]:
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
    from sb3_contrib.common.recurrent.policies import RecurrentActorCriticPolicy
    from stable_baselines3.common.policies import ActorCriticPolicy
    from stable_baselines3.dqn.policies import DQNPolicy
    from stable_baselines3.sac.policies import SACPolicy
    from stable_baselines3.td3.policies import TD3Policy

    return [
        (RecurrentActorCriticPolicy, "RecurrentPPO"),
        (MaskableActorCriticPolicy, "MaskablePPO"),
        (ActorCriticPolicy, "PPO / A2C"),
        (DQNPolicy, "DQN"),
        (TD3Policy, "TD3 / DDPG"),
        (SACPolicy, "SAC"),
    ]


def _policy_family(policy_class: Any) -> str | None:
    if not isinstance(policy_class, type):
        return None
    for base, family in _policy_families():
        if issubclass(policy_class, base):
            return family
    return None


def saved_data(path: str | pathlib.Path | io.BufferedIOBase) -> dict[str, Any] | None:
    """The JSON ``data`` of an SB3 zip, without its parameters (``None`` if it cannot be read: SB3's load then says why)."""
    try:
        file = open_path(path, "r", verbose=0, suffix="zip")
    except Exception:  # noqa: BLE001 - SB3's own load reports a missing file
        return None
    own = not isinstance(path, io.BufferedIOBase)
    start = None if own else file.tell()
    try:
        with zipfile.ZipFile(file) as archive:
            if "data" not in archive.namelist():
                return None
            import json

            return json.loads(archive.read("data").decode())
    except Exception:  # noqa: BLE001 - not a zip SB3 can read: its own load says so
        return None
    finally:
        if own:
            file.close()
        else:
            assert start is not None  # path is an open file: its position was read above
            file.seek(start)


def constructor_arguments(cls: type, sb3_fair_only: bool = False) -> set[str]:
    """The keyword arguments ``cls`` takes: those of the ``__init__`` of every class of its MRO (the mixins pass the
    rest on), or with ``sb3_fair_only`` those of sb3-fair's classes only."""
    import inspect

    # each class of the MRO as a class (type[Any]): its own __init__ is read, not type's
    return {
        name
        for c in cls.__mro__
        if "__init__" in vars(c) and (not sb3_fair_only or c.__module__.startswith("sb3_fair."))
        for name in inspect.signature(cast("type[Any]", c).__init__).parameters
    } - {"self", "args", "kwargs"}


def fairness_parameters(cls: type) -> set[str]:
    """The constructor arguments sb3-fair adds to ``cls`` (its mixins' own, e.g. ``alpha``, ``fairness_window``), not
    its SB3 parent's."""
    return constructor_arguments(cls, sb3_fair_only=True) - {"policy", "env"}


def _simple(value: Any) -> bool:
    """Whether a value of a zip's JSON ``data`` is a plain setting (not a serialized object, a list or a dict)."""
    return value is None or isinstance(value, (str, bool, int, float))


def check_load_keywords(cls: Any, data: dict[str, Any] | None, kwargs: dict[str, Any]) -> None:
    """Refuse a keyword argument of ``cls.load`` that is neither a setting saved in the zip (``data``) nor an argument
    of ``cls``: SB3 sets it as an attribute of the model, which nothing reads (a typo such as ``fairnes_coef=1.0``
    would be lost silently)."""
    if data is None:  # not a zip SB3 can read: its own load says why
        return
    known = set(data) | constructor_arguments(cls) | {"policy_kwargs"}
    unknown = sorted(k for k in kwargs if k not in known)
    if not unknown:
        return
    import difflib

    key = unknown[0]
    close = difflib.get_close_matches(key, sorted(fairness_parameters(cls) | constructor_arguments(cls)), n=1)
    raise ValueError(
        f"{cls.__name__}.load: unknown keyword argument {key!r}: it is neither a setting saved in the zip nor an "
        f"argument of {cls.__name__} (SB3 would set it as an attribute nothing reads)"
        + (f"; did you mean {close[0]!r}?" if close else "")
        + f". {cls.__name__}.load takes env, device, custom_objects, print_system_info, force_reset and the settings "
        "saved in the zip (e.g. learning_rate) or the class's arguments"
    )


def _check_load_ranges(cls: Any, data: dict[str, Any] | None, overrides: dict[str, Any]) -> None:
    """SB3's hyper-parameters given to ``load`` and saved in the zip, within the ranges a config's must be in (those the
    class's constructor takes: TRPO's zip holds an unused ``max_grad_norm=0.0``, which TRPO does not take)."""
    import inspect

    from sb3_fair.common.hyperparams import SB3_RANGES, check_sb3_ranges  # the config's rule

    # the arguments a user gives: sb3-fair's and those of the first SB3 class of the MRO (its parents' are set by it)
    parent = next(c for c in cls.__mro__ if "__init__" in vars(c) and not c.__module__.startswith("sb3_fair."))
    parent_args = set(inspect.signature(cast("type[Any]", parent).__init__).parameters)
    taken = (fairness_parameters(cls) | parent_args) & set(SB3_RANGES)
    given = {k: v for k, v in overrides.items() if k in taken}
    saved = {k: v for k, v in (data or {}).items() if k in taken and k not in overrides and _simple(v)}
    for values, where in ((given, ""), (saved, " (as saved in the zip)")):
        try:
            check_sb3_ranges(values)
        except ValueError as err:
            raise ValueError(f"{cls.__name__}.load: {err}{where}") from None


def check_load_settings(cls: Any, data: dict[str, Any] | None, overrides: dict[str, Any]) -> None:
    """Check the fairness settings given to ``cls.load`` and those saved in the zip (``data``) with the constructor's
    rules (the given ones on top of the zip's own simple settings); refuse a change of the fairness method."""
    _check_load_ranges(cls, data, overrides)
    own = fairness_parameters(cls)
    given = {k: v for k, v in overrides.items() if k in own}
    saved = {k: v for k, v in (data or {}).items() if k in own and _simple(v)}
    if not given and not saved:  # nothing of sb3-fair's (e.g. a parent's zip loaded with its defaults)
        return
    if "fairness" in given and "fairness" in saved and given["fairness"] != saved["fairness"]:
        raise ValueError(
            f"{cls.__name__}.load: fairness={given['fairness']!r}, but the model was trained with "
            f"fairness={saved['fairness']!r}; a loaded model keeps its fairness method (its state belongs to it): "
            f"build a new {cls.__name__}(..., fairness={given['fairness']!r}) to train with another"
        )
    policy = next(iter(getattr(cls, "policy_aliases", {})), "MlpPolicy")
    try:
        with warnings.catch_warnings():  # what the constructor warns about is said again when the model is used
            warnings.simplefilter("ignore")
            cls(policy, None, _init_setup_model=False, **{**saved, **given})
    except ValueError as err:
        where = ""
        if given:  # whose value is wrong: the zip's, when the given settings alone pass
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    cls(policy, None, _init_setup_model=False, **given)
                where = " (as saved in the zip)"
            except ValueError:
                pass
        elif saved:
            where = " (as saved in the zip)"
        raise ValueError(f"{cls.__name__}.load: {err}{where}") from None


def check_saved_class(cls: type, path: Any, data: dict[str, Any] | None, custom_objects: dict[str, Any] | None) -> None:
    """Raise a ValueError naming both classes when the zip at ``path`` (its JSON ``data``) holds a policy ``cls``
    cannot use."""
    if data is None or "policy_class" not in data:
        return
    with warnings.catch_warnings():  # SB3's own load warns about what it cannot deserialize
        warnings.simplefilter("ignore")
        saved_policy: Any = json_to_data(json.dumps({"policy_class": data["policy_class"]}), custom_objects).get(
            "policy_class"
        )
    saved_family = _policy_family(saved_policy)
    families = cast("set[str]", {_policy_family(p) for p in getattr(cls, "policy_aliases", {}).values()} - {None})
    if saved_family is None or not families or saved_family in families:
        return
    saved_by = data.get("_saved_by")
    if isinstance(saved_by, str):
        who = saved_by
    elif "fairness_window" in data:
        who = f"a Fair class of the {saved_family} family (saved before sb3-fair recorded the class)"
    else:
        who = f"an SB3 {saved_family} model"
    where = f"the zip '{path}'" if isinstance(path, (str, pathlib.Path)) else "the zip"
    raise ValueError(
        f"{cls.__name__}.load: {where} was saved by {who}, whose policy {saved_policy.__name__} ({saved_family}) "
        f"{cls.__name__} cannot use ({cls.__name__} takes {' or '.join(sorted(families))} policies): load it with "
        f"{saved_by if isinstance(saved_by, str) else saved_family.split(' / ')[0]}.load (the class that saved it) or with "
        "that algorithm's Fair class"
    )


__all__ = [
    "check_load_keywords",
    "check_load_settings",
    "check_saved_class",
    "constructor_arguments",
    "fairness_parameters",
    "saved_data",
]
