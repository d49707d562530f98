// run.csv (run_log.hpp).

#include "behavior/run_log.hpp"

#include <data/text.hpp>

namespace ltt::behavior {

std::string run_csv_header() {
  return "epoch,environment_steps,cost_limit,multiplier,mean_return,mean_cost,mean_length,"
         "episodes,approx_kl,passes,mean_std,actor_loss,reward_critic_loss,cost_critic_loss,"
         "seconds\n";
}

std::string run_csv_row(const EpochRecord& r) {
  using data::shortest;
  const auto count = [](std::int64_t x) { return std::to_string(x); };
  return data::cat(count(r.epoch), ",", count(r.environment_steps), ",", shortest(r.cost_limit),
                   ",", shortest(r.multiplier), ",", shortest(r.mean_return), ",",
                   shortest(r.mean_cost), ",", shortest(r.mean_length), ",", count(r.episodes), ",",
                   shortest(r.approx_kl), ",", count(r.passes), ",", shortest(r.mean_std), ",",
                   shortest(r.actor_loss), ",", shortest(r.reward_critic_loss), ",",
                   shortest(r.cost_critic_loss), ",", shortest(r.seconds), "\n");
}

}  // namespace ltt::behavior
