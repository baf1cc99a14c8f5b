#pragma once
// torch::cuda's queries, in every build: without a CUDA runtime registered
// (a CPU-only build, or no device) CUDA is simply not available, so the usual
// `torch::cuda::is_available() ? torch::kCUDA : torch::kCPU` compiles and runs.
#include <cstdint>

namespace brasa::cuda {

bool is_available();
int64_t device_count();
bool cudnn_is_available();
// Seeds the CUDA generators (nothing to seed without CUDA).
void manual_seed(uint64_t seed);
void manual_seed_all(uint64_t seed);
// Waits for the work queued on `device` (-1: the current one).
void synchronize(int64_t device = -1);

}  // namespace brasa::cuda
