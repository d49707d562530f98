#!/usr/bin/env python3
"""Records docs/cli.md's `ltt certify --sequential` session: the pool, the labels a person
would give, and what the program prints, as a terminal would show it.

    record_sequential_session.py LTT DIR

writes into DIR (created if missing):
  pool.csv     id,score for 1000 trajectories ep0 .. ep999, the score uniform on [0, 1]; the
               top 15% by score are unsafe with probability 0.02, the rest with 0.30 (numpy's
               PCG64, seed 5: the same file on every machine)
  truth.csv    id,unsafe for every trajectory: what the labeler knows
then runs, printing each command after "$ " and its output:
  ltt draw --pool pool.csv --sequential --seed 7 --out first.csv
  (labels.csv: the first 20 ids of first.csv, labeled from truth.csv)
  ltt certify --pool pool.csv --sequential --seed 7 --labels labels.csv
  ltt certify --pool pool.csv --sequential --seed 7 --labels labels.csv --interactive
      --record all.csv
the last with a script at the keyboard: it reads each prompt "label ID (...): " on standard
error and types ID's truth. Standard error and standard output are shown in the order they
arrive, the typed answers after their prompts.
"""
import os
import subprocess
import sys

import numpy as np


def write_pool(out):
    rng = np.random.default_rng(5)
    n = 1000
    score = rng.random(n)
    top = score >= np.quantile(score, 0.85)
    unsafe = rng.random(n) < np.where(top, 0.02, 0.30)
    ids = [f"ep{i}" for i in range(n)]
    with open(os.path.join(out, "pool.csv"), "w") as f:
        f.write("id,score\n")
        for i in range(n):
            f.write(f"{ids[i]},{float(score[i])!r}\n")
    with open(os.path.join(out, "truth.csv"), "w") as f:
        f.write("id,unsafe\n")
        for i in range(n):
            f.write(f"{ids[i]},{int(unsafe[i])}\n")
    return dict(zip(ids, unsafe.astype(int)))


def show(command):
    print("$ " + " ".join(command[1:] if command[0].endswith("ltt") else command))


def run(ltt, args, cwd):
    command = [ltt] + args
    print("$ ltt " + " ".join(args))
    r = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    sys.stdout.write(r.stderr + r.stdout)
    if r.returncode != 0:
        sys.exit(f"exit {r.returncode}")


def interactive(ltt, args, cwd, truth):
    print("$ ltt " + " ".join(args))
    p = subprocess.Popen([ltt] + args, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, bufsize=0)
    line = b""
    while True:
        c = p.stderr.read(1)
        if not c:
            break
        line += c
        if c == b"\n":
            sys.stdout.write(line.decode())
            line = b""
        elif line.startswith(b"label ") and line.endswith(b"): "):
            answer = str(truth[line.split()[1].decode()])
            sys.stdout.write(line.decode() + answer + "\n")
            p.stdin.write((answer + "\n").encode())
            p.stdin.flush()
            line = b""
    p.stdin.close()
    sys.stdout.write(line.decode() + p.stdout.read().decode())
    if p.wait() != 0:
        sys.exit(f"exit {p.returncode}")


def main():
    ltt, out = os.path.abspath(sys.argv[1]), sys.argv[2]
    os.makedirs(out, exist_ok=True)
    truth = write_pool(out)
    run(ltt, ["draw", "--pool", "pool.csv", "--sequential", "--seed", "7", "--out",
              "first.csv"], out)
    with open(os.path.join(out, "first.csv")) as f:
        first = [line.strip() for line in f][1:21]
    with open(os.path.join(out, "labels.csv"), "w") as f:
        f.write("id,unsafe\n")
        for i in first:
            f.write(f"{i},{truth[i]}\n")
    print("$ # label the first 20 rows of first.csv into labels.csv (id,unsafe)")
    run(ltt, ["certify", "--pool", "pool.csv", "--sequential", "--seed", "7", "--labels",
              "labels.csv"], out)
    interactive(ltt, ["certify", "--pool", "pool.csv", "--sequential", "--seed", "7",
                      "--labels", "labels.csv", "--interactive", "--record", "all.csv"],
                out, truth)


if __name__ == "__main__":
    main()
