# The rest of the curation layer through the module: grid, calibration draw, scores, the
# V-filter, the gated reward-aware operators, the mean-cost certificate, and the validation
# harness.
from fractions import Fraction
from math import ceil, floor

import numpy as np
import pytest

import ltt


def test_threshold_grid_rule_and_ties():
    scores = np.array([0.1, 0.5, 0.5, 0.5, 0.9, 0.2, 0.7, 0.3, 0.5, 0.8, 0.6])
    g = ltt.threshold_grid(scores, [0.85, 0.5, 0.45, 0.3])
    asc = np.sort(scores)
    ranks = [floor(Fraction(repr(q)) * 10) for q in (0.85, 0.5, 0.45, 0.3)]  # 8, 5, 4, 3
    assert g.pool_size == 11
    np.testing.assert_array_equal(g["lambda"], [asc[8], asc[5]])  # ranks 4 and 3 also give 0.5
    np.testing.assert_array_equal(g.rank, ranks[:2])
    np.testing.assert_array_equal(g.selection_size, [3, 8])       # ties at 0.5 kept: four of them
    np.testing.assert_array_equal(g.merged_quantiles, [0.45, 0.3])
    assert ltt.threshold_grid(scores).quantile[0] == 0.85          # the paper's grid
    assert ltt.paper_grid_quantiles[0] == 0.85 and len(ltt.paper_grid_quantiles) == 12


def test_draw_calibration_is_seeded_and_uniform_without_replacement():
    a = ltt.draw_calibration(1000, 200, seed=5)
    assert a.dtype == np.int64 and len(np.unique(a)) == 200 and np.all(np.diff(a) > 0)
    np.testing.assert_array_equal(a, ltt.draw_calibration(1000, 200, seed=5))
    assert not np.array_equal(a, ltt.draw_calibration(1000, 200, seed=6))
    with pytest.raises(ValueError, match="'n' = 11 must not exceed pool_size = 10"):
        ltt.draw_calibration(10, 11, seed=0)


def test_trajectory_scores_match_numpy():
    rng = np.random.default_rng(0)
    lengths = np.array([5, 1, 12, 7])
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    values = rng.normal(size=offsets[-1])
    parts = np.split(values, offsets[1:-1])
    np.testing.assert_allclose(ltt.trajectory_scores(values, offsets), [p.mean() for p in parts], rtol=1e-15)
    np.testing.assert_array_equal(ltt.trajectory_scores(values, offsets, "minimum"), [p.min() for p in parts])
    np.testing.assert_allclose(ltt.trajectory_scores(values, offsets, "percentile", 10),
                               [np.percentile(p, 10) for p in parts], rtol=1e-15)
    with pytest.raises(ValueError, match="'aggregation' = 'median'"):
        ltt.trajectory_scores(values, offsets, "median")


def test_v_filter_by_hand(pool):
    score, unsafe, _ = pool
    calib = ltt.draw_calibration(len(score), 200, seed=3)
    v = ltt.v_filter(score, calib, unsafe[calib])
    safe = 200 - int(unsafe[calib].sum())
    assert (v.labels, v.safe_labels, v.count) == (200, safe, safe * len(score) // 200)
    assert v.threshold == np.sort(score)[len(score) - v.count]
    np.testing.assert_array_equal(v.selected, np.flatnonzero(score >= v.threshold))


def test_gated_operators_run_behind_a_certificate(pool):
    score, unsafe, episodic_return = pool
    calib = ltt.draw_calibration(len(score), 200, seed=1)
    cert = ltt.certify(score, calib, unsafe[calib])
    assert cert.certified

    top = ltt.top_return_subselection(cert, episodic_return)
    assert top.outcome == "certified" and top.count == ceil(cert.selection_size / 2)
    R = episodic_return[cert.selection]
    assert top.return_threshold == np.sort(R)[len(R) - top.count]
    np.testing.assert_array_equal(top.selected, cert.selection[R >= top.return_threshold])

    r = ltt.return_weighted_resample(cert, episodic_return, kappa=1.0, seed=11)
    assert r.outcome == "certified" and r.unsafe_mass_bound == ltt.resampled_unsafe_bound(0.25, 1.0)
    np.testing.assert_array_equal(r.selection, cert.selection)
    assert len(r.resampled) == cert.selection_size and np.all(np.isin(r.resampled, cert.selection))
    np.testing.assert_allclose(r.probability, ltt.return_weights(R, 1.0), rtol=0, atol=0)
    z = np.clip((R - R.mean()) / R.std(), -1.0, 1.0)
    np.testing.assert_allclose(r.probability, np.exp(z) / np.exp(z).sum(), rtol=1e-12)
    again = ltt.return_weighted_resample(cert, episodic_return, 1.0, seed=11)
    np.testing.assert_array_equal(again.resampled, r.resampled)  # same seed, same draws


def test_gated_operators_refuse_an_uncertified_selection(pool):
    score, unsafe, episodic_return = pool
    calib = ltt.draw_calibration(len(score), 200, seed=1)
    cert = ltt.certify(score, calib, unsafe[calib], alpha=0.02)
    assert not cert.certified
    top = ltt.top_return_subselection(cert, episodic_return)
    assert top.outcome == "refused"
    np.testing.assert_array_equal(top.selected, cert.selection)
    forced = ltt.top_return_subselection(cert, episodic_return, allow_uncertified=True)
    assert forced.outcome == "overridden" and len(forced.selected) < len(cert.selection)
    r = ltt.return_weighted_resample(cert, episodic_return, 1.0, seed=0)
    assert r.outcome == "refused" and r.unsafe_mass_bound is None
    np.testing.assert_array_equal(r.resampled, cert.selection)
    forced = ltt.return_weighted_resample(cert, episodic_return, 1.0, seed=0, allow_uncertified=True)
    assert forced.outcome == "overridden" and forced.unsafe_mass_bound is None


def test_gated_operator_errors(pool):
    score, unsafe, episodic_return = pool
    calib = ltt.draw_calibration(len(score), 200, seed=1)
    cert = ltt.certify(score, calib, unsafe[calib])
    with pytest.raises(TypeError, match="must be the object ltt.certify returned"):
        ltt.top_return_subselection(dict(cert), episodic_return)
    with pytest.raises(ValueError, match=r"'episodic_return.size\(\)' = 10 must equal the pool size 2000"):
        ltt.top_return_subselection(cert, episodic_return[:10])
    with pytest.raises(ValueError, match=r"'fraction' = 0 must lie in \(0, 1\]"):
        ltt.top_return_subselection(cert, episodic_return, 0.0)
    with pytest.raises(TypeError):
        ltt.return_weighted_resample(cert, episodic_return, 1.0)  # the seed is required


def test_mean_cost_certificate(pool):
    score, unsafe, _ = pool
    rng = np.random.default_rng(2)
    cost = np.where(unsafe, 60.0, 10.0) + rng.random(len(score)) * 10
    calib = ltt.draw_calibration(len(score), 300, seed=2)
    c = ltt.mean_cost_certificate(score, calib, cost[calib], budget=30.0, range=100.0, delta=0.1)
    s0 = c.steps[0]
    inside = score[calib] >= s0["lambda"]
    assert s0["m"] == inside.sum()
    assert s0["sample_mean_cost"] == pytest.approx(cost[calib][inside].mean(), rel=1e-14)
    assert s0["p"] == pytest.approx(ltt.hoeffding_serfling_pvalue(cost[calib][inside], s0["N"], 30.0, 100.0), rel=1e-14)
    assert c.certified == s0["rejected"]
    if c.certified:
        assert c.threshold == c.steps[c.certified_step]["lambda"]
    with pytest.raises(ValueError, match=r"'calibration_cost\[0\]' = 200 must lie in \[0, range = 100\]"):
        ltt.mean_cost_certificate(score, calib, np.full(300, 200.0), 30.0, 100.0)


def test_mean_cost_certificate_betting(pool):
    # Both p-values are recorded at every step; the walk tests the one `bound` names, and the
    # betting walk, rejecting whatever Hoeffding-Serfling rejects, goes at least as deep.
    score, unsafe, _ = pool
    rng = np.random.default_rng(3)
    cost = 20.0 + rng.random(len(score)) * 20 + np.where(unsafe, 10.0, 0.0)
    calib = ltt.draw_calibration(len(score), 300, seed=3)
    hs = ltt.mean_cost_certificate(score, calib, cost[calib], 40.0, 100.0, order_seed=8)
    bet = ltt.mean_cost_certificate(score, calib, cost[calib], 40.0, 100.0, bound="betting", order_seed=8)
    assert (hs.bound, bet.bound, bet.order_seed) == ("hoeffding_serfling", "betting", 8)
    for a, b in zip(hs.steps, bet.steps):
        assert a["p"] == a["p_hoeffding_serfling"] == b["p_hoeffding_serfling"]
        assert b["p"] == b["p_betting"] == a["p_betting"]
        if a["p_hoeffding_serfling"] <= 0.1:
            assert b["p_betting"] <= 0.1
    assert len(bet.steps) >= len(hs.steps)
    if hs.certified:
        assert bet.certified and bet.certified_step >= hs.certified_step
    # Costs with a spread far below a two-point split of the range (sd about 8 of 100), mean
    # 30 to 32 on the grid's selections: the 300 labels do not let Hoeffding-Serfling certify a
    # budget of 40, and do let betting.
    assert not hs.certified and bet.certified
    with pytest.raises(ValueError, match="'bound' = hoeffding must be hoeffding_serfling or betting"):
        ltt.mean_cost_certificate(score, calib, cost[calib], 40.0, 100.0, bound="hoeffding")


def test_validation_harness(pool):
    score, unsafe, _ = pool
    v = ltt.validate_guarantee(score, unsafe, draws=300, seed=4, calibration_size=150, threads=2)
    assert (v.pool_size, v.pool_unsafe, v.draws, v.procedure) == (2000, int(unsafe.sum()), 300, "fixed_sequence")
    assert v.certification.count == int(np.sum(v.outcomes.returned >= 0))
    assert v.false_certification.count == int(v.outcomes.violated.sum())
    assert v.returned_none + sum(s["returned"] for s in v.steps) == 300
    assert v.closed_form_rate == ltt.certification_rate(2000, v.steps[0]["N"], v.steps[0]["U"], 150, 0.25, 0.1)
    # The closed form and the simulation agree within the simulation's interval (99.99%).
    assert v.certification.lower - 0.05 <= v.closed_form_rate <= v.certification.upper + 0.05
    assert v.triple is not None and v.triple.distinct_counts >= 1
    assert np.all(np.isfinite(v.outcomes.r_hat))
    # Draw d replays through certify with the seed the harness reports.
    d = int(np.flatnonzero(v.outcomes.returned >= 0)[0])
    calib = ltt.draw_calibration(2000, 150, int(v.outcomes.seed[d]))
    cert = ltt.certify(score, calib, unsafe[calib], triple=False)
    assert cert.certified_step == v.outcomes.returned[d]
    # Same numbers whatever the thread count.
    one = ltt.validate_guarantee(score, unsafe, draws=300, seed=4, calibration_size=150, threads=1)
    for key in ("m1", "k1", "returned", "violated", "r_hat"):
        np.testing.assert_array_equal(one.outcomes[key], v.outcomes[key])
    assert one.certification == v.certification


def test_validation_other_procedures_and_errors(pool):
    score, unsafe, _ = pool
    b = ltt.validate_guarantee(score, unsafe, draws=50, procedure="bonferroni", threads=1)
    assert b.procedure == "bonferroni" and b.closed_form_rate is None and b.triple is None
    assert np.all(np.isnan(b.outcomes.r_hat))
    with pytest.raises(ValueError, match="'procedure' = 'bh'"):
        ltt.validate_guarantee(score, unsafe, procedure="bh")
    with pytest.raises(ValueError, match=r"'unsafe\[0\]' = 3 must be 0 or 1"):
        ltt.validate_guarantee(score, np.full(len(score), 3), draws=5)
    with pytest.raises(ValueError, match=r"'options.calibration_size' = 5000 must not exceed the pool size = 2000"):
        ltt.validate_guarantee(score, unsafe, calibration_size=5000)
