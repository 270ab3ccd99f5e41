"""Fair-ER and Fair-E on paper 002's pursuit-evasion task, and their team fairness I(R;Z).

    python examples/fair_ddpg_pursuit.py      # about 2 minutes on 2 cores; short runs show the API, not converged policies
"""

import gymnasium as gym

import sb3_fair  # noqa: F401  (registers sb3_fair/PursuitEvasion-v0)
from sb3_fair import FairDDPG
from sb3_fair.common.evaluation import evaluate_team_fairness
from sb3_fair.envs import GreedyPursuitPolicy, SpeedCurriculum

STEPS = 5_000  # the paper trains 125,000 episodes; see benchmarks/fair_er_pursuit.py

for name, policy, lam in [("Fair-ER lambda=0.5", "MlpPolicy", 0.5), ("Fair-E", "FairEPolicy", 0.0)]:
    env = gym.make("sb3_fair/PursuitEvasion-v0", max_steps=200)
    model = FairDDPG(policy, env, equivariance_coef=lam, learning_starts=1000, seed=0)
    model.learn(STEPS, callback=SpeedCurriculum(start=1.2, end=0.8))  # lower the pursuers' speed as they learn
    test_env = gym.make("sb3_fair/PursuitEvasion-v0", pursuer_speed=1.0, max_steps=200)
    res = evaluate_team_fairness(model, test_env, n_episodes=20)
    print(f"{name}: capture success {res['capture_success']:.2f}, I(R;Z) {res['team_fairness']:.3f} bits")

env = gym.make("sb3_fair/PursuitEvasion-v0", pursuer_speed=1.2, max_steps=200)
res = evaluate_team_fairness(GreedyPursuitPolicy(env), env, n_episodes=20)
print(f"greedy baseline at |v_p| = 1.2: capture success {res['capture_success']:.2f}, I(R;Z) {res['team_fairness']:.3f} bits")
