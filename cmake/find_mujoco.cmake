# MuJoCo for the velocity tasks (reference_pipeline/tasks/velocity.hpp, docs/tasks.md): Debian's
# libmujoco-dev (2.2.2), whose CMake package gives the target mujoco::mujoco. Included by the
# top-level CMakeLists.txt with the program, so that ltt_tasks, its tests and the benchmark that
# steps MuJoCo alone beside it all see the target.
#
# Two things about Debian 12's package: its config asks for OpenGL (find_dependency(OpenGL)),
# though ltt renders nothing, so scripts/setup installs libglvnd-dev with it; and it lists
# /usr/include/libqhull_r/ among mujoco::mujoco's include directories, a folder of libqhull-dev,
# which it neither ships nor depends on and which no MuJoCo header includes. CMake refuses a
# target whose imported include folder is missing, so the folders that do not exist are dropped.
find_package(mujoco 2.2 CONFIG REQUIRED)
get_target_property(ltt_mujoco_includes mujoco::mujoco INTERFACE_INCLUDE_DIRECTORIES)
if(ltt_mujoco_includes)
  set(ltt_mujoco_existing "")
  foreach(dir IN LISTS ltt_mujoco_includes)
    if(EXISTS "${dir}")
      list(APPEND ltt_mujoco_existing "${dir}")
    endif()
  endforeach()
  set_target_properties(mujoco::mujoco PROPERTIES INTERFACE_INCLUDE_DIRECTORIES
                                                  "${ltt_mujoco_existing}")
endif()
message(STATUS "MuJoCo ${mujoco_VERSION}: ${mujoco_DIR}")
