// The process groups, run by every rank of a real multi-process job: the mpi
// backend under mpirun, the gloo and shm backends under brasarun
// (BRASA_TEST_BACKEND=gloo or shm), with 2, 3 and 4 ranks. Every rank runs the same tests in the
// same order. Inputs are rank + 1, so the expected results are known in closed form: SUM n(n+1)/2,
// PRODUCT n!, MIN 1, MAX n, AVG (n+1)/2.

#include "process_group_util.h"

namespace brasa::distributed {
namespace {

using namespace std::chrono_literals;
using namespace pg_test;

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

}  // namespace
}  // namespace brasa::distributed
