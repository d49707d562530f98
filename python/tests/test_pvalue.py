# Composition p-values, the null boundary, the batch table, and the multiple-testing procedures.
from fractions import Fraction
from math import comb, floor

import numpy as np
import pytest
import scipy.stats as st

import ltt


def exact_pvalue(k, m, N_sel, alpha):
    U = floor(Fraction(repr(alpha)) * N_sel) + 1  # alpha read as the decimal it prints as
    if U > N_sel:
        return Fraction(1)
    lo = max(0, m - (N_sel - U))
    return Fraction(sum(comb(U, j) * comb(N_sel - U, m - j) for j in range(lo, min(k, U, m) + 1)),
                    comb(N_sel, m))


def test_null_boundary_reads_alpha_as_its_decimal():
    assert ltt.null_boundary(10, 0.3) == 4     # 0.3 * 10 = 3 exactly, not 2.9999...
    assert ltt.null_boundary(400, 0.25) == 101
    assert ltt.null_boundary(0, 0.25) == 1


def test_pvalue_is_never_below_the_exact_value_and_close_to_it():
    for N_sel in (1, 9, 40, 150):
        for alpha in (0.05, 0.1, 0.25, 0.3):
            for m in range(0, N_sel + 1, max(1, N_sel // 7)):
                k = np.arange(0, m + 1)
                got = ltt.composition_pvalue(k, m, N_sel, alpha)
                for kk, g in zip(k, np.atleast_1d(got)):
                    e = exact_pvalue(int(kk), m, N_sel, alpha)
                    assert Fraction(g) >= e
                    assert g <= float(e) * (1 + 1e-13) + 1e-300


def test_pvalue_against_scipy():
    N_sel, alpha = 600, 0.25
    U = ltt.null_boundary(N_sel, alpha)
    m = np.arange(0, 201, 10).reshape(-1, 1)
    k = np.arange(0, 60)
    k_ok = np.minimum(k, m)   # k <= m
    got = ltt.composition_pvalue(k_ok, m, N_sel, alpha)
    want = st.hypergeom.cdf(k_ok, N_sel, U, m)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-300)
    assert ltt.composition_pvalue(3, 42, 600, 0.25) == pytest.approx(st.hypergeom.cdf(3, 600, 151, 42), rel=1e-12)


def test_alpha_broadcasts_and_must_be_real():
    got = ltt.composition_pvalue(2, 30, 300, np.array([[0.1], [0.25]]))
    assert got.shape == (2, 1)
    assert got[0, 0] > got[1, 0]  # a smaller alpha is harder to certify
    assert ltt.composition_pvalue(2, 30, 300, np.float32(0.25)) == ltt.composition_pvalue(2, 30, 300, float(np.float32(0.25)))
    with pytest.raises(TypeError, match="parameter 'alpha' must hold real numbers, got dtype bool"):
        ltt.composition_pvalue(2, 30, 300, True)
    with pytest.raises(TypeError, match="parameter 'm' must hold integers"):
        ltt.composition_pvalue(2, 30.0, 300, 0.25)


def test_pvalue_errors():
    with pytest.raises(ValueError, match=r"^composition_pvalue: parameter 'k' = 5 must not exceed m = 4$"):
        ltt.composition_pvalue(5, 4, 100, 0.25)
    with pytest.raises(ValueError, match=r"parameter 'alpha' = nan must lie in \(0, 1\)"):
        ltt.composition_pvalue(1, 4, 100, float("nan"))
    with pytest.raises(ValueError, match=r"'alpha' = 1 must lie in \(0, 1\) \(at index \(2,\)"):
        ltt.composition_pvalue(1, 4, 100, [0.1, 0.5, 1.0])


def test_table_matches_the_vectorized_pvalue():
    N_sel, alpha, m_max = 250, 0.25, 60
    table = ltt.composition_pvalue_table(N_sel, alpha, m_max)
    assert table.shape == (m_max + 1, m_max + 1)
    m, k = np.tril_indices(m_max + 1)
    np.testing.assert_allclose(table[m, k], ltt.composition_pvalue(k, m, N_sel, alpha), rtol=1e-13, atol=0)
    assert np.all(np.isnan(table[np.triu_indices(m_max + 1, 1)]))
    with pytest.raises(ValueError, match="m_max"):
        ltt.composition_pvalue_table(10, 0.25, 11)


def test_fixed_sequence_walk():
    w = ltt.fixed_sequence([0.01, 0.05, 0.2, 0.01], 0.1)
    assert (w.tested, w.last_rejected) == (3, 1)
    np.testing.assert_array_equal(w.pvalues, [0.01, 0.05, 0.2])
    assert ltt.fixed_sequence([0.5, 0.01], 0.1).last_rejected is None
    assert ltt.fixed_sequence([], 0.1).tested == 0
    with pytest.raises(ValueError, match=r"pvalues\[1\]' = 1.5 must be a probability"):
        ltt.fixed_sequence([0.1, 1.5], 0.1)


def test_bonferroni_and_holm():
    p = [0.2, 0.02, 0.03, 0.001]
    b = ltt.bonferroni(p, 0.1)         # level 0.025
    np.testing.assert_array_equal(b.rejected, [1, 3])
    assert b.deepest_rejected == 3 and b.procedure == "bonferroni" and b.hypotheses == 4
    h = ltt.holm(p, 0.1)               # 0.001 <= .025, 0.02 <= .0333, 0.03 <= .05, 0.2 > .1
    np.testing.assert_array_equal(h.rejected, [1, 2, 3])
    via = ltt.test_hypotheses("holm", p, 0.1)
    np.testing.assert_array_equal(via.rejected, h.rejected)
    assert via.deepest_rejected == h.deepest_rejected == 3
    assert ltt.test_hypotheses("fixed_sequence", p, 0.1).deepest_rejected is None
    with pytest.raises(ValueError, match="'procedure' = 'sidak' must be"):
        ltt.test_hypotheses("sidak", p, 0.1)


def test_array_form_equals_the_scalar_call_element_by_element():
    # The array form runs the C++ batch (composition_pvalues); each element must be the scalar
    # call's double exactly, on DSRL-sized selections and on laws up to N_sel = 1e12.
    rng = np.random.default_rng(20261207)
    n = 3000
    N_sel = np.concatenate([rng.integers(150, 751, n), np.exp(rng.uniform(np.log(1e3), np.log(1e12), n // 3)).astype(np.int64)])
    m = np.minimum(N_sel, np.concatenate([rng.integers(5, 61, n), rng.integers(0, 3000, n // 3)]))
    k = (rng.uniform(size=N_sel.size) * (m + 1)).astype(np.int64)
    alpha = rng.choice([0.05, 0.1, 0.25, 0.3], N_sel.size)
    got = ltt.composition_pvalue(k, m, N_sel, alpha)
    want = [ltt.composition_pvalue(int(a), int(b), int(c), float(d)) for a, b, c, d in zip(k, m, N_sel, alpha)]
    assert got.dtype == np.float64 and got.shape == k.shape
    assert got.tolist() == want
    # Broadcast shapes and strided views take the same path.
    grid = ltt.composition_pvalue(np.arange(0, 41)[::2], np.arange(40, 81).reshape(-1, 1), 500, 0.25)
    assert grid.shape == (41, 21)
    assert grid[3, 5] == ltt.composition_pvalue(10, 43, 500, 0.25)
