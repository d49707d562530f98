#pragma once
// Umbrella header for the curation layer of ltt (include/curation/): from scores and
// calibration labels to a certified (or refused) selection; statistics in <ltt/ltt.hpp>.
#include <ltt/ltt.hpp>

#include <curation/calibrated_selection.hpp>
#include <curation/calibration.hpp>
#include <curation/cost_bands.hpp>
#include <curation/fields.hpp>
#include <curation/label_order.hpp>
#include <curation/mean_cost_certificate.hpp>
#include <curation/preference_pairs.hpp>
#include <curation/rank_correlation.hpp>
#include <curation/reward_curation.hpp>
#include <curation/score_aggregation.hpp>
#include <curation/selection.hpp>
#include <curation/several_budgets_selection.hpp>
#include <curation/several_budgets_validation.hpp>
#include <curation/sequential_certificate.hpp>
#include <curation/sequential_options.hpp>
#include <curation/sequential_selection.hpp>
#include <curation/sequential_walk.hpp>
#include <curation/streamed_scores.hpp>
#include <curation/threshold_grid.hpp>
#include <curation/trajectory_pool.hpp>
#include <curation/true_composition.hpp>
#include <curation/v_filter.hpp>
#include <curation/validation.hpp>
