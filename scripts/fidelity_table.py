#!/usr/bin/env python3
"""The fidelity table of docs/tasks.md from `ltt pipeline` reports (scripts/fidelity runs them).

    fidelity_table.py REPORT_DIR [REPORT_DIR ...]

Each REPORT_DIR holds one task's report.json (`ltt pipeline --preset demo --seeds 1,2,3`).
Prints one Markdown table: a row per measure, the paper's PointGoal1 value and the target band
(docs/tasks.md: data and scorer properties, not the method's claims), then each task's value over its
seeds (mean, and min to max when several) and whether it lies in the band. Standard library only.
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
    print(f"Seeds per task: {', '.join(str(s) for s in seeds)}; a seed-level value is the mean with "
          "its range over seeds, and it is outside when any seed is. BC-All and BC-Safe are the "
          "clones' mean cost over seeds, divided by the budget.")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
