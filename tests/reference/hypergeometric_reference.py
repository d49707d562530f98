#!/usr/bin/python3
"""Exact hypergeometric probabilities, the reference table for tests/ltt/hypergeometric.test.cpp.

X ~ Hyp(N, K, n): successes in n draws without replacement from N items, K of them successes.
With T_j = C(K, j) C(N-K, n-j) on the support lo = max(0, n+K-N) <= j <= hi = min(n, K),

    pmf = T_k / C(N, n),   cdf = P[X <= k] = sum_{j <= k} T_j / C(N, n),   sf = P[X > k],

and their natural logs. Every value is written with 21 significant digits; exact 0 as `0`
(its log as `-inf`) and exact 1 as `1` (its log as `0`).

Two ways to the same numbers, chosen per (N, K, n) by the size of the work:

  exact  The terms are exact integers, T_{j+1} = T_j (K-j)(n-j) / ((j+1)(N-K-n+j+1)) (the
         division is checked to leave no remainder) and their sum is checked against C(N, n)
         (Vandermonde). cdf and sf are each their own exact sum; pmf, cdf and sf are rounded to
         21 digits exactly from the integer ratio, round half to even.

  chain  For large n and N (C(N, n) with millions of bits) the terms are taken relative to T_k,
         t_j = T_j / T_k, by the same ratio recurrence in 60-digit decimal arithmetic, summed
         outward from k in both directions: L = sum_{j<k} t_j, U = sum_{j>k} t_j. Then
         pmf = 1/(1+L+U), cdf = (1+L)/(1+L+U), sf = U/(1+L+U), 1-pmf = (L+U)/(1+L+U); the
         normalisation 1+L+U = C(N, n)/T_k is again Vandermonde. The pmf is log-concave, so
         the ratios fall monotonically: once a ratio r < 1 the remainder of a sum after a term
         t is at most t r / (1-r), and a sum stops when that bound is below 1e-45 of it. With
         at most 3 roundings of 1e-59 per step over at most 1e6 steps, every value of this path
         is exact to 1e-40 relative (in particular the ones written to 21 digits).

Logs: ln v for v <= 1/2, else log(1 - c) with c = 1 - v known to full relative accuracy (the
other tail, or the rest of the mass for the pmf), so a log near 0 (v = 1 - 1e-30) keeps its
relative accuracy too. Values from the chain path and all logs are approximations good to
1e-38 relative; each is rounded to 21 digits only after checking that the whole error interval
rounds to the same string, else the script stops.

Before writing, the two paths are compared on configurations both can do (agreement to 1e-40
required), and the chain normalisation is compared once against C(N, n) for N = 1e12,
n = 1e5 computed with big integers.

Only the standard library is used, deterministic (fixed seed). Usage:
    /usr/bin/python3 tests/reference/hypergeometric_reference.py
writes hypergeometric.csv next to this script and prints the rows per family and the time.
"""

import math
import os
import random
import sys
import time
from decimal import (MAX_EMAX, MIN_EMIN, ROUND_HALF_EVEN, Context, Decimal, localcontext,
                     setcontext)

setcontext(Context(prec=60, Emax=MAX_EMAX, Emin=MIN_EMIN, rounding=ROUND_HALF_EVEN))

DIGITS = 21
CHAIN_TOLERANCE = Decimal("1e-45")   # truncation of each chain sum, relative
APPROX_ERROR = Decimal("1e-38")      # bound used for the rounding check of approximate values
EXACT_WORK_LIMIT = 5 * 10**7         # (terms) x (bits of C(N, n)) above which the chain is used
DBL_MIN = 2.2250738585072014e-308
LN10 = math.log(10.0)


def support(N, K, n):
    return max(0, n + K - N), min(n, K)


# --- formatting ------------------------------------------------------------------------------

def digits_string(negative, q, e):
    """q has exactly DIGITS digits; the value is q * 10^(e - DIGITS + 1)."""
    s = str(q)
    assert len(s) == DIGITS
    return f"{'-' if negative else ''}{s[0]}.{s[1:]}e{e}"


def round_ratio(num, den):
    """num/den > 0 -> (q, e) with 10^20 <= q < 10^21, q correctly rounded (half to even)."""
    e = math.floor((num.bit_length() - den.bit_length()) * 0.30102999566398120)
    while True:
        shift = DIGITS - 1 - e
        a, b = (num * 10**shift, den) if shift >= 0 else (num, den * 10**(-shift))
        if a < b * 10**(DIGITS - 1):
            e -= 1
        elif a >= b * 10**DIGITS:
            e += 1
        else:
            break
    q, r = divmod(a, b)
    if 2 * r > b or (2 * r == b and q % 2 == 1):
        q += 1
    if q == 10**DIGITS:
        q //= 10
        e += 1
    return q, e


def fmt_exact(num, den):
    if num == 0:
        return "0"
    if num == den:
        return "1"
    return digits_string(False, *round_ratio(num, den))


def round_decimal(x):
    """Decimal x != 0 -> (q, e), rounded half to even at DIGITS significant digits."""
    t = abs(x).as_tuple()
    coeff = int("".join(map(str, t.digits)))
    exp = t.exponent
    return round_ratio(coeff * 10**max(exp, 0), 10**max(-exp, 0))


def fmt_approx(x, rel_error=APPROX_ERROR):
    """x known to rel_error; stop if the error interval straddles a rounding boundary."""
    lo = round_decimal(x * (1 - rel_error))
    hi = round_decimal(x * (1 + rel_error))
    if lo != hi:
        raise RuntimeError(f"cannot round {x} to {DIGITS} digits: raise the precision")
    return digits_string(x < 0, *lo)


# --- exact decimals and logs -----------------------------------------------------------------

def ratio_to_decimal(num, den):
    """num/den to 60 significant digits (truncated: relative error < 1e-59)."""
    if num == 0:
        return Decimal(0)
    e = math.floor((num.bit_length() - den.bit_length()) * 0.30102999566398120)
    shift = 62 - e
    q = num * 10**shift // den if shift >= 0 else num // (den * 10**(-shift))
    return Decimal(q).scaleb(-shift)


def log1m(c):
    """ln(1 - c) for 0 < c <= 1/2, to full relative accuracy."""
    if c < Decimal("1e-15"):
        total, power, i = Decimal(0), c, 1
        while power / i > c * Decimal("1e-70"):
            total += power / i
            power *= c
            i += 1
        return -total
    with localcontext() as ctx:
        ctx.prec = 130                 # 1 - c is then exact for a 60-digit c >= 1e-15
        value = (1 - c).ln()
    return +value


def log_of(value, complement):
    """ln(value) given value and 1 - value, each to full relative accuracy (Decimals)."""
    if value == 0:
        return None                    # -inf
    if complement == 0:
        return Decimal(0)
    if value <= Decimal("0.5"):
        return value.ln()
    return log1m(complement)


def fmt_log(log):
    if log is None:
        return "-inf"
    if log == 0:
        return "0"
    return fmt_approx(log)


# --- exact path ------------------------------------------------------------------------------

def exact_terms(N, K, n):
    """[T_lo, ..., T_hi] as exact integers, and C(N, n)."""
    lo, hi = support(N, K, n)
    t = math.comb(K, lo) * math.comb(N - K, n - lo)
    terms = [t]
    for j in range(lo, hi):
        t, r = divmod(t * (K - j) * (n - j), (j + 1) * (N - K - n + j + 1))
        assert r == 0
        terms.append(t)
    total = math.comb(N, n)
    assert sum(terms) == total, (N, K, n)
    return terms, total


class ExactTable:
    def __init__(self, N, K, n):
        self.lo, self.hi = support(N, K, n)
        self.terms, self.total = exact_terms(N, K, n)
        self.prefix = []               # prefix[i] = sum of terms[0..i]
        s = 0
        for t in self.terms:
            s += t
            self.prefix.append(s)
        self.suffix = [0] * (len(self.terms) + 1)   # suffix[i] = sum of terms[i..]
        for i in range(len(self.terms) - 1, -1, -1):
            self.suffix[i] = self.suffix[i + 1] + self.terms[i]

    def numerators(self, k):
        """Numerators over self.total of pmf, 1 - pmf, cdf, sf."""
        lo, hi, D = self.lo, self.hi, self.total
        pmf = self.terms[k - lo] if lo <= k <= hi else 0
        if k < lo:
            cdf, sf = 0, D
        elif k >= hi:
            cdf, sf = D, 0
        else:
            cdf, sf = self.prefix[k - lo], self.suffix[k - lo + 1]
        return pmf, D - pmf, cdf, sf

    def row(self, k):
        pmf, rest, cdf, sf = self.numerators(k)
        D = self.total
        dec = {name: ratio_to_decimal(v, D) for name, v in
               (("pmf", pmf), ("rest", rest), ("cdf", cdf), ("sf", sf))}
        return [fmt_exact(pmf, D), fmt_exact(cdf, D), fmt_exact(sf, D),
                fmt_log(log_of(dec["pmf"], dec["rest"])),
                fmt_log(log_of(dec["cdf"], dec["sf"])),
                fmt_log(log_of(dec["sf"], dec["cdf"]))]


# --- chain path ------------------------------------------------------------------------------

def chain_sum(N, K, n, k, upward):
    """sum_{j>k} T_j/T_k (upward) or sum_{j<k} T_j/T_k, truncated below CHAIN_TOLERANCE."""
    lo, hi = support(N, K, n)
    t, s = Decimal(1), Decimal(0)
    if upward:
        for j in range(k, hi):         # t becomes T_{j+1}/T_k
            r = Decimal((K - j) * (n - j)) / Decimal((j + 1) * (N - K - n + j + 1))
            t *= r
            s += t
            if r < 1 and t * r / (1 - r) <= CHAIN_TOLERANCE * s:
                break
    else:
        for j in range(k, lo, -1):     # t becomes T_{j-1}/T_k
            r = Decimal(j * (N - K - n + j)) / Decimal((K - j + 1) * (n - j + 1))
            t *= r
            s += t
            if r < 1 and t * r / (1 - r) <= CHAIN_TOLERANCE * s:
                break
    return s


def chain_decimals(N, K, n, k):
    """pmf, 1 - pmf, cdf, sf as Decimals (exact 0/1 as Decimal 0/1), for any k."""
    lo, hi = support(N, K, n)
    if k < lo or k > hi:
        pmf, rest = Decimal(0), Decimal(1)
        cdf, sf = (Decimal(0), Decimal(1)) if k < lo else (Decimal(1), Decimal(0))
        return pmf, rest, cdf, sf
    L = chain_sum(N, K, n, k, False)
    U = chain_sum(N, K, n, k, True)
    S = 1 + L + U
    pmf, rest = 1 / S, (L + U) / S
    cdf, sf = (Decimal(1), Decimal(0)) if k == hi else ((1 + L) / S, U / S)
    return pmf, rest, cdf, sf


def chain_row(N, K, n, k):
    pmf, rest, cdf, sf = chain_decimals(N, K, n, k)

    def fmt(v, complement):
        # exact 0 and 1 come only from the support ends; a 60-digit 1 may be 1 - 1e-400
        return "0" if v == 0 else "1" if complement == 0 else fmt_approx(v)
    return [fmt(pmf, rest), fmt(cdf, sf), fmt(sf, cdf),
            fmt_log(log_of(pmf, rest)), fmt_log(log_of(cdf, sf)), fmt_log(log_of(sf, cdf))]


def exact_work(N, K, n):
    lo, hi = support(N, K, n)
    bits = (math.lgamma(N + 1) - math.lgamma(n + 1) - math.lgamma(N - n + 1)) / math.log(2)
    return (hi - lo + 1) * (bits + 64)


# --- self-checks -----------------------------------------------------------------------------

def relative_difference(a, b):
    if a == b:
        return Decimal(0)
    return abs(a - b) / max(abs(a), abs(b))


def ln_int(x):
    """ln of a positive integer to ~2^-250 relative, from its leading 256 bits."""
    b = x.bit_length()
    if b <= 256:
        return Decimal(x).ln()
    return Decimal(x >> (b - 256)).ln() + (b - 256) * Decimal(2).ln()


def self_check():
    configs = [(5000, 2500, 2500, [0, 1, 7, 300, 1000, 1249, 1250, 1251, 2000, 2499, 2500]),
               (2000, 501, 400, [0, 50, 100, 101, 150, 399, 400]),
               (2**53, 2**52, 50, [0, 1, 24, 25, 26, 49, 50]),
               (2**53 - 1, 1, 50, [0, 1]),
               (10**6, 10**4, 2000, [0, 5, 20, 40, 100, 2000]),
               (100, 90, 50, [40, 41, 45, 49, 50]),
               (3000, 2999, 1500, [1499, 1500])]
    worst = Decimal(0)
    for N, K, n, ks in configs:
        table = ExactTable(N, K, n)
        for k in ks:
            D = table.total
            exact = [ratio_to_decimal(v, D) for v in table.numerators(k)]
            chain = chain_decimals(N, K, n, k)
            for a, b in zip(exact, chain):
                d = relative_difference(a, b)
                worst = max(worst, d)
                if d > Decimal("1e-40"):
                    raise RuntimeError(f"exact and chain paths differ by {d} at {k, N, K, n}")
    # The chain's normalisation against the big-integer pmf where only the chain is used.
    N, K, n = 10**12, 10**12 // 4 + 1, 10**5
    k = 24700
    log_exact = (ln_int(math.comb(K, k)) + ln_int(math.comb(N - K, n - k))
                 - ln_int(math.comb(N, n)))
    pmf = chain_decimals(N, K, n, k)[0]
    d = relative_difference(pmf.ln(), log_exact)
    if d > Decimal("1e-40"):
        raise RuntimeError(f"chain normalisation off by {d} at {k, N, K, n}")
    return max(worst, d)


# --- the rows --------------------------------------------------------------------------------

def log_pmf_float(k, N, K, n):
    """Rough ln P[X = k] (floating point), only to aim rows at a tail depth."""
    def lc(a, b):
        return math.lgamma(a + 1) - math.lgamma(b + 1) - math.lgamma(a - b + 1)
    return lc(K, k) + lc(N - K, n - k) - lc(N, n)


def mode(N, K, n):
    return (n + 1) * (K + 1) // (N + 2)


def spread(N, K, n):
    if N <= 1:
        return 0.0
    p = K / N
    return math.sqrt(max(n * p * (1 - p) * (N - n) / (N - 1), 0.0))


def clamp(k, N, K, n):
    lo, hi = support(N, K, n)
    return min(max(k, lo), hi)


def family_small(rng):
    rows = []
    # every k of the support, one beyond each end
    for N, K, n in [(1, 1, 1), (2, 1, 1), (5, 2, 3), (10, 4, 5), (20, 7, 12), (37, 20, 30),
                    (50, 25, 25), (64, 3, 60), (100, 1, 50), (100, 99, 50), (100, 50, 99),
                    (100, 30, 40), (100, 26, 20), (100, 50, 50), (97, 60, 70)]:
        lo, hi = support(N, K, n)
        rows += [(k, N, K, n) for k in range(lo - 1, hi + 2)]
    while len(rows) < 650:
        N = rng.randint(2, 100)
        K, n = rng.randint(0, N), rng.randint(0, N)
        lo, hi = support(N, K, n)
        k = rng.randint(lo, hi) if rng.random() < 0.9 else rng.choice([lo - 1, hi + 1])
        rows.append((k, N, K, n))
    return rows


def family_dsrl(rng):
    rows = []
    alpha = 0.25
    # the composition p-value F(k; N_sel, floor(alpha N_sel) + 1, m), every k for some
    for N_sel, m in [(150, 5), (150, 60), (200, 20), (400, 40), (750, 5), (750, 60)]:
        K = math.floor(alpha * N_sel) + 1
        rows += [(k, N_sel, K, m) for k in range(0, m + 1)]
    for _ in range(100):
        N_sel = rng.randint(150, 750)
        m = rng.randint(5, 60)
        K = math.floor(alpha * N_sel) + 1
        rows.append((rng.randint(0, m), N_sel, K, m))
    # wider: other fractions, larger draws, k across the support
    for _ in range(30):
        N = rng.randint(150, 5000)
        f = rng.choice([0.25, 0.25, 0.1, 0.05, 0.01, 0.5, 0.75, 0.9])
        K = math.floor(f * N) + 1
        n = rng.randint(5, min(400, N))
        lo, hi = support(N, K, n)
        mu, sd = n * K / N, spread(N, K, n)
        ks = {lo, lo + 1, hi - 1, hi, mode(N, K, n), rng.randint(lo, hi)}
        ks |= {round(mu + c * sd) for c in (-4, -2, -1, 1, 2, 4)}
        rows += [(clamp(k, N, K, n), N, K, n) for k in sorted(ks)]
    return rows


def family_large(rng):
    rows = []
    configs = []
    for N in (10**5, 10**6, 10**8, 10**10, 10**12):
        for f in (0.25, 0.01, 0.5, 0.9):
            K = math.floor(f * N) + (1 if f == 0.25 else 0)
            for n in (10, 100, 1000, 10**4, 10**5):
                configs.append((N, K, min(n, N // 2)))
    for _ in range(10):
        N = round(10 ** rng.uniform(5, 12))
        K = math.floor(rng.choice([0.25, 0.01, 0.5, 0.9, 0.3]) * N) + 1
        n = round(10 ** rng.uniform(1, 5))
        configs.append((N, K, n))
    for N, K, n in configs:
        mu, sd = n * K / N, spread(N, K, n)
        ks = {mode(N, K, n)} | {round(mu + c * sd) for c in (-6, -2, 2, 6)}
        rows += [(clamp(k, N, K, n), N, K, n) for k in sorted(ks)]
    return rows


def aim_lower(N, K, n, log10_target):
    """Largest k at or below the mode whose (rough) pmf is below the target, or None."""
    lo, _ = support(N, K, n)
    a, b = lo, mode(N, K, n)
    if log_pmf_float(a, N, K, n) / LN10 > log10_target:
        return None
    while b - a > 1:                   # pmf(a) <= target < pmf(b)
        c = (a + b) // 2
        if log_pmf_float(c, N, K, n) / LN10 <= log10_target:
            a = c
        else:
            b = c
    return a


def family_extreme():
    rows = []
    targets = [-100, -300, -307.5, -308, -309, -320, -323.5, -324.5, -400, -1000, -2000,
               -5000, -10000]
    configs = [(1000, 500, 500), (2000, 1000, 1000), (3000, 751, 1500), (5000, 2500, 2500),
               (20000, 10000, 10000), (10**6, 250001, 10**5), (10**8, 25 * 10**6, 10**5),
               (10**10, 5 * 10**9, 10**5), (10**12, 5 * 10**11, 10**5),
               (10**12, 10**10, 10**5), (10**12, 9 * 10**11, 5 * 10**4),
               (2**53, 2**52, 10**5)]
    for N, K, n in configs:
        lo, hi = support(N, K, n)
        ks = {lo, hi - 1}
        for t in targets:
            k = aim_lower(N, K, n, t)          # cdf(k) near 10^t
            if k is not None:
                ks.add(k)
            # the upper tail is the lower tail of the failures: sf(k) = cdf'(n-k-1), K' = N-K
            j = aim_lower(N, N - K, n, t)
            if j is not None:
                ks.add(n - j - 1)
        rows += [(k, N, K, n) for k in sorted(ks) if lo <= k <= hi]
    # around the normal/subnormal boundary: cdf(0) = pmf(0) ~ (1 - K/N)^n moves by 0.1%
    # per draw, and sf(n-1) = pmf(n) likewise with the roles swapped
    N, K = 10**8, 10**5
    for log_target in (math.log(DBL_MIN), -1074 * math.log(2.0), -1075 * math.log(2.0)):
        a, b = 1, N - K                # pmf(0) falls with n: above the target at a, below at b
        while b - a > 1:
            c = (a + b) // 2
            if log_pmf_float(0, N, K, c) > log_target:
                a = c
            else:
                b = c
        for n in range(b - 3, b + 3):
            rows.append((0, N, K, n))
            rows.append((n - 1, N, N - K, n))
    return rows


def family_huge():
    rows = []
    for N in (2**53, 2**53 - 1):
        h = N // 2
        for K in (h, h + 1, h - 1, 1, 2, 3, 1000, 2**40, N - 1, N - 2, N - 3):
            for n in (1, 7, 50):
                lo, hi = support(N, K, n)
                if hi - lo <= 8:
                    ks = range(lo, hi + 1)
                else:
                    m = mode(N, K, n)
                    ks = sorted({lo, lo + 1, m - 1, m, m + 1, hi - 1, hi})
                rows += [(k, N, K, n) for k in ks]
    return rows


def family_edge():
    rows = [(k, 0, 0, 0) for k in (-1, 0, 1)]
    for K in (0, 1):
        for n in (0, 1):
            rows += [(k, 1, K, n) for k in (-1, 0, 1, 2)]
    for N, K, n in [(5, 2, 0), (1000, 500, 0), (2**53, 2**52, 0), (10, 0, 4), (10, 10, 4),
                    (10, 4, 10), (2**53, 0, 5), (2**53, 2**53, 5), (2**53, 3, 2**53),
                    (10, 7, 6), (100, 90, 50), (1000, 999, 500), (10**12, 10**12 - 1, 10**5),
                    (300, 76, 40), (10**8, 25 * 10**6 + 1, 1000)]:
        lo, hi = support(N, K, n)
        ks = {-1, -10**6, lo - 1, lo, lo + 1, hi - 1, hi, hi + 1, n, n + 1, 10**15}
        rows += [(k, N, K, n) for k in sorted(ks)]
    return rows


# --- main ------------------------------------------------------------------------------------

def main():
    start = time.time()
    print(f"self-check: exact and chain paths agree to {float(self_check()):.1e}",
          file=sys.stderr)
    rng = random.Random(20240611)
    families = [("small", family_small(rng)), ("dsrl", family_dsrl(rng)),
                ("large", family_large(rng)), ("extreme", family_extreme()),
                ("huge", family_huge()), ("edge", family_edge())]
    seen = set()
    lines = ["family,k,N,K,n,pmf,cdf,sf,log_pmf,log_cdf,log_sf"]
    counts = {}
    for name, rows in families:
        by_config = {}
        for k, N, K, n in rows:
            assert 0 <= K <= N <= 2**53 and 0 <= n <= N
            if (k, N, K, n) not in seen:
                seen.add((k, N, K, n))
                by_config.setdefault((N, K, n), []).append(k)
        counts[name] = 0
        for (N, K, n), ks in by_config.items():
            table = ExactTable(N, K, n) if exact_work(N, K, n) <= EXACT_WORK_LIMIT else None
            for k in ks:
                values = table.row(k) if table else chain_row(N, K, n, k)
                lines.append(",".join([name, str(k), str(N), str(K), str(n)] + values))
                counts[name] += 1
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hypergeometric.csv")
    with open(path, "w") as out:
        out.write("\n".join(lines) + "\n")
    for name, c in counts.items():
        print(f"{name:8s} {c:5d} rows")
    print(f"total    {sum(counts.values()):5d} rows in {time.time() - start:.1f} s -> {path}")


if __name__ == "__main__":
    main()
