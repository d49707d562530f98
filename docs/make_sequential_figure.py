#!/usr/bin/env python3
"""Labels used against the purity margin, sequential walk and fixed-n walk (docs/sequential.md).

    make_sequential_figure.py LTT [DRAWS]     (LTT: the ltt program; DRAWS default 1000)

Graded pools of N = 2000 (scores 2000..1; the top N_1 = 301, the first grid selection, holds a
fraction u1 unsafe, the rest u1 + 0.05, spread evenly), u1 from 0 to 0.55: purity margins
+0.25 to -0.30 at alpha = 0.25. For each pool, `ltt validate --json` with the fixed-n walk at
n = 200 and with --procedure sequential, cap 200: the stratified order (the default) under
--stop labels and --stop target:0, the uniform order under --stop labels (seed 1, one thread).
The last column is the smallest fixed n whose closed-form certification rate reaches the
defaults' measured rate (`ltt budget`, capped at 0.999). Prints a markdown table and writes
docs/images/sequential_labels.svg.
"""
import json
import os
import subprocess
import sys
import tempfile

U1 = [0.0, 0.02, 0.05, 0.10, 0.15, 0.20, 0.24, 0.26, 0.30, 0.35, 0.45, 0.55]
# (key, --order, --stop)
RUNS = [("auto", "stratified", "labels"), ("target:0", "stratified", "target:0"),
        ("uniform", "uniform", "labels")]


def write_pool(path, N, u1, u_rest):
    N1 = N - (85 * (N - 1)) // 100
    unsafe = [0] * N
    for start, count, frac in ((0, N1, u1), (N1, N - N1, u_rest)):
        bad = round(frac * count)
        for i in range(count):
            unsafe[start + i] = int((i + 1) * bad // count > i * bad // count)
    with open(path, "w") as f:
        f.write("id,score,unsafe\n")
        for i in range(N):
            f.write(f"{i},{N - i},{unsafe[i]}\n")


def mean_depth(v):
    """Mean certified depth (0 when refused) from the returned-step histogram."""
    return sum((j + 1) * s["returned"] for j, s in enumerate(v["steps"])) / v["draws"]


def budget(ltt, U1, rate):
    """The smallest fixed n whose closed-form certification rate reaches `rate` (ltt budget;
    at most 0.999, since a rate of 1 is reached only with the whole pool); None if none."""
    if rate <= 0.0:
        return None
    out = subprocess.run([ltt, "budget", "--N", "2000", "--N1", "301", "--U1", str(U1),
                          "--target", str(min(rate, 0.999)), "--json"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)["budget"]


def validate(ltt, pool, draws, extra):
    out = subprocess.run([ltt, "validate", "--pool", pool, "--n", "200", "--draws", str(draws),
                          "--seed", "1", "--threads", "1", "--json"] + extra,
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def svg(rows, path):
    W, H, L, R, T, B = 640, 420, 60, 20, 20, 120   # the legend sits below the axis title
    x = lambda m: L + (0.25 - m) / 0.55 * (W - L - R)       # margin +0.25 left, -0.30 right
    y = lambda n: T + (1 - n / 200) * (H - T - B)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
             f'font-family="sans-serif" font-size="12">',
             f'<rect width="{W}" height="{H}" fill="white"/>']
    for n in range(0, 201, 50):
        parts.append(f'<line x1="{L}" x2="{W - R}" y1="{y(n):.1f}" y2="{y(n):.1f}" stroke="#ddd"/>'
                     f'<text x="{L - 6}" y="{y(n) + 4:.1f}" text-anchor="end">{n}</text>')
    for m in [0.2, 0.1, 0.0, -0.1, -0.2, -0.3]:
        parts.append(f'<text x="{x(m):.1f}" y="{H - B + 16}" text-anchor="middle">{m:+.1f}</text>')
    parts.append(f'<text x="{(L + W - R) / 2}" y="{H - B + 34}" text-anchor="middle">'
                 'purity margin (alpha = 0.25, N = 2000, N_1 = 301)</text>')
    parts.append(f'<text x="16" y="{(T + H - B) / 2}" text-anchor="middle" '
                 f'transform="rotate(-90 16 {(T + H - B) / 2})">labels used per run</text>')
    series = [("fixed", "#555", "fixed-n walk, n = 200"),
              ("auto", "#1f77b4", "sequential, stratified, --stop labels: mean; band median-p90"),
              ("target:0", "#d62728", "sequential, stratified, --stop target:0 (mean)"),
              ("uniform", "#2ca02c", "sequential, --order uniform --stop labels (mean)")]
    auto_band = [(x(r["margin"]), y(r["auto"]["median"])) for r in rows] + \
                [(x(r["margin"]), y(r["auto"]["p90"])) for r in reversed(rows)]
    parts.append('<polygon fill="#1f77b4" fill-opacity="0.15" points="' +
                 " ".join(f"{a:.1f},{b:.1f}" for a, b in auto_band) + '"/>')
    for i, (key, colour, label) in enumerate(series):
        pts = [(x(r["margin"]), y(200 if key == "fixed" else r[key]["mean"])) for r in rows]
        parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="' +
                     " ".join(f"{a:.1f},{b:.1f}" for a, b in pts) + '"/>')
        ly = H - B + 52 + 16 * i
        parts.append(f'<line x1="{L + 10}" x2="{L + 30}" y1="{ly}" y2="{ly}" stroke="{colour}" '
                     f'stroke-width="2"/><text x="{L + 36}" y="{ly + 4}">{label}</text>')
    parts.append('</svg>')
    with open(path, "w") as f:
        f.write("\n".join(parts) + "\n")


def main():
    ltt = sys.argv[1]
    draws = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for u1 in U1:
            pool = os.path.join(tmp, f"pool_{u1}.csv")
            write_pool(pool, 2000, u1, u1 + 0.05)
            fixed = validate(ltt, pool, draws, [])
            row = {"u1": u1, "margin": fixed["purity_margin"],
                   "fixed_rate": fixed["certification"]["rate"],
                   "fixed_false": fixed["false_certification"]["rate"],
                   "fixed_depth": mean_depth(fixed), "U1": fixed["steps"][0]["U"]}
            for key, order, rule in RUNS:
                s = validate(ltt, pool, draws, ["--procedure", "sequential", "--order", order,
                                                "--stop", rule])
                row[key] = dict(s["labels_used"], rate=s["certification"]["rate"],
                                false=s["false_certification"]["rate"],
                                false_upper=s["false_certification"]["upper"],
                                depth=mean_depth(s))
            row["budget"] = (budget(ltt, row["U1"], row["auto"]["rate"])
                             if row["margin"] > 0 else None)  # a rate of false certificates otherwise
            rows.append(row)
            print(row, file=sys.stderr, flush=True)
    print("| u1 | purity margin | fixed n = 200: rate / false / depth | defaults: rate / false /"
          " depth | labels mean / median / p90 / max | target:0: rate / labels |"
          " uniform, auto: rate / depth / labels | fixed n for the defaults' rate |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        a, t, u = r["auto"], r["target:0"], r["uniform"]
        print(f"| {r['u1']:.2f} | {r['margin']:+.3f} | {r['fixed_rate']:.3f} / "
              f"{r['fixed_false']:.3f} / {r['fixed_depth']:.2f} | {a['rate']:.3f} / "
              f"{a['false']:.3f} / {a['depth']:.2f} | {a['mean']:.1f} / {a['median']:g} / "
              f"{a['p90']} / {a['max']} | {t['rate']:.3f} / {t['mean']:.1f} | {u['rate']:.3f} / "
              f"{u['depth']:.2f} / {u['mean']:.1f} | "
              f"{'-' if r['budget'] is None else r['budget']} |")
    here = os.path.dirname(os.path.abspath(__file__))
    svg(rows, os.path.join(here, "images", "sequential_labels.svg"))


if __name__ == "__main__":
    main()
