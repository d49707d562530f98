# ltt.dask.episode_scores on a dask.distributed LocalCluster of 2 worker processes whose memory
# limit is below the dataset's size: exactly the bytes `ltt score --model` writes to
# scores.npy for the 4 files read as one dataset (LTT_PROGRAM), and SafetyValue.scores of each
# file. The files have episodes that cross the 65536-row blocks, one longer than two blocks, and
# a dropped tail.
import os
import subprocess

import h5py
import numpy as np
import pytest

import ltt

distributed = pytest.importorskip("distributed")  # Debian's python3-distributed (scripts/setup)
import dask  # noqa: E402
import ltt.dask as ld  # noqa: E402

OBS_DIM = 72
ROWS = 350_000  # per file: 4 files of 100 MB of observations, 400 MB in all
MEMORY_LIMIT = 300e6  # per worker, below the dataset's size
PROGRAM = os.environ.get("LTT_PROGRAM", "")


def write_file(path, seed, long_episode):
    rng = np.random.default_rng(seed)
    lengths = list(rng.integers(50, 6000, 400))
    if long_episode:
        lengths.insert(3, 150_000)  # spans three blocks of 65536 rows
    ends = np.cumsum(lengths)
    ends = ends[ends < ROWS - 100] - 1  # the rows after the last end: a tail DSRL drops
    obs = rng.normal(0.0, 1.0, (ROWS, OBS_DIM)).astype(np.float32)
    terminals = np.zeros(ROWS, bool)
    timeouts = np.zeros(ROWS, bool)
    by_timeout = rng.random(len(ends)) < 0.5
    terminals[ends[~by_timeout]] = True
    timeouts[ends[by_timeout]] = True
    with h5py.File(path, "w") as f:
        f["observations"] = obs
        f["next_observations"] = obs
        f["actions"] = rng.uniform(-1, 1, (ROWS, 2)).astype(np.float32)
        f["rewards"] = rng.normal(1.0, 0.1, ROWS).astype(np.float32)
        f["costs"] = (obs[:, 0] > 1.0).astype(np.float32)
        f["terminals"] = terminals
        f["timeouts"] = timeouts
    return obs, np.concatenate([[0], ends + 1]).astype(np.int64)


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    root = tmp_path_factory.mktemp("dask")
    files, tables = [], []
    for i in range(4):
        path = root / f"part-{i}.hdf5"
        tables.append(write_file(path, seed=40 + i, long_episode=i == 1))
        files.append(path)
    obs, offsets = tables[0]
    small = offsets[offsets <= 40_000]  # a few episodes are enough to train on
    rows = obs[:small[-1]]
    value = ltt.train_value(rows, small, (rows[:, 0] > 1.0).astype(np.float32), epochs=2,
                            hidden=(32, 32), members=2, pairs=100, seed=3)
    model = root / "value.ltt"
    value.save(model)
    return files, tables, model


def test_episode_scores_on_a_two_worker_cluster_are_ltt_scores(dataset, tmp_path):
    files, tables, model = dataset
    assert sum(t[0].nbytes for t in tables) > MEMORY_LIMIT  # the observations alone
    # A worker over 80% of its limit would pause and wait forever for memory to free (a build
    # with LibTorch imports about 260 MB); over 95% it is killed, which fails the test instead.
    with dask.config.set({"distributed.worker.memory.pause": False}), \
            distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                     memory_limit=MEMORY_LIMIT, host="127.0.0.1",
                                     dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        got = ld.episode_scores(files, model, block_rows=ld.FORWARD_ROWS, client=client)
    assert len(got) == 4
    value = ltt.load_value(model)
    for path, (obs, offsets), g in zip(files, tables, got):
        assert g.dtype == np.float64 and len(g) == len(offsets) - 1
        # the binding's whole-file scores: the same C++ aggregation on the same rows
        assert g.tobytes() == value.scores(obs, offsets).tobytes()
    if os.path.isfile(PROGRAM):
        # `ltt score` on the four files as one dataset: their episodes one file after another
        out = tmp_path / "scored"
        subprocess.run([PROGRAM, "score", "--dataset", *map(str, files), "--model", str(model),
                        "--out", str(out), "--no-state-values", "--quiet"], check=True,
                       capture_output=True)
        assert np.concatenate(got).tobytes() == np.load(out / "scores.npy").tobytes()
    # the block size does not change a byte (the default scheduler, no cluster)
    again = ld.episode_scores(files[1:2], model, block_rows=3 * ld.FORWARD_ROWS)
    assert again[0].tobytes() == got[1].tobytes()


def test_episode_scores_refuses_bad_arguments(dataset, tmp_path):
    files, _, model = dataset
    with pytest.raises(ValueError, match="block_rows"):
        ld.episode_scores(files, model, block_rows=1000)
    with pytest.raises(ValueError, match="aggregation"):
        ld.episode_scores(files, model, aggregation="median")
    with pytest.raises(ValueError, match="no such file"):
        ld.episode_scores([tmp_path / "missing.hdf5"], model)
    flat = tmp_path / "flat.hdf5"
    with h5py.File(flat, "w") as f:
        f["observations"] = np.zeros((10, OBS_DIM), np.float32)
        f["terminals"] = np.zeros(10, bool)
        f["timeouts"] = np.zeros(10, bool)
    with pytest.raises(ValueError, match="no complete episode"):
        ld.episode_scores([flat], model)
