#!/usr/bin/python3
"""Exact certification rates, the reference tables for tests/ltt/certification_rate.test.cpp.

Proposition "certification rate": a pool of N trajectories, a first selection S_1 of N1 of
them holding U1 unsafe ones, n calibration draws without replacement. m ~ Hyp(N, N1, n) draws
land in S_1, k | m ~ Hyp(N1, U1, m) of those are unsafe, and the strict fixed-sequence walk
certifies iff the composition p-value p(k, m) = P[Hyp(N1, U*, m) <= k] is at most delta, with
U* = floor(alpha N1) + 1 (alpha read as the decimal it is written as). p is increasing in k, so
the walk certifies iff k <= k_max(m), the critical count (-1: no count is rejected), and

    c(m)    = P[Hyp(N1, U1, m) <= k_max(m)]
    rate(n) = sum_m P[Hyp(N, N1, n) = m] c(m).

Everything is exact integer arithmetic. delta is the exact binary value of the double
(Fraction(float)); the decision p <= delta is the integer comparison
cum(k) * den(delta) <= num(delta) * C(N1, m). With A_m = sum_{k <= k_max(m)} C(U1, k) C(N1-U1, m-k)
the C(N1, m) cancels:

    rate(n) = sum_m C(N - N1, n - m) A_m / C(N, n),

one integer ratio rounded once (21 significant digits, half to even). Terms follow
T_{j+1} = T_j (K-j)(n-j) / ((j+1)(N-K-n+j+1)), each division checked to be exact.

Near ties. The library's composition_pvalue rounds p up (never below the exact value, at most
4e-14 above), so where the exact p lies within a relative 1e-12 below delta the library may
decide "not rejected" where exact arithmetic rejects. Such m are counted (near_ties) and a second
value is written with those counts decided the conservative way (rate_conservative,
k_max_conservative, c_conservative); where near_ties = 0 the two agree. They do occur in small
pools: p(0, 3) for N1 = 5, alpha = 0.25 is exactly 1/10, below the double 0.1 by 5.6e-18
relative, so exact arithmetic rejects and the rounded-up p-value does not. (Two more, p = 3/10
just above the double 0.3, are refused either way.) The script lists every near tie it sees.

Tables (written next to this script):

certification_rate.csv    family,N,N1,U1,n,alpha,delta,U_star,near_ties,rate,rate_conservative
  small    every N <= 12, N1 <= N, U1 <= N1, n <= N at alpha in {0.25, 0.3}, delta in {0.1, 0.3}
  pool     N in {2000, 3137, 5000}, N1 a fraction of N (0.15 N is the 0.85 quantile), U1 at
           margins alpha - U1/N1 from -0.3 to +0.3 and at U* - 1, U*; n in {50, 100, 200, 400};
           alpha in {0.1, 0.25, 0.4}, delta in {0.05, 0.1}
  curve    rate(n) at every n = 0..N for three pools (one with U1 = U* - 1, one with U1 = U*)
  large    N = 1e5 and 1e6 with n up to 1e4: m is summed over a window of the support of
           Hyp(N, N1, n) around its mean; the mass left outside is computed exactly and is below
           1e-40, so these rates are exact to 1e-40 absolute (the value written is the window sum)

certification_rate_conditional.csv
  N1,alpha,delta,U_star,U1,m,k_max,c,k_max_conservative,c_conservative
  k_max(m) and c(m), m = 0..m_max (past m = 200 every tenth m when N1 > 1000), for a few
  (N1, alpha, delta) and U1 each.

Checked here exactly, over every row: Proposition "certification dichotomy" (i) rate <= delta
whenever U1 >= U*, (ii) rate(N) = 1 whenever U1 < U*; the Hoeffding relaxation
c(m) >= 1 - exp(-m eps^2 / 2) for m >= 2 ln(1/delta) / eps^2 on every conditional row
(eps = alpha - U1/N1 > 0; exp in double, the comparison allowing 1e-15). A failure stops the
script. Only the standard library; deterministic. Usage (about 30 s):

    /usr/bin/python3 tests/reference/certification_rate_reference.py
"""

import math
import os
import sys
import time
from fractions import Fraction

DIGITS = 21
TIE = 10**12  # near tie: |p - delta| <= delta / TIE
HERE = os.path.dirname(os.path.abspath(__file__))


# --- formatting ------------------------------------------------------------------------------

def fmt_ratio(num, den):
    """num/den in [0, 1] with 21 significant digits, correctly rounded (half to even)."""
    assert 0 <= num <= den and den > 0
    if num == 0:
        return "0"
    if num == den:
        return "1"
    e = math.floor((num.bit_length() - den.bit_length()) * 0.30102999566398120) - 1
    while True:
        shift = DIGITS - 1 - e
        a, b = (num * 10**shift, den) if shift >= 0 else (num, den * 10**(-shift))
        q, r = divmod(a, b)
        if q >= 10**DIGITS:
            e += 1
            continue
        if q < 10**(DIGITS - 1):
            e -= 1
            continue
        if 2 * r > b or (2 * r == b and q % 2 == 1):
            q += 1
        if q == 10**DIGITS:
            q //= 10
            e += 1
        s = str(q)
        return f"{s[0]}.{s[1:]}e{e}"


def null_boundary(N1, alpha):
    return math.floor(Fraction(alpha) * N1) + 1  # alpha is the decimal string


# --- critical counts and conditional rates ----------------------------------------------------

class Stats:
    near_ties_below = 0   # exact p <= delta within 1e-12: the library may refuse
    near_ties_above = 0   # exact p > delta within 1e-12: both refuse, no effect
    seen = set()          # (N1, U*, delta, m, k, p - delta as a float)


def next_term(T, K, j, n, N):
    """T_j = C(K, j) C(N-K, n-j) -> T_{j+1}."""
    num = T * (K - j) * (n - j)
    den = (j + 1) * (N - K - n + j + 1)
    q, r = divmod(num, den)
    assert r == 0
    return q


def critical_count(N1, U, delta, m):
    """(k_max, k_max_conservative) for one m; delta a Fraction."""
    if U > N1 or m == 0:
        return -1, -1
    dn, dd = delta.numerator, delta.denominator
    total = math.comb(N1, m)
    lo, hi = max(0, m - (N1 - U)), min(m, U)
    bound = dn * total                   # p(k) <= delta  <=>  cum(k) dd <= bound
    T = math.comb(U, lo) * math.comb(N1 - U, m - lo)
    cum, k_max, k_cons = 0, lo - 1, lo - 1
    for k in range(lo, hi):              # p(hi) = 1 > delta
        cum += T
        x = cum * dd
        tie = abs(x - bound) * TIE <= bound
        if tie:
            Stats.seen.add((N1, U, float(delta), m, k, float(Fraction(cum, total) - delta)))
        if x <= bound:
            k_max = k
            if tie:
                Stats.near_ties_below += 1
            else:
                k_cons = k
        else:
            if tie:
                Stats.near_ties_above += 1
            break
        T = next_term(T, U, k, m, N1)
    return k_max, k_cons


def accepted_mass(N1, U1, m, K):
    """A = sum_{k <= K} C(U1, k) C(N1 - U1, m - k); c(m) = A / C(N1, m)."""
    lo, hi = max(0, m - (N1 - U1)), min(m, U1)
    if K < lo:
        return 0
    if K >= hi:
        return math.comb(N1, m)
    T = math.comb(U1, lo) * math.comb(N1 - U1, m - lo)
    A = 0
    for k in range(lo, K + 1):
        A += T
        if k < K:
            T = next_term(T, U1, k, m, N1)
    return A


class Selection:
    """k_max(m) for one (N1, alpha, delta), computed on demand and kept."""

    def __init__(self, N1, alpha, delta):
        self.N1, self.alpha, self.delta = N1, alpha, delta
        self.U = null_boundary(N1, alpha)
        self.fdelta = Fraction(float(delta))
        self.kmax = {}

    def critical(self, m):
        if m not in self.kmax:
            self.kmax[m] = critical_count(self.N1, self.U, self.fdelta, m)
        return self.kmax[m]


# --- rates -------------------------------------------------------------------------------------

def binomial_run(R, j0, j1):
    """{j: C(R, j)} for j0 <= j <= j1 (0 beyond R), by the ratio recurrence."""
    out, j = {}, j0
    c = math.comb(R, j0) if j0 <= R else 0
    while j <= j1:
        out[j] = c
        c = c * (R - j) // (j + 1) if j < R else 0
        j += 1
    return out


def rates(N, sel, U1, ns, window=None):
    """[(n, near_ties, (num, num_conservative, den))] for each n; window(n) -> (m0, m1)."""
    N1, R = sel.N1, N - sel.N1
    masses = {}                          # m -> (A, A_conservative)
    out = []
    for n in ns:
        lo, hi = max(0, n - R), min(n, N1)
        m0, m1 = window(n) if window else (lo, hi)
        m0, m1 = max(m0, lo), min(m1, hi)
        CR = binomial_run(R, n - m1, n - m0)
        den = math.comb(N, n)
        num = num_c = covered = ties = 0
        for m in range(m0, m1 + 1):
            if m not in masses:
                k, kc = sel.critical(m)
                A = accepted_mass(N1, U1, m, k)
                masses[m] = (A, A if kc == k else accepted_mass(N1, U1, m, kc))
            A, Ac = masses[m]
            w = CR[n - m]
            num += w * A
            num_c += w * Ac
            if Ac != A:
                ties += 1
            if window:
                covered += w * math.comb(N1, m)
        if window:
            assert (den - covered) * 10**40 < den, f"window too narrow: N={N} N1={N1} n={n}"
        out.append((n, ties, num, num_c, den))
    return out


def check_dichotomy(N, sel, U1, n, num, den):
    if sel.N1 == 0:     # an empty selection is never certified
        if num != 0:
            sys.exit(f"EMPTY SELECTION CERTIFIES: N={N} n={n}")
    elif U1 >= sel.U:     # part (i): a true first null certifies with probability <= delta
        if Fraction(num, den) > sel.fdelta:
            sys.exit(f"DICHOTOMY (i) FAILS: N={N} N1={sel.N1} U1={U1} n={n} alpha={sel.alpha}")
    elif n == N and num != den:  # part (ii): n = N certifies surely
        sys.exit(f"DICHOTOMY (ii) FAILS: N={N} N1={sel.N1} U1={U1} alpha={sel.alpha}")


# --- families ----------------------------------------------------------------------------------

def margin_counts(N1, alpha, U):
    a = Fraction(alpha)
    out = set()
    for margin in ("-0.3", "-0.2", "-0.1", "-0.05", "-0.02", "-0.01", "0", "0.01", "0.02",
                   "0.05", "0.1", "0.2", "0.3"):
        out.add(min(N1, max(0, round((a - Fraction(margin)) * N1))))
    out.update({U - 1, U})
    return sorted(out)


def main():
    start = time.time()
    rows = []

    def emit(family, N, sel, U1, results):
        for n, ties, num, num_c, den in results:
            check_dichotomy(N, sel, U1, n, num, den)
            rows.append(f"{family},{N},{sel.N1},{U1},{n},{sel.alpha},{sel.delta},{sel.U},"
                        f"{ties},{fmt_ratio(num, den)},{fmt_ratio(num_c, den)}")

    counts = {}
    # small: exhaustive
    for alpha in ("0.25", "0.3"):
        for delta in ("0.1", "0.3"):
            for N1 in range(0, 13):
                sel = Selection(N1, alpha, delta)
                for N in range(N1, 13):
                    for U1 in range(0, N1 + 1):
                        emit("small", N, sel, U1, rates(N, sel, U1, range(0, N + 1)))
    counts["small"] = len(rows)

    # pool: DSRL-sized pools
    for N, fractions in ((2000, ("0.05", "0.15", "0.3", "0.5")), (3137, ("0.15",)),
                         (5000, ("0.15", "0.3"))):
        for f in fractions:
            N1 = math.floor(Fraction(f) * N)
            for alpha in ("0.1", "0.25", "0.4"):
                for delta in ("0.05", "0.1"):
                    sel = Selection(N1, alpha, delta)
                    for U1 in margin_counts(N1, alpha, sel.U):
                        emit("pool", N, sel, U1, rates(N, sel, U1, (50, 100, 200, 400)))
    counts["pool"] = len(rows) - sum(counts.values())

    # curve: every n
    for N, N1, U1, alpha, delta in ((2000, 300, 50, "0.25", "0.1"),
                                    (1000, 150, 37, "0.25", "0.1"),    # U1 = U* - 1
                                    (1000, 150, 38, "0.25", "0.1")):   # U1 = U*
        sel = Selection(N1, alpha, delta)
        emit("curve", N, sel, U1, rates(N, sel, U1, range(0, N + 1)))
    counts["curve"] = len(rows) - sum(counts.values())

    # large: a window of m around the mean of Hyp(N, N1, n), +-(20 sd + 50)
    def window_for(N, N1):
        def w(n):
            mean = n * N1 / N
            sd = math.sqrt(mean * (1 - N1 / N) * (N - n) / max(1, N - 1))
            return math.floor(mean - 20 * sd - 50), math.ceil(mean + 20 * sd + 50)
        return w

    for N, N1, U1s, ns in ((100000, 15000, (3000, 3450, 3600, 3700, 3750, 3751), (500, 1000, 2000)),
                           (1000000, 150000, (30000, 36000, 37000, 37500, 37501), (10000,))):
        sel = Selection(N1, "0.25", "0.1")
        for U1 in U1s:
            emit("large", N, sel, U1, rates(N, sel, U1, ns, window_for(N, N1)))
    counts["large"] = len(rows) - sum(counts.values())

    with open(os.path.join(HERE, "certification_rate.csv"), "w") as f:
        f.write("family,N,N1,U1,n,alpha,delta,U_star,near_ties,rate,rate_conservative\n")
        f.write("\n".join(rows) + "\n")
    tie_rows = sum(1 for r in rows if r.split(",")[8] != "0")

    # conditional: k_max(m) and c(m)
    crow = []
    hoeffding_checked = 0
    for N1, alpha, delta, U1s, m_max in ((5, "0.25", "0.1", (0, 1, 2), 5),
                                         (10, "0.3", "0.1", (0, 2, 3, 4), 10),
                                         (37, "0.1", "0.05", (0, 2, 3, 4, 5), 37),
                                         (300, "0.25", "0.1", (30, 60, 75, 76), 300),
                                         (750, "0.4", "0.05", (150, 290, 300, 301), 400),
                                         (15000, "0.25", "0.1", (3000, 3750), 1000),
                                         (150000, "0.25", "0.1", (30000,), 2000)):
        sel = Selection(N1, alpha, delta)
        total = [math.comb(N1, m) for m in range(m_max + 1)]
        for U1 in U1s:
            eps = float(alpha) - U1 / N1
            m_min = math.ceil(2 * math.log(1 / float(delta)) / eps**2) if eps > 0 else None
            for m in range(m_max + 1):
                if N1 > 1000 and m > 200 and m % 10 != 0 and m_min is None:
                    continue  # large selections: every m to 200, then every tenth
                k, kc = sel.critical(m)
                A = accepted_mass(N1, U1, m, k)
                Ac = A if kc == k else accepted_mass(N1, U1, m, kc)
                if m_min is not None and m >= m_min:
                    hoeffding_checked += 1
                    if A / total[m] < 1 - math.exp(-m * eps * eps / 2) - 1e-15:
                        sys.exit(f"HOEFFDING RELAXATION FAILS: N1={N1} U1={U1} m={m} "
                                 f"alpha={alpha} delta={delta}")
                if N1 > 1000 and m > 200 and m % 10 != 0:
                    continue
                crow.append(f"{N1},{alpha},{delta},{sel.U},{U1},{m},{k},"
                            f"{fmt_ratio(A, total[m])},{kc},{fmt_ratio(Ac, total[m])}")
    with open(os.path.join(HERE, "certification_rate_conditional.csv"), "w") as f:
        f.write("N1,alpha,delta,U_star,U1,m,k_max,c,k_max_conservative,c_conservative\n")
        f.write("\n".join(crow) + "\n")

    print(f"certification_rate.csv: {len(rows)} rows {counts}; rows with near ties: {tie_rows}",
          file=sys.stderr)
    print(f"certification_rate_conditional.csv: {len(crow)} rows; Hoeffding checked on "
          f"{hoeffding_checked} rows", file=sys.stderr)
    print(f"near ties (distinct (N1, alpha, delta, m)): below delta {Stats.near_ties_below}, "
          f"above delta {Stats.near_ties_above}", file=sys.stderr)
    for t in sorted(Stats.seen):
        print("  near tie N1=%d U*=%d delta=%r m=%d k=%d p-delta=%.3g" % t, file=sys.stderr)
    print(f"{time.time() - start:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
