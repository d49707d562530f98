#pragma once
// Value learning and behavior cloning for the reference pipeline (docs/learning.md).

#include "learning/adam.hpp"
#include "learning/backend.hpp"
#include "learning/behavior_cloning.hpp"
#include "learning/losses.hpp"
#include "learning/mlp.hpp"
#include "learning/model_file.hpp"
#include "learning/progress.hpp"
#include "learning/value_training.hpp"
