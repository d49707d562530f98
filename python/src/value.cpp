// Bindings for the safety value (reference_pipeline/learning/safety_value.hpp, docs/learning.md):
// ltt.train_value learns it on a dataset's rows as `ltt score` does, ltt.load_value reads a
// saved model, and ltt.SafetyValue scores rows and episodes. Every default is read from the
// C++ option structs (SafetyValueOptions{}, curation::PreferencePairOptions{},
// curation::Aggregator{}), and the seed is split by safety_value_seeds, so that Python and the
// command line cannot drift apart. Training and scoring run without the GIL.

#include <learning/model_file.hpp>
#include <learning/safety_value.hpp>

#include <curation/preference_pairs.hpp>
#include <curation/score_aggregation.hpp>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "convert.hpp"
#include "record.hpp"

namespace ltt::python {

namespace {

namespace lrn = ltt::learning;
namespace cur = ltt::curation;

// A trained or loaded safety value. A loaded one has only the ensemble: the training record
// (pairs, accuracies, losses, normalization) is not in the model file.
struct Value {
  lrn::SafetyValue value;
  bool trained = false;
  std::uint64_t seed = 0;
  lrn::SegmentPairs pairs;                       // every pair, before the held-out split
  std::optional<cur::PreferencePairs> sampling;  // when the pairs were synthesized
};

// Observation rows as a C-ordered float32 table (rows, width): float32 as given, any other
// real dtype converted (float64 rounds to nearest, as the program's reader does).
py::array_t<float> observation_table(py::handle obj, std::string_view fn, std::string_view name) {
  const py::array a = as_numpy(obj);
  const char kind = a.dtype().kind();
  if (kind != 'f' && kind != 'i' && kind != 'u')
    throw py::type_error(prefix(fn, name) + " must hold real numbers, got dtype " + dtype_name(a));
  if (a.ndim() != 2)
    throw py::value_error(prefix(fn, name) + " must be a 2-D array (rows, observation_dim), got " +
                          std::to_string(a.ndim()) + " dimensions");
  return py::module_::import("numpy")
      .attr("ascontiguousarray")(a, py::arg("dtype") = "float32")
      .cast<py::array_t<float>>();
}

std::span<const float> rows_of(const py::array_t<float>& t) {
  return {t.data(), static_cast<std::size_t>(t.size())};
}

std::int64_t column_count(const py::array_t<float>& t) { return t.shape(1); }
std::int64_t row_count(const py::array_t<float>& t) { return t.shape(0); }

// Offsets of episodes over `rows` rows; the last may fall short of rows (a dropped tail, as
// load_dsrl gives), never beyond. The order of the offsets is checked by the library.
std::vector<std::int64_t> episode_offsets(py::handle obj, std::int64_t rows, std::string_view fn) {
  std::vector<std::int64_t> offsets = count_vector(obj, fn, "offsets");
  if (offsets.size() < 2)
    throw py::value_error(prefix(fn, "offsets") + " has " + std::to_string(offsets.size()) +
                          " entries; it needs episodes + 1 >= 2");
  if (offsets.back() < 0 || offsets.back() > rows)
    throw py::value_error(prefix(fn, "offsets") + " ends at row " + std::to_string(offsets.back()) +
                          ", beyond the " + std::to_string(rows) + " rows of observations");
  return offsets;
}

void require_width(const Value& v, const py::array_t<float>& t, std::string_view fn) {
  if (column_count(t) != v.value.observation_dim)
    throw py::value_error(
        prefix(fn, "observations") + " has " + std::to_string(column_count(t)) +
        " columns; this value takes observation_dim = " + std::to_string(v.value.observation_dim));
}

// The pairs argument: a count to synthesize, or (preferred, rejected) first rows.
struct PairsArgument {
  std::optional<std::int64_t> count;
  std::vector<std::int64_t> preferred, rejected;
};

PairsArgument pairs_argument(py::handle pairs, std::string_view fn) {
  PairsArgument out;
  if ((py::isinstance<py::tuple>(pairs) || py::isinstance<py::list>(pairs)) &&
      py::len(pairs) == 2) {
    const py::sequence s = py::reinterpret_borrow<py::sequence>(pairs);
    out.preferred = count_vector(s[0], fn, "pairs[0] (preferred)");
    out.rejected = count_vector(s[1], fn, "pairs[1] (rejected)");
    return out;
  }
  const py::array_t<std::int64_t> count = count_array(pairs, fn, "pairs");
  if (count.ndim() != 0)
    throw py::type_error(prefix(fn, "pairs") +
                         " must be a count of pairs to synthesize from the costs, or a pair of "
                         "arrays (preferred, rejected) of segment first rows");
  out.count = *count.data();
  return out;
}

py::object optional_float(bool present, double x) { return present ? py::cast(x) : py::none(); }

py::object float_matrix(const std::vector<std::vector<double>>& rows) {
  const auto R = static_cast<py::ssize_t>(rows.size());
  const py::ssize_t C = R > 0 ? static_cast<py::ssize_t>(rows.front().size()) : 0;
  py::array_t<double> out({R, C});
  auto w = out.mutable_unchecked<2>();
  for (py::ssize_t i = 0; i < R; ++i)
    for (py::ssize_t j = 0; j < C; ++j)
      w(i, j) = rows[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)];
  return out;
}

std::string value_repr(const Value& v) {
  const lrn::MlpShape& shape = v.value.ensemble.members.front().shape;
  std::string widths;
  for (std::size_t i = 0; i < shape.widths.size(); ++i) {
    if (i > 0) widths.push_back('-');
    widths.append(std::to_string(shape.widths[i]));
  }
  std::string s = "ltt.SafetyValue(observation_dim=" + std::to_string(v.value.observation_dim) +
                  ", members=" + std::to_string(v.value.ensemble.members.size()) +
                  ", widths=" + widths;
  if (v.trained)
    s += ", train_pairs=" + std::to_string(v.value.train_pairs) +
         ", held_out_pairs=" + std::to_string(v.value.held_out_pairs) +
         ", held_out_accuracy=" + std::to_string(v.value.held_out.accuracy);
  else
    s += ", loaded";
  return s + ")";
}

// What the synthesizer reads: the episodes' offsets and per-row costs, one cost per row of
// observations; the rows after offsets[-1] (a dropped tail) are in no episode and yield no pair.
struct EpisodeCosts {
  std::vector<std::int64_t> offsets;
  std::vector<double> step_costs;
};

EpisodeCosts episode_costs(py::handle offsets, py::handle costs, std::int64_t rows,
                           std::string_view fn) {
  if (offsets.is_none() || costs.is_none())
    throw py::value_error(prefix(fn, offsets.is_none() ? "offsets" : "costs") +
                          " is needed to synthesize pairs (pairs is a count)");
  EpisodeCosts out{episode_offsets(offsets, rows, fn), real_vector(costs, fn, "costs")};
  if (static_cast<std::int64_t>(out.step_costs.size()) != rows)
    throw py::value_error(prefix(fn, "costs") + " has " + std::to_string(out.step_costs.size()) +
                          " entries; it must have one per row of observations (" +
                          std::to_string(rows) + ")");
  out.step_costs.resize(static_cast<std::size_t>(out.offsets.back()));
  return out;
}

// Pairs given as (preferred, rejected) are the supervision: nothing to synthesize them from,
// and no labeler to model.
void check_given_pairs(py::handle offsets, py::handle costs, double flip_probability,
                       const std::optional<double>& boltzmann_temperature, std::string_view fn) {
  if (!offsets.is_none() || !costs.is_none())
    throw py::value_error(prefix(fn, offsets.is_none() ? "costs" : "offsets") +
                          " must be None when pairs are given as (preferred, rejected): "
                          "the pairs are the supervision");
  if (flip_probability != cur::PreferencePairOptions{}.flip_probability || boltzmann_temperature)
    throw py::value_error(
        prefix(fn, boltzmann_temperature ? "boltzmann_temperature" : "flip_probability") +
        " models the labeler of synthesized pairs; it cannot apply to pairs "
        "given as (preferred, rejected)");
}

// `ltt score`'s path: pairs synthesized with PreferencePairOptions seeded
// safety_value_seeds(seed).pairs (or given), then train_safety_value with SafetyValueOptions
// seeded safety_value_seeds(seed).value.
Value train(py::handle observations, py::handle offsets, py::handle costs, py::handle pairs,
            std::int64_t segment, std::int64_t members, std::int64_t epochs,
            const std::vector<std::int64_t>& hidden, std::int64_t batch, double lr,
            std::uint64_t seed, std::int64_t threads, double held_out_fraction,
            bool normalize_observations, double flip_probability,
            std::optional<double> boltzmann_temperature, bool progress) {
  constexpr std::string_view fn = "train_value";
  const py::array_t<float> obs = observation_table(observations, fn, "observations");
  const PairsArgument given = pairs_argument(pairs, fn);
  const lrn::SafetyValueSeeds seeds = lrn::safety_value_seeds(seed);

  Value out;
  out.trained = true;
  out.seed = seed;
  EpisodeCosts episodes;
  cur::PreferencePairOptions po{};
  if (given.count) {
    episodes = episode_costs(offsets, costs, row_count(obs), fn);
    po.pairs = *given.count;
    po.segment_length = segment;
    po.flip_probability = flip_probability;
    po.boltzmann_temperature = boltzmann_temperature;
    po.seed = seeds.pairs;
  } else {
    check_given_pairs(offsets, costs, flip_probability, boltzmann_temperature, fn);
    out.pairs = {segment, given.preferred, given.rejected};
  }

  lrn::SafetyValueOptions so{};
  so.value.hidden = hidden;
  so.value.members = members;
  so.value.epochs = epochs;
  so.value.batch_pairs = batch;
  so.value.adam.learning_rate = lr;
  so.value.seed = seeds.value;
  so.value.threads = threads;
  so.value.progress = progress ? lrn::Progress::always : lrn::Progress::quiet;
  so.held_out_fraction = held_out_fraction;
  so.normalize_observations = normalize_observations;
  {
    py::gil_scoped_release release;
    if (given.count) {
      cur::PreferencePairs drawn;
      out.pairs = lrn::synthesized_pairs(episodes.step_costs, episodes.offsets, po, &drawn);
      out.sampling = std::move(drawn);
    }
    out.value = lrn::train_safety_value(rows_of(obs), column_count(obs), out.pairs, so);
  }
  return out;
}

Value load_value_file(const std::filesystem::path& path) {
  constexpr std::string_view fn = "load_value";
  Value out;
  {
    py::gil_scoped_release release;
    out.value.ensemble.members = lrn::load_models(path);
  }
  const auto& members = out.value.ensemble.members;
  if (members.empty())
    throw py::value_error(std::string(fn) + ": " + path.string() + " holds no network");
  out.value.observation_dim = members.front().shape.input();
  for (std::size_t k = 0; k < members.size(); ++k) {
    const lrn::MlpShape& s = members[k].shape;
    if (s.output_width() != 1 || s.output != lrn::OutputActivation::identity)
      throw py::value_error(std::string(fn) + ": " + path.string() + ": network " +
                            std::to_string(k) +
                            " is not a value network (one identity output); a policy file?");
    if (s.input() != out.value.observation_dim)
      throw py::value_error(std::string(fn) + ": " + path.string() + ": network " +
                            std::to_string(k) + " takes " + std::to_string(s.input()) +
                            " inputs, network 0 takes " +
                            std::to_string(out.value.observation_dim));
  }
  return out;
}

using ValueClass = py::class_<Value>;

// Scoring: what a trained and a loaded value both do.
void bind_value_scoring(ValueClass& c) {
  c.def(
       "state_values",
       [](const Value& v, py::handle observations, bool members,
          const std::string& dtype) -> py::object {
         constexpr std::string_view fn = "SafetyValue.state_values";
         if (dtype != "float32" && dtype != "float64")
           throw std::invalid_argument(std::string(fn) + ": dtype = '" + dtype +
                                       "' must be 'float32' or 'float64'");
         const py::array_t<float> obs = observation_table(observations, fn, "observations");
         require_width(v, obs, fn);
         lrn::StateValues sv;
         {
           py::gil_scoped_release release;
           sv = lrn::state_values(v.value.ensemble, rows_of(obs), column_count(obs));
         }
         // float64: the values before the cast to float32, the ones scores() and `ltt score`
         // aggregate, so a caller scoring rows in pieces (ltt.dask) gets the same bytes.
         if (dtype == "float64")
           return members ? py::array_t<double>({static_cast<py::ssize_t>(sv.members),
                                                 static_cast<py::ssize_t>(sv.rows)},
                                                sv.per_member.data())
                          : py::array_t<double>(static_cast<py::ssize_t>(sv.rows), sv.mean.data());
         if (!members) {
           py::array_t<float> out(static_cast<py::ssize_t>(sv.rows));
           float* o = out.mutable_data();
           for (std::size_t i = 0; i < sv.mean.size(); ++i) o[i] = static_cast<float>(sv.mean[i]);
           return out;
         }
         py::array_t<float> out(
             {static_cast<py::ssize_t>(sv.members), static_cast<py::ssize_t>(sv.rows)});
         float* o = out.mutable_data();
         for (std::size_t i = 0; i < sv.per_member.size(); ++i)
           o[i] = static_cast<float>(sv.per_member[i]);
         return out;
       },
       py::arg("observations"), py::arg("members") = false, py::arg("dtype") = "float32",
       "state_values(observations, members=False, dtype='float32') -> array\n\n"
       "V-bar (the ensemble mean) at every row of observations (rows, observation_dim); "
       "with members=True every member's value, shape (members, rows). float32, as "
       "`ltt score` writes state_values.npy; dtype='float64' gives the values before that "
       "cast, the ones scores() and `ltt score` average. Rows scored in pieces give the bytes "
       "of one call when every piece but the last is a multiple of 65536 rows (the forward "
       "calls are the same).")
      .def(
          "scores",
          [](const Value& v, py::handle observations, py::handle offsets,
             const std::string& aggregation, double percentile) {
            constexpr std::string_view fn = "SafetyValue.scores";
            const py::array_t<float> obs = observation_table(observations, fn, "observations");
            require_width(v, obs, fn);
            const std::vector<std::int64_t> offs = episode_offsets(offsets, row_count(obs), fn);
            const cur::Aggregator a = aggregator_from_name(aggregation, percentile, fn);
            std::vector<double> g;
            {
              py::gil_scoped_release release;
              // Every row's value, then the episodes' (rows after offsets[-1] are in none), as
              // `ltt score` computes state_values.npy and scores.npy.
              lrn::StateValues sv =
                  lrn::state_values(v.value.ensemble, rows_of(obs), column_count(obs));
              sv.mean.resize(static_cast<std::size_t>(offs.back()));
              g = cur::trajectory_scores(sv.mean, offs, a);
            }
            return to_numpy(g);
          },
          py::arg("observations"), py::arg("offsets"), py::arg("aggregation") = "mean",
          py::arg("percentile") = cur::Aggregator{}.percentile,
          "scores(observations, offsets, aggregation='mean', percentile=...) -> float64 array\n\n"
          "One score per episode: episode i owns rows [offsets[i], offsets[i+1]) and scores the "
          "mean of V-bar over them (the paper's g), or its 'minimum', or a 'percentile' "
          "(numpy's default interpolation). offsets[-1] may fall short of the rows (a dropped "
          "tail, as load_dsrl gives). Higher is safer.");
}

// The model file and the ensemble's shape.
void bind_value_model(ValueClass& c) {
  c.def(
       "save",
       [](const Value& v, const std::filesystem::path& path) {
         py::gil_scoped_release release;
         lrn::save_models(path, v.value.ensemble.members);
       },
       py::arg("path"),
       "Writes the members as a model file (docs/learning.md, \"The model file\"), atomically; "
       "ltt.load_value and `ltt score --model` read it.")
      .def_property_readonly("observation_dim",
                             [](const Value& v) { return v.value.observation_dim; })
      .def_property_readonly(
          "members",
          [](const Value& v) { return static_cast<std::int64_t>(v.value.ensemble.members.size()); })
      .def_property_readonly(
          "hidden",
          [](const Value& v) {
            const auto& w = v.value.ensemble.members.front().shape.widths;
            py::tuple t(w.size() - 2);
            for (std::size_t i = 1; i + 1 < w.size(); ++i) t[i - 1] = w[i];
            return t;
          },
          "The hidden widths of the members.");
}

// The training record: None on a loaded value.
void bind_value_training(ValueClass& c) {
  c.def_property_readonly(
       "trained", [](const Value& v) { return v.trained; },
       "True when made by train_value, False when loaded.")
      .def_property_readonly(
          "seed", [](const Value& v) { return v.trained ? py::cast(v.seed) : py::none(); })
      .def_property_readonly(
          "train_pairs",
          [](const Value& v) { return v.trained ? py::cast(v.value.train_pairs) : py::none(); })
      .def_property_readonly(
          "held_out_pairs",
          [](const Value& v) { return v.trained ? py::cast(v.value.held_out_pairs) : py::none(); })
      .def_property_readonly(
          "train_accuracy",
          [](const Value& v) { return optional_float(v.trained, v.value.train.accuracy); },
          "Fraction of the training pairs whose preferred segment has the larger summed V-bar.")
      .def_property_readonly(
          "train_loss",
          [](const Value& v) { return optional_float(v.trained, v.value.train.loss); })
      .def_property_readonly(
          "held_out_accuracy",
          [](const Value& v) {
            return optional_float(v.trained && v.value.held_out_pairs > 0,
                                  v.value.held_out.accuracy);
          },
          "The same on the held-out pairs (never trained on); None without any.")
      .def_property_readonly("held_out_loss",
                             [](const Value& v) {
                               return optional_float(v.trained && v.value.held_out_pairs > 0,
                                                     v.value.held_out.loss);
                             })
      .def_property_readonly(
          "epoch_loss",
          [](const Value& v) { return v.trained ? float_matrix(v.value.epoch_loss) : py::none(); },
          "float64 (members, epochs): each member's mean Bradley-Terry loss per epoch.")
      .def_property_readonly(
          "normalization_mean",
          [](const Value& v) -> py::object {
            if (v.value.normalization.mean.empty()) return py::none();
            return to_numpy(v.value.normalization.mean);
          },
          "The column means folded into the members (None when not normalized, or loaded).")
      .def_property_readonly("normalization_scale",
                             [](const Value& v) -> py::object {
                               if (v.value.normalization.scale.empty()) return py::none();
                               return to_numpy(v.value.normalization.scale);
                             })
      .def_property_readonly(
          "pairs",
          [](const Value& v) -> py::object {
            if (!v.trained) return py::none();
            return py::make_tuple(to_numpy(v.pairs.preferred), to_numpy(v.pairs.rejected));
          },
          "(preferred, rejected): int64 first rows of every pair (training and held out), the "
          "safer segment first.")
      .def_property_readonly(
          "segment_length",
          [](const Value& v) { return v.trained ? py::cast(v.pairs.segment_length) : py::none(); })
      .def_property_readonly(
          "pair_sampling",
          [](const Value& v) { return v.sampling ? record(*v.sampling) : py::none(); },
          "The synthesizer's account (pairs, attempts, ties_skipped, label_errors, eligible, "
          "quartile_size); None for given pairs or a loaded value.")
      .def("__repr__", &value_repr);
}

}  // namespace

void bind_value(py::module_& m) {
  ValueClass c(m, "SafetyValue",
               "The safety value V-bar: an ensemble of value networks taking raw observation "
               "rows (observation normalization folded in). Made by ltt.train_value (with its "
               "training record) or ltt.load_value (scoring only: the training attributes are "
               "None).");
  bind_value_scoring(c);
  bind_value_model(c);
  bind_value_training(c);

  const lrn::SafetyValueOptions so{};
  const cur::PreferencePairOptions po{};
  m.def("train_value", &train, py::arg("observations"), py::arg("offsets") = py::none(),
        py::arg("costs") = py::none(), py::kw_only(), py::arg("pairs") = po.pairs,
        py::arg("segment") = po.segment_length, py::arg("members") = so.value.members,
        py::arg("epochs") = so.value.epochs, py::arg("hidden") = so.value.hidden,
        py::arg("batch") = so.value.batch_pairs, py::arg("lr") = so.value.adam.learning_rate,
        py::arg("seed") = std::uint64_t{0}, py::arg("threads") = so.value.threads,
        py::arg("held_out_fraction") = so.held_out_fraction,
        py::arg("normalize_observations") = so.normalize_observations,
        py::arg("flip_probability") = po.flip_probability,
        py::arg("boltzmann_temperature") = po.boltzmann_temperature, py::arg("progress") = false,
        "train_value(observations, offsets=None, costs=None, *, pairs=..., segment=..., ...) "
        "-> SafetyValue\n\n"
        "Learns the safety value on a dataset's rows, as `ltt score` does with the same seed "
        "and options (docs/python.md): preference pairs of segments of `segment` rows are "
        "synthesized from the per-row costs (episode i owns rows [offsets[i], offsets[i+1]); "
        "offsets[-1] may fall short of the rows, a dropped tail), a held_out_fraction of them "
        "is kept aside, observations are z-scored over every row (normalize_observations), and "
        "an ensemble of `members` MLPs with `hidden` widths is trained by the Bradley-Terry "
        "loss for `epochs` epochs of minibatches of `batch` pairs (Adam, learning rate lr).\n\n"
        "observations: (rows, observation_dim) real array (float32, others converted). "
        "pairs: a count to synthesize, or (preferred, rejected), arrays of segment first rows "
        "(human comparisons; then offsets and costs stay None). seed: one seed for the pairs, "
        "the held-out split and the members (safety_value_seeds); the same seed gives the same "
        "bytes whatever `threads`. flip_probability, boltzmann_temperature: labeler noise of "
        "synthesized pairs. progress: one line per epoch on stderr. The defaults shown are the "
        "C++ library's (SafetyValueOptions, PreferencePairOptions).");

  m.def("load_value", &load_value_file, py::arg("path"),
        "load_value(path) -> SafetyValue\n\n"
        "A value saved by SafetyValue.save or `ltt score` (model.ltt), for scoring. Raises "
        "ValueError naming the file when it is missing, not a model file, corrupt, or holds "
        "something other than value networks of one width.");
}

}  // namespace ltt::python
