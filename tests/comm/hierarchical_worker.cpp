// One rank of a job on 2 nodes of 2 ranks each with the hierarchical backend
// (argv[1]: shm+gloo under two brasaruns, shm+mpi under mpirun with
// BRASA_NODE_ID set per rank). Every collective's result is compared with
// the same collective on a flat group of the network backend and with its
// closed form. Exits non-zero on the first difference.

#include <brasa/comm/distributed.h>
#include <brasa/comm/shm/process_group_hierarchical.h>
#include <brasa/ops/factory.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

namespace dist = brasa::distributed;
using namespace brasa;

namespace {

int failures = 0;
int me = 0;

void expect(bool ok, const std::string& what) {
  if (ok) return;
  std::printf("rank %d: FAILED %s\n", me, what.c_str());
  ++failures;
}

bool same(const Tensor& a, const Tensor& b) {
  if (a.numel() != b.numel()) return false;
  Tensor x = a.to(kDouble).contiguous(), y = b.to(kDouble).contiguous();
  const double* p = x.data_ptr<double>();
  const double* q = y.data_ptr<double>();
  for (int64_t i = 0; i < x.numel(); ++i)
    if (p[i] != q[i]) return false;
  return true;
}

// Element i of rank r: small integers, exact in every dtype below.
Tensor pattern(int64_t n, ScalarType t, int rank) {
  Tensor x = empty({n}, TensorOptions().dtype(kDouble));
  double* p = x.data_ptr<double>();
  for (int64_t i = 0; i < n; ++i) p[i] = static_cast<double>(i % 5 + rank + 1);
  return x.to(t);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace std::chrono_literals;
  const std::string backend = argc > 1 ? argv[1] : "shm+gloo";
  dist::init_process_group(backend, "env://", -1, -1, 60s);
  auto world = dist::default_group();
  me = world->rank();
  const int n = world->size();
  auto* h = dynamic_cast<dist::ProcessGroupHierarchical*>(world.get());
  if (!h) {
    std::printf("rank %d: the world is %s, not hierarchical\n", me, world->backend_name().c_str());
    return 1;
  }
  expect(n == 4 && h->node_count() == 2 && h->local_size() == 2,
         "4 ranks on 2 nodes of 2 (nodes " + std::to_string(h->node_count()) + ", local size " +
             std::to_string(h->local_size()) + ")");
  expect(h->node_index() == me / 2 && h->local_rank() == me % 2, "node membership");
  expect(world->backend_name() == backend, "backend name " + world->backend_name());
  auto flat = dist::new_group({});  // the network backend alone, every rank
  expect(flat->backend_name() == backend.substr(4), "flat group " + flat->backend_name());

  // allreduce: every op on several dtypes, small and multi-round sizes.
  const std::vector<dist::ReduceOp> ops = {dist::ReduceOp::SUM,     dist::ReduceOp::AVG,
                                           dist::ReduceOp::PRODUCT, dist::ReduceOp::MIN,
                                           dist::ReduceOp::MAX,     dist::ReduceOp::BOR};
  for (ScalarType t : {kFloat, kDouble, kHalf, kLong, kInt}) {
    for (dist::ReduceOp op : ops) {
      const bool bitwise = op == dist::ReduceOp::BOR;
      if (bitwise && isFloatingType(t)) continue;
      if (op == dist::ReduceOp::AVG && !isFloatingType(t)) continue;
      for (int64_t count : {int64_t{7}, int64_t{700001}}) {
        if (t == kHalf && count > 7 && op == dist::ReduceOp::PRODUCT) continue;
        std::vector<Tensor> a{pattern(count, t, me)}, b{pattern(count, t, me)};
        dist::AllreduceOptions o;
        o.reduceOp = op;
        world->allreduce(a, o)->wait();
        flat->allreduce(b, o)->wait();
        const std::string what = std::string("allreduce ") + toString(t) + " " +
                                 dist::to_string(op) + " of " + std::to_string(count);
        expect(same(a[0], b[0]), what + " equals the flat result");
        // element 0: every rank holds rank + 1
        double want = 0;
        switch (op) {
          case dist::ReduceOp::SUM:
            want = n * (n + 1) / 2.0;
            break;
          case dist::ReduceOp::AVG:
            want = (n + 1) / 2.0;
            break;
          case dist::ReduceOp::PRODUCT:
            want = 24;
            break;
          case dist::ReduceOp::MIN:
            want = 1;
            break;
          case dist::ReduceOp::MAX:
            want = n;
            break;
          default:
            want = 1 | 2 | 3 | 4;
        }
        expect(a[0].to(kDouble).data_ptr<double>()[0] == want, what + " element 0");
      }
    }
  }

  // broadcast and reduce from every root
  for (int root = 0; root < n; ++root) {
    std::vector<Tensor> b{pattern(300001, kFloat, me)};
    dist::BroadcastOptions bo;
    bo.rootRank = root;
    world->broadcast(b, bo)->wait();
    expect(same(b[0], pattern(300001, kFloat, root)), "broadcast from " + std::to_string(root));

    std::vector<Tensor> r{pattern(1001, kLong, me)}, keep{pattern(1001, kLong, me)};
    dist::ReduceOptions ro;
    ro.rootRank = root;
    ro.reduceOp = dist::ReduceOp::MAX;
    world->reduce(r, ro)->wait();
    expect(same(r[0], me == root ? pattern(1001, kLong, n - 1) : keep[0]),
           "reduce to " + std::to_string(root));
  }
  world->barrier()->wait();

  // coalesced, and the operations the flat group carries
  std::vector<Tensor> co{pattern(5, kFloat, me), pattern(9, kFloat, me)};
  world->allreduce_coalesced(co)->wait();
  expect(co[1].to(kDouble).data_ptr<double>()[0] == 10, "allreduce_coalesced");
  Tensor all = empty({4 * 3}, TensorOptions().dtype(kInt)), mine = full({3}, me * 10.0).to(kInt);
  world->allgather_into_tensor(all, mine)->wait();
  expect(all.to(kDouble).data_ptr<double>()[3 * 3] == 30, "allgather_into_tensor");
  std::vector<Tensor> out{full({4}, me * 1.0)}, in{full({4}, -1.0)};
  auto s = world->send(out, (me + 2) % n, 5);  // across the nodes
  world->recv(in, (me + 2) % n, 5)->wait();
  s->wait();
  expect(in[0].data_ptr<float>()[0] == (me + 2) % n, "send/recv across nodes");

  world->barrier()->wait();
  std::printf("rank %d: %s\n", me, failures ? "failed" : "ok");
  dist::destroy_process_group();
  return failures ? 1 : 0;
}
