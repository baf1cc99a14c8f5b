#include "distributed.h"

#include <brasa/comm/gloo/process_group_gloo.h>
#include <brasa/comm/mpi/process_group_mpi.h>
#include <brasa/comm/shm/process_group_hierarchical.h>
#ifdef BRASA_WITH_CUDA
#include <brasa/comm/nccl/process_group_nccl.h>
#endif
#include <brasa/comm/shm/process_group_shm.h>
#include <brasa/comm/store/file_store.h>
#include <brasa/comm/store/prefix_store.h>
#include <brasa/comm/store/tcp_store.h>
#include <brasa/ops/factory.h>
#include <brasa/util/launch_env.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

namespace brasa::distributed {

namespace {

struct State {
  std::mutex mu;
  GroupPtr world;
  std::shared_ptr<Store> store;  // null for mpi
  std::string backend;
  std::string master_addr;
  std::chrono::milliseconds timeout{0};
  int groups_made = 0;
  int monitored_barriers = 0;
  std::map<const ProcessGroup*, std::shared_ptr<Store>> group_stores;
};

State& state() {
  static State s;
  return s;
}

GroupPtr make_group(const std::string& backend, const std::shared_ptr<Store>& store, int rank,
                    int size, std::chrono::milliseconds timeout, const std::string& master_addr) {
  if (backend == "mpi") {
    ProcessGroupMPI::Options o;
    o.timeout = timeout;
    return ProcessGroupMPI::create({}, o);
  }
  if (backend == "gloo") {
    ProcessGroupGloo::Options o;
    o.timeout = timeout;
    o.peer_host = master_addr;
    if (const char* h = std::getenv("BRASA_GLOO_HOSTNAME")) o.hostname = h;
    return std::make_shared<ProcessGroupGloo>(store, rank, size, o);
  }
  if (backend == "shm") {
    ProcessGroupShm::Options o;
    o.timeout = timeout;
    return std::make_shared<ProcessGroupShm>(store, rank, size, o);
  }
  if (backend == "shm+gloo" || backend == "shm+mpi") {
    ProcessGroupHierarchical::Options o;
    o.timeout = timeout;
    o.inter_node = backend.substr(4);
    o.peer_host = master_addr;
    return std::make_shared<ProcessGroupHierarchical>(store, rank, size, o);
  }
#ifdef BRASA_WITH_CUDA
  if (backend == "nccl") {
    ProcessGroupNCCL::Options o;
    o.timeout = timeout;
    return std::make_shared<ProcessGroupNCCL>(store, rank, size, o);
  }
  BRASA_ERROR("init_process_group: unknown backend '", backend,
              "' (this build has: mpi, gloo, shm, shm+gloo, shm+mpi, nccl)");
#else
  BRASA_CHECK(backend != "nccl",
              "init_process_group: backend 'nccl' needs a CUDA build of Brasa (this build has: "
              "mpi, gloo, shm, shm+gloo, shm+mpi)");
  BRASA_ERROR("init_process_group: unknown backend '", backend,
              "' (this build has: mpi, gloo, shm, shm+gloo, shm+mpi)");
#endif
}

// Under mpirun with no MASTER_ADDR: rank 0 serves a TCPStore on a free port
// and sends its address to the others over MPI.
Rendezvous rendezvous_through_mpi(std::chrono::milliseconds timeout) {
  auto world = ProcessGroupMPI::create();
  Rendezvous r;
  r.rank = world->rank();
  r.world_size = world->size();
  const auto info = launch::launch_info();
  std::string host = "127.0.0.1";
  if (info.local_world_size < info.world_size) {  // several hosts: name this one
    char name[256] = {0};
    ::gethostname(name, sizeof name - 1);
    host = name;
  }
  std::shared_ptr<TCPStore> store;
  Tensor address = zeros({256}, TensorOptions().dtype(kByte));
  if (r.rank == 0) {
    TCPStoreOptions o;
    o.port = 0;
    o.isServer = true;
    o.timeout = timeout;
    store = std::make_shared<TCPStore>(host, o);
    std::string text = host + " " + std::to_string(store->port());
    std::memcpy(address.data_ptr(), text.data(), std::min<size_t>(text.size(), 255));
  }
  std::vector<Tensor> ts{address};
  world->broadcast(ts)->wait();
  std::string text(static_cast<const char*>(address.data_ptr()));
  auto space = text.find(' ');
  r.master_addr = text.substr(0, space);
  if (r.rank != 0) {
    TCPStoreOptions o;
    o.port = static_cast<uint16_t>(std::stoi(text.substr(space + 1)));
    o.timeout = timeout;
    store = std::make_shared<TCPStore>(r.master_addr, o);
  }
  world->barrier()->wait();  // every client is connected before rank 0 may go on
  r.store = store;
  return r;
}

void check_given(const char* what, int given, int actual, const char* source) {
  BRASA_CHECK(given < 0 || given == actual, "init_process_group: ", what, " ", given,
              " does not match the ", actual, " that ", source, " says");
}

GroupPtr group_or_world(const GroupPtr& group) {
  if (group) return group;
  return default_group();
}

std::shared_ptr<Work> finish(std::shared_ptr<Work> w, bool async_op) {
  if (!async_op) w->wait();
  return w;
}

}  // namespace

Rendezvous rendezvous(const std::string& init_method, int world_size, int rank,
                      std::chrono::milliseconds timeout) {
  Rendezvous r;
  auto need_rank_and_size = [&] {
    BRASA_CHECK(world_size > 0 && rank >= 0 && rank < world_size, "init_process_group(",
                init_method, "): needs world_size > 0 and 0 <= rank < world_size, got world_size ",
                world_size, " and rank ", rank);
    r.rank = rank;
    r.world_size = world_size;
  };
  auto tcp_store = [&](const std::string& host, int port) {
    TCPStoreOptions o;
    o.port = static_cast<uint16_t>(port);
    o.isServer = r.rank == 0;
    o.numWorkers = static_cast<size_t>(r.world_size);
    o.timeout = timeout;
    r.master_addr = host;
    r.store = std::make_shared<TCPStore>(host, o);
  };
  if (init_method.rfind("env://", 0) == 0) {
    auto info = launch::launch_info();
    BRASA_CHECK(info.launched(),
                "init_process_group(env://): RANK and WORLD_SIZE are not set; start the program "
                "with brasarun or mpirun (or set RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT)");
    check_given("world_size", world_size, info.world_size, "the launcher");
    check_given("rank", rank, info.rank, "the launcher");
    if (info.master_addr.empty() && info.source != launch::LaunchSource::kBrasarun) {
      r = rendezvous_through_mpi(timeout);
    } else {
      BRASA_CHECK(!info.master_addr.empty() && info.master_port > 0,
                  "init_process_group(env://): MASTER_ADDR and ", "MASTER_PORT are not set");
      r.rank = info.rank;
      r.world_size = info.world_size;
      tcp_store(info.master_addr, info.master_port);
    }
  } else if (init_method.rfind("tcp://", 0) == 0) {
    need_rank_and_size();
    std::string hostport = init_method.substr(6);
    auto colon = hostport.rfind(':');
    BRASA_CHECK(colon != std::string::npos && colon + 1 < hostport.size(),
                "init_process_group: init_method '", init_method, "' is not tcp://host:port");
    tcp_store(hostport.substr(0, colon), std::stoi(hostport.substr(colon + 1)));
  } else if (init_method.rfind("file://", 0) == 0) {
    need_rank_and_size();
    r.store = std::make_shared<FileStore>(init_method.substr(7), world_size, timeout);
  } else {
    BRASA_ERROR("init_process_group: init_method '", init_method,
                "' is not env://, tcp://host:port or file://path");
  }
  return r;
}

void init_process_group(const std::string& backend, const std::string& init_method, int world_size,
                        int rank, std::chrono::milliseconds timeout) {
  {
    std::lock_guard<std::mutex> lock(state().mu);
    BRASA_CHECK(!state().world, "init_process_group: already initialized (backend ",
                state().backend, "); call destroy_process_group first");
  }
  if (backend == "mpi") {
    check_given("world_size", world_size, ProcessGroupMPI::world_size(), "MPI");
    check_given("rank", rank, ProcessGroupMPI::world_rank(), "MPI");
    // Under brasarun (or torchrun) each worker would be an MPI world of its own.
    if (const char* ws = std::getenv("WORLD_SIZE")) {
      const int launched = std::atoi(ws);
      BRASA_CHECK(launched <= 1 || launched == ProcessGroupMPI::world_size(),
                  "init_process_group(\"mpi\"): the launcher started ", launched,
                  " processes (WORLD_SIZE=", launched, ") but MPI sees a world of ",
                  ProcessGroupMPI::world_size(),
                  ": each process was started as an MPI job of its own (brasarun does not start "
                  "MPI jobs). Start the program with mpirun -np ",
                  launched, ", or use the gloo or shm backend under brasarun");
    }
    GroupPtr world = make_group(backend, nullptr, -1, -1, timeout, "");
    std::lock_guard<std::mutex> lock(state().mu);
    state().world = world;
    state().backend = backend;
    state().timeout = timeout;
    return;
  }
  Rendezvous r = rendezvous(init_method, world_size, rank, timeout);
  {
    std::lock_guard<std::mutex> lock(state().mu);
    state().master_addr = r.master_addr;
  }
  init_process_group(backend, r.store, r.world_size, r.rank, timeout);
}

void init_process_group(const std::string& backend, std::shared_ptr<Store> store, int world_size,
                        int rank, std::chrono::milliseconds timeout) {
  BRASA_CHECK(store != nullptr, "init_process_group: the store is null");
  std::string master_addr;
  {
    std::lock_guard<std::mutex> lock(state().mu);
    BRASA_CHECK(!state().world, "init_process_group: already initialized (backend ",
                state().backend, "); call destroy_process_group first");
    master_addr = state().master_addr;
  }
  GroupPtr world = make_group(backend, std::make_shared<PrefixStore>("default_pg", store), rank,
                              world_size, timeout, master_addr);
  std::lock_guard<std::mutex> lock(state().mu);
  BRASA_CHECK(!state().world, "init_process_group: already initialized (backend ", state().backend,
              ")");
  state().world = world;
  state().store = store;
  state().backend = backend;
  state().timeout = timeout;
  state().group_stores[world.get()] = std::make_shared<PrefixStore>("default_pg_monitor", store);
}

bool is_initialized() {
  std::lock_guard<std::mutex> lock(state().mu);
  return state().world != nullptr;
}

void destroy_process_group() {
  std::lock_guard<std::mutex> lock(state().mu);
  state().world.reset();
  state().store.reset();
  state().group_stores.clear();
  state().backend.clear();
  state().master_addr.clear();
  state().groups_made = 0;
  state().monitored_barriers = 0;
}

GroupPtr default_group() {
  std::lock_guard<std::mutex> lock(state().mu);
  BRASA_CHECK(state().world,
              "brasa::distributed: the default process group is not initialized; call "
              "init_process_group first");
  return state().world;
}

std::shared_ptr<Store> default_store() {
  std::lock_guard<std::mutex> lock(state().mu);
  return state().store;
}

std::string get_backend(const GroupPtr& group) { return group_or_world(group)->backend_name(); }
int get_rank(const GroupPtr& group) { return group_or_world(group)->rank(); }
int get_world_size(const GroupPtr& group) { return group_or_world(group)->size(); }

GroupPtr new_group(std::vector<int> ranks, std::chrono::milliseconds timeout) {
  GroupPtr world = default_group();
  std::string backend;
  std::shared_ptr<Store> store;
  int index;
  {
    std::lock_guard<std::mutex> lock(state().mu);
    backend = state().backend;
    store = state().store;
    index = ++state().groups_made;
    if (timeout.count() < 0) timeout = state().timeout;
  }
  // Groups of a hierarchical world are groups of its network backend.
  if (backend.rfind("shm+", 0) == 0) backend = backend.substr(4);
  if (backend == "mpi") {
    ProcessGroupMPI::Options o;
    o.timeout = timeout;
    return ProcessGroupMPI::create(ranks, o);
  }
  std::sort(ranks.begin(), ranks.end());
  if (ranks.empty())
    for (int r = 0; r < world->size(); ++r) ranks.push_back(r);
  for (int r : ranks)
    BRASA_CHECK(r >= 0 && r < world->size(), "new_group: rank ", r, " is not in the world of ",
                world->size());
  auto it = std::find(ranks.begin(), ranks.end(), world->rank());
  if (it == ranks.end()) return nullptr;
  const int group_rank = static_cast<int>(it - ranks.begin());
  auto group_store = std::make_shared<PrefixStore>("group_" + std::to_string(index), store);
  std::string master_addr;
  {
    std::lock_guard<std::mutex> lock(state().mu);
    master_addr = state().master_addr;
  }
  GroupPtr g = make_group(backend, group_store, group_rank, static_cast<int>(ranks.size()), timeout,
                          master_addr);
  std::lock_guard<std::mutex> lock(state().mu);
  state().group_stores[g.get()] =
      std::make_shared<PrefixStore>("group_" + std::to_string(index) + "_monitor", store);
  return g;
}

std::shared_ptr<Work> broadcast(Tensor& tensor, int src, const GroupPtr& group, bool async_op) {
  std::vector<Tensor> ts{tensor};
  BroadcastOptions o;
  o.rootRank = src;
  return finish(group_or_world(group)->broadcast(ts, o), async_op);
}

std::shared_ptr<Work> all_reduce(Tensor& tensor, ReduceOp op, const GroupPtr& group,
                                 bool async_op) {
  std::vector<Tensor> ts{tensor};
  AllreduceOptions o;
  o.reduceOp = op;
  return finish(group_or_world(group)->allreduce(ts, o), async_op);
}

std::shared_ptr<Work> all_reduce_coalesced(std::vector<Tensor>& tensors, ReduceOp op,
                                           const GroupPtr& group, bool async_op) {
  AllreduceCoalescedOptions o;
  o.reduceOp = op;
  return finish(group_or_world(group)->allreduce_coalesced(tensors, o), async_op);
}

std::shared_ptr<Work> reduce(Tensor& tensor, int dst, ReduceOp op, const GroupPtr& group,
                             bool async_op) {
  std::vector<Tensor> ts{tensor};
  ReduceOptions o;
  o.rootRank = dst;
  o.reduceOp = op;
  return finish(group_or_world(group)->reduce(ts, o), async_op);
}

std::shared_ptr<Work> all_gather(std::vector<Tensor>& tensor_list, Tensor& tensor,
                                 const GroupPtr& group, bool async_op) {
  std::vector<std::vector<Tensor>> outs{tensor_list};
  std::vector<Tensor> ins{tensor};
  return finish(group_or_world(group)->allgather(outs, ins), async_op);
}

std::shared_ptr<Work> all_gather_into_tensor(Tensor& output, Tensor& input, const GroupPtr& group,
                                             bool async_op) {
  return finish(group_or_world(group)->allgather_into_tensor(output, input), async_op);
}

std::shared_ptr<Work> gather(Tensor& tensor, std::vector<Tensor>& gather_list, int dst,
                             const GroupPtr& group, bool async_op) {
  GroupPtr g = group_or_world(group);
  std::vector<std::vector<Tensor>> outs;
  if (g->rank() == dst) outs.push_back(gather_list);
  std::vector<Tensor> ins{tensor};
  GatherOptions o;
  o.rootRank = dst;
  return finish(g->gather(outs, ins, o), async_op);
}

std::shared_ptr<Work> scatter(Tensor& tensor, std::vector<Tensor>& scatter_list, int src,
                              const GroupPtr& group, bool async_op) {
  GroupPtr g = group_or_world(group);
  std::vector<std::vector<Tensor>> ins;
  if (g->rank() == src) ins.push_back(scatter_list);
  std::vector<Tensor> outs{tensor};
  ScatterOptions o;
  o.rootRank = src;
  return finish(g->scatter(outs, ins, o), async_op);
}

std::shared_ptr<Work> reduce_scatter(Tensor& output, std::vector<Tensor>& input_list, ReduceOp op,
                                     const GroupPtr& group, bool async_op) {
  std::vector<Tensor> outs{output};
  std::vector<std::vector<Tensor>> ins{input_list};
  ReduceScatterOptions o;
  o.reduceOp = op;
  return finish(group_or_world(group)->reduce_scatter(outs, ins, o), async_op);
}

std::shared_ptr<Work> reduce_scatter_tensor(Tensor& output, Tensor& input, ReduceOp op,
                                            const GroupPtr& group, bool async_op) {
  ReduceScatterOptions o;
  o.reduceOp = op;
  return finish(group_or_world(group)->reduce_scatter_tensor(output, input, o), async_op);
}

std::shared_ptr<Work> all_to_all_single(Tensor& output, Tensor& input,
                                        std::vector<int64_t> output_split_sizes,
                                        std::vector<int64_t> input_split_sizes,
                                        const GroupPtr& group, bool async_op) {
  return finish(
      group_or_world(group)->alltoall_base(output, input, output_split_sizes, input_split_sizes),
      async_op);
}

std::shared_ptr<Work> all_to_all(std::vector<Tensor>& output_list, std::vector<Tensor>& input_list,
                                 const GroupPtr& group, bool async_op) {
  return finish(group_or_world(group)->alltoall(output_list, input_list), async_op);
}

std::shared_ptr<Work> barrier(const GroupPtr& group, bool async_op) {
  return finish(group_or_world(group)->barrier(), async_op);
}

void monitored_barrier(const GroupPtr& group, std::chrono::milliseconds timeout,
                       bool wait_all_ranks) {
  GroupPtr g = group_or_world(group);
  std::shared_ptr<Store> store;
  int index;
  {
    std::lock_guard<std::mutex> lock(state().mu);
    auto it = state().group_stores.find(g.get());
    if (it != state().group_stores.end()) store = it->second;
    index = ++state().monitored_barriers;
    if (timeout.count() < 0) timeout = g->timeout();
  }
  if (!store) {
    // mpi: its barrier already names the ranks that do not arrive.
    BarrierOptions o;
    o.timeout = timeout;
    g->barrier(o)->wait();
    return;
  }
  const std::string prefix = "monitored_barrier/" + std::to_string(index) + "/";
  if (g->rank() != 0) {
    store->set(prefix + "arrived/" + std::to_string(g->rank()), "1");
    try {
      store->wait({prefix + "released"}, timeout + std::chrono::milliseconds(1000));
    } catch (const DistTimeoutError&) {
      BRASA_DIST_THROW(DistTimeoutError, "monitored_barrier: rank ", g->rank(),
                       " was not released by rank 0 within ", timeout.count(),
                       " ms (some rank did not arrive; rank 0 names it)");
    }
    return;
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::vector<int> missing;
  for (int r = 1; r < g->size(); ++r) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    const std::string key = prefix + "arrived/" + std::to_string(r);
    try {
      if (missing.empty() || wait_all_ranks)
        store->wait({key}, std::max(left, std::chrono::milliseconds(1)));
      else if (!store->check({key}))
        missing.push_back(r);
    } catch (const DistTimeoutError&) {
      missing.push_back(r);
      if (!wait_all_ranks) break;
    }
  }
  if (!missing.empty()) {
    std::string names;
    for (int r : missing) names += (names.empty() ? "" : ", ") + std::to_string(r);
    BRASA_DIST_THROW(DistTimeoutError, "monitored_barrier: rank(s) ", names,
                     " did not arrive within ", timeout.count(), " ms",
                     wait_all_ranks ? "" : " (the first missing; wait_all_ranks names all)");
  }
  store->set(prefix + "released", "1");
}

void send(Tensor& tensor, int dst, const GroupPtr& group, int tag) {
  isend(tensor, dst, group, tag)->wait();
}

int recv(Tensor& tensor, int src, const GroupPtr& group, int tag) {
  auto w = irecv(tensor, src, group, tag);
  w->wait();
  return w->source_rank();
}

std::shared_ptr<Work> isend(Tensor& tensor, int dst, const GroupPtr& group, int tag) {
  std::vector<Tensor> ts{tensor};
  return group_or_world(group)->send(ts, dst, tag);
}

std::shared_ptr<Work> irecv(Tensor& tensor, int src, const GroupPtr& group, int tag) {
  std::vector<Tensor> ts{tensor};
  GroupPtr g = group_or_world(group);
  return src < 0 ? g->recv_anysource(ts, tag) : g->recv(ts, src, tag);
}

}  // namespace brasa::distributed
