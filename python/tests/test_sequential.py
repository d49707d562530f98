# ltt.SequentialCertifier: the sequential walk label by label, against the `ltt draw
# --sequential` order and the library walk (validated in tests/curation); its stub.
import numpy as np
import pytest

import ltt


def graded_pool(N, u1, u_rest):
    """Scores N..1; the top 15% hold a fraction u1 unsafe, the rest u_rest, spread evenly."""
    N1 = N - (85 * (N - 1)) // 100
    unsafe = np.zeros(N, dtype=bool)
    for start, count, frac in ((0, N1, u1), (N1, N - N1, u_rest)):
        bad = round(frac * count)
        i = np.arange(count)
        unsafe[start:start + count] = (i + 1) * bad // count > i * bad // count
    return np.arange(N, 0, -1, dtype=float), unsafe


def run(scores, unsafe, **kw):
    c = ltt.SequentialCertifier(scores, **kw)
    while not c.should_stop():
        i = c.next_id()
        c.add_label(i, bool(unsafe[i]))
    return c


def test_a_clean_pool_certifies_before_the_cap_and_stops():
    scores, unsafe = graded_pool(1000, 0.0, 0.05)
    c = run(scores, unsafe, seed=3, stop="target:0")
    cert = c.certificate
    assert cert.stopped and cert.reason == "target_certified"
    assert cert.certified and cert.certified_step >= 0  # several steps may clear at once
    assert c.labels_used == cert.labels_used < 200
    assert c.next_id() is None
    assert cert.steps[0].rejected and cert.steps[0].certified_after == c.labels_used
    assert list(cert.depth_trace) == sorted(cert.depth_trace)
    with pytest.raises(ValueError, match="has stopped"):
        c.add_label(0, False)


def test_the_label_order_reads_the_seeded_permutation_and_labels_must_follow_it():
    scores, unsafe = graded_pool(300, 0.1, 0.3)
    c = ltt.SequentialCertifier(scores, seed=11, label_cap=50, stop="cap", order="uniform")
    perm = c.permutation
    assert perm.dtype == np.int64 and sorted(perm) == list(range(300))
    np.testing.assert_array_equal(perm, ltt.SequentialCertifier(scores, seed=11).permutation)
    first = c.next_id()
    assert first == perm[0]  # uniform: the permutation from the top
    np.testing.assert_array_equal(c.planned(5), perm[:5])
    with pytest.raises(ValueError, match="not the next in the label order"):
        c.add_label(int(perm[1]), False)
    c.add_label(first, bool(unsafe[first]))
    assert c.labels_used == 1 and not c.should_stop()
    assert c.certificate.reason is None and not c.certificate.stopped
    assert c.certificate.order == "uniform"
    c = run(scores, unsafe, seed=11, label_cap=50, stop="cap", order="uniform")
    assert c.labels_used == 50 and c.certificate.reason == "label_cap"
    assert all(s.p_cap is not None for s in c.certificate.steps)  # the exact test at the cap
    # stratified (the default): the permutation's members of S_1, the top 46, first
    s = ltt.SequentialCertifier(scores, seed=11, label_cap=50, stop="cap")
    top = [int(i) for i in perm if scores[i] > 300 - 46]
    np.testing.assert_array_equal(s.planned(10), top[:10])
    assert s.next_id() == top[0] and s.certificate.order == "stratified"
    with pytest.raises(ValueError, match="order"):
        ltt.SequentialCertifier(scores, order="sorted")


def test_a_bad_pool_is_refused_early_and_bad_arguments_are_value_errors():
    scores, unsafe = graded_pool(2000, 0.55, 0.6)
    c = run(scores, unsafe, seed=2, stop="early-refusal")
    assert c.certificate.reason == "early_refusal" and not c.certificate.certified
    assert c.labels_used < 120
    # the user's refusal threshold: a higher one refuses no later
    used = [run(scores, unsafe, seed=2, stop="early-refusal", refusal_rate=r).labels_used
            for r in (0.01, 0.05, 0.3)]
    assert used == sorted(used, reverse=True) and used[1] == c.labels_used
    with pytest.raises(ValueError, match="stop"):
        ltt.SequentialCertifier(scores, stop="sometimes")
    with pytest.raises(ValueError, match="label_cap"):
        ltt.SequentialCertifier(scores, label_cap=0)
    with pytest.raises(ValueError, match="alpha"):
        ltt.SequentialCertifier(scores, alpha=1.5)


def test_min_selection_is_the_fewest_trajectories_a_refusal_keeps():
    scores, unsafe = graded_pool(2000, 0.55, 0.6)
    default = run(scores, unsafe, seed=2, stop="early-refusal").certificate
    wider = run(scores, unsafe, seed=2, stop="early-refusal", min_selection=900).certificate
    assert default.fallback and wider.fallback
    assert default.fallback_record.minimum_selection == 50  # the library's and the program's
    f = wider.fallback_record
    assert f.minimum_selection == 900 and f.safe_lower < 900
    assert f.count == 900 and wider.selection_size >= 900
    # the labels and their bound do not depend on it
    assert f.unsafe_upper == default.fallback_record.unsafe_upper
    with pytest.raises(ValueError, match="minimum_selection"):
        ltt.SequentialCertifier(scores, min_selection=-1)


def test_stub_declares_the_bindings_members():
    import ast
    from pathlib import Path
    stub = ast.parse((Path(ltt.__file__).parent / "__init__.pyi").read_text())
    cls = next(n for n in stub.body if isinstance(n, ast.ClassDef) and n.name == "SequentialCertifier")
    declared = {n.name for n in cls.body if isinstance(n, ast.FunctionDef)}
    bound = {n for n in vars(ltt.SequentialCertifier) if not n.startswith("_")} | {"__init__"}
    assert declared == bound


def test_the_default_is_the_fixed_walk_on_the_permutations_first_label_cap():
    scores, unsafe = graded_pool(2000, 0.05, 0.1)
    c = run(scores, unsafe, seed=4)  # stop="auto" = "depth"
    cert = c.certificate
    assert cert.fixed_walk and cert.order == "uniform" and cert.reason == "decided"
    depth = cert.certified_step + 1 if cert.certified else 0
    assert cert.depth_upper == depth  # decided: the sample's depth is known
    # its sample: the first 200 positions of the permutation; scores N..1, so S_j is the top N_j
    sample = c.permutation[:200]
    for j, s in enumerate(cert.steps):
        assert s.sample == sum(1 for i in sample if scores[i] > 2000 - s.N)
        assert s.m <= s.sample
        assert s.rejected == (j < depth)
        assert (s.p <= 0.1) if s.rejected else True
    assert c.labels_used <= cert.steps[-1].sample < 200
    with pytest.raises(ValueError, match="order"):
        ltt.SequentialCertifier(scores, stop="depth", order="stratified")
