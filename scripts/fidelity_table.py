#!/usr/bin/env python3
"""The fidelity tables of docs/tasks.md from `ltt pipeline` reports (scripts/fidelity runs them).

    fidelity_table.py REPORT_DIR [REPORT_DIR ...]

Each REPORT_DIR holds one task's report.json (`ltt pipeline --preset demo --seeds 1,2,3`).
Prints Markdown: for the point tasks, a row per measure with the paper's PointGoal1 value and the
target band (data and scorer properties, not the method's claims), then each task's value over
its seeds (mean, and min to max when several) and whether it lies in the band; for the MuJoCo
velocity tasks, the same against the paper's five velocity rows (each task beside its own row of
the paper), then the main table's columns side by side with the paper's. Standard library only.
"""
import json
import math
import pathlib
import statistics
import sys

# measure: (label, paper PointGoal1, band low, band high, how the band reads)
TARGETS = [
    ("rho_g_cost", "Spearman(g, cost)", -0.66, -0.76, -0.56, "within 0.1 of -0.66"),
    ("rho_g_return", "Spearman(g, return)", -0.79, -0.94, -0.64, "within 0.15 of -0.79"),
    ("rho_cost_return", "Spearman(cost, return)", 0.40, 0.25, 0.55, "within 0.15 of +0.40"),
    ("top15", "preference score's top-15% unsafe fraction", 0.123, -math.inf, 0.15, "at most 0.15"),
    ("labels_only_gap", "labels-only minus preference, unsafe at the V-filter's fraction",
     0.0, -0.05, 0.05, "within 0.05"),
    ("pool_unsafe", "pool unsafe fraction", None, 0.48, 0.91, "48-91%"),
    ("bc_all", "BC-All cost / budget", 1.48, 1.0, math.inf, "over 1"),
    ("bc_safe", "BC-Safe cost / budget", 0.50, -math.inf, 0.70, "at most 0.7"),
]
# The velocity tasks: bands spanning the paper's five velocity rows (table "scorecorr"; BC-All
# over the budget on four of the five), and each task's own row of the paper.
VELOCITY_TARGETS = [
    ("rho_g_cost", "Spearman(g, cost)", -0.90, -0.72, "-0.90 to -0.72"),
    ("rho_g_return", "Spearman(g, return)", -0.36, 0.22, "-0.36 to +0.22"),
    ("rho_cost_return", "Spearman(cost, return)", 0.11, 0.50, "+0.11 to +0.50"),
    ("bc_all", "BC-All cost / budget", 1.0, math.inf, "over 1"),
]
VELOCITY_NOTES = [
    ("pool_unsafe", "pool unsafe fraction"),
    ("margin", "purity margin of the preference score"),
    ("rate", "closed-form certification rate at n"),
    ("certified", "seeds certified"),
]
# The paper's rows: scorecorr (g-cost, g-return, cost-return), purity margin (table
# "labelcomplexity"; Hopper: at most 0), certification rate at n = 200 (table "condviol"), and the
# main table's (reward, cost) of BC-All, BC-Safe, V-filter and Calibrated, budget 20.
PAPER_VELOCITY = {
    "half-cheetah-velocity": dict(
        name="HalfCheetah", rho_g_cost=-0.90, rho_g_return=-0.31, rho_cost_return=0.35,
        margin=0.061, rate=0.24,
        main={"BC-All": (2596, 106), "BC-Safe": (2170, 3), "V-filter": (1866, 1),
              "Calibrated": (2124, 3)}),
    "hopper-velocity": dict(
        name="Hopper", rho_g_cost=-0.72, rho_g_return=0.20, rho_cost_return=0.29,
        margin=None, rate=0.00,
        main={"BC-All": (993, 131), "BC-Safe": (365, 18), "V-filter": (1238, 33),
              "Calibrated": (998, 3)}),
    "swimmer-velocity": dict(
        name="Swimmer", rho_g_cost=-0.90, rho_g_return=-0.36, rho_cost_return=0.35,
        margin=0.014, rate=0.10,
        main={"BC-All": (120, 92), "BC-Safe": (119, 37), "V-filter": (106, 15),
              "Calibrated": (116, 59)}),
}
MAIN_COLUMNS = ["BC-All", "BC-Safe", "V-filter", "Calibrated"]

# Reported beside the targets, not targets.
NOTES = [
    ("margin", "purity margin of the preference score", 0.127),
    ("rate", "closed-form certification rate at n", 0.65),
    ("ties", "preference pairs tied (skipped)", None),
    ("disagree", "labeled pairs against the parents' cost order", None),
]


def scorer(seed, name):
    for s in seed["score_quality"]["scorers"]:
        if s["name"] == name:
            return s
    raise KeyError(name)


def method(report, name):
    for m in report["methods"]:
        if m["name"] == name:
            return m
    raise KeyError(name)


def per_seed(report):
    """Per-seed values of the seed-level measures."""
    out = {}
    for seed in report["seeds"]:
        q = seed["score_quality"]
        pref = scorer(seed, "preference")
        # A V-filter fraction of 0 (no safe label among the n) selects nothing: no unsafe fraction.
        at_f = [scorer(seed, name)["unsafe_fraction_at_v_filter_fraction"]
                for name in ("labels-only", "preference")]
        values = {
            "rho_g_cost": q["spearman_score_cost"],
            "rho_g_return": q["spearman_score_return"],
            "rho_cost_return": q["spearman_cost_return"],
            "top15": pref["first_step_unsafe_fraction"],
            "labels_only_gap": None if None in at_f else at_f[0] - at_f[1],
            "margin": pref["purity_margin"],
            "rate": pref["certification_rate"],
            "ties": q["pairs"]["tie_fraction"],
            "disagree": q["pairs"]["disagreement_fraction"],
        }
        for key, value in values.items():
            out.setdefault(key, []).append(value)
    return out


def measures(report):
    values = per_seed(report)
    budget = report["budget"]
    values["pool_unsafe"] = [report["pool"]["unsafe"] / report["pool"]["episodes"]]
    # Method costs are already means over the seeds (report.json's "cost").
    values["bc_all"] = [method(report, "BC-All")["cost"] / budget]
    values["bc_safe"] = [method(report, "BC-Safe")["cost"] / budget]
    values["certified"] = [report["certified_seeds"]]
    return values


def show(xs, digits=2):
    xs = [x for x in xs if x is not None]
    if not xs:
        return "n/a"
    fmt = f"{{:+.{digits}f}}" if any(x < 0 for x in xs) else f"{{:.{digits}f}}"
    mean = statistics.fmean(xs)
    if len(xs) == 1:
        return fmt.format(mean)
    return f"{fmt.format(mean)} ({fmt.format(min(xs))} to {fmt.format(max(xs))})"


def inside(xs, low, high):
    return all(low <= x <= high for x in xs if x is not None)


def point_table(reports):
    header = ["measure", "paper PointGoal1", "target"] + [r["task"] for r in reports]
    print("| " + " | ".join(header) + " |")
    print("|---|---:|---|" + "---:|" * len(reports))
    for key, label, paper, low, high, band in TARGETS:
        cells = [label, "" if paper is None else f"{paper:+.3g}" if key.startswith("rho") else
                 f"{paper:.3g}", band]
        for r in reports:
            xs = measures(r)[key]
            digits = 3 if key in ("top15", "labels_only_gap", "pool_unsafe") else 2
            mark = "" if inside(xs, low, high) else " **(outside)**"
            cells.append(show(xs, digits) + mark)
        print("| " + " | ".join(cells) + " |")
    for key, label, paper in NOTES:
        cells = [label, "" if paper is None else f"{paper:.3g}", "(reported)"]
        cells += [show(measures(r)[key], 3) for r in reports]
        print("| " + " | ".join(cells) + " |")
    print()


def velocity_table(reports):
    header = ["measure", "band over the paper's velocity rows"]
    for r in reports:
        header += [r["task"], f"paper {PAPER_VELOCITY[r['task']]['name']}"]
    print("| " + " | ".join(header) + " |")
    print("|---|---|" + "---:|---:|" * len(reports))
    for key, label, low, high, band in VELOCITY_TARGETS:
        cells = [label, band]
        for r in reports:
            xs = measures(r)[key]
            mark = "" if inside(xs, low, high) else " **(outside)**"
            paper = PAPER_VELOCITY[r["task"]]
            if key == "bc_all":
                theirs = f"{paper['main']['BC-All'][1] / 20:.2f}"
            else:
                theirs = f"{paper[key]:+.2f}"
            cells += [show(xs, 2) + mark, theirs]
        print("| " + " | ".join(cells) + " |")
    for key, label in VELOCITY_NOTES:
        cells = [label, "(reported)"]
        for r in reports:
            paper = PAPER_VELOCITY[r["task"]]
            theirs = paper.get(key)
            if key == "margin" and theirs is None:
                theirs = "<= 0"
            elif key == "certified":
                theirs = ""
            elif theirs is not None:
                theirs = f"{theirs:.3g}"
            else:
                theirs = ""
            digits = 0 if key == "certified" else 3
            cells += [show(measures(r)[key], digits), theirs]
        print("| " + " | ".join(cells) + " |")
    print()
    print("The main table's columns, reward / cost (budget 20), this run's mean over its seeds "
          "and the paper's:")
    print()
    header = ["task"] + [f"{c} (ours)" for c in MAIN_COLUMNS] + [f"{c} (paper)" for c in MAIN_COLUMNS]
    print("| " + " | ".join(header) + " |")
    print("|---|" + "---:|" * (2 * len(MAIN_COLUMNS)))
    for r in reports:
        paper = PAPER_VELOCITY[r["task"]]
        cells = [r["task"]]
        for c in MAIN_COLUMNS:
            m = method(r, c)
            cells.append("n/a" if m["cost"] is None else f"{m['reward']:.0f} / {m['cost']:.1f}")
        cells += [f"{paper['main'][c][0]} / {paper['main'][c][1]}" for c in MAIN_COLUMNS]
        print("| " + " | ".join(cells) + " |")
    print()


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    reports = []
    for directory in argv[1:]:
        path = pathlib.Path(directory) / "report.json"
        try:
            reports.append(json.loads(path.read_text()))
        except (OSError, ValueError) as error:
            print(f"fidelity_table.py: cannot read {path}: {error}", file=sys.stderr)
            return 2
    seeds = sorted({len(r["seeds"]) for r in reports})
    velocity = [r for r in reports if r["task"] in PAPER_VELOCITY]
    point = [r for r in reports if r["task"] not in PAPER_VELOCITY]
    if point:
        point_table(point)
    if velocity:
        velocity_table(velocity)
    print(f"Seeds per task: {', '.join(str(s) for s in seeds)}; a seed-level value is the mean with "
          "its range over seeds, and it is outside when any seed is. BC-All and BC-Safe are the "
          "clones' mean cost over seeds, divided by the budget.")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
