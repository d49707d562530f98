# Several budgets from one labeled sample (docs/several-budgets.md): ltt.certify_budgets,
# ltt.several_budgets_rate and ltt.joint_label_budget against the one-budget functions they
# reduce to, against each other, and against `ltt certify --budgets --json` when the program is
# found (LTT_PROGRAM, as in test_program_agreement.py).
import json
import os
import subprocess

import numpy as np
import pytest

import ltt

PROGRAM = os.environ.get("LTT_PROGRAM", "")
PROGRAM_ONLY = {"output", "inputs"}  # the program's flags and files
PROCEDURES = ("one_threshold", "one_threshold_per_budget")
FLAG = {"one_threshold": "one-threshold", "one_threshold_per_budget": "per-budget"}


def banded_pool(seed, N=1500, n=200):
    """Scores, costs (higher score, lower cost) and a uniform draw of n labels."""
    rng = np.random.default_rng(seed)
    score = rng.random(N)
    cost = rng.gamma(2.0, 20.0 * (1.3 - score))
    calib = rng.choice(N, size=n, replace=False)
    return score, cost, calib


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("procedure", PROCEDURES)
def test_one_budget_is_certify(seed, procedure):
    score, cost, calib = banded_pool(seed)
    budget = 25.0
    both = ltt.certify_budgets(score, calib, [budget], calib_costs=cost[calib], alpha=0.2,
                               procedure=procedure)
    one = ltt.certify(score, calib, (cost[calib] > budget).astype(int), alpha=0.2)
    (entry,) = both.budgets
    assert both.levels == [0.1]
    assert both.certified == one.certified
    assert {k: v for k, v in entry.items() if k not in ("budget", "level")} == dict(one)
    np.testing.assert_array_equal(entry.selection, one.selection)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("procedure", PROCEDURES)
def test_bands_and_costs_agree_and_each_budget_is_its_own_walk(seed, procedure):
    score, cost, calib = banded_pool(seed)
    budgets = [20.0, 40.0, 80.0]
    alphas = [0.1, 0.2, 0.3]
    by_cost = ltt.certify_budgets(score, calib, budgets, calib_costs=cost[calib], alphas=alphas,
                                  procedure=procedure)
    bands = (cost[calib, None] > np.array(budgets)).sum(axis=1)
    by_band = ltt.certify_budgets(score, calib, budgets, calib_bands=bands, alphas=alphas,
                                  procedure=procedure)
    assert json.loads(json.dumps(by_cost)) == json.loads(json.dumps(by_band))
    assert by_cost.certified == all(e.certified for e in by_cost.budgets)
    for k, entry in enumerate(by_cost.budgets):
        assert entry.budget == budgets[k] and entry.alpha == alphas[k]
        assert entry.level == by_cost.levels[k]
    if procedure == "one_threshold":
        # One walk on max_k p_jk: every budget certifies the same step, and each joint p-value
        # is the largest of the budgets' p-values at its step.
        assert by_cost.levels == [0.1] * 3
        steps = [[s["p"] for s in e.steps] for e in by_cost.budgets]
        assert by_cost.joint_pvalues == [max(ps) for ps in zip(*steps)]
        assert len({e.certified_step for e in by_cost.budgets}) == 1
    else:
        # Each budget's walk alone at its share of delta is ltt.certify at that level.
        assert sum(by_cost.levels) <= 0.1 and by_cost.joint_pvalues is None
        for k, entry in enumerate(by_cost.budgets):
            alone = ltt.certify(score, calib, (cost[calib] > budgets[k]).astype(int),
                                alpha=alphas[k], delta=by_cost.levels[k])
            assert {key: v for key, v in entry.items() if key not in ("budget", "level")} == dict(alone)


def test_rate_and_label_budget_reduce_to_one_budget():
    for procedure in PROCEDURES:
        for n in (0, 50, 120, 400):
            # The joint form is a different sum than the one-budget form: equal to rounding.
            assert ltt.several_budgets_rate(procedure, 5000, 750, [40], n, [0.1], 0.1) == \
                pytest.approx(ltt.certification_rate(5000, 750, 40, n, 0.1, 0.1), rel=1e-12,
                              abs=1e-15)
        assert ltt.joint_label_budget(procedure, 5000, 750, [40], [0.1], 0.1, 0.8) == \
            ltt.label_budget(5000, 750, 40, 0.1, 0.1, 0.8)


def test_joint_rate_is_below_each_budgets_own():
    N, N1, U1, alphas, n = 5000, 750, [60, 30, 10], [0.15, 0.15, 0.15], 150
    for procedure in PROCEDURES:
        joint = ltt.several_budgets_rate(procedure, N, N1, U1, n, alphas, 0.1)
        level = 0.1 if procedure == "one_threshold" else 0.1 / 3
        for u, a in zip(U1, alphas):
            assert joint <= ltt.certification_rate(N, N1, u, n, a, level) + 1e-12
        budget = ltt.joint_label_budget(procedure, N, N1, U1, alphas, 0.1, 0.5)
        assert budget is not None
        assert ltt.several_budgets_rate(procedure, N, N1, U1, budget, alphas, 0.1) >= 0.5
        assert ltt.several_budgets_rate(procedure, N, N1, U1, budget - 1, alphas, 0.1) < 0.5


def test_bad_input_names_the_parameter():
    score, cost, calib = banded_pool(0)
    with pytest.raises(ValueError, match="calib_costs"):
        ltt.certify_budgets(score, calib, [20.0])
    with pytest.raises(ValueError, match="calib_costs"):
        ltt.certify_budgets(score, calib, [20.0], calib_costs=cost[calib],
                            calib_bands=np.zeros(len(calib), dtype=int))
    with pytest.raises(ValueError, match="procedure"):
        ltt.certify_budgets(score, calib, [20.0], calib_costs=cost[calib], procedure="both")
    with pytest.raises(ValueError, match="budgets"):
        ltt.certify_budgets(score, calib, [40.0, 20.0], calib_costs=cost[calib])
    with pytest.raises(ValueError, match="alphas"):
        ltt.certify_budgets(score, calib, [20.0, 40.0], calib_costs=cost[calib], alphas=[0.1])
    with pytest.raises(ValueError, match="label_bands"):
        ltt.certify_budgets(score, calib, [20.0], calib_bands=np.full(len(calib), 2))
    with pytest.raises(ValueError, match="procedure"):
        ltt.several_budgets_rate("bonferroni", 100, 20, [1], 10, [0.1], 0.1)


@pytest.mark.skipif(not os.path.isfile(PROGRAM),
                    reason=f"no ltt program at LTT_PROGRAM = '{PROGRAM}'")
@pytest.mark.parametrize("procedure", PROCEDURES)
def test_matches_the_program(tmp_path, procedure):
    score, cost, calib = banded_pool(11)
    ids = 7 + 2 * np.arange(len(score))  # ids unrelated to positions
    pool = tmp_path / "pool.csv"
    pool.write_text("id,score\n" + "".join(f"{i},{s!r}\n" for i, s in zip(ids, score)))
    labels = tmp_path / "labels.csv"
    labels.write_text("id,cost\n" + "".join(f"{ids[c]},{cost[c]!r}\n" for c in calib))
    # One threshold writes the common selection; per budget, each budget has its own.
    selection = tmp_path / "selection.txt"
    written = ["--selection", str(selection)] if procedure == "one_threshold" else []
    run = subprocess.run([PROGRAM, "certify", "--pool", str(pool), "--labels", str(labels),
                          "--budgets", "20,40,80", "--alphas", "0.1,0.2,0.3", "--procedure",
                          FLAG[procedure], *written, "--json"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    program = json.loads(run.stdout)
    ours = ltt.certify_budgets(score, ids[calib], [20, 40, 80], calib_costs=cost[calib],
                               alphas=[0.1, 0.2, 0.3], procedure=procedure, ids=ids)
    assert set(program) - set(ours) == PROGRAM_ONLY
    assert json.loads(json.dumps(ours)) == {key: program[key] for key in ours}
    if written:
        np.testing.assert_array_equal([int(line) for line in selection.read_text().split()],
                                      ids[ours.budgets[0].selection])


def test_validate_budgets_one_budget_is_validate_guarantee():
    score, cost, _ = banded_pool(3)
    for procedure in PROCEDURES:
        v = ltt.validate_budgets(score, cost, [25.0], alpha=0.2, procedure=procedure, draws=300,
                                 seed=5)
        g = ltt.validate_guarantee(score, (cost > 25.0).astype(int), alpha=0.2, draws=300, seed=5,
                                   certificate_triple=False)
        assert v.every_certified == g.certification
        assert v.simultaneous_false_certification == g.false_certification
        assert v.budgets[0].steps == g.steps
        np.testing.assert_array_equal(v.outcomes.seed, g.outcomes.seed)
        np.testing.assert_array_equal(v.outcomes.returned[:, 0], g.outcomes.returned)
        assert v.closed_form_rate == pytest.approx(g.closed_form_rate, rel=1e-12, abs=1e-15)


def test_validate_budgets_reduces_its_outcomes():
    score, cost, _ = banded_pool(4)
    v = ltt.validate_budgets(score, cost, [15, 30, 60], alphas=[0.3, 0.2, 0.1],
                             procedure="one_threshold_per_budget", draws=200, seed=1)
    certified = v.outcomes.returned >= 0
    assert v.outcomes.returned.shape == (200, 3)
    assert v.every_certified["count"] == int(certified.all(axis=1).sum())
    assert v.simultaneous_false_certification["count"] == int(v.outcomes.violated.sum())
    for k, b in enumerate(v.budgets):
        assert b.certification["count"] == int(certified[:, k].sum())
        assert b.level == pytest.approx(0.1 / 3)
    with pytest.raises(ValueError, match="alphas"):
        ltt.validate_budgets(score, cost, [15, 30], alphas=[0.3])
