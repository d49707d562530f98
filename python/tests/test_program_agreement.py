# ltt.certify and `ltt certify --json` give the same certificate: the same fields in the same
# order with the same values, and the same selection. The program is found through
# LTT_PROGRAM, which ctest sets when the build has it (LTT_BUILD_PROGRAM); without it these
# tests are skipped.
import json
import os
import subprocess

import numpy as np
import pytest

import ltt

PROGRAM = os.environ.get("LTT_PROGRAM", "")
pytestmark = pytest.mark.skipif(not os.path.isfile(PROGRAM),
                                reason=f"no ltt program at LTT_PROGRAM = '{PROGRAM}'")

PROGRAM_ONLY = {"gate", "output", "inputs"}  # the program's flags and files


def write_inputs(tmp_path, seed, contamination):
    rng = np.random.default_rng(seed)
    N = 500
    ids = 1000 + 3 * rng.permutation(N)  # ids unrelated to positions
    scores = rng.random(N)
    unsafe = rng.random(N) < contamination * (1 - scores) ** 2
    calib = rng.choice(N, size=90, replace=False)  # labels in no particular order
    pool = tmp_path / "pool.csv"
    pool.write_text("id,score\n" + "".join(f"{i},{s!r}\n" for i, s in zip(ids, scores)))
    labels = tmp_path / "labels.csv"
    labels.write_text("id,unsafe\n" + "".join(f"{ids[c]},{int(unsafe[c])}\n" for c in calib))
    return pool, labels, ids, scores, ids[calib], unsafe[calib]


CASES = {
    "certified": (1.6, [], {}),
    "refused": (1.6, ["--alpha", "0.1"], dict(alpha=0.1)),
    "grid, drop, delta": (1.6, ["--grid", "0.9,0.6,0.3", "--drop-unsafe-calibration", "--delta", "0.2"],
                          dict(grid=[0.9, 0.6, 0.3], drop_unsafe_calibration=True, delta=0.2)),
    "fallback floor": (3.0, ["--alpha", "0.05", "--min-selection", "200"], dict(alpha=0.05, min_selection=200)),
}


@pytest.mark.parametrize("case", CASES)
def test_certify_matches_the_program(tmp_path, case):
    contamination, flags, kwargs = CASES[case]
    pool, labels, ids, scores, calib_ids, calib_unsafe = write_inputs(tmp_path, 3, contamination)
    selection = tmp_path / "selection.txt"
    run = subprocess.run([PROGRAM, "certify", "--pool", str(pool), "--labels", str(labels),
                          "--selection", str(selection), "--json", *flags],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    program = json.loads(run.stdout)

    cert = ltt.certify(scores, calib_ids, calib_unsafe, ids=ids, **kwargs)
    assert set(program) - set(cert) == PROGRAM_ONLY
    assert list(cert) == [key for key in program if key not in PROGRAM_ONLY]
    # Through JSON, so both sides are plain values; the program prints the shortest decimal of
    # each double, which reads back as the same double.
    assert json.loads(json.dumps(cert)) == {key: program[key] for key in cert}
    written = [int(line) for line in selection.read_text().split()]
    np.testing.assert_array_equal(written, ids[cert.selection])
