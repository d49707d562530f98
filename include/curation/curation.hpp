#pragma once
// Umbrella header for the curation layer of ltt (include/curation/). The selection logic
// arrives with the curation issue; the statistics it stands on are in <ltt/ltt.hpp>.
#include <ltt/ltt.hpp>
