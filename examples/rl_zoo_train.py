"""Train an sb3-fair algorithm with RL Zoo's own runner (rl_zoo3, unpatched) on sb3-fair's hyper-parameter files.

RL Zoo looks algorithms up in its ``ALGOS`` table; this script adds the ``fair_*`` classes to it and
hands the command line to ``rl_zoo3.train``, so every RL Zoo option works (``-n``, ``--seed``,
``-params``, ``--eval-freq``, ``--track`` ...). sb3-fair's files are RL Zoo's format, so ``-conf`` reads
them as they are (the env's own entry; RL Zoo does not know ``<env id>@<variant>`` entries). RL Zoo
hands the algorithm a VecEnv, so the per-episode ``fairness/*`` figures need the monitor as an
``env_wrapper`` (``sb3-fair train`` adds it itself). Needs ``pip install rl_zoo3``::

    python examples/rl_zoo_train.py --algo fair_dqn --env sb3_fair/DonutAllocation-v0 --gym-packages sb3_fair \\
        -conf sb3_fair/hyperparams/fair_dqn.yml -n 20000 --eval-freq -1 \\
        -params env_wrapper:"'sb3_fair.wrappers.FairnessMonitor'"
"""

import rl_zoo3
import rl_zoo3.train

from sb3_fair.experiment.registry import ALGOS, get_algo_class

for name in ALGOS:
    if name.startswith("fair_"):
        rl_zoo3.ALGOS[name] = get_algo_class(name)

if __name__ == "__main__":
    rl_zoo3.train.train()
