// Collective benchmarks, 2 ranks: Brasa's process groups against the raw
// library calls on the same buffers, in one run.
//   mpirun -np 2 comm_bench mpi         ProcessGroupMPI vs MPI_Allreduce / MPI_Bcast
//   brasarun --nproc-per-node 2 comm_bench gloo
//                                       ProcessGroupGloo vs gloo::allreduce / gloo::broadcast
//   mpirun -np 2 comm_bench shm         ProcessGroupShm vs MPI_Allreduce and gloo::allreduce
//                                       (and broadcasts, allgathers), with a STREAM copy in the
//                                       same run (both ranks copying at once);
//                                       allreduce-shared: Brasa's tensors in shared memory
// Rank 0 prints `result <backend> <brasa|raw> <op> <bytes> <microseconds>`
// (best repetition, raw and Brasa interleaved) and a `ratio` line per
// case. scripts/bench adds torch.distributed (comm_bench_torch.py).

#include <brasa/comm/distributed.h>
#include <brasa/comm/gloo/process_group_gloo.h>
#include <brasa/comm/mpi/process_group_mpi.h>
#include <brasa/comm/shm/process_group_shm.h>
#include <brasa/comm/store/prefix_store.h>
#include <brasa/ops/factory.h>
#include <brasa/util/cli.h>
#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/broadcast.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/tcp/device.h>
#include <mpi.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace dist = brasa::distributed;
using Clock = std::chrono::steady_clock;

namespace {

class GlooStore : public gloo::rendezvous::Store {
 public:
  explicit GlooStore(std::shared_ptr<dist::Store> s) : s_(std::move(s)) {}
  void set(const std::string& k, const std::vector<char>& v) override {
    s_->set(k, dist::Bytes(v.begin(), v.end()));
  }
  std::vector<char> get(const std::string& k) override {
    auto b = s_->get(k);
    return std::vector<char>(b.begin(), b.end());
  }
  void wait(const std::vector<std::string>& keys) override { s_->wait(keys); }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& t) override {
    s_->wait(keys, t);
  }

 private:
  std::shared_ptr<dist::Store> s_;
};

struct Case {
  std::string op;
  size_t bytes;
};

int iterations(size_t bytes) {
  return static_cast<int>(std::clamp<size_t>((64u << 20) / bytes, 5, 2000));
}

// Seconds per call of each side (best of `reps` repetitions of `iters`
// calls), repetitions interleaved.
std::vector<double> measure_all(const std::vector<std::function<void()>>& sides,
                                const std::function<void()>& sync, int iters, int reps = 7) {
  std::vector<double> best(sides.size(), 1e30);
  for (int i = 0; i < 3; ++i)
    for (const auto& side : sides) side();
  for (int rep = 0; rep < reps; ++rep) {
    for (size_t k = 0; k < sides.size(); ++k) {
      sync();
      auto t0 = Clock::now();
      for (int i = 0; i < iters; ++i) sides[k]();
      double s = std::chrono::duration<double>(Clock::now() - t0).count() / iters;
      // The best repetition: on a shared VM the noise (scheduler wake-ups on
      // loopback TCP) only ever adds time.
      best[k] = std::min(best[k], s);
    }
  }
  return best;
}

std::pair<double, double> measure(const std::function<void()>& raw,
                                  const std::function<void()>& brasa,
                                  const std::function<void()>& sync, int iters) {
  auto t = measure_all({raw, brasa}, sync, iters);
  return {t[0], t[1]};
}

std::string human(size_t bytes) {
  if (bytes >= (1u << 20)) return std::to_string(bytes >> 20) + "MiB";
  return std::to_string(bytes >> 10) + "KiB";
}

void report(int rank, const std::string& backend, const Case& c, std::pair<double, double> t) {
  if (rank != 0) return;
  const double raw_us = t.first * 1e6, brasa_us = t.second * 1e6;
  std::printf("result %s raw %s %zu %.2f\n", backend.c_str(), c.op.c_str(), c.bytes, raw_us);
  std::printf("result %s brasa %s %zu %.2f\n", backend.c_str(), c.op.c_str(), c.bytes, brasa_us);
  std::printf(
      "ratio brasa/raw %s %s %s: bandwidth %.3f (brasa %.1f us, raw %.1f us, added %+.1f us)\n",
      backend.c_str(), c.op.c_str(), human(c.bytes).c_str(), raw_us / brasa_us, brasa_us, raw_us,
      brasa_us - raw_us);
  std::fflush(stdout);
}

const std::vector<Case> kCases = {{"allreduce", 4u << 10},  {"allreduce", 64u << 10},
                                  {"allreduce", 1u << 20},  {"allreduce", 16u << 20},
                                  {"allreduce", 64u << 20}, {"broadcast", 16u << 20}};

void run_mpi() {
  auto pg = dist::ProcessGroupMPI::create();
  const int rank = pg->rank();
  auto sync = [] { MPI_Barrier(MPI_COMM_WORLD); };
  for (const auto& c : kCases) {
    const int64_t n = static_cast<int64_t>(c.bytes / 4);
    brasa::Tensor raw_buf = brasa::ones({n}), brasa_buf = brasa::ones({n});
    std::vector<brasa::Tensor> ts{brasa_buf};
    std::function<void()> raw, ours;
    if (c.op == "allreduce") {
      raw = [&] {
        MPI_Allreduce(MPI_IN_PLACE, raw_buf.data_ptr(), static_cast<int>(n), MPI_FLOAT, MPI_SUM,
                      MPI_COMM_WORLD);
      };
      ours = [&] { pg->allreduce(ts)->wait(); };
    } else {
      raw = [&] {
        MPI_Bcast(raw_buf.data_ptr(), static_cast<int>(n), MPI_FLOAT, 0, MPI_COMM_WORLD);
      };
      ours = [&] { pg->broadcast(ts)->wait(); };
    }
    report(rank, "mpi", c, measure(raw, ours, sync, iterations(c.bytes)));
  }
}

// A Gloo context of its own for the raw side, connected through `store`.
std::shared_ptr<gloo::rendezvous::Context> raw_gloo_context(const dist::Rendezvous& r,
                                                            const std::string& prefix) {
  gloo::transport::tcp::attr attr;
  attr.hostname = dist::ProcessGroupGloo::local_address_toward(r.master_addr);
  auto dev = gloo::transport::tcp::CreateDevice(attr);
  auto ctx = std::make_shared<gloo::rendezvous::Context>(r.rank, r.world_size);
  GlooStore gs(std::make_shared<dist::PrefixStore>(prefix, r.store));
  ctx->connectFullMesh(gs, dev);
  return ctx;
}

void raw_gloo_allreduce(const std::shared_ptr<gloo::rendezvous::Context>& ctx, float* p,
                        int64_t n) {
  gloo::AllreduceOptions opts(ctx);
  opts.setOutput(p, static_cast<size_t>(n));
  opts.setReduceFunction(
      static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::sum<float>));
  opts.setTag(7);
  gloo::allreduce(opts);
}

void raw_gloo_broadcast(const std::shared_ptr<gloo::rendezvous::Context>& ctx, float* p,
                        int64_t n) {
  gloo::BroadcastOptions opts(ctx);
  opts.setOutput(p, static_cast<size_t>(n));
  opts.setRoot(0);
  opts.setTag(8);
  gloo::broadcast(opts);
}

// Gloo's allgather: each rank's n floats at `in` land at out[rank * n].
void raw_gloo_allgather(const std::shared_ptr<gloo::rendezvous::Context>& ctx, float* in,
                        float* out, int64_t n) {
  gloo::AllgatherOptions opts(ctx);
  opts.setInput(in, static_cast<size_t>(n));
  opts.setOutput(out, static_cast<size_t>(n * ctx->size));
  opts.setTag(9);
  gloo::allgather(opts);
}

// STREAM's copy, on every rank at once (the ranks share the memory system):
// bytes read and written per second by one rank, best of 5.
double stream_copy_bytes_per_second(const std::function<void()>& sync) {
  const size_t n = (64u << 20) / sizeof(double);
  std::vector<double> a(n, 1.0), c(n, 0.0);
  double best = 1e30;
  for (int rep = 0; rep < 6; ++rep) {
    sync();
    auto t0 = Clock::now();
    std::memcpy(c.data(), a.data(), n * sizeof(double));
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    if (rep > 0) best = std::min(best, s);  // the first touches the pages
  }
  if (c[n / 2] != 1.0) std::abort();
  return 2.0 * n * sizeof(double) / best;
}

// The floor of an allreduce of private tensors (`bytes` per rank): no rank
// can map a peer's private memory, so each must at least copy every peer's
// share of its tensor out and the reduced shares back in, P-1 slices each
// way. Seconds per call of those two copies alone (no reduction, no
// synchronisation), all ranks copying at once, by the two routes there are:
// cross-memory attach straight between the tensors (what the shm backend
// does; 0 where refused), and memcpy through a staging buffer.
struct CopyFloor {
  double cross_memory = 0, staged = 0;
};
CopyFloor private_allreduce_copy_floor(size_t bytes, const std::function<void()>& sync) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const size_t slice = bytes / static_cast<size_t>(size) / 64 * 64;
  const size_t piece = 512u << 10;  // the backend's piece for private tensors
  // Brasa's tensors, allocated as the backend's inputs are (huge pages).
  const int64_t n = static_cast<int64_t>(bytes / sizeof(float));
  brasa::Tensor source_t = brasa::ones({n}), landing_t = brasa::zeros({n}),
                scratch_t = brasa::zeros({n / size});
  char* source = static_cast<char*>(source_t.data_ptr());
  char* landing = static_cast<char*>(landing_t.data_ptr());
  char* scratch = static_cast<char*>(scratch_t.data_ptr());
  struct Where {
    int64_t pid;
    uint64_t source, landing;
  } mine{static_cast<int64_t>(::getpid()), reinterpret_cast<uintptr_t>(source),
         reinterpret_cast<uintptr_t>(landing)};
  std::vector<Where> all(static_cast<size_t>(size));
  MPI_Allgather(&mine, sizeof(Where), MPI_BYTE, all.data(), sizeof(Where), MPI_BYTE,
                MPI_COMM_WORLD);
  bool ok = true;
  auto copies = [&] {
    const size_t at = static_cast<size_t>(rank) * slice;
    for (int p = 0; p < size; ++p) {
      if (p == rank) continue;
      const Where& w = all[static_cast<size_t>(p)];
      for (size_t c = 0; c < slice; c += piece) {
        const size_t m = std::min(piece, slice - c);
        iovec in_local{scratch + c, m}, in_remote{reinterpret_cast<void*>(w.source + at + c), m};
        iovec out_local{source + at + c, m},
            out_remote{reinterpret_cast<void*>(w.landing + at + c), m};
        ok = ok && ::process_vm_readv(static_cast<pid_t>(w.pid), &in_local, 1, &in_remote, 1, 0) ==
                       static_cast<ssize_t>(m);
        ok = ok && ::process_vm_writev(static_cast<pid_t>(w.pid), &out_local, 1, &out_remote, 1,
                                       0) == static_cast<ssize_t>(m);
      }
    }
  };
  auto staged = [&] {
    for (int p = 0; p < size; ++p) {
      if (p == rank) continue;
      const size_t at = static_cast<size_t>(p) * slice;
      std::memcpy(scratch, source + at, slice);   // out to the staging buffer
      std::memcpy(landing + at, scratch, slice);  // the reduced share back
    }
  };
  const std::vector<double> s = measure_all({copies, staged}, sync, iterations(bytes));
  int all_ok = ok ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return {all_ok ? s[0] : 0.0, s[1]};
}

void run_gloo() {
  auto r = dist::rendezvous("env://");
  dist::ProcessGroupGloo::Options o;
  o.peer_host = r.master_addr;
  dist::ProcessGroupGloo pg(std::make_shared<dist::PrefixStore>("brasa", r.store), r.rank,
                            r.world_size, o);
  auto ctx = raw_gloo_context(r, "raw");  // the raw side, connected the same way
  auto sync = [&] { pg.barrier()->wait(); };
  for (const auto& c : kCases) {
    const int64_t n = static_cast<int64_t>(c.bytes / 4);
    brasa::Tensor raw_buf = brasa::ones({n}), brasa_buf = brasa::ones({n});
    std::vector<brasa::Tensor> ts{brasa_buf};
    std::function<void()> raw, ours;
    if (c.op == "allreduce") {
      raw = [&] { raw_gloo_allreduce(ctx, static_cast<float*>(raw_buf.data_ptr()), n); };
      ours = [&] { pg.allreduce(ts)->wait(); };
    } else {
      raw = [&] { raw_gloo_broadcast(ctx, static_cast<float*>(raw_buf.data_ptr()), n); };
      ours = [&] { pg.broadcast(ts)->wait(); };
    }
    report(r.rank, "gloo", c, measure(raw, ours, sync, std::max(5, iterations(c.bytes) / 8)));
  }
  pg.barrier()->wait();
}

// `only`: run the cases whose "op:bytes" name contains it (all when empty).
void run_shm(const std::string& only) {
  auto mpi = dist::ProcessGroupMPI::create();  // MPI for the raw side (and the rendezvous)
  auto r = dist::rendezvous("env://");
  dist::ProcessGroupShm pg(std::make_shared<dist::PrefixStore>("shm", r.store), r.rank,
                           r.world_size);
  auto ctx = raw_gloo_context(r, "raw");
  auto sync = [] { MPI_Barrier(MPI_COMM_WORLD); };
  const double stream = stream_copy_bytes_per_second(sync);
  if (r.rank == 0)
    std::printf("stream copy: %.2f GB/s per rank with %d ranks copying at once\n", stream / 1e9,
                r.world_size);
  const std::vector<Case> cases = {{"allreduce", 4u << 10},
                                   {"allreduce", 64u << 10},
                                   {"allreduce", 1u << 20},
                                   {"allreduce", 4u << 20},
                                   {"allreduce", 16u << 20},
                                   {"allreduce", 64u << 20},
                                   {"broadcast", 1u << 20},
                                   {"broadcast", 16u << 20},
                                   // Bytes of each rank's input.
                                   {"allgather", 1u << 20},
                                   {"allgather", 16u << 20},
                                   // Brasa's tensor in shared memory (as DDP's buckets
                                   // are on this backend): no staging copy.
                                   {"allreduce-shared", 1u << 20},
                                   {"allreduce-shared", 4u << 20},
                                   {"allreduce-shared", 16u << 20},
                                   {"allreduce-shared", 64u << 20}};
  for (const auto& c : cases) {
    if ((c.op + ":" + std::to_string(c.bytes)).find(only) == std::string::npos) continue;
    const int64_t n = static_cast<int64_t>(c.bytes / 4);
    brasa::Tensor mpi_buf = brasa::ones({n}), gloo_buf = brasa::ones({n}),
                  shm_buf = brasa::ones({n});
    if (c.op == "allreduce-shared") shm_buf.share_memory_();
    std::vector<brasa::Tensor> ts{shm_buf};
    float* mp = static_cast<float*>(mpi_buf.data_ptr());
    float* gp = static_cast<float*>(gloo_buf.data_ptr());
    std::function<void()> raw_mpi, raw_gloo, ours;
    const int P = r.world_size;
    brasa::Tensor mpi_out = brasa::empty({c.op == "allgather" ? n * P : 0}),
                  gloo_out = brasa::empty({c.op == "allgather" ? n * P : 0}),
                  shm_out = brasa::empty({c.op == "allgather" ? n * P : 0});
    if (c.op == "allgather") {
      float* mo = static_cast<float*>(mpi_out.data_ptr());
      float* go = static_cast<float*>(gloo_out.data_ptr());
      raw_mpi = [&, mo] {
        MPI_Allgather(mp, static_cast<int>(n), MPI_FLOAT, mo, static_cast<int>(n), MPI_FLOAT,
                      MPI_COMM_WORLD);
      };
      raw_gloo = [&, go] { raw_gloo_allgather(ctx, gp, go, n); };
      ours = [&] { pg.allgather_into_tensor(shm_out, shm_buf)->wait(); };
    } else if (c.op != "broadcast") {
      raw_mpi = [&] {
        MPI_Allreduce(MPI_IN_PLACE, mp, static_cast<int>(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      };
      raw_gloo = [&] { raw_gloo_allreduce(ctx, gp, n); };
      ours = [&] { pg.allreduce(ts)->wait(); };
    } else {
      raw_mpi = [&] { MPI_Bcast(mp, static_cast<int>(n), MPI_FLOAT, 0, MPI_COMM_WORLD); };
      raw_gloo = [&] { raw_gloo_broadcast(ctx, gp, n); };
      ours = [&] { pg.broadcast(ts)->wait(); };
    }
    auto t = measure_all({raw_mpi, raw_gloo, ours}, sync, iterations(c.bytes));
    // Private tensors: what copying allows at best (collective).
    const CopyFloor floor = c.op == "allreduce" && c.bytes >= (1u << 20)
                                ? private_allreduce_copy_floor(c.bytes, sync)
                                : CopyFloor();
    if (r.rank != 0) continue;
    const double mpi_us = t[0] * 1e6, gloo_us = t[1] * 1e6, shm_us = t[2] * 1e6;
    std::printf("result shm raw-mpi %s %zu %.2f\n", c.op.c_str(), c.bytes, mpi_us);
    std::printf("result shm raw-gloo %s %zu %.2f\n", c.op.c_str(), c.bytes, gloo_us);
    std::printf("result shm brasa %s %zu %.2f\n", c.op.c_str(), c.bytes, shm_us);
    const double algbw = static_cast<double>(c.bytes) / t[2];
    std::printf(
        "ratio shm %s %s: bandwidth brasa-shm/raw-mpi %.3f, brasa-shm/raw-gloo %.3f "
        "(shm %.1f us, mpi %.1f us, gloo %.1f us); shm moves %.2f GB/s = %.3f of STREAM copy\n",
        c.op.c_str(), human(c.bytes).c_str(), mpi_us / shm_us, gloo_us / shm_us, shm_us, mpi_us,
        gloo_us, algbw / 1e9, algbw / stream);
    if (floor.staged > 0) {
      const double best =
          floor.cross_memory > 0 ? std::min(floor.cross_memory, floor.staged) : floor.staged;
      std::printf(
          "floor shm allreduce %s: its copies alone take %.1f us by cross-memory attach, %.1f us "
          "by memcpy through staging; brasa-shm at %.3f of the faster, which bounds "
          "brasa-shm/raw-mpi by %.3f\n",
          human(c.bytes).c_str(), floor.cross_memory * 1e6, floor.staged * 1e6, best / t[2],
          t[0] / best);
    }
    std::fflush(stdout);
  }
  // The shm result is checked, not only timed.
  std::vector<brasa::Tensor> check{brasa::full({1000}, r.rank + 1.0)};
  pg.allreduce(check)->wait();
  const float want = r.world_size * (r.world_size + 1) / 2.0f;
  if (static_cast<float*>(check[0].data_ptr())[999] != want) {
    std::fprintf(stderr, "comm_bench: the shm allreduce is wrong\n");
    std::exit(1);
  }
  pg.barrier()->wait();
}

}  // namespace

int main(int argc, char** argv) {
  std::string backend = "mpi", only;
  brasa::cli::Parser("comm_bench",
                     "Brasa's process groups against raw MPI or Gloo calls, 2 ranks (under mpirun "
                     "for mpi and shm, brasarun for gloo).")
      .positional("BACKEND", &backend, "the backend (default mpi)", {"mpi", "gloo", "shm"})
      .option("--only", &only,
              "shm: only the cases whose op:bytes contains this (allreduce:4194304)")
      .parse_or_exit(argc, argv);
  if (backend == "mpi") {
    run_mpi();
  } else if (backend == "gloo") {
    run_gloo();
  } else if (backend == "shm") {
    run_shm(only);
  } else {
    std::fprintf(stderr, "usage: comm_bench mpi|gloo\n");
    return 2;
  }
  return 0;
}
