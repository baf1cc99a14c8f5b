// The CUDA entries of the fused optimizer steps (optim_kernels.cu): the
// parameters are packed into TensorLists of at most kListTensors tensors and
// kListBlocks chunks, one launch per list.
#include <brasa/cuda/cuda_check.h>
#include <brasa/ops/cuda/launch_util.h>
#include <brasa/ops/cuda/register.h>
#include <brasa/ops/kernel_table.h>
#include <brasa/ops/kernels/optim.h>

#include <functional>

namespace brasa::cuda {
namespace {

// Packs parameter i's tensors (tensors(i): param, grad, state...) into lists
// and calls launch(list) for each full list and the last one.
void for_each_list(size_t n, const std::function<std::vector<Tensor>(size_t)>& tensors,
                   const std::function<void(kernels::TensorList&, size_t)>& per_tensor,
                   const std::function<void(const kernels::TensorList&)>& launch) {
  kernels::TensorList list;
  for (size_t i = 0; i < n; ++i) {
    const std::vector<Tensor> ts = tensors(i);
    const int64_t numel = ts[0].numel();
    if (numel == 0) continue;
    const int64_t chunks = (numel + kernels::kListChunk - 1) / kernels::kListChunk;
    for (int64_t c = 0; c < chunks; ++c) {
      if (c == 0) {
        if (list.n_tensors == kernels::kListTensors) {
          launch(list);
          list = kernels::TensorList();
        }
        const int t = list.n_tensors++;
        for (size_t j = 0; j < ts.size(); ++j) list.ptrs[j][t] = ts[j].data_ptr();
        list.numel[t] = numel;
        per_tensor(list, i);
      }
      const int t = list.n_tensors - 1;
      list.block_tensor[list.n_blocks] = t;
      list.block_chunk[list.n_blocks] = static_cast<int>(c);
      if (++list.n_blocks == kernels::kListBlocks) {
        launch(list);
        // The tensor's remaining chunks go on in a new list that holds it again.
        kernels::TensorList next;
        if (c + 1 < chunks) {
          next.n_tensors = 1;
          for (size_t j = 0; j < ts.size(); ++j) next.ptrs[j][0] = ts[j].data_ptr();
          next.numel[0] = numel;
          next.step_size[0] = list.step_size[t];
          next.bc2_sqrt[0] = list.bc2_sqrt[t];
        }
        list = next;
      }
    }
  }
  launch(list);
}

void fused_sgd_cuda(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                    const std::vector<Tensor>& bufs, const SgdStep& h) {
  if (params.empty()) return;
  const Device d = params[0].device();
  cudaStream_t s = launch_stream(d);
  const kernels::SgdArgs a{h.lr,       h.momentum, h.dampening,  h.weight_decay,
                           h.nesterov, h.maximize, !bufs.empty()};
  const int dtype = static_cast<int>(params[0].dtype());
  for_each_list(
      params.size(),
      [&](size_t i) {
        return bufs.empty() ? std::vector<Tensor>{params[i], grads[i]}
                            : std::vector<Tensor>{params[i], grads[i], bufs[i]};
      },
      [](kernels::TensorList&, size_t) {},
      [&](const kernels::TensorList& list) {
        kernels::launch_fused_sgd(list, a, dtype, s);
        BRASA_CUDA_LAUNCH_CHECK("SGD step (fused)", s);
      });
}

void fused_adam_cuda(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                     const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
                     const std::vector<Tensor>& max_exp_avg_sqs,
                     const std::vector<double>& step_sizes, const std::vector<double>& bc2_sqrts,
                     const AdamStep& h) {
  if (params.empty()) return;
  const Device d = params[0].device();
  cudaStream_t s = launch_stream(d);
  const kernels::AdamArgs a{h.beta1, h.beta2,     h.eps,     h.weight_decay,
                            h.lr,    h.decoupled, h.amsgrad, h.maximize};
  const int dtype = static_cast<int>(params[0].dtype());
  for_each_list(
      params.size(),
      [&](size_t i) {
        std::vector<Tensor> ts{params[i], grads[i], exp_avgs[i], exp_avg_sqs[i]};
        if (h.amsgrad) ts.push_back(max_exp_avg_sqs[i]);
        return ts;
      },
      [&](kernels::TensorList& list, size_t i) {
        list.step_size[list.n_tensors - 1] = step_sizes[i];
        list.bc2_sqrt[list.n_tensors - 1] = bc2_sqrts[i];
      },
      [&](const kernels::TensorList& list) {
        kernels::launch_fused_adam(list, a, dtype, s);
        BRASA_CUDA_LAUNCH_CHECK("Adam step (fused)", s);
      });
}

}  // namespace

void register_optim_kernels() {
  register_kernel<FusedSgdKernel>(kCUDA, fused_sgd_cuda);
  register_kernel<FusedAdamKernel>(kCUDA, fused_adam_cuda);
}

}  // namespace brasa::cuda
