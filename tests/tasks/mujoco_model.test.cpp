// Tests for reference_pipeline/tasks/mujoco_model.hpp and the MJCF files of tasks/models/: each
// embedded model compiles, with the sizes Gymnasium documents for HalfCheetah-v4, Hopper-v4 and
// Swimmer-v4 and the numbers of Gymnasium 0.28.1's XML files (typed here from those files:
// joint ranges, damping, stiffness, armature, gears, timestep, integrator, the swimmer's
// medium), and body masses equal to the capsule volumes of the source's geom sizes times the
// density 1000 (the cheetah's scaled to the total 14 its settotalmass sets). A model that does
// not compile is a std::runtime_error naming it; the compiled model is shared.

#include <tasks/mujoco_model.hpp>

#include <doctest/doctest.h>

#include "../support/throws.hpp"

#include <cmath>
#include <cstdint>
#include <numbers>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace tasks = ltt::tasks;

// A capsule of radius r whose cylinder is `length` long (fromto's distance, or twice the
// half-length of size="r h"): a cylinder and a sphere.
double capsule_volume(double r, double length) {
  return std::numbers::pi * r * r * length + 4.0 / 3.0 * std::numbers::pi * r * r * r;
}

struct JointFacts {
  const char* name;
  bool limited;
  double low, high, damping, stiffness, armature;
};

void check_joints(const mjModel& m, const std::vector<JointFacts>& joints) {
  REQUIRE(m.njnt == static_cast<int>(joints.size()));
  for (int j = 0; j < m.njnt; ++j) {
    const JointFacts& f = joints[static_cast<std::size_t>(j)];
    CAPTURE(f.name);
    CHECK(std::string(m.names + m.name_jntadr[j]) == f.name);
    CHECK(static_cast<bool>(m.jnt_limited[j]) == f.limited);
    if (f.limited) {
      CHECK(m.jnt_range[2 * j] == doctest::Approx(f.low).epsilon(1e-15));
      CHECK(m.jnt_range[2 * j + 1] == doctest::Approx(f.high).epsilon(1e-15));
    }
    CHECK(m.dof_damping[m.jnt_dofadr[j]] == f.damping);
    CHECK(m.jnt_stiffness[j] == f.stiffness);
    CHECK(m.dof_armature[m.jnt_dofadr[j]] == f.armature);
  }
}

void check_gears(const mjModel& m, const std::vector<double>& gears) {
  REQUIRE(m.nu == static_cast<int>(gears.size()));
  for (int u = 0; u < m.nu; ++u) {
    CAPTURE(u);
    CHECK(m.actuator_gear[6 * u] == gears[static_cast<std::size_t>(u)]);
    CHECK(m.actuator_ctrllimited[u] == 1);
    CHECK(m.actuator_ctrlrange[2 * u] == -1.0);
    CHECK(m.actuator_ctrlrange[2 * u + 1] == 1.0);
  }
}

// Body masses against volumes (world body 0 excluded), relative to 1e-12.
void check_masses(const mjModel& m, const std::vector<double>& masses) {
  REQUIRE(m.nbody == static_cast<int>(masses.size()) + 1);
  for (int b = 1; b < m.nbody; ++b) {
    CAPTURE(b);
    CHECK(m.body_mass[b] ==
          doctest::Approx(masses[static_cast<std::size_t>(b - 1)]).epsilon(1e-12));
  }
}

double total_mass(const mjModel& m) {
  double total = 0;
  for (int b = 0; b < m.nbody; ++b) total += m.body_mass[b];
  return total;
}

constexpr double deg = std::numbers::pi / 180;

}  // namespace

TEST_CASE("MuJoCo models: the three embedded files, in order") {
  const auto models = tasks::embedded_models();
  REQUIRE(models.size() == 3);
  CHECK(models[0].file == "half_cheetah.xml");
  CHECK(models[1].file == "hopper.xml");
  CHECK(models[2].file == "swimmer.xml");
  for (const auto& m : models) CHECK(m.xml.find("<mujoco model=") != std::string_view::npos);
  MESSAGE("MuJoCo " << std::string(mj_versionString()));
}

TEST_CASE("MuJoCo models: half_cheetah.xml is Gymnasium's HalfCheetah-v4 model") {
  const mjModel& m = tasks::mujoco_model("half_cheetah.xml");
  MESSAGE("half_cheetah: nq " << m.nq << ", nv " << m.nv << ", nu " << m.nu << ", bodies "
                              << m.nbody << ", total mass " << total_mass(m));
  // Gymnasium's HalfCheetah-v4: 9 positions (17 observed without rootx), 9 velocities,
  // 6 actuators; settotalmass="14".
  CHECK(m.nq == 9);
  CHECK(m.nv == 9);
  CHECK(m.nu == 6);
  CHECK(total_mass(m) == doctest::Approx(14).epsilon(1e-14));
  CHECK(m.opt.timestep == 0.01);
  CHECK(m.opt.integrator == mjINT_EULER);
  CHECK(m.opt.gravity[2] == -9.81);
  // Capsules of radius 0.046: the torso 1 long plus the head (half-length 0.15); each leg
  // segment by its half-length. Masses are 14 times each body's share of the volume.
  const double r = 0.046;
  const std::vector<double> volume{capsule_volume(r, 1.0) + capsule_volume(r, 0.30),
                                   capsule_volume(r, 0.290), capsule_volume(r, 0.300),
                                   capsule_volume(r, 0.188), capsule_volume(r, 0.266),
                                   capsule_volume(r, 0.212), capsule_volume(r, 0.140)};
  double total = 0;
  for (const double v : volume) total += v;
  std::vector<double> masses;
  for (const double v : volume) masses.push_back(14 * v / total);
  check_masses(m, masses);
  check_joints(m, {{"rootx", false, 0, 0, 0, 0, 0},
                   {"rootz", false, 0, 0, 0, 0, 0},
                   {"rooty", false, 0, 0, 0, 0, 0},
                   {"bthigh", true, -0.52, 1.05, 6, 240, 0.1},
                   {"bshin", true, -0.785, 0.785, 4.5, 180, 0.1},
                   {"bfoot", true, -0.4, 0.785, 3, 120, 0.1},
                   {"fthigh", true, -1, 0.7, 4.5, 180, 0.1},
                   {"fshin", true, -1.2, 0.87, 3, 120, 0.1},
                   {"ffoot", true, -0.5, 0.5, 1.5, 60, 0.1}});
  check_gears(m, {120, 90, 60, 120, 60, 30});
  // The source's contact parameters: friction .4 .1 .1 on every geom (the floor too).
  for (int g = 0; g < m.ngeom; ++g) {
    CHECK(m.geom_friction[3 * g] == 0.4);
    CHECK(m.geom_solref[2 * g] == 0.02);
  }
}

TEST_CASE("MuJoCo models: hopper.xml is Gymnasium's Hopper-v4 model") {
  const mjModel& m = tasks::mujoco_model("hopper.xml");
  MESSAGE("hopper: nq " << m.nq << ", nv " << m.nv << ", nu " << m.nu << ", bodies " << m.nbody
                        << ", total mass " << total_mass(m));
  CHECK(m.nq == 6);
  CHECK(m.nv == 6);
  CHECK(m.nu == 3);
  CHECK(m.opt.timestep == 0.002);
  CHECK(m.opt.integrator == mjINT_RK4);
  // rootz's ref: qpos[1] starts at the torso's height.
  CHECK(m.qpos0[1] == 1.25);
  check_masses(m, {1000 * capsule_volume(0.05, 0.4), 1000 * capsule_volume(0.05, 0.45),
                   1000 * capsule_volume(0.04, 0.5), 1000 * capsule_volume(0.06, 0.39)});
  check_joints(m, {{"rootx", false, 0, 0, 0, 0, 0},
                   {"rootz", false, 0, 0, 0, 0, 0},
                   {"rooty", false, 0, 0, 0, 0, 0},
                   {"thigh_joint", true, -150 * deg, 0, 1, 0, 1},
                   {"leg_joint", true, -150 * deg, 0, 1, 0, 1},
                   {"foot_joint", true, -45 * deg, 45 * deg, 1, 0, 1}});
  check_gears(m, {200, 200, 200});
  // The foot: friction 2, margin 0.001; the floor: condim 3.
  CHECK(m.geom_friction[3 * 4] == 2.0);
  CHECK(m.geom_margin[4] == 0.001);
  CHECK(m.geom_condim[0] == 3);
  CHECK(m.geom_condim[4] == 1);
}

TEST_CASE("MuJoCo models: swimmer.xml is Gymnasium's Swimmer-v4 model") {
  const mjModel& m = tasks::mujoco_model("swimmer.xml");
  MESSAGE("swimmer: nq " << m.nq << ", nv " << m.nv << ", nu " << m.nu << ", bodies "
                         << m.nbody << ", total mass " << total_mass(m));
  CHECK(m.nq == 5);
  CHECK(m.nv == 5);
  CHECK(m.nu == 2);
  CHECK(m.opt.timestep == 0.01);
  CHECK(m.opt.integrator == mjINT_RK4);
  CHECK(m.opt.density == 4000);
  CHECK(m.opt.viscosity == 0.1);
  const double segment = 1000 * capsule_volume(0.1, 1.0);
  check_masses(m, {segment, segment, segment});
  check_joints(m, {{"slider1", false, 0, 0, 0, 0, 0.1},
                   {"slider2", false, 0, 0, 0, 0, 0.1},
                   {"free_body_rot", false, 0, 0, 0, 0, 0.1},
                   {"motor1_rot", true, -100 * deg, 100 * deg, 0, 0, 0.1},
                   {"motor2_rot", true, -100 * deg, 100 * deg, 0, 0, 0.1}});
  check_gears(m, {150, 150});
  // No contacts: the source's collision="predefined" without pairs.
  for (int g = 0; g < m.ngeom; ++g) {
    CHECK(m.geom_contype[g] == 0);
    CHECK(m.geom_conaffinity[g] == 0);
  }
}

TEST_CASE("MuJoCo models: compiled once, shared by every caller and thread") {
  const mjModel* first = &tasks::mujoco_model("hopper.xml");
  std::vector<const mjModel*> seen(4);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < seen.size(); ++i)
    threads.emplace_back([&seen, i] { seen[i] = &tasks::mujoco_model("hopper.xml"); });
  for (auto& t : threads) t.join();
  for (const mjModel* m : seen) CHECK(m == first);
}

TEST_CASE("MuJoCo models: an unknown name or a model that does not compile is refused") {
  ltt_test::check_throws_naming([] { (void)tasks::mujoco_model("ant.xml"); }, "model");
  try {
    (void)tasks::compile_model("broken.xml", "<mujoco><worldbody><bogus/></worldbody></mujoco>");
    FAIL("no exception");
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    INFO(what);
    CHECK(what.find("broken.xml") != std::string::npos);
    CHECK(what.find("bogus") != std::string::npos);  // MuJoCo's message names the element
  }
  try {
    (void)tasks::compile_model("truncated.xml", "<mujoco><worldbody>");
    FAIL("no exception");
  } catch (const std::runtime_error& e) {
    INFO(e.what());
    CHECK(std::string(e.what()).find("truncated.xml") != std::string::npos);
  }
}
