# ltt.certify against a hand computation with numpy, fractions and scipy: the grid rule
# (rank floor(q (N - 1)), q read as its decimal), the counts m_j and k_j, the p-values, the
# strict walk, the fallback, and the selection.
import json
from fractions import Fraction
from math import floor

import numpy as np
import pytest
import scipy.stats as st

import ltt

PAPER_GRID = (0.85, 0.80, 0.75, 0.70, 0.65, 0.60, 0.55, 0.50, 0.45, 0.40, 0.35, 0.30)
STEP_FIELDS = {"lambda", "quantile", "N", "m", "k", "p", "rejected"}
CERTIFICATE_FIELDS = {"certified", "threshold", "quantile", "selection_size", "fallback", "steps", "triple"}


def hand_certify(scores, calib_pos, calib_bits, alpha, delta, quantiles=PAPER_GRID, min_selection=50):
    N = len(scores)
    ascending = np.sort(scores)
    steps, previous = [], None
    for q in quantiles:
        lam = ascending[floor(Fraction(repr(q)) * (N - 1))]
        if lam == previous:
            continue  # merged with the shallower quantile
        previous = lam
        inside = scores[calib_pos] >= lam
        Nj, m, k = int(np.sum(scores >= lam)), int(inside.sum()), int(calib_bits[inside].sum())
        U = floor(Fraction(repr(alpha)) * Nj) + 1
        p = float(st.hypergeom.cdf(k, Nj, U, m)) if U <= Nj else 1.0
        steps.append(dict(quantile=q, N=Nj, m=m, k=k, null_boundary=U, p=p, rejected=p <= delta, **{"lambda": lam}))
        if p > delta:
            break
    certified = steps[0]["rejected"]
    if certified:
        last = max(i for i, s in enumerate(steps) if s["rejected"])
        threshold, quantile = steps[last]["lambda"], steps[last]["quantile"]
    else:
        n, safe = len(calib_pos), int(len(calib_pos) - calib_bits.sum())
        L = st.beta.ppf(delta, safe, n - safe + 1) if safe > 0 else 0.0
        count = max(min(min_selection, N), floor(L * N))
        threshold, quantile = np.sort(scores)[N - count], 1 - count / N
    return dict(certified=certified, steps=steps, threshold=threshold, quantile=quantile,
                selection=np.flatnonzero(scores >= threshold))


def small_pool(seed, N=300, contamination=1.6):
    rng = np.random.default_rng(seed)
    scores = rng.random(N)
    unsafe = rng.random(N) < contamination * (1 - scores) ** 2
    calib = np.sort(rng.choice(N, size=80, replace=False))
    return scores, unsafe, calib


def check_against_hand(cert, hand):
    assert cert.certified == hand["certified"] and cert.fallback == (not hand["certified"])
    assert len(cert.steps) == len(hand["steps"])
    for got, want in zip(cert.steps, hand["steps"]):
        for key in ("lambda", "quantile", "N", "m", "k", "null_boundary", "rejected"):
            assert got[key] == want[key], key
        assert got["p"] == pytest.approx(want["p"], rel=1e-12, abs=1e-300)
        assert got["p"] >= want["p"] * (1 - 1e-14)  # rounded up, never below
    assert cert.threshold == hand["threshold"]
    assert cert.quantile == pytest.approx(hand["quantile"], abs=1e-15)
    np.testing.assert_array_equal(cert.selection, hand["selection"])
    assert cert.selection.dtype == np.int64
    assert cert.selection_size == cert.threshold_set_size == len(hand["selection"])


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_certified_walk_matches_hand_computation(seed):
    scores, unsafe, calib = small_pool(seed)
    cert = ltt.certify(scores, calib, unsafe[calib])
    hand = hand_certify(scores, calib, unsafe[calib].astype(int), 0.25, 0.1)
    assert cert.certified, "the synthetic pool should certify at alpha = 0.25"
    check_against_hand(cert, hand)
    assert cert.certified_step == len([s for s in cert.steps if s["rejected"]]) - 1
    assert cert.fallback_record is None
    assert (cert.alpha, cert.delta, cert.pool_size, cert.calibration_size) == (0.25, 0.1, 300, 80)
    assert cert.calibration_unsafe == int(unsafe[calib].sum())


def test_refusal_returns_the_clopper_pearson_fallback():
    scores, unsafe, calib = small_pool(4, contamination=3.0)
    cert = ltt.certify(scores, calib, unsafe[calib], alpha=0.05)
    hand = hand_certify(scores, calib, unsafe[calib].astype(int), 0.05, 0.1)
    assert not cert.certified and cert.fallback and cert.certified_step is None
    check_against_hand(cert, hand)
    f = cert.fallback_record
    safe = 80 - int(unsafe[calib].sum())
    assert (f.labels, f.safe_labels, f.minimum_selection) == (80, safe, 50)
    assert f.safe_mass_lower == pytest.approx(st.beta.ppf(0.1, safe, 80 - safe + 1), rel=1e-12)
    assert f.count == max(50, floor(f.safe_mass_lower * 300))


def test_custom_grid_and_min_selection():
    scores, unsafe, calib = small_pool(5, contamination=3.0)
    grid = [0.9, 0.6, 0.3]
    cert = ltt.certify(scores, calib, unsafe[calib], alpha=0.05, grid=grid, min_selection=120)
    hand = hand_certify(scores, calib, unsafe[calib].astype(int), 0.05, 0.1, grid, 120)
    check_against_hand(cert, hand)
    assert cert.grid_size == 3


def test_drop_unsafe_calibration():
    scores, unsafe, calib = small_pool(1)
    plain = ltt.certify(scores, calib, unsafe[calib])
    dropped = ltt.certify(scores, calib, unsafe[calib], drop_unsafe_calibration=True)
    known_unsafe = calib[unsafe[calib]]
    np.testing.assert_array_equal(dropped.selection, np.setdiff1d(plain.selection, known_unsafe))
    assert dropped.dropped == len(np.intersect1d(plain.selection, known_unsafe)) > 0
    assert dropped.selection_size == plain.selection_size - dropped.dropped
    assert dropped.drop_unsafe_calibration and dropped.threshold == plain.threshold


def test_ids_bools_and_ints_give_the_same_certificate():
    scores, unsafe, calib = small_pool(2)
    by_position = ltt.certify(scores, calib, unsafe[calib].astype(np.int8))
    ids = 10_000 + np.arange(300)[::-1] * 7
    shuffled = np.random.default_rng(0).permutation(len(calib))  # labels in any order
    by_id = ltt.certify(scores, ids[calib][shuffled], unsafe[calib][shuffled], ids=ids)
    assert json.dumps(by_id) == json.dumps(by_position)
    np.testing.assert_array_equal(by_id.selection, by_position.selection)


def test_certificate_is_a_plain_dict_with_the_cli_fields():
    scores, unsafe, calib = small_pool(3)
    cert = ltt.certify(scores, calib, unsafe[calib])
    assert isinstance(cert, dict) and isinstance(cert, ltt.Certificate)
    assert CERTIFICATE_FIELDS <= set(cert)
    assert "selection" not in cert  # an attribute, not a JSON field
    back = json.loads(json.dumps(cert))
    assert back["certified"] is True and back["selection_size"] == cert.selection_size
    for step in back["steps"]:
        assert STEP_FIELDS <= set(step)
    assert cert["steps"][0]["lambda"] == cert.steps[0]["lambda"]
    assert cert.threshold == cert["threshold"]
    with pytest.raises(AttributeError):
        cert.no_such_field
    assert "certified" in dir(cert)


def test_triple_is_priced_on_the_first_selection():
    scores, unsafe, calib = small_pool(1)
    cert = ltt.certify(scores, calib, unsafe[calib])
    s1 = cert.steps[0]
    t = ltt.certificate_triple(300, s1["N"], s1["m"], s1["k"], 80, 0.25, 0.1)
    assert cert.triple == {"r_hat": t.r_hat, "r_lo": t.r_lo, "conditional_bound": t.conditional_bound,
                           "N1": s1["N"], "m1": s1["m"], "k1": s1["k"],
                           "U1_upper_decile": t.U1_upper_decile, "r_hat_error_bound": t.error_bound}
    assert ltt.certify(scores, calib, unsafe[calib], triple=False).triple is None
    # A refusal carries no triple, as in `ltt certify --json`.
    assert ltt.certify(scores, calib, unsafe[calib], alpha=0.01).triple is None


def test_fallback_that_keeps_nothing_has_no_threshold():
    scores = np.linspace(0, 1, 20)
    cert = ltt.certify(scores, np.arange(20), np.ones(20, dtype=bool), min_selection=0)
    assert not cert.certified and cert.fallback_record.count == 0
    assert cert.threshold is None and cert.selection_size == 0 and len(cert.selection) == 0


def test_certify_errors():
    scores, unsafe, calib = small_pool(1)
    labels = unsafe[calib]
    with pytest.raises(ValueError, match=r"calibration_from_labels: parameter 'label_ids\[\d+\]' = 999 is not the id of any trajectory"):
        ltt.certify(scores, np.append(calib[:-1], 999), labels)
    with pytest.raises(ValueError, match="repeats a label id"):
        ltt.certify(scores, np.append(calib[:-1], calib[0]), labels)
    bits = labels.astype(int)
    bits[3] = 2
    with pytest.raises(ValueError, match=r"'label_unsafe\[3\]' = 2 must be 0 \(within budget\) or 1"):
        ltt.certify(scores, calib, bits)
    bad = scores.copy()
    bad[7] = np.nan
    with pytest.raises(ValueError, match=r"'scores\[7\]' = nan must be a finite number"):
        ltt.certify(bad, calib, labels)
    with pytest.raises(ValueError, match="'scores' must be a 1-D array, got 2 dimensions"):
        ltt.certify(scores.reshape(15, 20), calib, labels)
    with pytest.raises(TypeError, match="'calib_ids' must hold integers"):
        ltt.certify(scores, calib.astype(float), labels)
    with pytest.raises(TypeError, match="'calib_unsafe' must hold 0/1 labels as integers or bools, got dtype float64"):
        ltt.certify(scores, calib, labels.astype(float))
    with pytest.raises(TypeError, match="'scores' must hold real numbers"):
        ltt.certify(scores.astype(complex), calib, labels)
    with pytest.raises(ValueError, match=r"'label_unsafe.size\(\)' = 79 must equal label_ids.size\(\) = 80"):
        ltt.certify(scores, calib, labels[:-1])
    with pytest.raises(ValueError, match=r"'ids' has 299 entries; it must have one per score \(300\)"):
        ltt.certify(scores, calib, labels, ids=np.arange(299))
    with pytest.raises(ValueError, match=r"calibrated_selection: parameter 'delta' = 0 must lie in \(0, 1\)"):
        ltt.certify(scores, calib, labels, delta=0.0)
    with pytest.raises(ValueError, match=r"'quantiles\[1\]' = 0.9 must be below quantiles\[0\] = 0.5"):
        ltt.certify(scores, calib, labels, grid=[0.5, 0.9])
