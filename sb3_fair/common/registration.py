"""Registration hooks: how a lower layer of the package uses objects of a layer it may not import.

A module of sb3-fair imports only from its own subpackage and from lower layers (``docs/development.md``, "The
package's layers"; ``tests/test_layers.py`` checks it). Where a lower layer needs an object of a higher layer, or of a
sibling of its own layer, the object's owner registers it here when it is imported and the lower layer looks it up
here. Every import of a ``sb3_fair`` module runs ``sb3_fair/__init__.py`` first, which imports :mod:`sb3_fair.envs`
and :mod:`sb3_fair.wrappers`, so both registries are filled before any function of the package is called.

* :func:`register_env_factory`, filled by :mod:`sb3_fair.envs`: the bare env class that a factory function makes.
  A registered id whose entry point is a function (``sb3_fair/DonutAllocation-v0`` is
  :func:`~sb3_fair.envs.make_donut_allocation`, a wrapped :class:`~sb3_fair.envs.DonutAllocationEnv`) says its class
  only through it, to :func:`sb3_fair.common.validation.env_class`. Register your own factories the same way.
* :func:`register_wrapper`, filled by :mod:`sb3_fair.wrappers`: the wrappers that the envs' factories compose
  (:class:`~sb3_fair.wrappers.MemoryAugmentation`, :class:`~sb3_fair.wrappers.FairnessReward`). The envs and the
  wrappers are siblings of one layer: neither imports the other.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: factory function -> the bare env class it makes (:func:`register_env_factory`)
_ENV_FACTORIES: dict[Callable[..., Any], type] = {}
#: class name -> a wrapper class of :mod:`sb3_fair.wrappers` (:func:`register_wrapper`)
_WRAPPERS: dict[str, Callable[..., Any]] = {}


def register_env_factory(factory: Callable[..., Any], env_class: type) -> None:
    """Say that ``factory`` (a function, e.g. a registered id's entry point) makes envs whose bare class is ``env_class``.

    :raises TypeError: if ``factory`` is not callable or ``env_class`` is not a class.
    """
    if not callable(factory) or not isinstance(env_class, type):
        raise TypeError(f"register_env_factory takes a function and a class, got {factory!r} and {env_class!r}")
    _ENV_FACTORIES[factory] = env_class


def factory_env_class(factory: Any) -> type | None:
    """The bare env class registered for ``factory`` (:func:`register_env_factory`), ``None`` if there is none."""
    try:
        return _ENV_FACTORIES.get(factory)
    except TypeError:  # an unhashable entry point: registered it cannot be
        return None


def register_wrapper(wrapper: type) -> None:
    """Lend the wrapper class ``wrapper`` to the modules that may not import it, under its class name."""
    if not isinstance(wrapper, type):
        raise TypeError(f"register_wrapper takes a class, got {wrapper!r}")
    _WRAPPERS[wrapper.__name__] = wrapper


def registered_wrapper(name: str) -> Callable[..., Any]:
    """The wrapper class registered as ``name`` (:func:`register_wrapper`).

    :raises RuntimeError: if none is, naming the module that registers sb3-fair's.
    """
    try:
        return _WRAPPERS[name]
    except KeyError:
        raise RuntimeError(
            f"no wrapper {name!r} is registered: sb3_fair.wrappers registers its wrappers when it is imported, "
            "which importing any module of sb3_fair does (sb3_fair/__init__.py)"
        ) from None
