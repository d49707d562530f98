#!/usr/bin/env python3
"""Writes the seed corpus of the fuzz targets into tests/fuzz/corpus/<target>/.

    /usr/bin/python3 tests/fuzz/make_seed_corpus.py

Seeds are small valid inputs (and a few the readers refuse) from which libFuzzer mutates: CSV
pools with labels or state values, .npy arrays of every supported dtype, DSRL HDF5 files
written by h5py through the data tests' fixture generator, flag lines, and --config files.
Files are written by name and others are left alone, so regression inputs added by hand (crash-*, README.md)
stay. Needs numpy and h5py (Debian's /usr/bin/python3).
"""
import os
import shutil
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "data"))
import make_dsrl_fixtures as fixtures  # noqa: E402

CORPUS = os.path.join(HERE, "corpus")

# The pool, then NUL and a second table read against it as labels and as state values
# (fuzz_csv.cpp).
CSV = {
    "pool_all_columns.csv": "id,score,return,cost,length\n0,0.9,10.5,0.25,100\n1,0.1,3,2,80\n"
                            "2,0.55,7.25,1,120\n3,0.7,-1e3,0,1\n",
    "pool_quoted_crlf_bom.csv": "\ufeffid,\"score\",note\r\n\r\n7,0.5,\"a, \"\"quoted\"\"\nnote\"\r\n"
                                "  -3 , +0.25 ,plain\r\n9,1e-300,\r\n",
    "pool_labels.csv": "id,score,cost\n1,0.9,1\n2,0.8,1\n3,0.7,9\n4,0.2,0\n\0"
                       "id,unsafe\n1,0\n3,1\n4,0\n",
    "pool_states.csv": "id,score\n4,0.5\n2,0.25\n9,0.75\n\0id,value\n2,0.5\n9,0.1\n2,-0.5\n4,0\n"
                       "9,0.3\n",
    "pool_unsorted_labels.csv": "score,id\n0.5,30\n0.4,10\n0.3,20\n\0unsafe,id,extra\n1,20,x\n"
                                "0,30,y\n",
}

FLAGS = {
    "certify.txt": "certify --pool pool.csv --labels labels.csv --alpha 0.1 --delta=0.05 "
                   "--grid 0.9,0.8,0.5 --json\n",
    "certify_draw.txt": "certify --dataset d.hdf5 --state-values v.npy --aggregation percentile "
                        "--percentile 25 --draw 1e3 --budget 2.5 --seed 7 --gate resample "
                        "--kappa 1.5 --override-gate --min-selection 2000.0\n",
    "certify_help.txt": "certify --pool p.csv -h\n",
    "score.txt": "score --dataset d.hdf5 --out o --pairs 100 --segment 8 --flip-probability 0.1 "
                 "--hidden 16,8 --lr 1e-3 --epochs 2 --members 3 --threads 2 --backend eigen "
                 "--aggregation minimum --quiet\n",
    "score_pairs_file.txt": "score --dataset d --out o --pairs-file pairs.csv "
                            "--boltzmann-temperature 0.5\n",
    "every_kind.txt": "--N 100 --draws=1048576 --n-max 5 --alpha 0.25 --target 1 --json "
                      "--out o.csv --grid 0.85,0.8\n",
    "every_kind_nul.txt": "--N\0 9007199254740992\0--out\0a file with spaces\0--target\0-0\0",
    "every_kind_paths.txt": "--N 3 --dataset a.hdf5 'logs/*.hdf5' -x --json --dataset=--b c\n",
    "score_several.txt": "score --dataset a.hdf5 b c.h5 --out o --memory 64M\n",
}

CONFIGS = {
    "tiny.json": '{"task": "point-goal", "preset": "tiny", "settings": {"alpha": 0.2, '
                 '"delta": 0.1, "pairs": 200, "value_hidden": [16, 16], '
                 '"observations": "z-scored"}, "seeds": [{"seed": 1}, {"seed": 2}]}\n',
    "dataset.json": '{"task": "car-run", "pool": {"source": "d.hdf5", "episodes": 40, '
                    '"pool_seed": 3, "transitions": 800}, "settings": {"backend": "eigen", '
                    '"normalize_observations": false, "return_weight_kappa": 1.5}, '
                    '"methods": [], "certificate": null}\n',
    "corridor.json": '{"task": "corridor", "trajectories": 100, "episodes": 50, "seed": 2, '
                     '"expert_mass": 0.3, "safe_probability": 0.9, "rows": [[1, 2.5e-3]]}\n',
    "lines.json": '{\n  "task": "point-goal",\n  "settings": {\n    "members": 3,\n'
                  '    "policy_hidden": [64, 64]\n  }\n}\n',
}


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)


def main():
    for name, text in CSV.items():
        write(os.path.join(CORPUS, "fuzz_csv", name), text)
    for name, text in FLAGS.items():
        write(os.path.join(CORPUS, "fuzz_arguments", name), text)
    for name, text in CONFIGS.items():
        write(os.path.join(CORPUS, "fuzz_config", name), text)

    with tempfile.TemporaryDirectory() as tmp:
        fixtures.write_npy_fixtures(os.path.join(tmp, "npy"))
        for name in ["float32_7", "float64_3x4", "int64_2x3x2", "uint8_7", "bool_3x4",
                     "float64_0x3", "scalar", "special", "version2", "version3",
                     "fortran_column", "big_endian", "truncated"]:
            shutil.copy(os.path.join(tmp, "npy", name + ".npy"),
                        os.path.join(CORPUS, "fuzz_npy", name + ".npy"))

        fixtures.write_dsrl_fixtures(os.path.join(tmp, "dsrl"), hdf5=True)
        for name in ["enum_flags", "uint8_flags", "bad_flag", "group_key", "string_rewards"]:
            shutil.copy(os.path.join(tmp, "dsrl", name + ".hdf5"),
                        os.path.join(CORPUS, "fuzz_hdf5", name + ".hdf5"))

    # The newest file format (superblock 3, compact object headers): other code in libhdf5.
    import h5py
    d = fixtures.dataset(np.random.default_rng(13), [2, 1], ["terminal", "timeout"], 1)
    with h5py.File(os.path.join(CORPUS, "fuzz_hdf5", "latest_format.hdf5"), "w",
                   libver="latest") as f:
        for k, v in d.items():
            f.create_dataset(k, data=v)


if __name__ == "__main__":
    main()
