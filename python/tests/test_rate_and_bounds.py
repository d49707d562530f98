# Scalar functions: the certification rate and label budget (hand-checkable pools from
# docs/cli.md), the certificate triple, and the bounds against scipy and their formulas.
import math

import numpy as np
import pytest
import scipy.stats as st

import ltt


def test_certification_rate_by_hand():
    # N = 4, N1 = 2, U1 = 0, n = 2, alpha = 0.25: m ~ Hyp(4, 2, 2) is 0, 1, 2 w.p. 1/6, 4/6, 1/6
    # and the p-value at k = 0 is 1, 1/2, 0 (docs/cli.md).
    assert ltt.certification_rate(4, 2, 0, 2, 0.25, 0.6) == pytest.approx(5 / 6, abs=1e-15)
    assert ltt.certification_rate(4, 2, 0, 2, 0.25, 0.4) == pytest.approx(1 / 6, abs=1e-15)
    # p = 1/2 is rounded up, so delta = 0.5 does not reject it.
    assert ltt.certification_rate(4, 2, 0, 2, 0.25, 0.5) == pytest.approx(1 / 6, abs=1e-15)


def test_certification_rate_matches_the_cli_examples():
    assert ltt.certification_rate(2000, 300, 50, 200, 0.25, 0.1) == pytest.approx(0.37351250031755434, rel=1e-12)
    assert ltt.certification_rate(2000, 300, 80, 200, 0.25, 0.1) == pytest.approx(0.0485041, rel=1e-5)


def test_label_budget_is_none_when_unreachable():
    assert ltt.label_budget(2000, 300, 50, 0.25, 0.1, 0.9) == 703
    assert ltt.label_budget(2000, 300, 80, 0.25, 0.1, 0.9) is None
    assert ltt.label_budget(2000, 300, 50, 0.25, 0.1, 0.0) == 0


def test_rate_curve_and_model_agree_with_the_scalar_rate():
    curve = ltt.certification_rate_curve(40, 10, 1, 0.25, 0.1, 12)
    assert curve.shape == (13,) and curve.dtype == np.float64
    assert curve[5] == pytest.approx(0.00019148703359229673, rel=1e-12)
    assert curve[12] == pytest.approx(0.05598721661839607, rel=1e-12)
    for n in (0, 5, 12):
        assert curve[n] == pytest.approx(ltt.certification_rate(40, 10, 1, n, 0.25, 0.1), abs=1e-15)
    model = ltt.CertificationRateModel(2000, 300, 200, 0.25, 0.1)
    assert (model.N, model.N1, model.n) == (2000, 300, 200)
    assert model.rate(50) == ltt.certification_rate(2000, 300, 50, 200, 0.25, 0.1)
    assert model.truncated_mass <= 1e-15


def test_critical_counts_and_conditional_rates():
    k_max = ltt.critical_counts(300, 0.25, 0.1, 40)
    assert k_max.dtype == np.int64 and k_max[0] == -1
    for m in range(41):
        k = k_max[m]
        if k >= 0:
            assert ltt.composition_pvalue(k, m, 300, 0.25) <= 0.1
        if k + 1 <= m:
            assert ltt.composition_pvalue(k + 1, m, 300, 0.25) > 0.1
    c = ltt.conditional_certification_rates(300, 50, 0.25, 0.1, 40)
    for m in (10, 25, 40):
        want = st.hypergeom.cdf(k_max[m], 300, 50, m) if k_max[m] >= 0 else 0.0
        assert c[m] == pytest.approx(want, rel=1e-10, abs=1e-15)


def test_dichotomy_margin_and_hoeffding():
    d = ltt.certification_dichotomy(0.25, [0.1, 0.3, 0.05])
    assert d.purity_margin == pytest.approx(0.2)
    assert (d.rate_at_most_delta, d.rate_tends_to_one) == (False, True)
    assert ltt.purity_margin(0.25, np.array([0.3, 0.4])) == pytest.approx(-0.05)
    m = ltt.hoeffding_min_draws(0.1, 0.1)
    assert m == math.ceil(2 * math.log(10) / 0.01)
    assert ltt.hoeffding_rate_bound(m - 1, 0.1, 0.1) == 0.0
    assert ltt.hoeffding_rate_bound(m, 0.1, 0.1) == pytest.approx(1 - math.exp(-m * 0.01 / 2))


def test_certificate_triple():
    t = ltt.certificate_triple(2000, 300, 30, 2, 200, 0.25, 0.1)
    assert 0 <= t.r_lo <= t.r_hat <= 1
    assert t.r_hat_lower <= t.r_hat <= t.r_hat_upper and t.error_bound < 1e-9
    assert t.conditional_bound == pytest.approx(min(1.0, 0.1 / t.r_lo))
    assert (t.posterior_a, t.posterior_b) == (2.5, 28.5)
    # r_lo is the rate at the posterior's upper decile of U1.
    assert t.r_lo == pytest.approx(ltt.certification_rate(2000, 300, t.U1_upper_decile, 200, 0.25, 0.1), abs=1e-15)
    ex = ltt.certificate_triple(2000, 300, 30, 2, 200, 0.25, 0.1, sum="exhaustive")
    assert ex.r_hat == pytest.approx(t.r_hat, abs=1e-9)
    with pytest.raises(ValueError, match="'sum' = 'fast'"):
        ltt.certificate_triple(2000, 300, 30, 2, 200, 0.25, 0.1, sum="fast")
    with pytest.raises(ValueError, match="certificate_triple: parameter 'k1' = 31 must not exceed m1 = 30"):
        ltt.certificate_triple(2000, 300, 30, 31, 200, 0.25, 0.1)


def test_scalar_arguments_reject_floats_for_counts():
    with pytest.raises(TypeError):
        ltt.certification_rate(2000.0, 300, 50, 200, 0.25, 0.1)
    with pytest.raises(ValueError, match=r"certification_rate: parameter 'U1' = 301 must not exceed N1 = 300"):
        ltt.certification_rate(2000, 300, 301, 200, 0.25, 0.1)
    with pytest.raises(ValueError, match=r"label_budget: parameter 'target_rate' = 1.5 must lie in \[0, 1\]"):
        ltt.label_budget(2000, 300, 50, 0.25, 0.1, 1.5)


# --- bounds -----------------------------------------------------------------------------------

@pytest.mark.parametrize("x, n", [(0, 10), (3, 10), (10, 10), (17, 200), (199, 200), (0, 0)])
def test_clopper_pearson_against_scipy_beta(x, n):
    delta = 0.1
    lower = 0.0 if x == 0 else st.beta.ppf(delta, x, n - x + 1)
    upper = 1.0 if x == n else st.beta.isf(delta, x + 1, n - x)
    assert ltt.clopper_pearson_lower(x, n, delta) == pytest.approx(lower, rel=1e-12, abs=1e-300)
    assert ltt.clopper_pearson_upper(x, n, delta) == pytest.approx(upper, rel=1e-12, abs=1e-300)


def test_maurer_pontil_and_hoeffding_serfling_formulas():
    x = np.array([0.0, 1.0, 2.0, 0.5, 3.0, 1.5, 0.25, 2.5])
    r, delta, n = 4.0, 0.1, len(x)
    y = x / r
    want = r * (y.mean() + math.sqrt(2 * y.var(ddof=1) * math.log(2 / delta) / n)
                + 7 * math.log(2 / delta) / (3 * (n - 1)))
    assert ltt.maurer_pontil_upper(x, r, delta) == pytest.approx(min(want, r), rel=1e-13)
    with pytest.raises(ValueError, match=r"maurer_pontil_upper: parameter 'x\[4\]' = 3 must lie in \[0, range = 2\]"):
        ltt.maurer_pontil_upper(x, 2.0, delta)

    t = 2.0 / r - y.mean()
    want = math.exp(-2 * n * t * t / (1 - (n - 1) / 100))
    assert ltt.hoeffding_serfling_pvalue(x, 100, 2.0, r) == pytest.approx(want, rel=1e-13)
    assert ltt.hoeffding_serfling_pvalue(x, 100, 1.0, r) == 1.0


def test_betting_mean_pvalue():
    # N = 4, draws 0 then 0.5, budget 0.5, delta 0.1: the capital recomputed from its
    # definition (include/ltt/betting_mean_bound.hpp), tuned for 2 draws.
    v = 1 / 9 + 1 / 4
    s = math.sqrt(8 * math.log(10) / v)
    a1, a2 = -math.expm1(-s / 3), -math.expm1(-s / 2)
    k1 = 1 / (1 - a1 * 0.5)
    k2 = k1 * (1 - a2 * 0.5) / (1 - a2 * 2 / 3)
    assert ltt.betting_mean_pvalue([0.0, 0.5], 4, 0.5, 1.0, 0.1) == pytest.approx(1 / max(k1, k2), rel=1e-14)
    assert ltt.betting_mean_pvalue([0.0, 0.0, 0.0], 4, 0.5, 1.0, 0.1) == 0.0  # H0 impossible
    x = np.array([0.0, 1.0, 2.0, 0.5, 3.0, 1.5, 0.25, 2.5])
    assert ltt.hoeffding_serfling_pvalue(x, 100, 2.6, 4.0) <= 0.2  # so betting rejects too
    assert ltt.betting_mean_pvalue(x, 100, 2.6, 4.0, 0.2) <= 0.2
    with pytest.raises(ValueError, match="'horizon' = 101 must not exceed population = 100"):
        ltt.betting_mean_pvalue(x, 100, 2.4, 4.0, 0.2, horizon=101)


def test_resampled_unsafe_bound():
    a, kappa = 0.25, 1.0
    want = math.exp(2 * kappa) * a / (math.exp(2 * kappa) * a + 1 - a)
    assert ltt.resampled_unsafe_bound(a, kappa) == pytest.approx(want, rel=1e-15)
    assert ltt.resampled_unsafe_bound(0.0, 5.0) == 0.0
    with pytest.raises(ValueError, match="'kappa' = -1 must be finite and >= 0"):
        ltt.resampled_unsafe_bound(0.25, -1.0)
