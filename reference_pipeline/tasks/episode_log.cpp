#include "episode_log.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>

#include <curation/detail/random.hpp>

#include "check.hpp"

namespace ltt::tasks {

EpisodeLog::EpisodeLog(std::int64_t observation_dim, std::int64_t action_dim)
    : observation_dim_(observation_dim), action_dim_(action_dim) {
  if (observation_dim < 1 || action_dim < 1)
    detail::invalid("EpisodeLog::EpisodeLog",
                    observation_dim < 1 ? "observation_dim" : "action_dim",
                    detail::show(std::min(observation_dim, action_dim)), "must be >= 1");
}

void EpisodeLog::add(std::span<const float> observation, std::span<const float> action,
                     double reward, double cost, std::span<const float> next_observation,
                     bool terminal, bool timeout) {
  const auto check_size = [](std::string_view name, std::span<const float> v, std::int64_t dim,
                             std::string_view dim_name) {
    if (std::ssize(v) != dim)
      detail::invalid("EpisodeLog::add", name,
                      data::cat("must hold ", dim_name, " = ", detail::show(dim),
                                " values; it holds ", detail::show(v.size())));
  };
  check_size("observation", observation, observation_dim_, "observation_dim");
  check_size("next_observation", next_observation, observation_dim_, "observation_dim");
  check_size("action", action, action_dim_, "action_dim");
  observations_.insert(observations_.end(), observation.begin(), observation.end());
  next_observations_.insert(next_observations_.end(), next_observation.begin(),
                            next_observation.end());
  actions_.insert(actions_.end(), action.begin(), action.end());
  rewards_.push_back(static_cast<float>(reward));
  costs_.push_back(static_cast<float>(cost));
  terminals_.push_back(terminal ? 1 : 0);
  timeouts_.push_back(timeout && !terminal ? 1 : 0);
  open_.length += 1;
  open_.episodic_return += rewards_.back();  // the stored float32 values, as a reader sums them
  open_.episodic_cost += costs_.back();
  if (terminal || timeout) {
    open_.terminal = terminal;
    episodes_.push_back(open_);
    open_ = EpisodeRecord{};
  }
}

void EpisodeLog::add_world(std::array<double, 2> position, std::array<double, 2> goal,
                           std::span<const double> hazards_xy, const WorldLayout& layout) {
  const auto same_layout = [&] {
    return layout.x_min == layout_.x_min && layout.y_min == layout_.y_min &&
           layout.x_max == layout_.x_max && layout.y_max == layout_.y_max &&
           layout.hazard_radius == layout_.hazard_radius && layout.goal_radius == layout_.goal_radius;
  };
  if (world_rows_ == 0)
    layout_ = layout;
  else if (!same_layout() || hazards_xy.size() * static_cast<std::size_t>(world_rows_) != hazards_.size())
    throw std::logic_error(
        "ltt::tasks::EpisodeLog::add_world: the layout or the number of hazards changed");
  if (world_rows_ != transitions())
    throw std::logic_error("ltt::tasks::EpisodeLog::add_world: called for some rows only");
  for (const double v : position) positions_.push_back(static_cast<float>(v));
  for (const double v : goal) goals_.push_back(static_cast<float>(v));
  for (const double v : hazards_xy) hazards_.push_back(static_cast<float>(v));
  ++world_rows_;
}

data::DsrlDataset EpisodeLog::dataset() const {
  if (open_.length != 0)
    throw std::logic_error(
        "ltt::tasks::EpisodeLog::dataset: the last episode has no terminal or timeout");
  const std::int64_t n = transitions();
  if (world_rows_ != 0 && world_rows_ != n)
    throw std::logic_error("ltt::tasks::EpisodeLog::dataset: add_world was called for some rows only");
  data::DsrlDataset d;
  d.observations = data::make_array(observations_, {n, observation_dim_});
  d.next_observations = data::make_array(next_observations_, {n, observation_dim_});
  d.actions = data::make_array(actions_, {n, action_dim_});
  d.rewards = data::make_array(rewards_);
  d.costs = data::make_array(costs_);
  d.terminals = data::make_array(terminals_, true);
  d.timeouts = data::make_array(timeouts_, true);
  if (world_rows_ == 0) return d;
  const auto hazard_count = static_cast<std::int64_t>(hazards_.size()) / (2 * n);
  const auto scalar = [](double v) { return data::make_array(std::vector<float>{static_cast<float>(v)}); };
  d.world = data::WorldGeometry{
      data::make_array(positions_, {n, 2}),
      data::make_array(goals_, {n, 2}),
      data::make_array(hazards_, {n, hazard_count, 2}),
      data::make_array(std::vector<float>{static_cast<float>(layout_.x_min), static_cast<float>(layout_.y_min),
                                          static_cast<float>(layout_.x_max), static_cast<float>(layout_.y_max)}),
      scalar(layout_.hazard_radius),
      scalar(layout_.goal_radius)};
  return d;
}

std::filesystem::path write_pool(const std::filesystem::path& directory, std::string_view name,
                                 const data::DsrlDataset& dataset) {
  const std::filesystem::path path = data::default_dsrl_path(directory, name);
  data::write_dsrl(path, dataset);
  return path;
}

double standard_normal(std::mt19937_64& rng) {
  // 1 - u lies in (0, 1], so the logarithm is finite.
  const double u = 1.0 - curation::detail::uniform_unit(rng);
  const double v = curation::detail::uniform_unit(rng);
  return std::sqrt(-2.0 * std::log(u)) * std::cos(2.0 * std::numbers::pi * v);
}

double uniform(std::mt19937_64& rng, double lo, double hi) {
  return lo + (hi - lo) * curation::detail::uniform_unit(rng);
}

}  // namespace ltt::tasks
