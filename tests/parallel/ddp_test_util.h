#pragma once
// Shared pieces of the DistributedDataParallel tests: the group under test
// (BRASA_TEST_BACKEND: mpi under mpirun, gloo under brasarun), small models,
// deterministic data, and a local reference that trains on the whole batch.

#include <brasa/torch.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../comm/test_backend.h"
#include "../core/test_util.h"

namespace brasa::parallel_testing {

namespace dist = brasa::distributed;
namespace F = brasa::nn::functional;

inline void init_once() {
  if (dist::is_initialized()) return;
  if (dist::testing::backend() == "mpi") return dist::init_process_group("mpi");
  const auto& r = dist::testing::shared_rendezvous();
  dist::init_process_group(dist::testing::backend(),
                           std::make_shared<dist::PrefixStore>("ddp_test", r.store), r.world_size,
                           r.rank, std::chrono::seconds(60));
}

// fc1 -> [bn] -> relu -> [mid, applied twice] -> fc2; `extra` is used only
// when use_extra is set.
struct Net : nn::Module {
  explicit Net(bool batch_norm = false, bool twice = false, bool extra = false)
      : batch_norm(batch_norm), twice(twice) {
    fc1 = register_module("fc1", nn::Linear(8, 16));
    if (batch_norm) bn = register_module("bn", nn::BatchNorm1d(16));
    if (twice) mid = register_module("mid", nn::Linear(16, 16));
    fc2 = register_module("fc2", nn::Linear(16, 4));
    if (extra) unused = register_module("unused", nn::Linear(16, 4));
  }
  Tensor forward(const Tensor& x) {
    Tensor h = fc1->forward(x);
    if (batch_norm) h = bn->forward(h);
    h = F::relu(h);
    if (twice) h = F::relu(mid->forward(F::relu(mid->forward(h))));
    Tensor out = fc2->forward(h);
    if (use_extra) out = out + unused->forward(h);
    return out;
  }
  bool batch_norm, twice, use_extra = false;
  nn::Linear fc1{nullptr}, mid{nullptr}, fc2{nullptr}, unused{nullptr};
  nn::BatchNorm1d bn{nullptr};
};

struct Batch {
  Tensor x, y;
};
// Step `step`'s whole batch: the same on every rank.
inline Batch batch(int64_t step, int64_t size) {
  Generator gen(1000 + static_cast<uint64_t>(step));
  Batch b;
  b.x = randn({size, 8}, &gen);
  b.y = b.x.select(1, 0).gt(0).to(kLong) + b.x.select(1, 1).gt(0).to(kLong) * 2;
  return b;
}
// This rank's slice of it.
inline Batch slice(const Batch& b, int rank, int world) {
  const int64_t n = b.x.size(0) / world;
  return {b.x.narrow(0, rank * n, n), b.y.narrow(0, rank * n, n)};
}

inline std::shared_ptr<optim::Optimizer> make_optimizer(const std::string& kind,
                                                        std::vector<Tensor> params) {
  if (kind == "adam") return std::make_shared<optim::Adam>(params, optim::AdamOptions(0.01));
  return std::make_shared<optim::SGD>(params, optim::SGDOptions(0.1).momentum(0.9));
}

// Largest elementwise difference between the parameters of two modules.
inline double max_difference(const nn::Module& a, const nn::Module& b) {
  auto pa = a.named_parameters(), pb = b.named_parameters();
  EXPECT_EQ(pa.size(), pb.size());
  double worst = 0;
  for (const auto& p : pa) {
    const Tensor* q = pb.find(p.key());
    EXPECT_NE(q, nullptr) << p.key();
    if (!q) continue;
    worst = std::max(worst, (p.value() - *q).abs().max().item<double>());
  }
  return worst;
}

// Every rank's copy of `t`, gathered.
inline std::vector<Tensor> gather_all(const Tensor& t) {
  std::vector<Tensor> out;
  for (int r = 0; r < dist::get_world_size(); ++r) out.push_back(zeros_like(t));
  Tensor c = t.contiguous();
  dist::all_gather(out, c);
  return out;
}

}  // namespace brasa::parallel_testing
