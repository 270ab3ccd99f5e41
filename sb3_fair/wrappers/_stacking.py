"""One memory and one fairness reward per env: :class:`MemoryAugmentation` and :class:`FairnessReward` refuse an env
that already carries one (issue 47).

Two memories would give an observation with two memories, of which FairQCM counterfactualises one and copies the
other unchanged into every counterfactual row; two fairness rewards would count the fairness term twice (the outer
one replaces the inner one's reward, itself fairness, by ``fairness_coef * W + task_coef * r``). Neither has a
meaning sb3-fair could document, so both are refused when the second wrapper is built.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym

#: the registered ids whose ``gym.make`` already adds a memory (unless ``memory=None``) and a fairness reward
_REGISTERED_STACKS = ("make_donut_allocation", "make_loan_applicants")


def refuse_second(env: gym.Env, wrapper: type, hint: str) -> None:
    """Raise a ValueError naming ``wrapper`` if ``env`` (walked through the ``.env`` of its wrappers) already has one.

    :param hint: what to do instead, for the message.
    """
    layers: list[str] = []
    current: Any = env
    found = False
    while isinstance(current, gym.Wrapper):
        layers.append(type(current).__name__)
        if isinstance(current, wrapper):
            found = True
            break
        current = current.env
    if not found:
        return
    name = wrapper.__name__
    chain = " -> ".join(layers)
    spec = getattr(env.unwrapped, "spec", None)
    entry = str(getattr(spec, "entry_point", "") or "")
    if spec is not None and any(entry.endswith(f":{f}") for f in _REGISTERED_STACKS):
        raise ValueError(
            f"{name}: the env already has a {name}: the registered id {spec.id!r} includes one "
            f"(gym.make({spec.id!r}) adds a FairnessReward, and a MemoryAugmentation unless memory=None; found at {chain}); "
            f"an env takes one {name}: {hint}"
        )
    raise ValueError(
        f"{name}: the env already has a {name} (found at {chain}); an env takes one {name}, and a second would "
        f"{'append a second memory, which FairQCM would not keep consistent' if name == 'MemoryAugmentation' else 'count the fairness term twice'}: "
        f"{hint}"
    )
