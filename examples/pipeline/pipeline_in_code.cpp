// The reference pipeline from C++ (docs/pipeline.md, "Library"): pick a task and a preset,
// change what you like in the options, run every seed, and read the results as structs.
//
//   build/bin/pipeline_in_code [task] [preset]      defaults: car-run tiny (a few seconds)
//
// Prints each seed's certificate and each method's selection and clone, then the table.

#include <pipeline/pipeline.hpp>
#include <pipeline/report.hpp>

#include <filesystem>
#include <iostream>
#include <string>

int main(int argc, char** argv) {
  namespace pl = ltt::pipeline;
  const std::string task = argc > 1 ? argv[1] : "car-run";
  const std::string preset = argc > 2 ? argv[2] : "tiny";

  pl::PipelineOptions options = pl::preset_options(preset, task);
  options.seeds = {1, 2};
  options.scratch = std::filesystem::temp_directory_path() / "ltt-pipeline-in-code";
  const pl::PipelineResult result =
      pl::run_pipeline(options, [](std::string_view line) { std::cerr << line << '\n'; });
  std::filesystem::remove_all(options.scratch);

  for (const pl::SeedResult& seed : result.seeds) {
    const ltt::curation::Certificate& c = seed.calibrated.certificate;
    std::cout << "seed " << seed.seed << ": "
              << (c.certified ? "certified at quantile "
                              : "refused; uncertified fallback at quantile ")
              << pl::fixed(c.quantile, 2) << ", " << c.selection_size << " trajectories, truly "
              << pl::fixed(seed.realized_unsafe_fraction, 3) << " unsafe (alpha "
              << pl::fixed(c.alpha, 2) << ")\n";
    for (const pl::MethodResult& m : seed.methods)
      if (m.selection_size > 0)
        std::cout << "  " << m.name << ": " << m.selection_size << " trajectories ("
                  << pl::fixed(m.selection_unsafe_fraction, 3) << " unsafe) -> cost "
                  << pl::fixed(m.evaluation.mean_cost, 2)
                  << ", Pr[cost > budget] <= " << pl::fixed(m.evaluation.over_budget_upper, 3)
                  << "\n";
  }
  std::cout << '\n' << pl::summary_table(result);
}
