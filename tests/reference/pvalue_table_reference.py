#!/usr/bin/env python3
"""Exact composition p-values for tests/ltt/pvalue.test.cpp.

p(k, m) = P[Hyp(N_sel, U*, m) <= k] with U* = floor(alpha N_sel) + 1, alpha read as the
decimal it is written as (Fraction of the decimal string), summed over exact integer terms
C(U*, j) C(N_sel - U*, m - j) and divided by C(N_sel, m) as a Fraction, then rounded once
to 21 significant digits. Regenerate with

    /usr/bin/python3 tests/reference/pvalue_table_reference.py > tests/reference/pvalue_table.csv
"""
from fractions import Fraction
from decimal import Decimal, getcontext
import math

getcontext().prec = 40

# (N_sel, alpha as written, rows m to tabulate in full)
CASES = [
    (1, "0.25", range(0, 2)),
    (2, "0.5", range(0, 3)),
    (10, "0.3", range(0, 11)),        # the rounding trap: 0.3 * 10 must give U* = 4
    (37, "0.1", range(0, 38)),
    (400, "0.25", range(0, 61)),      # U* = 101
    (2000, "0.3", [100, 200, 400]),
    (5000, "0.05", [1, 50, 333]),
]


def row(N, U, m):
    lo, hi = max(0, m - (N - U)), min(m, U)
    total = math.comb(N, m)
    terms, T = {}, math.comb(U, lo) * math.comb(N - U, m - lo)
    for j in range(lo, hi + 1):
        terms[j] = T
        if j < hi:
            T = T * (U - j) * (m - j) // ((j + 1) * (N - U - m + j + 1))
    out, run = [], 0
    for k in range(0, m + 1):
        run += terms.get(k, 0)
        out.append(Fraction(run, total))
    return out


def fmt(f):
    if f == 0:
        return "0"
    if f == 1:
        return "1"
    return format(Decimal(f.numerator) / Decimal(f.denominator), ".20e")


print("N_sel,alpha,U,m,k,p")
for N, alpha, rows in CASES:
    U = math.floor(Fraction(alpha) * N) + 1
    for m in rows:
        for k, p in enumerate(row(N, U, m)):
            print(f"{N},{alpha},{U},{m},{k},{fmt(p)}")
