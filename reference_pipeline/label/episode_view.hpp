#pragma once
// What the labeler sees of a DSRL episode or segment (docs/label.md, "What the labeler
// sees"): the observation columns of --show and the reward, row by row, as the page plots
// them over time; --plane X,Y adds a top-down drawing of those two columns as a path coloured
// by time. A pool from a built-in task carries its world geometry (data/world_geometry.hpp),
// drawn top-down as the world: field, hazards, goals, start and path. Never the cost unless
// --show-cost asks for it (an audit): the labeler must not read the answer off the screen.
// The hazards are drawn: they are the world the labeler judges, not the label.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include <data/dsrl.hpp>

namespace ltt::label {

struct ViewOptions {
  std::vector<std::int64_t> columns;  // observation columns plotted
  std::optional<std::pair<std::int64_t, std::int64_t>> plane;
  bool show_cost = false;
};

class EpisodeView {
 public:
  // Reads the observations (as float32), the rewards and, for --show-cost, the costs, and keeps
  // only the columns shown: a large file's other keys never enter memory.
  EpisodeView(const std::filesystem::path& file, const data::DsrlPool& dataset,
              ViewOptions options)
      : options_(std::move(options)) {
    std::vector<std::int64_t> kept = options_.columns;
    if (options_.plane) {
      kept.push_back(options_.plane->first);
      kept.push_back(options_.plane->second);
    }
    {
      const data::Array observations = data::read_dsrl_float32(file, "observations");
      const std::span<const float> all = observations.values<float>();
      const auto width = static_cast<std::size_t>(dataset.observation_dim);
      const auto rows = static_cast<std::size_t>(dataset.transitions);
      for (const std::int64_t column : kept) {
        std::vector<float> values(rows);
        for (std::size_t r = 0; r < rows; ++r)
          values[r] = all[r * width + static_cast<std::size_t>(column)];
        columns_.push_back(std::move(values));
      }
    }
    world_ = data::read_world_geometry(file, dataset);
    rewards_ = data::read_dsrl_rewards(file);
    if (options_.show_cost) costs_ = data::read_dsrl_costs(file);
  }

  // Rows [first, first + count): {"steps", "series": [{"name", "values"}], "plane"?,
  // "world"?}; "world" holds the arena, the radii, the hazards of the rows' episode, and the
  // robot's and the goal's x, y at each row.
  nlohmann::json rows(std::int64_t first, std::int64_t count) const {
    const auto slice = [&](const auto& values) {
      nlohmann::json out = nlohmann::json::array();
      for (std::int64_t r = first; r < first + count; ++r)
        out.push_back(static_cast<double>(values[static_cast<std::size_t>(r)]));
      return out;
    };
    nlohmann::json series = nlohmann::json::array();
    for (std::size_t i = 0; i < options_.columns.size(); ++i)
      series.push_back({{"name", "observation " + std::to_string(options_.columns[i])},
                        {"values", slice(columns_[i])}});
    series.push_back({{"name", "reward"}, {"values", slice(rewards_)}});
    if (options_.show_cost)
      series.push_back({{"name", "cost (--show-cost)"}, {"values", slice(costs_)}});
    nlohmann::json view{{"steps", count}, {"first_row", first}, {"series", series}};
    if (options_.plane) {
      const std::size_t x = options_.columns.size();
      view["plane"] = {{"x", slice(columns_[x])},
                       {"y", slice(columns_[x + 1])},
                       {"x_name", "observation " + std::to_string(options_.plane->first)},
                       {"y_name", "observation " + std::to_string(options_.plane->second)}};
    }
    if (world_) view["world"] = world_rows(first, count);
    return view;
  }

 private:
  nlohmann::json world_rows(std::int64_t first, std::int64_t count) const {
    const auto points = [&](const data::Array& xy) {
      const std::span<const float> v = xy.values<float>();
      nlohmann::json x = nlohmann::json::array(), y = nlohmann::json::array();
      for (std::int64_t r = first; r < first + count; ++r) {
        x.push_back(static_cast<double>(v[static_cast<std::size_t>(2 * r)]));
        y.push_back(static_cast<double>(v[static_cast<std::size_t>(2 * r + 1)]));
      }
      return nlohmann::json{{"x", x}, {"y", y}};
    };
    const std::span<const float> hazards = world_->hazards.values<float>();
    const auto h = static_cast<std::size_t>(world_->hazards.shape[1]);
    nlohmann::json centres = nlohmann::json::array();
    for (std::size_t i = 0; i < h; ++i) {
      const std::size_t at = (static_cast<std::size_t>(first) * h + i) * 2;
      centres.push_back({static_cast<double>(hazards[at]), static_cast<double>(hazards[at + 1])});
    }
    const std::span<const float> arena = world_->arena.values<float>();
    return {{"arena", std::vector<double>(arena.begin(), arena.end())},
            {"hazard_radius", static_cast<double>(world_->hazard_radius.values<float>()[0])},
            {"goal_radius", static_cast<double>(world_->goal_radius.values<float>()[0])},
            {"hazards", centres},
            {"path", points(world_->position)},
            {"goal", points(world_->goal)}};
  }

  ViewOptions options_;
  std::vector<std::vector<float>> columns_;
  std::vector<double> rewards_, costs_;
  std::optional<data::WorldGeometry> world_;
};

}  // namespace ltt::label
