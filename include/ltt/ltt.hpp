#pragma once
// Umbrella header for the statistics layer of ltt (include/ltt/).
#include <ltt/betting_mean_bound.hpp>
#include <ltt/bounds.hpp>
#include <ltt/certificate_triple.hpp>
#include <ltt/certification_rate.hpp>
#include <ltt/composition_pvalues.hpp>
#include <ltt/fields.hpp>
#include <ltt/fixed_sequence.hpp>
#include <ltt/hypergeometric.hpp>
#include <ltt/joint_certification_rate.hpp>
#include <ltt/pvalue.hpp>
#include <ltt/sequential_pvalue.hpp>
#include <ltt/several_budgets.hpp>
#include <ltt/stratified_sequential_pvalue.hpp>
