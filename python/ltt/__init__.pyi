# Type stubs for the package ltt: the public names of the compiled module ltt._ltt
# (python/src/statistics.cpp, curation.cpp, several_budgets.cpp, dsrl.cpp, value.cpp,
# module.cpp), which ltt/__init__.py re-exports. docs/python.md says what each returns.
# python/tests/test_stubs.py checks that every public name of the module is declared here with
# the parameters the binding takes (names, order, keyword-only, defaults): a new binding fails
# it until declared.
#
# Counts take integer arrays or ints, probabilities and scores real arrays or floats
# (npt.ArrayLike); results that are structs in C++ come back as a Record.

import os
from collections.abc import Sequence
from typing import Any, Literal, overload

import numpy as np
import numpy.typing as npt

__version__: str

_Path = str | os.PathLike[str]
_Int = int | np.integer[Any]
_Real = float | np.floating[Any] | _Int
_Float64Array = npt.NDArray[np.float64]
_Int64Array = npt.NDArray[np.int64]
_Procedure = Literal["fixed_sequence", "bonferroni", "holm"]
_Aggregation = Literal["mean", "minimum", "percentile"]
_BudgetProcedure = Literal["one_threshold", "one_threshold_per_budget"]

class Record(dict[str, Any]):
    """A dict whose keys also read as attributes: r.certified is r['certified']."""

    def __getattr__(self, name: str) -> Any: ...

class Certificate(Record):
    """The result of certify: the fields of `ltt certify --json`, and .selection."""

    selection: _Int64Array

# --- statistics (include/ltt/) -------------------------------------------------------------
# Vectorized: a float when every argument is a scalar, else a float64 array of the broadcast
# shape. The scalar overloads overlap the array ones (an int is array-like), hence the ignores.

@overload
def hypergeometric_pmf(k: _Int, N: _Int, K: _Int, n: _Int) -> float: ...  # type: ignore[misc]
@overload
def hypergeometric_pmf(
    k: npt.ArrayLike, N: npt.ArrayLike, K: npt.ArrayLike, n: npt.ArrayLike
) -> _Float64Array: ...
@overload
def hypergeometric_cdf(k: _Int, N: _Int, K: _Int, n: _Int) -> float: ...  # type: ignore[misc]
@overload
def hypergeometric_cdf(
    k: npt.ArrayLike, N: npt.ArrayLike, K: npt.ArrayLike, n: npt.ArrayLike
) -> _Float64Array: ...
@overload
def hypergeometric_sf(k: _Int, N: _Int, K: _Int, n: _Int) -> float: ...  # type: ignore[misc]
@overload
def hypergeometric_sf(
    k: npt.ArrayLike, N: npt.ArrayLike, K: npt.ArrayLike, n: npt.ArrayLike
) -> _Float64Array: ...
@overload
def hypergeometric_log_pmf(k: _Int, N: _Int, K: _Int, n: _Int) -> float: ...  # type: ignore[misc]
@overload
def hypergeometric_log_pmf(
    k: npt.ArrayLike, N: npt.ArrayLike, K: npt.ArrayLike, n: npt.ArrayLike
) -> _Float64Array: ...
@overload
def hypergeometric_log_cdf(k: _Int, N: _Int, K: _Int, n: _Int) -> float: ...  # type: ignore[misc]
@overload
def hypergeometric_log_cdf(
    k: npt.ArrayLike, N: npt.ArrayLike, K: npt.ArrayLike, n: npt.ArrayLike
) -> _Float64Array: ...
@overload
def hypergeometric_log_sf(k: _Int, N: _Int, K: _Int, n: _Int) -> float: ...  # type: ignore[misc]
@overload
def hypergeometric_log_sf(
    k: npt.ArrayLike, N: npt.ArrayLike, K: npt.ArrayLike, n: npt.ArrayLike
) -> _Float64Array: ...
@overload
def composition_pvalue(k: _Int, m: _Int, N_sel: _Int, alpha: _Real) -> float: ...  # type: ignore[misc]
@overload
def composition_pvalue(
    k: npt.ArrayLike, m: npt.ArrayLike, N_sel: npt.ArrayLike, alpha: npt.ArrayLike
) -> _Float64Array: ...
def null_boundary(N_sel: int, alpha: float) -> int: ...
def composition_pvalue_table(N_sel: int, alpha: float, m_max: int) -> _Float64Array: ...
def fixed_sequence(pvalues: npt.ArrayLike, delta: float) -> Record: ...
def bonferroni(pvalues: npt.ArrayLike, delta: float) -> Record: ...
def holm(pvalues: npt.ArrayLike, delta: float) -> Record: ...
def test_hypotheses(procedure: _Procedure, pvalues: npt.ArrayLike, delta: float) -> Record: ...
def clopper_pearson_lower(successes: int, trials: int, delta: float) -> float: ...
def clopper_pearson_upper(successes: int, trials: int, delta: float) -> float: ...
def maurer_pontil_upper(x: npt.ArrayLike, range: float, delta: float) -> float: ...
def hoeffding_serfling_pvalue(
    sample_costs: npt.ArrayLike, population: int, budget: float, range: float
) -> float: ...
def betting_mean_pvalue(
    sample_costs: npt.ArrayLike,
    population: int,
    budget: float,
    range: float,
    delta: float,
    horizon: int = 0,
) -> float: ...
def resampled_unsafe_bound(alpha: float, kappa: float) -> float: ...
def certification_rate(N: int, N1: int, U1: int, n: int, alpha: float, delta: float) -> float: ...
def label_budget(
    N: int, N1: int, U1: int, alpha: float, delta: float, target_rate: float
) -> int | None: ...
def several_budgets_rate(
    procedure: _BudgetProcedure,
    N: int,
    N1: int,
    U1: npt.ArrayLike,
    n: int,
    alphas: npt.ArrayLike,
    delta: float,
) -> float: ...
def joint_label_budget(
    procedure: _BudgetProcedure,
    N: int,
    N1: int,
    U1: npt.ArrayLike,
    alphas: npt.ArrayLike,
    delta: float,
    target_rate: float,
) -> int | None: ...
def certification_rate_curve(
    N: int, N1: int, U1: int, alpha: float, delta: float, n_max: int
) -> _Float64Array: ...
def critical_counts(N1: int, alpha: float, delta: float, m_max: int) -> _Int64Array: ...
def conditional_certification_rates(
    N1: int, U1: int, alpha: float, delta: float, m_max: int
) -> _Float64Array: ...
def purity_margin(alpha: float, unsafe_fractions: npt.ArrayLike) -> float: ...
def certification_dichotomy(alpha: float, unsafe_fractions: npt.ArrayLike) -> Record: ...
def hoeffding_min_draws(margin: float, delta: float) -> int: ...
def hoeffding_rate_bound(m: int, margin: float, delta: float) -> float: ...

class CertificationRateModel:
    """rate(U1) for many U1, for a pool (N, N1), budget n and (alpha, delta)."""

    def __init__(self, N: int, N1: int, n: int, alpha: float, delta: float) -> None: ...
    def rate(self, U1: int) -> float: ...
    @property
    def N(self) -> int: ...
    @property
    def N1(self) -> int: ...
    @property
    def n(self) -> int: ...
    @property
    def truncated_mass(self) -> float: ...

def certificate_triple(
    N: int,
    N1: int,
    m1: int,
    k1: int,
    n: int,
    alpha: float,
    delta: float,
    *,
    tolerance: float = 1e-09,
    tail_mass: float = 1e-12,
    lower_level: float = 0.1,
    sum: Literal["automatic", "exhaustive", "bracket"] = "automatic",
) -> Record: ...

# --- curation (include/curation/) ----------------------------------------------------------

paper_grid_quantiles: tuple[float, ...]

def certify(
    scores: npt.ArrayLike,
    calib_ids: npt.ArrayLike,
    calib_unsafe: npt.ArrayLike,
    alpha: float = 0.25,
    delta: float = 0.1,
    grid: npt.ArrayLike | None = None,
    min_selection: int = 50,
    drop_unsafe_calibration: bool = False,
    *,
    ids: npt.ArrayLike | None = None,
    triple: bool = True,
) -> Certificate: ...
def certify_budgets(
    scores: npt.ArrayLike,
    calib_ids: npt.ArrayLike,
    budgets: npt.ArrayLike,
    *,
    calib_costs: npt.ArrayLike | None = None,
    calib_bands: npt.ArrayLike | None = None,
    alphas: npt.ArrayLike | None = None,
    alpha: float = 0.25,
    delta: float = 0.1,
    procedure: _BudgetProcedure = "one_threshold",
    grid: npt.ArrayLike | None = None,
    min_selection: int = 50,
    drop_unsafe_calibration: bool = False,
    ids: npt.ArrayLike | None = None,
    triple: bool = True,
) -> Record: ...
def validate_budgets(
    scores: npt.ArrayLike,
    costs: npt.ArrayLike,
    budgets: npt.ArrayLike,
    *,
    alphas: npt.ArrayLike | None = None,
    alpha: float = 0.25,
    delta: float = 0.1,
    procedure: _BudgetProcedure = "one_threshold",
    calibration_size: int = 200,
    draws: int = 2000,
    seed: int = 0,
    grid: npt.ArrayLike | None = None,
    confidence: float = 0.95,
    threads: int = 0,
) -> Record: ...
def threshold_grid(scores: npt.ArrayLike, quantiles: npt.ArrayLike | None = None) -> Record: ...
def draw_calibration(pool_size: int, n: int, seed: int) -> _Int64Array: ...
def selection_at(scores: npt.ArrayLike, threshold: float) -> _Int64Array: ...
def trajectory_scores(
    state_values: npt.ArrayLike,
    offsets: npt.ArrayLike,
    aggregation: _Aggregation = "mean",
    percentile: float = 10.0,
) -> _Float64Array: ...
def v_filter(
    scores: npt.ArrayLike,
    calib_ids: npt.ArrayLike,
    calib_unsafe: npt.ArrayLike,
    *,
    ids: npt.ArrayLike | None = None,
) -> Record: ...
def top_return_subselection(
    certificate: Certificate,
    episodic_return: npt.ArrayLike,
    fraction: float = 0.5,
    *,
    allow_uncertified: bool = False,
) -> Record: ...
def return_weighted_resample(
    certificate: Certificate,
    episodic_return: npt.ArrayLike,
    kappa: float,
    seed: int,
    *,
    allow_uncertified: bool = False,
) -> Record: ...
def return_weights(returns: npt.ArrayLike, kappa: float) -> _Float64Array: ...
def mean_cost_certificate(
    scores: npt.ArrayLike,
    calibration_index: npt.ArrayLike,
    calibration_cost: npt.ArrayLike,
    budget: float,
    range: float,
    delta: float = 0.1,
    grid: npt.ArrayLike | None = None,
    *,
    bound: Literal["hoeffding_serfling", "betting"] = "hoeffding_serfling",
    order_seed: int = 0,
) -> Record: ...
def validate_guarantee(
    scores: npt.ArrayLike,
    unsafe: npt.ArrayLike,
    *,
    alpha: float = 0.25,
    delta: float = 0.1,
    calibration_size: int = 200,
    draws: int = 2000,
    seed: int = 0,
    grid: npt.ArrayLike | None = None,
    procedure: _Procedure = "fixed_sequence",
    confidence: float = 0.95,
    certificate_triple: bool = True,
    threads: int = 0,
) -> Record: ...

class SequentialCertifier:
    """Label on demand: the sequential walk over a pool's scores (docs/sequential.md)."""

    def __init__(
        self,
        scores: npt.ArrayLike,
        *,
        alpha: float = 0.25,
        delta: float = 0.1,
        label_cap: int = 200,
        seed: int = 0,
        stop: str = "auto",
        grid: Sequence[float] | None = None,
        cap_test_share: float = 0.2,
        order: Literal["stratified", "uniform"] = "stratified",
        refusal_rate: float = 0.05,
        min_selection: int = 50,
    ) -> None: ...
    def next_id(self) -> int | None: ...
    def planned(self, count: int) -> _Int64Array: ...
    def add_label(self, id: int, unsafe: bool) -> None: ...
    def should_stop(self) -> bool: ...
    @property
    def certificate(self) -> Record: ...
    @property
    def labels_used(self) -> int: ...
    @property
    def permutation(self) -> _Int64Array: ...

# --- DSRL datasets (reference_pipeline/data/) ----------------------------------------------

def load_dsrl(path: _Path) -> dict[str, npt.NDArray[Any]]: ...
def write_dsrl_selection(
    src: _Path | Sequence[_Path], dst: _Path, episodes: npt.ArrayLike
) -> None: ...

# --- the safety value (reference_pipeline/learning/) ---------------------------------------

class SafetyValue:
    """The safety value V-bar: made by train_value, or by load_value for scoring only."""

    def state_values(
        self,
        observations: npt.ArrayLike,
        members: bool = False,
        dtype: Literal["float32", "float64"] = "float32",
    ) -> npt.NDArray[np.float32] | npt.NDArray[np.float64]: ...
    def scores(
        self,
        observations: npt.ArrayLike,
        offsets: npt.ArrayLike,
        aggregation: _Aggregation = "mean",
        percentile: float = 10.0,
    ) -> _Float64Array: ...
    def save(self, path: _Path) -> None: ...
    @property
    def observation_dim(self) -> int: ...
    @property
    def members(self) -> int: ...
    @property
    def hidden(self) -> tuple[int, ...]: ...
    @property
    def trained(self) -> bool: ...
    # The training record: None on a loaded value.
    @property
    def seed(self) -> int | None: ...
    @property
    def train_pairs(self) -> int | None: ...
    @property
    def held_out_pairs(self) -> int | None: ...
    @property
    def train_accuracy(self) -> float | None: ...
    @property
    def train_loss(self) -> float | None: ...
    @property
    def held_out_accuracy(self) -> float | None: ...
    @property
    def held_out_loss(self) -> float | None: ...
    @property
    def epoch_loss(self) -> _Float64Array | None: ...
    @property
    def normalization_mean(self) -> _Float64Array | None: ...
    @property
    def normalization_scale(self) -> _Float64Array | None: ...
    @property
    def pairs(self) -> tuple[_Int64Array, _Int64Array] | None: ...
    @property
    def segment_length(self) -> int | None: ...
    @property
    def pair_sampling(self) -> Record | None: ...

def train_value(
    observations: npt.ArrayLike,
    offsets: npt.ArrayLike | None = None,
    costs: npt.ArrayLike | None = None,
    *,
    pairs: int | tuple[npt.ArrayLike, npt.ArrayLike] = 1000,
    segment: int = 30,
    members: int = 3,
    epochs: int = 300,
    hidden: Sequence[int] = [256, 256],
    batch: int = 512,
    lr: float = 0.0003,
    seed: int = 0,
    threads: int = 1,
    held_out_fraction: float = 0.1,
    normalize_observations: bool = True,
    flip_probability: float = 0.0,
    boltzmann_temperature: float | None = None,
    progress: bool = False,
) -> SafetyValue: ...
def load_value(path: _Path) -> SafetyValue: ...
