#pragma once
// Transitions of a built-in task collected episode by episode into the DSRL layout
// (docs/dsrl.md): float32 observations, next observations, actions, rewards and costs, bool
// terminals and timeouts. Each episode's last row carries its end flag, so the DSRL episode
// rule (an episode ends where terminals | timeouts) gives back exactly the logged episodes.

#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <random>
#include <span>
#include <string_view>
#include <vector>

#include <data/dsrl.hpp>

namespace ltt::tasks {

// What an environment's step returns.
struct Step {
  double reward = 0, cost = 0;
  bool terminal = false, timeout = false;
};

// What the generator knows about each logged episode; the reader must give back the same.
struct EpisodeRecord {
  std::int64_t length = 0;
  double episodic_return = 0;  // sum of the stored (float32) rewards
  double episodic_cost = 0;    // sum of the stored (float32) costs
  bool terminal = false;       // ended by terminals (goal reached), else by the time limit
  // The behavior checkpoint that ran it: an index into its pool's BehaviorCheckpoints, or -1
  // when the generator has none.
  std::int64_t checkpoint = -1;
};

// The behavior policies a generated pool's episodes came from (the checkpoints of a training
// run), each able to run fresh episodes: what a selection's policy-level data cost needs, the
// cost its episodes' checkpoints would have on average rather than the cost they happened to
// have (docs/pipeline.md, "Where a clone's cost comes from").
struct BehaviorCheckpoints {
  std::int64_t count = 0;  // checkpoints 0 .. count - 1; 0: the pool has none
  // The mean episodic cost of checkpoint k over `episodes` fresh episodes whose seeds are drawn
  // from std::mt19937_64(seed), none of them an episode of the pool. Thread-safe.
  std::function<double(std::int64_t k, std::int64_t episodes, std::uint64_t seed)> mean_cost;
};

// A generated pool: the dataset, the generator's own account of its episodes, and the
// checkpoints they came from (empty for a generator without a training run).
struct TaskPool {
  data::DsrlDataset dataset;
  std::vector<EpisodeRecord> episodes;
  BehaviorCheckpoints behavior;
};

// The fixed part of a task's world geometry (data/world_geometry.hpp): the field it places
// things in and the radii of its hazards and goals.
struct WorldLayout {
  double x_min = 0, y_min = 0, x_max = 0, y_max = 0;
  double hazard_radius = 0, goal_radius = 0;
};

class EpisodeLog {
 public:
  EpisodeLog(std::int64_t observation_dim, std::int64_t action_dim);

  // One transition. The episode ends here when terminal or timeout is set.
  void add(std::span<const float> observation, std::span<const float> action, double reward,
           double cost, std::span<const float> next_observation, bool terminal, bool timeout);

  // Where the robot, its goal and the hazards (x, y each) are at the observation of the row
  // add() logs next, for the pool's world geometry. A task that calls it calls it before every
  // add, with the same layout and number of hazards; a pool without it has no geometry.
  void add_world(std::array<double, 2> position, std::array<double, 2> goal,
                 std::span<const double> hazards_xy, const WorldLayout& layout);

  const std::vector<EpisodeRecord>& episodes() const { return episodes_; }
  std::int64_t transitions() const { return static_cast<std::int64_t>(rewards_.size()); }

  // The seven DSRL keys, and the world geometry when add_world was called for every row.
  // Throws std::logic_error if the last episode has no end flag, or if add_world was called
  // for some rows only.
  data::DsrlDataset dataset() const;
  TaskPool pool() const { return {dataset(), episodes_, {}}; }

 private:
  std::int64_t observation_dim_, action_dim_;
  std::vector<float> observations_, next_observations_, actions_, rewards_, costs_;
  std::vector<std::uint8_t> terminals_, timeouts_;
  std::vector<EpisodeRecord> episodes_;
  EpisodeRecord open_;
  std::vector<float> positions_, goals_, hazards_;
  std::int64_t world_rows_ = 0;
  WorldLayout layout_;
};

// The behavior generators' loop: `episodes` episodes, each a fresh Env(rng()) driven by the
// controller draw_controller(rng) returns (its act(env, rng) gives the action) until the episode
// is done, every transition logged. The draws come from `rng` in exactly this order, so a seed
// gives the same pool everywhere.
template <class Env, class DrawController>
TaskPool log_episodes(std::int64_t episodes, std::mt19937_64& rng, DrawController draw_controller) {
  EpisodeLog log(Env::observation_dim, Env::action_dim);
  for (std::int64_t e = 0; e < episodes; ++e) {
    Env env(rng());
    const auto controller = draw_controller(rng);
    while (!env.done()) {
      const auto o = env.observation();
      if constexpr (requires { Env::world_layout; }) env.log_world(log, Env::world_layout);
      const auto a = controller.act(env, rng);
      const Step s = env.step(a);
      const auto o1 = env.observation();
      std::array<float, Env::action_dim> af{};
      for (std::size_t j = 0; j < af.size(); ++j) af[j] = static_cast<float>(a[j]);
      log.add(o, af, s.reward, s.cost, o1, s.terminal, s.timeout);
    }
  }
  return log.pool();
}

// A pool written where the built-in tasks keep it: data::default_dsrl_path(directory, name)
// (name.hdf5 with HDF5, a .npy directory without), through data::write_dsrl. Returns the path.
std::filesystem::path write_pool(const std::filesystem::path& directory, std::string_view name,
                                 const data::DsrlDataset& dataset);

// Standard normal draw (Box-Muller on the portable uniform of curation/detail/random.hpp), so
// a seed gives the same pool on every platform.
double standard_normal(std::mt19937_64& rng);
double uniform(std::mt19937_64& rng, double lo, double hi);

}  // namespace ltt::tasks
