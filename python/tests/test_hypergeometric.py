# Hypergeometric tails through the module: exact rational references, scipy.stats.hypergeom
# where scipy is accurate, numpy broadcasting, and the dtype rule (integers only for counts).
import math
from fractions import Fraction
from math import comb

import numpy as np
import pytest
import scipy.stats as st

import ltt

TAILS = {
    "pmf": (ltt.hypergeometric_pmf, st.hypergeom.pmf),
    "cdf": (ltt.hypergeometric_cdf, st.hypergeom.cdf),
    "sf": (ltt.hypergeometric_sf, st.hypergeom.sf),
}
LOG_TAILS = {
    "pmf": ltt.hypergeometric_log_pmf,
    "cdf": ltt.hypergeometric_log_cdf,
    "sf": ltt.hypergeometric_log_sf,
}


def exact(kind, k, N, K, n):
    """P[X = k], P[X <= k] or P[X > k] as a Fraction."""
    lo, hi = max(0, n - (N - K)), min(n, K)
    if kind == "pmf":
        js = [k] if lo <= k <= hi else []
    elif kind == "cdf":
        js = range(lo, min(k, hi) + 1)
    else:
        js = range(max(k + 1, lo), hi + 1)
    return Fraction(sum(comb(K, j) * comb(N - K, n - j) for j in js), comb(N, n))


def log_fraction(x):
    return math.log(x.numerator) - math.log(x.denominator) if x > 0 else -math.inf


@pytest.mark.parametrize("kind", ["pmf", "cdf", "sf"])
def test_exact_rationals_small_pools(kind):
    ours = TAILS[kind][0]
    worst = 0.0
    for N in (1, 2, 7, 20, 45):
        for K in range(0, N + 1, max(1, N // 6)):
            for n in range(0, N + 1, max(1, N // 5)):
                k = np.arange(-1, n + 2)
                got = ours(k, N, K, n)
                want = [float(exact(kind, int(j), N, K, n)) for j in k]
                for g, w in zip(got, want):
                    if w == 0.0:
                        assert g == 0.0
                    else:
                        worst = max(worst, abs(g - w) / w)
    assert worst < 1e-13


@pytest.mark.parametrize("kind", ["pmf", "cdf", "sf"])
def test_against_scipy_moderate_pools(kind):
    # scipy 1.10 computes these through Boost.Math in double; for N up to a few thousand it
    # agrees with exact values to ~1e-14 (measured), so a 1e-12 relative tolerance holds both.
    ours, theirs = TAILS[kind]
    for N in (10, 57, 200, 500, 3000):
        for K in sorted({0, 1, N // 7, N // 3, N // 2, N - 1, N}):
            for n in sorted({0, 1, N // 5, N // 2, N - 1, N}):
                k = np.arange(-1, n + 2)
                a, b = ours(k, N, K, n), theirs(k, N, K, n)
                big = b > 1e-290
                np.testing.assert_allclose(a[big], b[big], rtol=1e-12, atol=0)
                assert np.all(a[~big] < 1e-280)


def test_scipy_loses_digits_at_large_N():
    # At N = 10^6 scipy's sf is off by 6.2e-11 relative (checked against a 40-digit mpmath
    # sum: 0.000423913010184678497...); ltt's is within 3e-15. The comparison with scipy can
    # only be loose here, and the exact value pins ours.
    N, K, n, k = 10**6, 5 * 10**5, 10**5, 50500
    ours = ltt.hypergeometric_sf(k, N, K, n)
    assert ours == pytest.approx(st.hypergeom.sf(k, N, K, n), rel=1e-9)
    assert ours == pytest.approx(4.239130101846784978e-4, rel=1e-14)


def test_cdf_plus_sf_is_one_and_pmf_sums_to_one():
    N, K, n = 800, 300, 250
    k = np.arange(0, n + 1)
    np.testing.assert_allclose(ltt.hypergeometric_cdf(k, N, K, n) + ltt.hypergeometric_sf(k, N, K, n),
                               1.0, rtol=0, atol=2e-16)
    assert math.fsum(ltt.hypergeometric_pmf(k, N, K, n)) == pytest.approx(1.0, abs=1e-14)


@pytest.mark.parametrize("kind", ["pmf", "cdf", "sf"])
def test_log_forms_far_below_double_range(kind):
    # P ~ e^-1274: zero as a double, finite as a log; the exact log comes from rationals.
    N, K, n = 2000, 1000, 1000
    k = {"pmf": 10, "cdf": 10, "sf": 989}[kind]
    assert TAILS[kind][0](k, N, K, n) == 0.0
    want = log_fraction(exact(kind, k, N, K, n))
    assert want < -1000
    assert LOG_TAILS[kind](k, N, K, n) == pytest.approx(want, rel=1e-14)


def test_log_forms_match_logs_of_values_and_are_vectorized():
    N, K, n = 300, 120, 90
    k = np.arange(-2, n + 3).reshape(-1, 1)
    for kind in ("pmf", "cdf", "sf"):
        values = TAILS[kind][0](k, N, K, n)
        logs = LOG_TAILS[kind](k, N, K, n)
        assert logs.shape == values.shape == k.shape
        with np.errstate(divide="ignore"):
            np.testing.assert_allclose(logs, np.log(values), rtol=1e-12, atol=1e-15)


# --- broadcasting -----------------------------------------------------------------------------

def test_scalars_give_a_python_float():
    x = ltt.hypergeometric_cdf(3, 100, 20, 10)
    assert type(x) is float
    assert type(ltt.hypergeometric_cdf(np.int64(3), np.int32(100), 20, np.uint8(10))) is float
    assert type(ltt.hypergeometric_cdf(np.array(3), 100, 20, 10)) is float


def test_broadcasting_matches_scalar_calls():
    k = np.arange(6)                    # (6,)
    K = np.array([[5], [20], [40]])     # (3, 1)
    n = np.array([[[10]], [[30]]])      # (2, 1, 1)
    got = ltt.hypergeometric_sf(k, 100, K, n)
    assert got.shape == (2, 3, 6) and got.dtype == np.float64
    for i in range(2):
        for j in range(3):
            for l in range(6):
                assert got[i, j, l] == ltt.hypergeometric_sf(int(k[l]), 100, int(K[j, 0]), int(n[i, 0, 0]))


def test_non_contiguous_and_other_integer_dtypes():
    base = np.arange(40, dtype=np.int16).reshape(5, 8)
    k = base.T[::2, ::-1]               # strided, reversed, transposed view
    got = ltt.hypergeometric_cdf(k, np.uint32(60), np.int8(25), 30)
    want = ltt.hypergeometric_cdf(np.ascontiguousarray(k).astype(np.int64), 60, 25, 30)
    np.testing.assert_array_equal(got, want)
    assert ltt.hypergeometric_pmf([1, 2], [10], 5, (3,)).shape == (2,)  # lists and tuples


def test_empty_arrays():
    got = ltt.hypergeometric_cdf(np.zeros((0, 3), dtype=np.int64), 10, 5, 3)
    assert got.shape == (0, 3)


def test_shapes_that_do_not_broadcast():
    with pytest.raises(ValueError, match=r"do not broadcast together: k \(3,\), N \(\), K \(2,\)"):
        ltt.hypergeometric_cdf([1, 2, 3], 10, [3, 4], 2)


# --- dtypes -----------------------------------------------------------------------------------

@pytest.mark.parametrize("bad", [1.0, np.float64(3), np.array([1.0, 2.0]), np.float32(2)])
def test_float_counts_are_rejected_even_when_whole(bad):
    with pytest.raises(TypeError, match="must hold integers"):
        ltt.hypergeometric_cdf(bad, 10, 5, 3)
    with pytest.raises(TypeError, match="parameter 'N' must hold integers"):
        ltt.hypergeometric_sf(1, bad, 5, 3)


@pytest.mark.parametrize("bad, what", [
    (True, "bool"), (np.array([True, False]), "bool"), (1 + 2j, "complex"),
    ("3", "<U1"), ([1, "a"], "<U21"), (2**70, "object"), (None, "object"),
])
def test_other_non_integer_counts_are_rejected(bad, what):
    with pytest.raises(TypeError, match=f"parameter 'k' must hold integers.*{what}"):
        ltt.hypergeometric_pmf(bad, 10, 5, 3)


def test_unsigned_beyond_int64_is_rejected_not_wrapped():
    with pytest.raises(ValueError, match="beyond the int64 range"):
        ltt.hypergeometric_cdf(np.array([2**63 + 5], dtype=np.uint64), 10, 5, 3)
    # In range, uint64 is fine.
    assert ltt.hypergeometric_cdf(np.array([2], dtype=np.uint64), 10, 5, 3).shape == (1,)


# --- errors -----------------------------------------------------------------------------------

def test_library_errors_arrive_as_value_error_with_its_message():
    with pytest.raises(ValueError, match=r"^hypergeometric_cdf: parameter 'K' = 11 must not exceed N = 10$"):
        ltt.hypergeometric_cdf(1, 10, 11, 2)
    with pytest.raises(ValueError, match=r"hypergeometric_log_sf: parameter 'n' = -1 must be a count"):
        ltt.hypergeometric_log_sf(1, 10, 3, -1)


def test_errors_in_arrays_name_the_element():
    with pytest.raises(ValueError, match=r"'n' = 11 must not exceed N = 10 \(at index \(1, 0\) of the broadcast arguments\)"):
        ltt.hypergeometric_pmf(1, 10, 3, np.array([[2, 3], [11, 4]]))


def test_out_of_support_k_is_not_an_error():
    assert ltt.hypergeometric_cdf(-5, 10, 3, 4) == 0.0
    assert ltt.hypergeometric_cdf(99, 10, 3, 4) == 1.0
    assert ltt.hypergeometric_log_sf(99, 10, 3, 4) == -math.inf
