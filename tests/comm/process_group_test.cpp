// The process groups, run by every rank of a real multi-process job: the mpi
// backend under mpirun, the gloo and shm backends under brasarun
// (BRASA_TEST_BACKEND=gloo or shm), with 2, 3 and 4 ranks. Every rank runs the same tests in the
// same order. Inputs are rank + 1, so the expected results are known in closed form: SUM n(n+1)/2,
// PRODUCT n!, MIN 1, MAX n, AVG (n+1)/2.

#include <brasa/comm/distributed.h>
#include <brasa/comm/gloo/process_group_gloo.h>
#include <brasa/comm/mpi/process_group_mpi.h>
#include <brasa/comm/shm/process_group_shm.h>
#include <brasa/comm/store/prefix_store.h>
#include <gtest/gtest.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstdlib>
#include <thread>

#include "../core/test_util.h"
#include "test_backend.h"

namespace brasa::distributed {
namespace {

using namespace std::chrono_literals;
using brasa::testing::values;

using testing::backend;

// A group of `ranks` (all when empty) with its own timeout. Every process
// calls it; non-members get null.
// `cross_memory`: whether the shm backend may reach private tensors with
// process_vm_readv/writev (false: it stages them through its slots).
std::shared_ptr<ProcessGroup> make_group(std::vector<int> ranks, std::chrono::milliseconds timeout,
                                         bool background = false, bool cross_memory = true) {
  static int groups = 0;
  if (backend() == "mpi") {
    ProcessGroupMPI::Options o;
    o.timeout = timeout;
    o.background_collectives = background;
    return ProcessGroupMPI::create(ranks, o);
  }
  const Rendezvous& rdv = testing::shared_rendezvous();
  const int index = groups++;
  if (ranks.empty())
    for (int r = 0; r < rdv.world_size; ++r) ranks.push_back(r);
  auto it = std::find(ranks.begin(), ranks.end(), rdv.rank);
  if (it == ranks.end()) return nullptr;
  auto store = std::make_shared<PrefixStore>("test_group_" + std::to_string(index), rdv.store);
  const int group_rank = static_cast<int>(it - ranks.begin());
  if (backend() == "shm") {
    ProcessGroupShm::Options o;
    o.timeout = timeout;
    o.background_collectives = background;
    // Small rounds, so that the tests' tensors take several.
    o.chunk_bytes = 4096;
    o.cross_memory_attach = cross_memory;
    return std::make_shared<ProcessGroupShm>(store, group_rank, static_cast<int>(ranks.size()), o);
  }
  ProcessGroupGloo::Options o;
  o.timeout = timeout;
  o.background_collectives = background;
  o.peer_host = rdv.master_addr;
  return std::make_shared<ProcessGroupGloo>(store, group_rank, static_cast<int>(ranks.size()), o);
}

std::shared_ptr<ProcessGroup> world() {
  static std::shared_ptr<ProcessGroup> pg = make_group({}, 30s);
  return pg;
}

int R() { return world()->rank(); }
int N() { return world()->size(); }

const std::vector<ScalarType> kAllTypes = {kFloat, kDouble, kHalf, kBFloat16, kLong,
                                           kInt,   kShort,  kChar, kByte,     kBool};
const std::vector<ReduceOp> kAllOps = {ReduceOp::SUM, ReduceOp::AVG, ReduceOp::PRODUCT,
                                       ReduceOp::MIN, ReduceOp::MAX, ReduceOp::BAND,
                                       ReduceOp::BOR, ReduceOp::BXOR};

bool valid(ReduceOp op, ScalarType t) {
  bool bitwise = op == ReduceOp::BAND || op == ReduceOp::BOR || op == ReduceOp::BXOR;
  if (bitwise && isFloatingType(t)) return false;
  if (op == ReduceOp::AVG && !isFloatingType(t)) return false;
  return true;
}

// This rank's input value and the reduction of all ranks' inputs.
double input_value(ScalarType t, int rank) { return t == kBool ? (rank % 2 == 0) : rank + 1; }

double expected(ReduceOp op, ScalarType t, int n) {
  double sum = 0, prod = 1, mn = 1e9, mx = -1e9;
  int64_t band = ~0LL, bor = 0, bxor = 0;
  for (int r = 0; r < n; ++r) {
    double v = input_value(t, r);
    sum += v;
    prod *= v;
    mn = std::min(mn, v);
    mx = std::max(mx, v);
    band &= static_cast<int64_t>(v);
    bor |= static_cast<int64_t>(v);
    bxor ^= static_cast<int64_t>(v);
  }
  if (t == kBool) {  // SUM/MAX: any; PRODUCT/MIN: all
    if (op == ReduceOp::SUM) return sum > 0;
    if (op == ReduceOp::PRODUCT) return prod != 0;
  }
  switch (op) {
    case ReduceOp::SUM:
      return sum;
    case ReduceOp::AVG:
      return sum / n;
    case ReduceOp::PRODUCT:
      return prod;
    case ReduceOp::MIN:
      return mn;
    case ReduceOp::MAX:
      return mx;
    case ReduceOp::BAND:
      return static_cast<double>(band);
    case ReduceOp::BOR:
      return static_cast<double>(bor);
    case ReduceOp::BXOR:
      return static_cast<double>(bxor);
  }
  return 0;
}

Tensor filled(std::vector<int64_t> shape, ScalarType t, double v) {
  return full(shape, v, TensorOptions().dtype(t));
}

void expect_all(const Tensor& t, double v, const std::string& what) {
  for (double x : values(t)) {
    ASSERT_DOUBLE_EQ(x, v) << what;
  }
}

TEST(ProcessGroup, AllreduceEveryDtypeAndOp) {
  auto pg = world();
  for (ScalarType t : kAllTypes)
    for (ReduceOp op : kAllOps) {
      if (!valid(op, t)) continue;
      std::vector<Tensor> ts{filled({3, 5}, t, input_value(t, R()))};
      AllreduceOptions o;
      o.reduceOp = op;
      pg->allreduce(ts, o)->wait();
      expect_all(ts[0], expected(op, t, N()), std::string(toString(t)) + " " + to_string(op));
    }
}

TEST(ProcessGroup, EveryOpEveryDtype) {
  auto pg = world();
  const int n = N();
  for (ScalarType t : kAllTypes) {
    const std::string dt = toString(t);
    const double mine = input_value(t, R());
    // reduce (root rotating with the op) and reduce_scatter_tensor, every valid op
    int root = 0;
    for (ReduceOp op : kAllOps) {
      if (!valid(op, t)) continue;
      std::vector<Tensor> rs{filled({3}, t, mine)};
      ReduceOptions ro;
      ro.reduceOp = op;
      ro.rootRank = root;
      pg->reduce(rs, ro)->wait();
      if (R() == root) expect_all(rs[0], expected(op, t, n), "reduce " + dt + " " + to_string(op));
      root = (root + 1) % n;

      Tensor in = filled({n * 2}, t, mine), out = filled({2}, t, 0);
      ReduceScatterOptions so;
      so.reduceOp = op;
      pg->reduce_scatter_tensor(out, in, so)->wait();
      expect_all(out, expected(op, t, n), "reduce_scatter_tensor " + dt + " " + to_string(op));
    }
    // broadcast from the last rank
    std::vector<Tensor> b{filled({5}, t, R() == n - 1 ? 1 : 0)};
    BroadcastOptions bo;
    bo.rootRank = n - 1;
    pg->broadcast(b, bo)->wait();
    expect_all(b[0], 1, "broadcast " + dt);
    // allgather_into_tensor, gather to rank 0, scatter from rank 0, alltoall_base
    Tensor all = filled({n * 2}, t, 0), one = filled({2}, t, mine);
    pg->allgather_into_tensor(all, one)->wait();
    for (int r = 0; r < n; ++r)
      expect_all(all.narrow(0, 2 * r, 2), input_value(t, r), "allgather " + dt);
    std::vector<std::vector<Tensor>> g;
    if (R() == 0) g.push_back(std::vector<Tensor>(n));
    if (R() == 0)
      for (auto& x : g[0]) x = filled({2}, t, 0);
    std::vector<Tensor> gin{one};
    pg->gather(g, gin)->wait();
    if (R() == 0)
      for (int r = 0; r < n; ++r) expect_all(g[0][r], input_value(t, r), "gather " + dt);
    std::vector<std::vector<Tensor>> sc;
    if (R() == 0) {
      sc.push_back({});
      for (int r = 0; r < n; ++r) sc[0].push_back(filled({2}, t, input_value(t, r)));
    }
    std::vector<Tensor> sout{filled({2}, t, 0)};
    pg->scatter(sout, sc)->wait();
    expect_all(sout[0], mine, "scatter " + dt);
    Tensor a_in = filled({n}, t, mine), a_out = filled({n}, t, 0);
    std::vector<int64_t> none;
    pg->alltoall_base(a_out, a_in, none, none)->wait();
    for (int r = 0; r < n; ++r)
      expect_all(a_out.narrow(0, r, 1), input_value(t, r), "alltoall_base " + dt);
  }
}

TEST(ProcessGroup, InvalidReduceOpsAreRejected) {
  std::vector<Tensor> f{filled({2}, kFloat, 1)};
  AllreduceOptions o;
  o.reduceOp = ReduceOp::BAND;
  EXPECT_ERROR(backend() + ".allreduce: ReduceOp BAND needs an integer or bool tensor, got Float",
               world()->allreduce(f, o));
  std::vector<Tensor> i{filled({2}, kLong, 1)};
  o.reduceOp = ReduceOp::AVG;
  EXPECT_ERROR(backend() + ".allreduce: ReduceOp AVG needs a floating-point tensor, got Long",
               world()->allreduce(i, o));
}

TEST(ProcessGroup, BroadcastAndReduceFromEveryRoot) {
  auto pg = world();
  for (int root = 0; root < N(); ++root)
    for (ScalarType t : {kFloat, kLong, kHalf, kBool}) {
      std::vector<Tensor> ts{filled({4}, t, R() == root ? 1 : 0)};
      BroadcastOptions b;
      b.rootRank = root;
      pg->broadcast(ts, b)->wait();
      expect_all(ts[0], 1, "broadcast");

      std::vector<Tensor> rs{filled({4}, t, input_value(t, R()))};
      ReduceOptions o;
      o.rootRank = root;
      o.reduceOp = ReduceOp::MAX;
      pg->reduce(rs, o)->wait();
      if (R() == root) expect_all(rs[0], expected(ReduceOp::MAX, t, N()), "reduce at root");
    }
}

TEST(ProcessGroup, GatherFamily) {
  auto pg = world();
  const int n = N();
  // allgather into a list
  std::vector<Tensor> in{filled({2, 3}, kFloat, R() + 1)};
  std::vector<std::vector<Tensor>> out(1);
  for (int r = 0; r < n; ++r) out[0].push_back(filled({2, 3}, kFloat, -1));
  pg->allgather(out, in)->wait();
  for (int r = 0; r < n; ++r) expect_all(out[0][r], r + 1, "allgather");
  // allgather into one tensor
  Tensor flat = filled({n * 2}, kInt, -1);
  Tensor mine = filled({2}, kInt, R() + 1);
  pg->allgather_into_tensor(flat, mine)->wait();
  for (int r = 0; r < n; ++r) expect_all(flat.narrow(0, 2 * r, 2), r + 1, "allgather_into_tensor");
  // gather and scatter, every root
  for (int root = 0; root < n; ++root) {
    std::vector<std::vector<Tensor>> g;
    if (R() == root) {
      g.resize(1);
      for (int r = 0; r < n; ++r) g[0].push_back(filled({3}, kDouble, -1));
    }
    std::vector<Tensor> gin{filled({3}, kDouble, R() * 10)};
    GatherOptions go;
    go.rootRank = root;
    pg->gather(g, gin, go)->wait();
    if (R() == root)
      for (int r = 0; r < n; ++r) expect_all(g[0][r], r * 10, "gather");

    std::vector<std::vector<Tensor>> s;
    if (R() == root) {
      s.resize(1);
      for (int r = 0; r < n; ++r) s[0].push_back(filled({2}, kLong, 100 + r));
    }
    std::vector<Tensor> sout{filled({2}, kLong, -1)};
    ScatterOptions so;
    so.rootRank = root;
    pg->scatter(sout, s, so)->wait();
    expect_all(sout[0], 100 + R(), "scatter");
  }
}

TEST(ProcessGroup, ReduceScatterAndAlltoall) {
  auto pg = world();
  const int n = N();
  // reduce_scatter: block r of every rank's input is r + rank; rank r gets sum over ranks.
  std::vector<std::vector<Tensor>> in(1);
  for (int r = 0; r < n; ++r) in[0].push_back(filled({3}, kFloat, r + R()));
  std::vector<Tensor> out{filled({3}, kFloat, -1)};
  pg->reduce_scatter(out, in)->wait();
  expect_all(out[0], n * R() + n * (n - 1) / 2.0, "reduce_scatter");

  Tensor big = arange(n * 2, TensorOptions().dtype(kFloat));  // same on every rank
  Tensor part = filled({2}, kFloat, -1);
  ReduceScatterOptions avg;
  avg.reduceOp = ReduceOp::AVG;
  pg->reduce_scatter_tensor(part, big, avg)->wait();
  EXPECT_EQ(values(part), (std::vector<double>{2.0 * R(), 2.0 * R() + 1}));

  // alltoall_base with equal splits: block r holds 100 * rank + r.
  Tensor src = empty({n, 2}, TensorOptions().dtype(kLong));
  for (int r = 0; r < n; ++r) src[r].fill_(100 * R() + r);
  Tensor dst = filled({n, 2}, kLong, -1);
  std::vector<int64_t> none;
  pg->alltoall_base(dst, src, none, none)->wait();
  for (int r = 0; r < n; ++r) expect_all(dst[r], 100 * r + R(), "alltoall_base");

  // uneven splits: rank s sends s + 1 rows to every rank.
  std::vector<int64_t> in_splits(n, R() + 1), out_splits;
  for (int r = 0; r < n; ++r) out_splits.push_back(r + 1);
  Tensor usrc = filled({n * (R() + 1)}, kInt, R());
  Tensor udst = filled({n * (n + 1) / 2}, kInt, -1);
  pg->alltoall_base(udst, usrc, out_splits, in_splits)->wait();
  int64_t off = 0;
  for (int r = 0; r < n; ++r) {
    expect_all(udst.narrow(0, off, r + 1), r, "uneven alltoall_base");
    off += r + 1;
  }

  // alltoall of lists
  std::vector<Tensor> ins, outs;
  for (int r = 0; r < n; ++r) {
    ins.push_back(filled({r + 1}, kDouble, R() * 1000 + r));
    outs.push_back(filled({R() + 1}, kDouble, -1));
  }
  pg->alltoall(outs, ins)->wait();
  for (int r = 0; r < n; ++r) expect_all(outs[r], r * 1000 + R(), "alltoall");
  pg->barrier()->wait();
}

TEST(ProcessGroup, SendRecvAndAnySource) {
  auto pg = world();
  const int n = N();
  std::vector<Tensor> out{filled({5}, kFloat, R())}, in{filled({5}, kFloat, -1)};
  auto s = pg->send(out, (R() + 1) % n, 7);
  auto r = pg->recv(in, (R() + n - 1) % n, 7);
  r->wait();
  s->wait();
  expect_all(in[0], (R() + n - 1) % n, "ring recv");
  EXPECT_EQ(r->source_rank(), (R() + n - 1) % n);

  if (R() == 0) {
    std::vector<bool> seen(n, false);
    for (int k = 1; k < n; ++k) {
      std::vector<Tensor> t{filled({1}, kLong, -1)};
      auto w = pg->recv_anysource(t, 3);
      w->wait();
      int src = w->source_rank();
      ASSERT_GT(src, 0);
      EXPECT_EQ(values(t[0])[0], src * 11);
      seen[src] = true;
    }
    for (int k = 1; k < n; ++k) EXPECT_TRUE(seen[k]);
  } else {
    std::vector<Tensor> t{filled({1}, kLong, R() * 11)};
    pg->send(t, 0, 3)->wait();
  }
  pg->barrier()->wait();
}

TEST(ProcessGroup, NonContiguousAndEmptyTensors) {
  auto pg = world();
  Tensor base = filled({4, 6}, kFloat, 0);
  base.copy_(arange(24, TensorOptions().dtype(kFloat)).reshape({4, 6}));
  Tensor view = base.t();  // non-contiguous
  ASSERT_FALSE(view.is_contiguous());
  std::vector<Tensor> ts{view};
  pg->allreduce(ts)->wait();
  auto v = values(base);
  for (int i = 0; i < 24; ++i) ASSERT_EQ(v[i], i * N());

  Tensor slice = filled({3, 4}, kLong, R()).select(1, 2);  // a strided column
  std::vector<Tensor> bs{slice};
  pg->broadcast(bs)->wait();
  expect_all(slice, 0, "broadcast into a column");

  std::vector<Tensor> empty_t{empty({0}, TensorOptions().dtype(kFloat))};
  pg->allreduce(empty_t)->wait();
  EXPECT_EQ(empty_t[0].numel(), 0);
  std::vector<std::vector<Tensor>> eo(1);
  for (int r = 0; r < N(); ++r) eo[0].push_back(empty({0}, TensorOptions().dtype(kFloat)));
  pg->allgather(eo, empty_t)->wait();
}

// Tensors of many rounds on the shm backend (its tests use 4 KiB rounds):
// values are small integers, exact in every dtype used.
TEST(ProcessGroup, LargeTensorsTakeManyRounds) {
  auto pg = world();
  const int n = N(), me = R();
  auto pattern = [](int64_t count, ScalarType t, auto value) {
    Tensor x = empty({count}, TensorOptions().dtype(kDouble));
    double* p = x.data_ptr<double>();
    for (int64_t i = 0; i < count; ++i) p[i] = value(i);
    return x.to(t);
  };
  auto check = [](const Tensor& got, auto want, const std::string& what) {
    Tensor d = got.to(kDouble).contiguous();
    const double* p = d.data_ptr<double>();
    for (int64_t i = 0; i < d.numel(); ++i) ASSERT_EQ(p[i], want(i)) << what << " at element " << i;
  };
  const int64_t big = 100003;
  // On shm, private tensors this large go straight between the ranks where
  // the system allows cross-memory attach; the staged group takes the slots.
  static auto staged_group = backend() == "shm" ? make_group({}, 30s, false, false) : nullptr;
  for (const auto& group : {pg, staged_group}) {
    if (!group) continue;
    std::vector<Tensor> f{pattern(big, kFloat, [&](int64_t i) { return i % 13 + me; })};
    group->allreduce(f)->wait();
    check(
        f[0], [&](int64_t i) { return double(i % 13) * n + n * (n - 1) / 2; }, "allreduce");

    std::vector<Tensor> h{pattern(big, kBFloat16, [&](int64_t i) { return i % 13 + me; })};
    AllreduceOptions mx;
    mx.reduceOp = ReduceOp::MAX;
    group->allreduce(h, mx)->wait();
    check(
        h[0], [&](int64_t i) { return double(i % 13 + n - 1); }, "allreduce MAX bf16");
  }
  if (staged_group) {
    auto* staged = dynamic_cast<ProcessGroupShm*>(staged_group.get());
    EXPECT_FALSE(staged->uses_cross_memory_attach());
    EXPECT_EQ(staged->cross_memory_allreduces(), 0u);
  }

  std::vector<Tensor> l{pattern(big, kLong, [&](int64_t i) { return i % 7 * (me + 1); })};
  ReduceOptions ro;
  ro.rootRank = n - 1;
  pg->reduce(l, ro)->wait();
  if (me == n - 1)
    check(
        l[0], [&](int64_t i) { return double(i % 7) * n * (n + 1) / 2; }, "reduce");

  const int64_t part = 30001;
  Tensor all = empty({n * part}, TensorOptions().dtype(kInt));
  Tensor mine = pattern(part, kInt, [&](int64_t i) { return i % 11 + 100 * me; });
  pg->allgather_into_tensor(all, mine)->wait();
  check(
      all, [&](int64_t i) { return double(i % part % 11 + 100 * (i / part)); }, "allgather");

  std::vector<Tensor> b{pattern(big, kDouble, [&](int64_t i) { return me == 1 % n ? i : -1.0; })};
  BroadcastOptions bo;
  bo.rootRank = 1 % n;
  pg->broadcast(b, bo)->wait();
  check(
      b[0], [](int64_t i) { return double(i); }, "broadcast");

  const int64_t block = 20011;
  Tensor rs_in =
      pattern(n * block, kFloat, [&](int64_t i) { return i / block + i % block % 5 + me; });
  Tensor rs_out = empty({block}, TensorOptions().dtype(kFloat));
  pg->reduce_scatter_tensor(rs_out, rs_in)->wait();
  check(
      rs_out, [&](int64_t i) { return double(n) * (me + i % 5) + n * (n - 1) / 2; },
      "reduce_scatter_tensor");

  // alltoall_base, uneven: rank s sends (s + 1) * 5000 elements to every rank.
  std::vector<int64_t> in_splits(n, (me + 1) * 5000), out_splits;
  for (int r = 0; r < n; ++r) out_splits.push_back((r + 1) * 5000);
  Tensor a_in = pattern(n * (me + 1) * 5000, kFloat,
                        [&](int64_t i) { return me * 7 + i / ((me + 1) * 5000); });
  Tensor a_out = empty({5000 * n * (n + 1) / 2}, TensorOptions().dtype(kFloat));
  pg->alltoall_base(a_out, a_in, out_splits, in_splits)->wait();
  int64_t at = 0;
  for (int r = 0; r < n; ++r) {
    check(
        a_out.narrow(0, at, (r + 1) * 5000), [&](int64_t) { return double(r * 7 + me); },
        "alltoall_base from " + std::to_string(r));
    at += (r + 1) * 5000;
  }

  // Point to point: a message larger than any buffer, and 20 small ones sent
  // before their receives exist, the small ones received in the opposite
  // order of their tags.
  const int next = (me + 1) % n, prev = (me + n - 1) % n;
  std::vector<Tensor> large_out{pattern(300001, kFloat, [&](int64_t i) { return i % 1000 + me; })};
  std::vector<Tensor> large_in{empty({300001}, TensorOptions().dtype(kFloat))};
  std::vector<std::shared_ptr<Work>> sends;
  sends.push_back(pg->send(large_out, next, 100));
  std::vector<std::vector<Tensor>> small(20);
  for (int k = 0; k < 20; ++k) {
    small[k] = {filled({k + 1}, kLong, me * 100 + k)};
    sends.push_back(pg->send(small[k], next, 200 + k));
  }
  // shm streams sends eagerly: after a barrier every small message is on its
  // way before a receive exists.
  if (backend() == "shm") pg->barrier()->wait();
  pg->recv(large_in, prev, 100)->wait();
  check(
      large_in[0], [&](int64_t i) { return double(i % 1000 + prev); }, "large message");
  for (int k = 19; k >= 0; --k) {
    std::vector<Tensor> got{filled({k + 1}, kLong, -1)};
    pg->recv(got, prev, 200 + k)->wait();
    expect_all(got[0], prev * 100 + k, "early message " + std::to_string(k));
  }
  for (auto& w : sends) w->wait();
  pg->barrier()->wait();
}

// Tensors in shared memory (the shm backend reduces straight between them,
// with no staging), tensors in private memory, and a mix of both.
TEST(ProcessGroup, AllreduceOfSharedMemoryTensors) {
  auto pg = world();
  const int n = N(), me = R();
  const int64_t count = 300007;  // 1.2 MB: above the shm backend's zero-copy threshold
  auto make = [&](bool shared, int64_t offset) {
    Tensor base = empty({count + offset}, TensorOptions().dtype(kFloat));
    if (shared) base.share_memory_();
    Tensor t = base.narrow(0, offset, count);
    float* p = t.data_ptr<float>();
    for (int64_t i = 0; i < count; ++i) p[i] = static_cast<float>(i % 9 + me);
    return t;
  };
  auto check = [&](const Tensor& t, const std::string& what) {
    const float* p = t.data_ptr<float>();
    for (int64_t i = 0; i < count; ++i)
      ASSERT_EQ(p[i], static_cast<float>(n * (i % 9) + n * (n - 1) / 2)) << what << " at " << i;
  };
  auto* shm = dynamic_cast<ProcessGroupShm*>(pg.get());
  const uint64_t zero_copy_before = shm ? shm->zero_copy_allreduces() : 0;
  for (int rep = 0; rep < 3; ++rep) {  // new storages each time: mappings must follow
    std::vector<Tensor> all_shared{make(true, rep * 16)};
    pg->allreduce(all_shared)->wait();
    check(all_shared[0], "every rank shared, rep " + std::to_string(rep));
  }
  Tensor kept = make(true, 0);
  for (int rep = 0; rep < 3; ++rep) {  // the same storage again and again
    float* p = kept.data_ptr<float>();
    for (int64_t i = 0; i < count; ++i) p[i] = static_cast<float>(i % 9 + me);
    std::vector<Tensor> v{kept};
    pg->allreduce(v)->wait();
    check(kept, "the same shared tensor, rep " + std::to_string(rep));
  }
  if (shm) {
    EXPECT_EQ(shm->zero_copy_allreduces() - zero_copy_before, 6u);
  }
  const uint64_t cross_before = shm ? shm->cross_memory_allreduces() : 0;
  std::vector<Tensor> mixed{make(me % 2 == 0, 3)};
  pg->allreduce(mixed)->wait();
  check(mixed[0], "shared on even ranks only");
  std::vector<Tensor> private_tensor{make(false, 5)};
  pg->allreduce(private_tensor)->wait();
  check(private_tensor[0], "private on every rank");
  if (shm) {
    EXPECT_EQ(shm->zero_copy_allreduces() - zero_copy_before, 6u);
    // Where the system allows cross-memory attach (it does for same-user
    // processes unless a seccomp profile forbids it), both went straight
    // between the ranks' memory.
    EXPECT_EQ(shm->cross_memory_allreduces() - cross_before,
              shm->uses_cross_memory_attach() ? 2u : 0u);
    // Where this process may read its own memory that way, no seccomp
    // profile forbids it, and the group must have found it usable.
    float probe = 1.5f, read_back = 0;
    iovec local{&read_back, sizeof read_back}, remote{&probe, sizeof probe};
    if (::process_vm_readv(::getpid(), &local, 1, &remote, 1, 0) == sizeof probe) {
      EXPECT_EQ(read_back, 1.5f);
      EXPECT_TRUE(shm->uses_cross_memory_attach());
    }
  }
  std::vector<Tensor> avg{make(true, 0)};
  AllreduceOptions o;
  o.reduceOp = ReduceOp::MAX;
  pg->allreduce(avg, o)->wait();
  EXPECT_EQ(avg[0].data_ptr<float>()[count - 1], static_cast<float>((count - 1) % 9 + n - 1));
}

// Broadcasts, gathers and reduce-scatters large enough for the shm backend
// to copy straight between the ranks' tensors (a broadcast's receivers copy
// most, the root writes the rest), from every root, with tensors private,
// shared, or a mix of both.
TEST(ProcessGroup, LargeDirectCollectivesSharedAndPrivate) {
  auto pg = world();
  const int n = N(), me = R();
  const int64_t count = 70001;  // 280 KB, not a multiple of any rank count
  for (int root = 0; root < n; ++root)
    for (int sharing = 0; sharing < 3; ++sharing) {  // none, every rank, every other rank
      Tensor t = empty({count}, TensorOptions().dtype(kFloat));
      if (sharing == 1 || (sharing == 2 && me % 2 == 0)) t.share_memory_();
      float* p = t.data_ptr<float>();
      for (int64_t i = 0; i < count; ++i)
        p[i] = me == root ? static_cast<float>(i % 1000 + root) : -1.0f;
      std::vector<Tensor> v{t};
      BroadcastOptions o;
      o.rootRank = root;
      pg->broadcast(v, o)->wait();
      for (int64_t i = 0; i < count; ++i)
        ASSERT_EQ(p[i], static_cast<float>(i % 1000 + root))
            << "root " << root << ", sharing " << sharing << ", element " << i;

      // The same tensors gathered to the root, and reduce-scattered.
      for (int64_t i = 0; i < count; ++i) p[i] = static_cast<float>(i % 7 + 10 * me);
      std::vector<Tensor> in{t};
      std::vector<std::vector<Tensor>> out(me == root ? 1 : 0);
      if (me == root)
        for (int r = 0; r < n; ++r) out[0].push_back(full({count}, -1.0));
      GatherOptions go;
      go.rootRank = root;
      pg->gather(out, in, go)->wait();
      if (me == root)
        for (int r = 0; r < n; ++r) {
          const float* q = out[0][static_cast<size_t>(r)].data_ptr<float>();
          for (int64_t i = 0; i < count; ++i)
            ASSERT_EQ(q[i], static_cast<float>(i % 7 + 10 * r))
                << "gather to " << root << " from " << r << ", sharing " << sharing;
        }
    }
  // allgather_into_tensor in place (the input is this rank's block of the
  // output), large and small.
  for (int64_t k : {int64_t{50000}, int64_t{100}}) {
    Tensor all = full({n * k}, -1.0);
    Tensor mine = all.narrow(0, me * k, k);
    mine.fill_(static_cast<double>(me + 1));
    pg->allgather_into_tensor(all, mine)->wait();
    const float* a = all.data_ptr<float>();
    for (int64_t i = 0; i < n * k; ++i)
      ASSERT_EQ(a[i], static_cast<float>(i / k + 1)) << "in-place allgather of " << k;
  }
  const int64_t block = 40000;  // 160 KB per rank
  Tensor rs_in = empty({n * block}, TensorOptions().dtype(kFloat));
  if (me % 2 == 0) rs_in.share_memory_();
  float* q = rs_in.data_ptr<float>();
  for (int64_t i = 0; i < n * block; ++i) q[i] = static_cast<float>(i / block + i % 3 + me);
  Tensor rs_out = empty({block}, TensorOptions().dtype(kFloat));
  pg->reduce_scatter_tensor(rs_out, rs_in)->wait();
  const float* r = rs_out.data_ptr<float>();
  for (int64_t i = 0; i < block; ++i)
    ASSERT_EQ(r[i], static_cast<float>(n * (me + (me * block + i) % 3) + n * (n - 1) / 2))
        << "element " << i;
}

// The shm backend's own errors: sends to itself, a message larger or
// smaller than the receiving tensor (posted before and after it arrives),
// and alltoall splits the sender and the receiver disagree on.
TEST(ProcessGroup, ShmPointToPointAndSplitErrors) {
  if (backend() != "shm") GTEST_SKIP() << "shm's own checks; this run tests " << backend();
  auto pg = world();
  const int me = R(), n = N();
  std::vector<Tensor> four{filled({4}, kFloat, 1)}, five{filled({5}, kFloat, 0)};
  EXPECT_ERROR("shm.send: rank " + std::to_string(me) + " cannot send to itself",
               pg->send(four, me, 1));
  if (me == 0) {
    pg->send(four, 1, 77)->wait();  // arrives before its receive (the barrier below)
    pg->send(four, 1, 78)->wait();
  }
  pg->barrier()->wait();
  if (me == 1) {
    EXPECT_ERROR(
        "ProcessGroupShm.recv: rank 0 sent 16 bytes with tag 77 but the receiving "
        "tensor holds 20",
        pg->recv(five, 0, 77)->wait());
    auto early = pg->recv(five, 0, 79);  // posted before the message
    pg->barrier()->wait();
    EXPECT_ERROR(
        "ProcessGroupShm.recv: rank 0 sent 16 bytes with tag 79 but the receiving "
        "tensor holds 20",
        early->wait());
    std::vector<Tensor> right{filled({4}, kFloat, 0)};
    pg->recv(right, 0, 78)->wait();  // the next message is untouched
    expect_all(right[0], 1, "message after a refused one");
  } else {
    pg->barrier()->wait();
    if (me == 0) pg->send(four, 1, 79)->wait();
  }
  pg->barrier()->wait();

  // Rank 0 expects 2 elements from rank 1, which sends 1.
  static auto broken = make_group({}, 5s);
  std::vector<int64_t> in_splits(n, 1), out_splits(n, 1);
  if (me == 0) out_splits[1] = 2;
  Tensor in = filled({n}, kFloat, me), out = filled({me == 0 ? n + 1 : n}, kFloat, -1);
  try {
    broken->alltoall_base(out, in, out_splits, in_splits)->wait();
    EXPECT_NE(me, 0) << "rank 0 took a mismatched split";
  } catch (const DistError& e) {
    if (me == 0) {
      EXPECT_NE(std::string(e.what()).find("rank 1 sends 1 elements to rank 0, which expects 2"),
                std::string::npos)
          << e.what();
    }
  }
  world()->barrier()->wait();
}

TEST(ProcessGroup, AllreduceCoalesced) {
  std::vector<Tensor> ts{filled({2, 2}, kFloat, R() + 1), filled({3}, kFloat, 2 * (R() + 1)),
                         filled({4, 6}, kFloat, 1).t()};
  AllreduceCoalescedOptions o;
  o.reduceOp = ReduceOp::AVG;
  world()->allreduce_coalesced(ts, o)->wait();
  expect_all(ts[0], (N() + 1) / 2.0, "coalesced 0");
  expect_all(ts[1], N() + 1.0, "coalesced 1");
  expect_all(ts[2], 1, "coalesced 2");
  std::vector<Tensor> mixed{filled({2}, kFloat, 1), filled({2}, kLong, 1)};
  EXPECT_ERROR("all tensors must have one dtype; tensors[0] is Float but tensors[1] is Long",
               world()->allreduce_coalesced(mixed));
}

TEST(ProcessGroup, ThousandAsyncOpsInFlight) {
  auto pg = world();
  std::vector<std::vector<Tensor>> bufs;
  std::vector<std::shared_ptr<Work>> works;
  for (int i = 0; i < 1000; ++i) {
    bufs.push_back({filled({16}, kFloat, i + R())});
    works.push_back(pg->allreduce(bufs.back()));
  }
  for (auto& w : works) w->wait();
  const int n = N();
  for (int i = 0; i < 1000; ++i)
    expect_all(bufs[i][0], n * i + n * (n - 1) / 2.0, "op " + std::to_string(i));
  for (auto& w : works) EXPECT_TRUE(w->is_success());
}

TEST(ProcessGroup, BackgroundCollectivesOverlapAndStayInOrder) {
  static auto pg = make_group({}, 30s, /*background=*/true);
  const int n = N();
  std::vector<std::vector<Tensor>> bufs;
  std::vector<std::shared_ptr<Work>> works;
  for (int i = 0; i < 200; ++i) {
    bufs.push_back({filled({64}, i % 2 ? kDouble : kHalf, i % 7 + R())});
    AllreduceOptions o;
    o.reduceOp = i % 3 ? ReduceOp::SUM : ReduceOp::MAX;
    works.push_back(pg->allreduce(bufs.back(), o));
  }
  std::vector<Tensor> b{filled({8}, kLong, R() == 0 ? 3 : 0)};
  works.push_back(pg->broadcast(b));
  for (auto& w : works) w->wait();
  for (int i = 0; i < 200; ++i) {
    double want = i % 3 ? n * (i % 7) + n * (n - 1) / 2.0 : i % 7 + n - 1;
    expect_all(bufs[i][0], want, "background op " + std::to_string(i));
  }
  expect_all(b[0], 3, "background broadcast");
  pg->barrier()->wait();
}

TEST(ProcessGroup, SeveralGroupsAtOnce) {
  // Every process joins the creation of each group (as in c10d).
  std::vector<int> evens;
  for (int r = 0; r < N(); r += 2) evens.push_back(r);
  auto even_group = make_group(evens, 30s);
  auto all_group = make_group({}, 30s);
  ASSERT_NE(all_group, nullptr);
  EXPECT_EQ(even_group != nullptr, R() % 2 == 0);
  // Both used at the same time from two threads.
  Tensor a = filled({64}, kLong, 1), b = filled({64}, kLong, R());
  std::thread t1([&] {
    for (int i = 0; i < 50; ++i) {
      std::vector<Tensor> ts{filled({64}, kLong, 1)};
      all_group->allreduce(ts)->wait();
      if (i == 49) a = ts[0];
    }
  });
  if (even_group) {
    EXPECT_EQ(even_group->size(), static_cast<int>(evens.size()));
    EXPECT_EQ(even_group->rank(), R() / 2);
    for (int i = 0; i < 50; ++i) {
      std::vector<Tensor> ts{filled({64}, kLong, R())};
      even_group->allreduce(ts)->wait();
      if (i == 49) b = ts[0];
    }
  }
  t1.join();
  expect_all(a, N(), "all group");
  if (even_group) {
    double sum = 0;
    for (int r : evens) sum += r;
    expect_all(b, sum, "even group");
  }
  all_group->barrier()->wait();
}

TEST(ProcessGroup, MismatchedCollectivesNameBothSides) {
  // Kept alive to the end: a failed group's messages must not meet a freed one.
  static auto pg = make_group({}, 1500ms);
  std::vector<Tensor> ts{filled({8}, kFloat, 1)};
  try {
    if (R() == 0) {
      pg->allreduce(ts)->wait();
    } else {
      pg->broadcast(ts)->wait();
    }
    ADD_FAILURE() << "no error";
  } catch (const DistError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("the ranks called different collectives"), std::string::npos) << what;
    if (R() == 0) {
      EXPECT_NE(what.find("rank 0 called allreduce(Float, 8 elements, SUM)"), std::string::npos)
          << what;
      EXPECT_NE(what.find("called broadcast(Float, 8 elements, root 0)"), std::string::npos)
          << what;
    } else {
      EXPECT_NE(what.find("called broadcast(Float, 8 elements, root 0)"), std::string::npos)
          << what;
      EXPECT_NE(what.find("but rank 0 called allreduce(Float, 8 elements, SUM)"), std::string::npos)
          << what;
    }
  }
  if (backend() == "mpi") {
    // MPI compares before starting: nothing was started, so the group still works.
    std::vector<Tensor> sized{filled({R() == 0 ? 4 : 5}, kFloat, 1)};
    EXPECT_ERROR("the ranks called different collectives", pg->allreduce(sized));
    pg->barrier()->wait();
    std::vector<Tensor> ok{filled({2}, kFloat, 1)};
    pg->allreduce(ok)->wait();
    expect_all(ok[0], N(), "after mismatch");
  } else {
    // Gloo learns of it by the failure; the group is done for.
    EXPECT_ERROR("this group can no longer be used", pg->barrier());
  }
  world()->barrier()->wait();
}

TEST(ProcessGroup, MissingRankIsNamedWhenTheTimeoutPasses) {
  // Kept alive to the end: its unmatched messages must not meet a freed communicator.
  static auto pg = make_group({}, 500ms);
  const int last = N() - 1;
  if (R() != last) {
    std::vector<Tensor> ts{filled({4}, kFloat, 1)};
    auto t0 = std::chrono::steady_clock::now();
    try {
      pg->allreduce(ts)->wait();
      ADD_FAILURE() << "no timeout";
    } catch (const DistTimeoutError& e) {
      std::string what = e.what();
      EXPECT_NE(what.find("rank(s) " + std::to_string(last) + " did not reach it"),
                std::string::npos)
          << what;
      EXPECT_NE(what.find("500 ms"), std::string::npos) << what;
    }
    double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_GE(waited, 0.45);
    EXPECT_LT(waited, 10.0);
    EXPECT_ERROR("this group can no longer be used", pg->allreduce(ts));
  }
  world()->barrier()->wait();
}

TEST(ProcessGroup, WaitWithATimeoutReturnsControl) {
  auto pg = world();
  // Rank 0 waits for a message that comes 300 ms later.
  std::vector<Tensor> t{filled({1}, kFloat, -1)};
  if (R() == 0) {
    auto w = pg->recv(t, N() - 1, 9);
    EXPECT_THROW(w->wait(50ms), DistTimeoutError);
    EXPECT_FALSE(w->is_completed());
    w->wait();
    EXPECT_EQ(values(t[0])[0], 42);
  } else if (R() == N() - 1) {
    std::this_thread::sleep_for(300ms);
    std::vector<Tensor> s{filled({1}, kFloat, 42)};
    pg->send(s, 0, 9)->wait();
  }
  pg->barrier()->wait();
}

TEST(ProcessGroup, ArgumentErrors) {
  auto pg = world();
  std::vector<Tensor> two{filled({1}, kFloat, 1), filled({1}, kFloat, 1)};
  EXPECT_ERROR(backend() + ".allreduce: expects exactly one tensor in tensors", pg->allreduce(two));
  std::vector<Tensor> one{filled({1}, kFloat, 1)};
  BroadcastOptions b;
  b.rootRank = N();
  EXPECT_ERROR(
      backend() + ".broadcast: root " + std::to_string(N()) + " is not a rank of this group",
      pg->broadcast(one, b));
  std::vector<std::vector<Tensor>> short_list(1);
  short_list[0].push_back(filled({1}, kFloat, 1));
  if (N() > 1)
    EXPECT_ERROR("outputs[0] must hold one tensor per rank", pg->allgather(short_list, one));
  std::vector<std::vector<Tensor>> wrong(1);
  for (int r = 0; r < N(); ++r) wrong[0].push_back(filled({2}, kFloat, 1));
  EXPECT_ERROR("outputs[0][0] has 2 elements but the input has 1", pg->allgather(wrong, one));
  EXPECT_ERROR(backend() + ".send: destination -1 is not a rank of this group",
               pg->send(one, -1, 0));
  Tensor odd = filled({N() * 2 + 1}, kFloat, 0), out = filled({N() * 2 + 1}, kFloat, 0);
  std::vector<int64_t> none;
  if (N() > 1) EXPECT_ERROR("does not split evenly over", pg->alltoall_base(out, odd, none, none));
}

}  // namespace
}  // namespace brasa::distributed
