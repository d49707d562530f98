#!/usr/bin/env python3
"""Writes the inputs of the `ltt label` tests (label.test.cpp) into OUT_DIR.

    make_label_data.py OUT_DIR

data.hdf5    a DSRL-layout dataset of 150 episodes of 20 to 40 rows: observations (4 columns:
             a position x, y that wanders, and two noise columns), actions, rewards, costs,
             terminals, timeouts; an episode's costs fall on a few of its rows
scores.csv   id,score, one score per episode: minus the episodic cost plus noise, so the top of
             the pool is mostly within the budget
truth.csv    id,unsafe with unsafe = episodic cost > 10 (the budget): what the tests' labeler
             answers
costs.csv    id,cost, the episodic cost (0, 4, 8, 14 or 20): the band the labeler of the
             several-budget cases answers
pool.csv     id,score,return for the same episodes, a pool file without steps
bad_world.hdf5  data.hdf5's rows with a world geometry whose infos/position is (N, 3)

Everything is drawn from a fixed seed: the same bytes on every run.
"""
import csv
import os
import sys

import h5py
import numpy as np

BUDGET = 10.0


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(23)
    episodes = 150
    lengths = rng.integers(20, 41, episodes)
    rows = int(lengths.sum())
    obs = np.zeros((rows, 4), np.float32)
    rewards = np.zeros(rows, np.float32)
    costs = np.zeros(rows, np.float32)
    terminals = np.zeros(rows, np.bool_)
    timeouts = np.zeros(rows, np.bool_)
    episode_cost = rng.choice([0.0, 4.0, 8.0, 14.0, 20.0], episodes, p=[0.35, 0.25, 0.15, 0.15, 0.1])
    start = 0
    for e, n in enumerate(lengths):
        n = int(n)
        walk = np.cumsum(rng.normal(0, 0.3, (n, 2)), axis=0)
        obs[start:start + n, :2] = walk
        obs[start:start + n, 2:] = rng.normal(0, 1, (n, 2))
        rewards[start:start + n] = rng.normal(1.0, 0.2, n)
        if episode_cost[e] > 0:
            hits = rng.choice(n, 2, replace=False)
            costs[start + hits] = episode_cost[e] / 2
        if e % 2:
            terminals[start + n - 1] = True
        else:
            timeouts[start + n - 1] = True
        start += n
    next_obs = np.roll(obs, -1, axis=0)
    actions = rng.normal(0, 1, (rows, 2)).astype(np.float32)
    with h5py.File(os.path.join(out, "data.hdf5"), "w") as f:
        for key, value in [("observations", obs), ("next_observations", next_obs),
                           ("actions", actions), ("rewards", rewards), ("costs", costs),
                           ("terminals", terminals), ("timeouts", timeouts)]:
            f.create_dataset(key, data=value)
    # The same rows with a world geometry that is inconsistent: refused before the server starts.
    with h5py.File(os.path.join(out, "bad_world.hdf5"), "w") as f:
        for key, value in [("observations", obs), ("next_observations", next_obs),
                           ("actions", actions), ("rewards", rewards), ("costs", costs),
                           ("terminals", terminals), ("timeouts", timeouts)]:
            f.create_dataset(key, data=value)
        f["world/arena"] = np.array([-2, -2, 2, 2], np.float32)
        f["world/hazard_radius"] = np.array([0.2], np.float32)
        f["world/goal_radius"] = np.array([0.3], np.float32)
        f["infos/position"] = obs[:, :3]  # (N, 3): one column too many
        f["infos/goal"] = obs[:, :2]
        f["infos/hazards"] = np.zeros((rows, 1, 2), np.float32)
    scores = -episode_cost + rng.normal(0, 3.0, episodes)
    returns = [float(rewards[s:s + n].sum()) for s, n in
               zip(np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)]
    with open(os.path.join(out, "scores.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["id", "score"])
        for e in range(episodes):
            w.writerow([e, repr(float(scores[e]))])
    with open(os.path.join(out, "truth.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["id", "unsafe"])
        for e in range(episodes):
            w.writerow([e, int(episode_cost[e] > BUDGET)])
    with open(os.path.join(out, "costs.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["id", "cost"])
        for e in range(episodes):
            w.writerow([e, repr(float(episode_cost[e]))])
    with open(os.path.join(out, "pool.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["id", "score", "return"])
        for e in range(episodes):
            w.writerow([f"ep-{e:03d}", repr(float(scores[e])), repr(returns[e])])


if __name__ == "__main__":
    main()
