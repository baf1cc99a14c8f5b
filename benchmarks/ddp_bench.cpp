// DistributedDataParallel throughput (scripts/bench ddp runs it, with
// ddp_bench_torch.py as the PyTorch 1.13 anchor, and prints the ratios).
//
//   ddp_bench single MODEL                    one process, one thread
//   brasarun --nproc-per-node 2 ddp_bench ddp MODEL gloo [BUCKET_MB [FIRST_BUCKET_MB [view]]]
//   mpirun -np 2 ddp_bench ddp MODEL mpi [BUCKET_MB [FIRST_BUCKET_MB [view]]]
//   brasarun --nproc-per-node 2 ddp_bench ddp MODEL shm [...]  (shared memory)
// (view: gradient_as_bucket_view)
//
// MODEL: mlp (784-512-256-10, batch 128 per rank) or cnn (the main job's
// CNN, batch 64 per rank); SGD steps on fixed random data. Rank 0 prints
//   result brasa single MODEL - - SAMPLES_PER_S
//   result brasa ddp MODEL BACKEND BUCKET_MB SAMPLES_PER_S  (global; BACKEND-view
//          with gradient_as_bucket_view)
//   detail brasa MODEL BACKEND BUCKET_MB nosync_samples_per_s S backward_sync_ms B1
//   backward_nosync_ms B2
//          comm_alone_ms C exposed_fraction (B1-B2)/C buckets N backward_nosync_waited_ms B3
//          exposed_beyond_skew_fraction (B1-B3)/C
//   (B3: under no_sync, then a barrier: the wait for the slower rank that a
//   synchronized backward contains whatever the communication costs)
// Times are the medians of several timed windows.

#include <brasa/torch.h>
#include <brasa/util/cli.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

using namespace brasa;
namespace F = brasa::nn::functional;
namespace dist = brasa::distributed;

namespace {

struct MlpImpl : nn::Module {
  MlpImpl() {
    fc1 = register_module("fc1", nn::Linear(784, 512));
    fc2 = register_module("fc2", nn::Linear(512, 256));
    fc3 = register_module("fc3", nn::Linear(256, 10));
  }
  Tensor forward(const Tensor& x) {
    return fc3->forward(F::relu(fc2->forward(F::relu(fc1->forward(x.flatten(1))))));
  }
  nn::Linear fc1{nullptr}, fc2{nullptr}, fc3{nullptr};
};

struct CnnImpl : nn::Module {
  CnnImpl() {
    conv1 = register_module("conv1", nn::Conv2d(1, 10, 5));
    conv2 = register_module("conv2", nn::Conv2d(10, 20, 5));
    fc1 = register_module("fc1", nn::Linear(320, 50));
    fc2 = register_module("fc2", nn::Linear(50, 10));
  }
  Tensor forward(const Tensor& x) {
    Tensor h = F::relu(max_pool2d(conv1->forward(x), {2}));
    h = F::relu(max_pool2d(conv2->forward(h), {2}));
    return fc2->forward(F::relu(fc1->forward(h.flatten(1))));
  }
  nn::Conv2d conv1{nullptr}, conv2{nullptr};
  nn::Linear fc1{nullptr}, fc2{nullptr};
};

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Data {
  Tensor x, y;
  int64_t batch;
};
Data make_data(const std::string& model, int rank) {
  manual_seed(100 + rank);
  const int64_t b = model == "mlp" ? 128 : 64;
  Data d;
  d.batch = b;
  d.x = model == "mlp" ? randn({b, 784}) : randn({b, 1, 28, 28});
  d.y = randint(0, 10, {b}, TensorOptions().dtype(kLong));
  return d;
}

// Median seconds per step over `windows` windows of `steps` steps.
template <class Step>
double time_steps(Step&& step, int windows, int steps) {
  for (int i = 0; i < 5; ++i) step();
  std::vector<double> per;
  for (int w = 0; w < windows; ++w) {
    double t0 = now_s();
    for (int i = 0; i < steps; ++i) step();
    per.push_back((now_s() - t0) / steps);
  }
  return median(per);
}

template <class M>
int run_single(const std::string& model) {
  auto net = std::make_shared<M>();
  optim::SGD opt(net->parameters(), optim::SGDOptions(0.01).momentum(0.9));
  Data d = make_data(model, 0);
  double t = time_steps(
      [&] {
        opt.zero_grad();
        F::cross_entropy(net->forward(d.x), d.y).backward();
        opt.step();
      },
      7, model == "mlp" ? 20 : 30);
  std::printf("result brasa single %s - - %.1f\n", model.c_str(), d.batch / t);
  return 0;
}

template <class M>
int run_ddp(const std::string& model, const std::string& backend, double bucket_mb,
            double first_bucket_mb, bool view) {
  dist::init_process_group(backend);
  const int rank = dist::get_rank(), world = dist::get_world_size();
  manual_seed(1);
  auto net = std::make_shared<M>();
  auto ddp =
      nn::parallel::DistributedDataParallel(net, nn::parallel::DistributedDataParallelOptions()
                                                     .bucket_cap_mb(bucket_mb)
                                                     .first_bucket_mb(first_bucket_mb)
                                                     .gradient_as_bucket_view(view));
  optim::SGD opt(ddp->parameters(), optim::SGDOptions(0.01).momentum(0.9));
  Data d = make_data(model, rank);
  const int steps = model == "mlp" ? 20 : 30;
  auto step = [&] {
    opt.zero_grad();
    F::cross_entropy(ddp->forward(d.x), d.y).backward();
    opt.step();
  };
  const double t_step = time_steps(step, 7, steps);
  // The same steps without communication: what the ranks' compute allows.
  const double t_nosync = time_steps(
      [&] {
        auto guard = ddp->no_sync();
        step();
      },
      7, steps);

  // Backward alone, synchronized and under no_sync. A synchronized backward
  // ends when the slower rank's gradients are reduced: it includes waiting
  // for that rank. `waited` adds a barrier after the unsynchronized one, so
  // that the difference is what communication adds beyond the ranks' skew.
  auto backward_time = [&](bool sync, bool waited) {
    std::vector<double> per;
    for (int i = 0; i < 5 * steps; ++i) {
      opt.zero_grad();
      auto guard = sync ? std::optional<nn::parallel::DistributedDataParallelBase::NoSyncGuard>()
                        : std::optional<nn::parallel::DistributedDataParallelBase::NoSyncGuard>(
                              ddp->no_sync());
      Tensor loss = F::cross_entropy(ddp->forward(d.x), d.y);
      dist::barrier();  // start together
      double t0 = now_s();
      loss.backward();
      if (waited) dist::barrier();
      per.push_back(now_s() - t0);
    }
    return median(per);
  };
  const double bwd_sync = backward_time(true, false);
  const double bwd_nosync = backward_time(false, false);
  const double bwd_nosync_waited = backward_time(false, true);

  // The same allreduces, alone, on the same kind of buffer: what DDP does per
  // bucket (divide, allreduce; the shm backend averages in its one pass over
  // buckets in shared memory).
  auto stats = ddp->stats();
  std::vector<Tensor> buckets;
  for (int64_t bytes : stats.bucket_sizes) {
    buckets.push_back(ones({bytes / 4}));
    if (backend == "shm") buckets.back().share_memory_();
  }
  dist::AllreduceOptions average;
  average.reduceOp = dist::ReduceOp::AVG;
  const double comm = time_steps(
      [&] {
        for (Tensor& b : buckets) {
          if (backend == "shm") {
            std::vector<Tensor> ts{b};
            dist::default_group()->allreduce(ts, average)->wait();
          } else {
            b.div_(world);
            dist::all_reduce(b);
          }
        }
      },
      7, steps);
  // gradient_as_bucket_view runs are labelled BACKEND-view.
  const std::string label = view ? backend + "-view" : backend;
  if (rank == 0) {
    std::printf("result brasa ddp %s %s %g %.1f\n", model.c_str(), label.c_str(), bucket_mb,
                world * d.batch / t_step);
    std::printf(
        "detail brasa %s %s %g nosync_samples_per_s %.1f backward_sync_ms %.3f "
        "backward_nosync_ms %.3f comm_alone_ms %.3f exposed_fraction %.3f buckets %zu "
        "backward_nosync_waited_ms %.3f exposed_beyond_skew_fraction %.3f\n",
        model.c_str(), label.c_str(), bucket_mb, world * d.batch / t_nosync, bwd_sync * 1e3,
        bwd_nosync * 1e3, comm * 1e3, (bwd_sync - bwd_nosync) / comm, buckets.size(),
        bwd_nosync_waited * 1e3, (bwd_sync - bwd_nosync_waited) / comm);
    // What DDP itself measured per bucket (launch to completion, in DDP's steps).
    std::printf("buckets brasa %s %s %g:", model.c_str(), label.c_str(), bucket_mb);
    for (size_t b = 0; b < stats.bucket_sizes.size(); ++b)
      std::printf(" %lld bytes %.3f ms;", static_cast<long long>(stats.bucket_sizes[b]),
                  stats.avg_bucket_comm_time_ms[b]);
    std::printf("\n");
  }
  dist::barrier();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode, model, backend, view_word;
  double bucket_mb = 25, first_mb = -1;
  brasa::cli::Parser p(
      "ddp_bench",
      "DistributedDataParallel against one process: `ddp_bench single MODEL`, or\n"
      "`ddp_bench ddp MODEL BACKEND [BUCKET_MB [FIRST_BUCKET_MB [view]]]` under brasarun\n"
      "or mpirun.");
  p.positional("MODE", &mode, "one process or data-parallel", {"single", "ddp"})
      .positional("MODEL", &model, "the network", {"mlp", "cnn"})
      .positional("BACKEND", &backend, "ddp: the process group's backend", {"gloo", "mpi", "shm"})
      .positional("BUCKET_MB", &bucket_mb, 0.001, 4096, "ddp: bucket_cap_mb (default 25)")
      .positional("FIRST_BUCKET_MB", &first_mb, 0.001, 4096,
                  "ddp: first_bucket_mb (default the smaller of 1 and BUCKET_MB)")
      .positional("view", &view_word, "ddp: gradient_as_bucket_view", {"view"})
      .positionals_required(2)
      .parse_or_exit(argc, argv);
  if (mode == "ddp" && backend.empty()) {
    std::fprintf(stderr,
                 "ddp_bench: ddp needs a BACKEND (gloo, mpi or shm)\n(see ddp_bench --help)\n");
    return 2;
  }
  set_num_threads(1);
  const bool mlp = model == "mlp";
  if (mode == "single") return mlp ? run_single<MlpImpl>("mlp") : run_single<CnnImpl>("cnn");
  if (first_mb < 0) first_mb = std::min(1.0, bucket_mb);
  const bool view = !view_word.empty();
  return mlp ? run_ddp<MlpImpl>("mlp", backend, bucket_mb, first_mb, view)
             : run_ddp<CnnImpl>("cnn", backend, bucket_mb, first_mb, view);
}
