"""Checks an `ltt pipeline` output folder with independent tools (json, xml.etree, scipy):
report.json's structure and invariants, the certificate's p-values against scipy's
hypergeometric cdf, every figure well-formed SVG, each seed's artifacts (scores.npy,
selection.npy, labels.csv, model.ltt) read back and consistent with report.json, and each
seed's score_quality consistent with the seed's other fields (the preference scorer's purity
curve, margin and rate equal to its oracle diagnostics, bit for bit).

    python3 check_pipeline_report.py DIR TASK
    python3 check_pipeline_report.py --score DIR DATASET GRID

The second form checks `ltt score`'s score.json in DIR against a recomputation from
DIR/scores.npy and the DSRL DATASET (numpy, h5py, scipy's spearmanr): the three Spearman
correlations and, when score.json has a score_quality object, the purity curve on GRID (the
comma-separated quantiles given to --grid), its margin and first step.

Exits non-zero with a message on the first failed check.
"""
import ast
import json
import math
import struct
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from scipy.stats import hypergeom


def fail(message):
    sys.exit(f"check_pipeline_report: {message}")


def require(condition, message):
    if not condition:
        fail(message)


def check_several_budgets(s, budget, c, where):
    """The seed's labels at B, 2B and 4B: alone at B is the seed's certificate; one threshold
    certifies every budget or none, at one quantile; per budget splits delta in three."""
    b = s["several_budgets"]
    require(b["budgets"] == [budget, 2 * budget, 4 * budget], f"{where}: several budgets")
    alone, one, per = b["alone"][0], b["one_threshold"], b["per_budget"]
    for key in ("certified", "quantile", "selection_size"):
        require(alone[key] == c[key], f"{where}: several budgets alone at B: {key}")
    require(len({e["certified"] for e in one}) == 1, f"{where}: one threshold split its verdict")
    if one[0]["certified"]:
        require(len({e["quantile"] for e in one}) == 1, f"{where}: one threshold, two quantiles")
    require(all(e["level"] == c["delta"] for e in one + b["alone"]), f"{where}: levels at delta")
    require(sum(e["level"] for e in per) <= c["delta"], f"{where}: per-budget levels over delta")
    for e in one + per + b["alone"]:
        require(0 <= e["realized_unsafe_fraction"] <= 1, f"{where}: unsafe fraction")
        require(not e["certified"] or e["selection_size"] >= 1, f"{where}: empty certified")


def check_certificate(c, where):
    for key in ("certified", "threshold", "quantile", "selection_size", "fallback", "steps"):
        require(key in c, f"{where}: certificate lacks {key!r}")
    require(c["certified"] != c["fallback"], f"{where}: certified == fallback")
    steps = c["steps"]
    require(steps, f"{where}: no steps")
    alpha, delta = c["alpha"], c["delta"]
    for j, s in enumerate(steps):
        u_star = math.floor(alpha * s["N"] + 1e-12) + 1
        require(s["null_boundary"] == u_star, f"{where}: step {j} U* {s['null_boundary']} != {u_star}")
        exact = hypergeom.cdf(s["k"], s["N"], u_star, s["m"])
        # the library rounds p up by at most 4e-14 relative so it never falls below the exact value
        require(abs(s["p"] - exact) <= 1e-9 * max(exact, 1e-300) + 1e-300,
                f"{where}: step {j} p {s['p']} against scipy {exact}")
        require(s["rejected"] == (s["p"] <= delta), f"{where}: step {j} rejected flag")
        if j + 1 < len(steps):
            require(s["rejected"], f"{where}: the walk went past a non-rejected step {j}")
    require(c["certified"] == steps[0]["rejected"], f"{where}: certified disagrees with step 1")
    if c["certified"]:
        last = max(j for j, s in enumerate(steps) if s["rejected"])
        require(c["certified_step"] == last, f"{where}: certified_step {c['certified_step']} != {last}")
        require(c["fallback_record"] is None, f"{where}: certified with a fallback record")
    else:
        require(c["fallback_record"] is not None, f"{where}: refusal without a fallback record")


METHODS = ["BC-All", "BC-Safe", "V-filter", "Calibrated", "Calibrated-ungated",
           "Return-weighted", "Labels-only", "Random", "Return", "Bottom-return"]


def read_npy(path):
    """A one-dimensional little-endian .npy file as (dtype, values), without numpy."""
    data = path.read_bytes()
    require(data[:6] == b"\x93NUMPY", f"{path}: not a .npy file")
    major = data[6]
    length = struct.unpack("<H" if major == 1 else "<I", data[8:10] if major == 1 else data[8:12])[0]
    start = 10 if major == 1 else 12
    header = ast.literal_eval(data[start:start + length].decode("latin1"))
    require(len(header["shape"]) == 1 and not header["fortran_order"], f"{path}: shape {header}")
    fmt = {"<f8": "d", "<i8": "q"}[header["descr"]]
    body = data[start + length:]
    (n,) = header["shape"]
    require(len(body) == 8 * n, f"{path}: {len(body)} bytes for {n} values")
    return header["descr"], list(struct.unpack(f"<{n}{fmt}", body))


def check_artifacts(folder, report, s):
    where = f"seed {s['seed']}"
    at = s["artifacts"]
    c = s["certificate"]
    dtype, scores = read_npy(folder / at["scores"])
    require(dtype == "<f8" and len(scores) == report["pool"]["episodes"], f"{where}: scores.npy")
    require(all(math.isfinite(x) for x in scores), f"{where}: scores not finite")
    dtype, selection = read_npy(folder / at["selection"])
    require(dtype == "<i8" and len(selection) == c["selection_size"], f"{where}: selection.npy size")
    require(selection == sorted(set(selection)), f"{where}: selection not ascending and distinct")
    # the selection is the threshold set of the scores at the certificate's threshold
    require(selection == [i for i, x in enumerate(scores) if x >= c["threshold"]],
            f"{where}: selection.npy is not S(threshold) of scores.npy")
    lines = (folder / at["labels"]).read_text().splitlines()
    require(lines[0] == "id,unsafe", f"{where}: labels.csv header")
    labels = [tuple(int(v) for v in line.split(",")) for line in lines[1:]]
    require(len(labels) == c["calibration_size"], f"{where}: labels.csv rows")
    require(sum(u for _, u in labels) == c["calibration_unsafe"], f"{where}: labels.csv unsafe")
    model = (folder / at["model"]).read_bytes()
    require(model[:8] == b"ltt.mlp\n", f"{where}: model.ltt magic")
    require(struct.unpack("<I", model[12:16])[0] == report["settings"]["members"],
            f"{where}: model.ltt holds {struct.unpack('<I', model[12:16])[0]} networks")


SCORERS = ["preference", "labels-only", "oracle", "return", "minus-return"]


def check_purity(where, q, alpha):
    """One purity curve: U_j / N_j, the margin alpha - min_j U_j / N_j and the first step."""
    steps = q["purity"]
    require(steps, f"{where}: no purity steps")
    for j, st in enumerate(steps):
        require(0 <= st["U"] <= st["N"], f"{where}: step {j} U {st['U']} N {st['N']}")
        require(st["unsafe_fraction"] == st["U"] / st["N"], f"{where}: step {j} unsafe fraction")
        if j > 0:
            require(st["N"] > steps[j - 1]["N"] and st["quantile"] < steps[j - 1]["quantile"],
                    f"{where}: step {j} not deeper than step {j - 1}")
    least = min(st["U"] / st["N"] for st in steps)
    require(q["purity_margin"] == alpha - least, f"{where}: purity margin {q['purity_margin']}")
    require(q["first_step_unsafe_fraction"] == steps[0]["unsafe_fraction"],
            f"{where}: first step's unsafe fraction")


def check_score_quality(s, by_name, md):
    """A seed's score_quality against its oracle diagnostics, V-filter, value and methods."""
    where = f"seed {s['seed']}"
    c = s["certificate"]
    q = s["score_quality"]
    oracle = s["oracle"]
    require([x["name"] for x in q["scorers"]] == SCORERS, f"{where}: scorers {q['scorers']}")
    for x in q["scorers"]:
        check_purity(f"{where} {x['name']}", x, c["alpha"])
        require(0 <= x["certification_rate"] <= 1, f"{where} {x['name']}: rate")
        if s["v_filter"]["count"] == 0:
            require(x["unsafe_fraction_at_v_filter_fraction"] is None,
                    f"{where} {x['name']}: a V-filter fraction without a V-filter selection")
    pref, labels_only, best = (q["scorers"][k] for k in range(3))
    # the preference scorer is the seed's oracle grid: the same code path, the same bits
    require([(st["quantile"], st["N"], st["U"]) for st in pref["purity"]] ==
            [(g["quantile"], g["N"], g["unsafe"]) for g in oracle["grid"]],
            f"{where}: the preference purity curve is not the oracle grid")
    require(pref["purity_margin"] == oracle["purity_margin"], f"{where}: preference margin")
    require(pref["certification_rate"] == oracle["first_step_rate"], f"{where}: preference rate")
    require(q["spearman_score_cost"] == oracle["score_cost_spearman"], f"{where}: Spearman")
    for key in ("spearman_score_cost", "spearman_score_return", "spearman_cost_return"):
        require(-1 <= q[key] <= 1, f"{where}: {key} {q[key]}")
    if s["v_filter"]["count"] > 0:
        require(pref["unsafe_fraction_at_v_filter_fraction"] ==
                by_name["V-filter"]["selection_unsafe_fraction"], f"{where}: V-filter cut")
        require(labels_only["unsafe_fraction_at_v_filter_fraction"] ==
                by_name["Labels-only"]["selection_unsafe_fraction"], f"{where}: labels-only cut")
    require(q["v_filter_fraction"] == s["v_filter"]["safe_fraction"], f"{where}: V-filter f")
    require(q["v_filter_count"] == s["v_filter"]["count"], f"{where}: V-filter K")
    pairs, value = q["pairs"], s["value"]
    require((pairs["attempts"], pairs["ties"], pairs["labeled"]) ==
            (value["pair_attempts"], value["pair_ties"], value["pairs"]), f"{where}: pair counts")
    require(pairs["tie_fraction"] == pairs["ties"] / pairs["attempts"], f"{where}: tie fraction")
    compared = pairs["labeled"] - pairs["parents_tied"]
    require(0 <= pairs["disagreements"] <= compared, f"{where}: disagreements")
    require(pairs["disagreement_fraction"] == (pairs["disagreements"] / compared if compared else None),
            f"{where}: disagreement fraction")
    # the stage rule of docs/pipeline.md, on the margins
    if c["certified"]:
        stage = "certified"
    elif pref["purity_margin"] > 0:
        stage = "certificate"
    elif best["purity_margin"] > 0 or labels_only["purity_margin"] > 0:
        stage = "scorer"
    else:
        stage = "data"
    require(q["stage"] == stage, f"{where}: stage {q['stage']!r}, the margins say {stage!r}")
    budgets = [b["target_rate"] for b in q["label_budgets"]]
    require(budgets == ([0.5, 0.8] if stage == "certificate" else []), f"{where}: label budgets")
    for b in q["label_budgets"]:
        require(b["n"] is None or 0 <= b["n"] <= c["pool_size"], f"{where}: label budget {b}")
    require(f"- seed {s['seed']}: {q['stage_text']}." in md, f"{where}: stage line not in report.md")


def check_pipeline(report, task, folder):
    require(report["task"] == task, f"task {report['task']!r} != {task!r}")
    budget = report["budget"]
    names = [m["name"] for m in report["methods"]]
    require(names == METHODS, f"methods {names}")
    settings = report["settings"]
    require(settings["observations"] == ("z-scored" if settings["normalize_observations"] else "raw"),
            "settings.observations")
    seeds = len(report["seeds"])
    for m in report["methods"]:
        if m["cost"] is None:
            require(m["pooled"] is None, f"{m['name']}: pooled bounds without a clone")
            continue
        pooled = m["pooled"]
        require(pooled["episodes"] == pooled["seeds"] * settings["eval_episodes"],
                f"{m['name']}: pooled episodes")
        require(pooled["over_budget_probability_upper"] >= pooled["over_budget"] / pooled["episodes"],
                f"{m['name']}: pooled over-budget bound")
        require(pooled["cost_upper"] >= pooled["mean_cost"], f"{m['name']}: pooled cost bound")
        require(abs(m["cloning_gap"]["mean"] - (m["cost"] - m["data_cost"]["mean"])) <= 1e-9 *
                max(1.0, abs(m["cost"])), f"{m['name']}: cloning gap is not cost - data cost")
        split = [m[key] for key in ("policy_data_cost", "selection_luck", "cloner_share")]
        require(all(v is None for v in split) or all(v is not None for v in split),
                f"{m['name']}: the gap's split is partly missing")
        if split[0] is not None:
            require(abs(split[1]["mean"] - (split[0]["mean"] - m["data_cost"]["mean"])) <= 1e-9 *
                    max(1.0, abs(split[0]["mean"])), f"{m['name']}: luck is not policy - data cost")
            require(abs(split[1]["mean"] + split[2]["mean"] - m["cloning_gap"]["mean"]) <= 1e-9 *
                    max(1.0, abs(m["cost"])), f"{m['name']}: luck + cloner is not the gap")
    by_summary = {m["name"]: m for m in report["methods"]}
    uncertified = sum(not s["certificate"]["certified"] for s in report["seeds"])
    require(by_summary["Return-weighted"]["refused_seeds"] == uncertified,
            "Return-weighted refused on other seeds than the uncertified ones")
    for m in report["methods"]:
        if m["cost"] is None:  # never cloned: its selection was empty on every seed
            require(not m["within_budget"], f"{m['name']}: within budget without a cost")
            continue
        require(m["within_budget"] == (m["cost"] <= budget), f"{m['name']}: within_budget")
        for key in ("reward_ci", "cost_ci"):
            ci = m[key]
            require(ci["low"] <= ci["mean"] <= ci["high"], f"{m['name']}: {key} not ordered")
    check_certificate(report["certificate"], "certificate")
    md = (folder / "report.md").read_text()
    require("## Score quality: which stage a refusal is" in md, "report.md: no score-quality section")
    require("## Several budgets from the same labels" in md, "report.md: no several-budgets section")
    pool = report["pool"]
    require(len(report["seeds"]) >= 1, "no seeds")
    for s in report["seeds"]:
        where = f"seed {s['seed']}"
        c = s["certificate"]
        check_certificate(c, where)
        require(c["pool_size"] == pool["episodes"], f"{where}: pool size")
        require((s["gate"]["outcome"] == "certified") == c["certified"], f"{where}: gate outcome")
        by_name = {m["name"]: m for m in s["methods"]}
        safe = pool["episodes"] - pool["unsafe"]
        require(by_name["BC-All"]["selection_size"] == pool["episodes"], f"{where}: BC-All size")
        require(by_name["BC-Safe"]["selection_size"] == safe, f"{where}: BC-Safe size")
        require(by_name["BC-Safe"]["selection_unsafe_fraction"] == 0, f"{where}: BC-Safe unsafe")
        require(by_name["Random"]["selection_size"] == safe, f"{where}: Random size")
        require(by_name["Return"]["selection_size"] == safe, f"{where}: Return size")
        require(by_name["Bottom-return"]["selection_size"] == safe, f"{where}: Bottom-return size")
        rw = by_name["Return-weighted"]
        require(rw["refused"] == (not c["certified"]), f"{where}: Return-weighted refused flag")
        require(s["return_weighted"]["outcome"] == ("certified" if c["certified"] else "refused"),
                f"{where}: Return-weighted outcome")
        require(rw["selection_size"] == (c["selection_size"] if c["certified"] else 0),
                f"{where}: Return-weighted keeps the selection's size")
        require(by_name["Labels-only"]["selection_size"] == s["labels_only"]["selection_size"],
                f"{where}: Labels-only size")
        require(s["labels_only"]["safe_fraction"] == s["v_filter"]["safe_fraction"],
                f"{where}: Labels-only cuts at the V-filter's fraction")
        check_artifacts(folder, report, s)
        check_score_quality(s, by_name, md)
        check_several_budgets(s, report["budget"], c, where)
        require(by_name["Calibrated-ungated"]["selection_size"] == c["selection_size"],
                f"{where}: Calibrated-ungated size")
        require(by_name["Calibrated"]["selection_size"] == s["gate"]["selection_size"],
                f"{where}: Calibrated size")
        require(s["oracle"]["purity_margin"] <= c["alpha"], f"{where}: purity margin above alpha")
        resampled = s["oracle"]["resampled"]
        false = resampled["false_certification"]
        require(false["trials"] == resampled["draws"] > 0, f"{where}: resampled draws")
        require(false["lower"] <= c["delta"], f"{where}: false certification above delta")
        for m in s["methods"]:
            if m["selection_size"] == 0:
                continue
            e = m["evaluation"]
            require(e["cost_upper"] >= e["mean_cost"], f"{where}: {m['name']} cost bound")
            require(e["over_budget_probability_upper"] >= e["over_budget"] / e["episodes"],
                    f"{where}: {m['name']} over-budget bound")
            require(abs(m["cloning_gap"] - (m["cost"] - m["data_cost"])) <= 1e-9 * max(1.0, abs(m["cost"])),
                    f"{where}: {m['name']} cloning gap")
            if m["policy_data_cost"] is not None:
                require(abs(m["selection_luck"] + m["cloner_share"] - m["cloning_gap"]) <= 1e-9 *
                        max(1.0, abs(m["cost"])), f"{where}: {m['name']} luck + cloner")
                require(abs(m["cloner_share"] - (m["cost"] - m["policy_data_cost"])) <= 1e-9 *
                        max(1.0, abs(m["cost"])), f"{where}: {m['name']} cloner share")
    require(seeds >= 1, "no seeds")
    costs_return = {s["score_quality"]["spearman_cost_return"] for s in report["seeds"]}
    require(len(costs_return) == 1, "spearman_cost_return differs between seeds")
    return ["report.md", "score_vs_cost.svg", "certification_rate.svg", "methods.svg",
            "cost_histogram.svg", "purity_curves.svg"]


def check_corridor(report):
    require(report["task"] == "corridor", "task")
    require(report["budget"] == 0, "corridor budget")
    names = [m["name"] for m in report["methods"]]
    require(len(names) == 4, f"corridor methods {names}")
    for m in report["methods"]:
        require(m["within_budget"] == (m["cost"] <= 0), f"{m['name']}: within_budget")
    for row in report["rows"]:
        require(row["low"] <= row["simulated"] <= row["high"], f"row {row}: interval")
        require(0 <= row["closed_form"] <= 1, f"row {row}: closed form")
    return ["report.md", "corridor.svg"]


def read_dataset(path):
    """Per-episode cost and return of a DSRL file or .npy directory: episodes end where
    terminals | timeouts, the rows after the last end are in none."""
    import numpy as np
    keys = ("rewards", "costs", "terminals", "timeouts")
    if path.is_dir():
        cols = {k: np.load(path / f"{k}.npy") for k in keys}
    else:
        import h5py
        with h5py.File(path, "r") as f:
            cols = {k: f[k][()] for k in keys}
    ends = np.flatnonzero(np.logical_or(cols["terminals"], cols["timeouts"]))
    starts = np.concatenate([[0], ends[:-1] + 1])
    cost = [math.fsum(cols["costs"][a:b + 1].astype(float)) for a, b in zip(starts, ends)]
    ret = [math.fsum(cols["rewards"][a:b + 1].astype(float)) for a, b in zip(starts, ends)]
    return cost, ret


def check_score(folder, dataset, grid):
    """score.json against scores.npy and the dataset's costs, recomputed here."""
    from fractions import Fraction

    from scipy.stats import spearmanr
    report = json.loads((folder / "score.json").read_text())
    _, scores = read_npy(folder / "scores.npy")
    cost, ret = read_dataset(dataset)
    require(len(cost) == len(scores) == report["dataset"]["episodes"], "episode counts")
    for key, a, b in (("spearman_score_cost", scores, cost), ("spearman_score_return", scores, ret),
                      ("spearman_cost_return", cost, ret)):
        rho = spearmanr(a, b).correlation  # average ranks for ties, as curation::spearman
        require(abs(report[key] - rho) <= 1e-9, f"{key} {report[key]} against scipy {rho}")
    q = report["score_quality"]
    if q is None:
        return
    unsafe = [c > q["budget"] for c in cost]
    require(q["unsafe_episodes"] == sum(unsafe), "unsafe episodes")
    # the grid as threshold_grid.hpp states it: lambda_j the order statistic of rank
    # floor(q_j (N - 1)) with q_j read as its decimal, ties kept, repeated lambdas merged
    ordered = sorted(scores)
    n = len(scores)
    steps = []
    for quantile in grid:
        lam = ordered[math.floor(Fraction(str(quantile)) * (n - 1))]
        if steps and steps[-1][1] == lam:
            continue
        members = [i for i, x in enumerate(scores) if x >= lam]
        steps.append((quantile, lam, len(members), sum(unsafe[i] for i in members)))
    got = [(st["quantile"], st["N"], st["U"]) for st in q["purity"]]
    require(got == [(qq, N, U) for qq, _, N, U in steps], f"purity {got} against {steps}")
    check_purity("score_quality", q, q["alpha"])


def main():
    if sys.argv[1] == "--score":
        check_score(Path(sys.argv[2]), Path(sys.argv[3]), [float(x) for x in sys.argv[4].split(",")])
        print("ok")
        return
    folder, task = Path(sys.argv[1]), sys.argv[2]
    report = json.loads((folder / "report.json").read_text())
    files = check_corridor(report) if task == "corridor" else check_pipeline(report, task, folder)
    for name in files:
        path = folder / name
        require(path.is_file(), f"{name} missing")
        if name.endswith(".svg"):
            root = ET.parse(path).getroot()
            require(root.tag.endswith("svg"), f"{name}: root is {root.tag}")
    print("ok")


if __name__ == "__main__":
    main()
