#pragma once
// cuDNN's switches, as torch.backends.cudnn: `benchmark` times the
// candidate algorithms the first time a convolution shape is seen (instead
// of taking cuDNN's heuristic pick), `deterministic` keeps only algorithms
// whose results do not depend on scheduling, `allow_tf32` lets float32
// convolutions use TF32 tensor cores (on by default, as in PyTorch).
namespace brasa::cuda {

bool cudnn_benchmark();
void set_cudnn_benchmark(bool on);
bool cudnn_deterministic();
void set_cudnn_deterministic(bool on);
bool cudnn_allow_tf32();
void set_cudnn_allow_tf32(bool on);

}  // namespace brasa::cuda
