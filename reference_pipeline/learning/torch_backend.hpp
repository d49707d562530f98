#pragma once
// The LibTorch backend (built only with the CMake option LTT_WITH_TORCH, which defines
// LTT_LEARNING_WITH_TORCH for every user of ltt_learning). The same MLP as the Eigen backend
// behind the same interface: the MlpWeights vector is copied into torch::nn::Linear weights and
// biases and read back from them, losses and gradients come from LibTorch's autograd, and the
// optimizer is torch::optim::Adam with the same AdamOptions. Runs on CUDA when
// torch::cuda::is_available(), on the CPU otherwise (Debian's libtorch-dev is CPU-only);
// name() says which ("torch-cuda", "torch-cpu"). backend_named("torch") returns it.
//
// On the CPU, LibTorch's intra-op threads are set to one (torch::set_num_threads(1), for the
// whole process, when the backend is first used): like the Eigen backend, a network runs on one
// thread and the value trainer's options.threads trains members side by side. The BLAS LibTorch
// calls may start threads of its own (OpenBLAS: set OPENBLAS_NUM_THREADS=1 to pin it).

#include "learning/backend.hpp"

namespace ltt::learning {

const Backend& torch_backend();

}  // namespace ltt::learning
