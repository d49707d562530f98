#!/usr/bin/python3
"""Exact one-sided Clopper-Pearson bounds, the reference table for tests/ltt/bounds.test.cpp.

    lower(x, n, delta) = the p with P[Bin(n, p) >= x] = delta   (0 when x = 0)
    upper(x, n, delta) = the p with P[Bin(n, p) <= x] = delta   (1 when x = n)

delta is taken as the exact binary value of the double the test passes in, so the table
answers exactly the question the C++ code is asked.  Each root is isolated by bisection on
dyadic points p = a / 2^b: there the binomial tail is a ratio of integers,
    P[X >= x] = sum_{i >= x} C(n, i) a^i (2^b - a)^(n - i) / 2^(b n),
and comparing it with delta = m / 2^e is an exact integer comparison, so the final bracket
[a_lo, a_hi] / 2^b provably contains the root.  Bisection stops when the bracket is narrower
than 1e-25 relative; the midpoint is written with 20 significant digits.

Only the standard library is used.  Usage:  /usr/bin/python3 binomial_reference.py > clopper_pearson.csv
"""

import math
import random
import sys
from fractions import Fraction

REL_WIDTH = Fraction(1, 10**25)


def upper_tail_numerator(n, k, a, c):
    """sum_{i=k}^{n} C(n, i) a^i c^(n-i), by Horner from i = n down.

    t_i = C(n, i) c^(n-i) is updated by exact small-integer steps,
    t_i = t_{i+1} (i + 1) / (n - i) * c, so no big-by-big product is needed."""
    if k > n:
        return 0
    h = 1
    t = 1
    for i in range(n - 1, k - 1, -1):
        t = t * (i + 1) // (n - i) * c
        h = h * a + t
    return h * a**k


def tail_geq(n, x, a, c, total):
    """Numerator over (a + c)^n = total of P[X >= x], summing the shorter side exactly."""
    if x <= 0:
        return total
    if n - x <= x:
        return upper_tail_numerator(n, x, a, c)
    # P[X >= x] = 1 - P[X <= x - 1]; P[X <= x - 1] = sum_{j >= n - x + 1} with a, c swapped.
    return total - upper_tail_numerator(n, n - x + 1, c, a)


def tail_leq(n, x, a, c, total):
    """Numerator over total of P[X <= x]."""
    if x >= n:
        return total
    if x <= n - x:
        return upper_tail_numerator(n, n - x, c, a)
    return total - upper_tail_numerator(n, x + 1, a, c)


def float_tail(n, x, p, upper):
    """P[X >= x] (upper) or P[X <= x] in floating point, log-space terms; only a starting guess."""
    lp, lq = math.log(p), math.log1p(-p)
    rng = range(x, n + 1) if upper else range(0, x + 1)
    logs = [math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * lp + (n - i) * lq
            for i in rng]
    top = max(logs)
    return math.exp(top) * math.fsum(math.exp(v - top) for v in logs)


def float_root(n, x, delta, lower_bound):
    """Float bisection for a starting bracket; the exact stage certifies or widens it."""
    lo, hi = 0.0, 1.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if lower_bound:
            above = float_tail(n, x, mid, True) > delta      # increasing in p
        else:
            above = float_tail(n, x, mid, False) < delta     # decreasing in p
        if above:
            hi = mid
        else:
            lo = mid
    return 0.5 * (lo + hi)


def exact_root(n, x, delta, lower_bound):
    """Bracket [lo, hi] (Fractions) around the root, width < REL_WIDTH * lo."""
    d = Fraction(delta)
    guess = float_root(n, x, delta, lower_bound)
    b = max(0, -math.frexp(guess)[1]) + 100            # 2^-b is < 1e-28 of the root
    scale = 1 << b
    total = 1 << (b * n)

    def beyond(a):
        """True when the root lies at or left of a / 2^b (the tail has crossed delta there)."""
        c = scale - a
        if lower_bound:
            return tail_geq(n, x, a, c, total) * d.denominator >= d.numerator * total
        return tail_leq(n, x, a, c, total) * d.denominator <= d.numerator * total

    g = Fraction(guess) * scale
    eps = Fraction(1, 10**9)
    while True:
        lo = max(0, math.floor(g * (1 - eps)))
        hi = min(scale, math.ceil(g * (1 + eps)))
        lo_ok = lo == 0 or not beyond(lo)
        hi_ok = hi == scale or beyond(hi)
        if lo_ok and hi_ok:
            break
        if lo == 0 and hi == scale:
            raise RuntimeError(f"no bracket for n={n} x={x} delta={delta}")
        eps *= 1000
    while (hi - lo) >= REL_WIDTH * lo:
        mid = (lo + hi) // 2
        if mid in (lo, hi):
            raise RuntimeError(f"resolution exhausted for n={n} x={x} delta={delta}")
        if beyond(mid):
            hi = mid
        else:
            lo = mid
    return Fraction(lo, scale), Fraction(hi, scale)


def sig20(q):
    """Fraction -> decimal string with 20 significant digits, correctly rounded."""
    if q == 0:
        return "0"
    e = math.floor(math.log10(float(q)))
    for _ in range(3):                                  # float log10 may be off by one
        scaled = q * Fraction(10) ** (19 - e)
        if scaled >= 10**20:
            e += 1
        elif scaled < 10**19:
            e -= 1
        else:
            break
    digits = round(q * Fraction(10) ** (19 - e))
    if digits == 10**20:
        digits //= 10
        e += 1
    s = str(digits)
    return f"{s[0]}.{s[1:]}e{e}"


def cases():
    rng = random.Random(20240601)
    deltas = [0.01, 0.05, 0.1, 0.2, 0.5]
    out = []
    for n in (1, 2, 3):
        for x in range(n + 1):
            for d in deltas:
                out.append((x, n, d))
    for n in (5, 10, 30):
        for x in sorted({0, 1, n // 2, n - 1, n}):
            for d in (0.05, 0.1):
                out.append((x, n, d))
    # the paper's calibration size n = 200, over the whole range of successes
    for x in (0, 1, 2, 3, 5, 10, 20, 30, 40, 50, 51, 75, 100, 125, 150, 180, 190, 197, 198, 199, 200):
        for d in deltas:
            out.append((x, 200, d))
    # its 100-episode deployment evaluations and 2000-episode mean-cost runs, plus large n
    for n in (100, 500, 1000, 2000):
        for x in sorted({0, 1, 2, n // 100, n // 4, n // 2, 3 * n // 4, n - 2, n - 1, n}):
            out.append((x, n, 0.1))
        out.append((rng.randint(0, n), n, 0.05))
    # delta near 1 puts upper limits at p ~ 1e-6, where computing 1 - (an inverse near 1)
    # would cancel; n = 20000 does the same at ordinary delta
    for x, n in ((0, 200), (1, 200), (0, 2000), (3, 2000), (199, 200)):
        for d in (0.9, 0.999):
            out.append((x, n, d))
    for x in (0, 1, 5):
        out.append((x, 20000, 0.1))
    for _ in range(80):
        n = max(1, int(math.exp(rng.uniform(0.0, math.log(2000.0)))))
        x = rng.randint(0, n)
        d = rng.choice([rng.uniform(1e-3, 0.5), 10 ** rng.uniform(-6, -1)])
        out.append((x, n, d))
    seen, unique = set(), []
    for c in out:
        if c not in seen:
            seen.add(c)
            unique.append(c)
    return unique


def main():
    w = sys.stdout.write
    w("successes,trials,delta,lower,upper\n")
    for x, n, d in cases():
        if x == 0:
            lower = "0"
        else:
            lo, hi = exact_root(n, x, d, True)
            lower = sig20((lo + hi) / 2)
        if x == n:
            upper = "1"
        else:
            lo, hi = exact_root(n, x, d, False)
            upper = sig20((lo + hi) / 2)
        w(f"{x},{n},{sig20(Fraction(d))},{lower},{upper}\n")


if __name__ == "__main__":
    main()
