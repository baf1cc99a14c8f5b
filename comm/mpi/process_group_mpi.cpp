#include "process_group_mpi.h"

#include <brasa/comm/errors.h>
#include <brasa/comm/staging.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/shape.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <functional>
#include <mutex>
#include <set>
#include <thread>

#include "mpi_runtime.h"

namespace brasa::distributed {

using detail::flat_cat;
using detail::scatter_back;
using detail::staged;
using detail::unstage;

using namespace mpi_detail;

namespace {

using Clock = std::chrono::steady_clock;

// Live groups, whose progress threads must stop before MPI_Finalize.
std::mutex g_groups_mu;
std::set<ProcessGroupMPI::Impl*> g_groups;
void stop_all_progress_threads();

// Waits briefly by spinning, then by yielding: MPI completes small messages
// in microseconds, and a sleeping poller would add its wake-up time.
void pause_between_tests(int round) {
  if (round > 64) sched_yield();
}

}  // namespace

// ---- the group's state ----

class MPIWork;

struct ProcessGroupMPI::Impl {
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm check_comm = MPI_COMM_NULL;  // fingerprints travel apart from user messages
  bool check_collectives = true;
  bool background_collectives = false;
  int rank = 0, size = 1;
  std::mutex exec_mu;  // collectives start one at a time

  std::mutex test_mu;  // a request is tested by one thread at a time
  std::atomic<bool> broken{false};
  std::string broken_reason;

  std::mutex pending_mu;
  std::condition_variable pending_cv;
  std::deque<std::shared_ptr<MPIWork>> pending;
  bool stop = false;
  std::thread progress;

  void start_progress_thread();
  void stop_progress_thread();
  void progress_loop();
  void break_group(const std::string& reason) {
    std::lock_guard<std::mutex> lock(pending_mu);
    if (!broken.exchange(true)) broken_reason = reason;
  }
};

class MPIWork : public Work {
 public:
  MPIWork(std::string op, ProcessGroupMPI::Impl* group, Clock::time_point deadline,
          std::string what)
      : Work(std::move(op)), group_(group), deadline_(deadline), what_(std::move(what)) {}

  std::vector<MPI_Request> requests;
  std::function<void(const std::vector<MPI_Status>&)> on_done;  // copies results into place
  std::vector<Tensor> keep_alive;                               // buffers MPI writes or reads
  bool record_source = false;                                   // a receive: note who sent

  // Tests the requests once; true once the work has finished.
  bool progress() {
    std::lock_guard<std::mutex> lock(group_->test_mu);
    if (finished_) return true;
    std::vector<MPI_Status> statuses(requests.size());
    int flag = 0;
    int rc = requests.empty() ? MPI_SUCCESS
                              : MPI_Testall(static_cast<int>(requests.size()), requests.data(),
                                            &flag, statuses.data());
    if (requests.empty()) flag = 1;
    if (rc != MPI_SUCCESS) {
      std::string detail = mpi_error_string(rc);
      for (const auto& s : statuses)
        if (s.MPI_ERROR != MPI_SUCCESS && s.MPI_ERROR != MPI_ERR_PENDING)
          detail = mpi_error_string(s.MPI_ERROR);
      return end(std::make_exception_ptr(
          DistError("ProcessGroupMPI." + op() + ": " + what_ + " failed: " + detail, "", __FILE__,
                    __LINE__)));
    }
    if (flag) {
      if (record_source && !statuses.empty()) set_source_rank(statuses[0].MPI_SOURCE);
      try {
        if (on_done) on_done(statuses);
        return end(nullptr);
      } catch (...) {
        return end(std::current_exception());
      }
    }
    if (Clock::now() > deadline_) {
      std::string reason =
          what_ + " timed out after " +
          std::to_string(
              std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - started_).count()) +
          " ms";
      group_->break_group(reason);
      return end(std::make_exception_ptr(DistTimeoutError(
          "ProcessGroupMPI." + op() + ": " + reason + "; the group can no longer be used", "",
          __FILE__, __LINE__)));
    }
    return false;
  }

  bool is_completed() override {
    progress();
    return Work::is_completed();
  }

  bool wait(std::chrono::milliseconds timeout) override {
    const auto until = timeout.count() < 0 ? Clock::time_point::max() : Clock::now() + timeout;
    for (int round = 0; !progress(); ++round) {
      if (Clock::now() > until)
        BRASA_DIST_THROW(DistTimeoutError, "ProcessGroupMPI.", op(), ": Work.wait timed out after ",
                         timeout.count(), " ms (", what_, " is still in flight)");
      pause_between_tests(round);
    }
    return Work::wait(std::chrono::milliseconds(-1));
  }

 private:
  bool end(std::exception_ptr error) {
    finished_ = true;
    keep_alive.clear();
    finish(error);
    return true;
  }

  ProcessGroupMPI::Impl* group_;
  Clock::time_point started_ = Clock::now();
  Clock::time_point deadline_;
  std::string what_;
  bool finished_ = false;
};

void ProcessGroupMPI::Impl::start_progress_thread() {
  {
    std::lock_guard<std::mutex> lock(g_groups_mu);
    g_groups.insert(this);
  }
  progress = std::thread([this] { progress_loop(); });
}

void ProcessGroupMPI::Impl::stop_progress_thread() {
  {
    std::lock_guard<std::mutex> lock(pending_mu);
    stop = true;
  }
  pending_cv.notify_all();
  if (progress.joinable()) progress.join();
}

void ProcessGroupMPI::Impl::progress_loop() {
  std::unique_lock<std::mutex> lock(pending_mu);
  while (!stop) {
    pending_cv.wait(lock, [&] { return stop || !pending.empty(); });
    if (stop) break;
    std::vector<std::shared_ptr<MPIWork>> snapshot(pending.begin(), pending.end());
    lock.unlock();
    for (auto& w : snapshot) w->progress();
    lock.lock();
    while (!pending.empty() && pending.front()->Work::is_completed()) pending.pop_front();
    if (!pending.empty()) {
      lock.unlock();
      std::this_thread::sleep_for(std::chrono::microseconds(50));
      lock.lock();
    }
  }
}

namespace {
void stop_all_progress_threads() {
  std::lock_guard<std::mutex> lock(g_groups_mu);
  for (auto* g : g_groups) g->stop_progress_thread();
}
}  // namespace

// ---- creating groups ----

int ProcessGroupMPI::world_rank() {
  init_mpi_once(stop_all_progress_threads);
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int ProcessGroupMPI::world_size() {
  init_mpi_once(stop_all_progress_threads);
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

std::shared_ptr<ProcessGroupMPI> ProcessGroupMPI::create(std::vector<int> ranks) {
  return create(std::move(ranks), Options());
}

std::shared_ptr<ProcessGroupMPI> ProcessGroupMPI::create(std::vector<int> ranks,
                                                         const Options& options) {
  init_mpi_once(stop_all_progress_threads);
  const int world = world_size(), me = world_rank();
  std::sort(ranks.begin(), ranks.end());
  BRASA_CHECK(std::adjacent_find(ranks.begin(), ranks.end()) == ranks.end(),
              "ProcessGroupMPI.create: a rank is listed twice");
  for (int r : ranks)
    BRASA_CHECK(r >= 0 && r < world, "ProcessGroupMPI.create: rank ", r, " is not in the world of ",
                world, " processes");
  const bool member = ranks.empty() || std::binary_search(ranks.begin(), ranks.end(), me);
  MPI_Comm comm = MPI_COMM_NULL;
  // Collective over every process, members or not (as in c10d's new_group).
  mpi_check(MPI_Comm_split(MPI_COMM_WORLD, member ? 0 : MPI_UNDEFINED, me, &comm),
            "MPI_Comm_split");
  if (!member) return nullptr;
  auto impl = std::make_unique<Impl>();
  impl->comm = comm;
  mpi_check(MPI_Comm_dup(comm, &impl->check_comm), "MPI_Comm_dup");
  MPI_Comm_set_errhandler(impl->comm, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(impl->check_comm, MPI_ERRORS_RETURN);
  MPI_Comm_rank(comm, &impl->rank);
  MPI_Comm_size(comm, &impl->size);
  impl->check_collectives = options.check_collectives;
  impl->background_collectives = options.background_collectives;
  int rank = impl->rank, size = impl->size;
  return std::shared_ptr<ProcessGroupMPI>(
      new ProcessGroupMPI(std::move(impl), rank, size, options));
}

ProcessGroupMPI::ProcessGroupMPI(std::unique_ptr<Impl> impl, int rank, int size,
                                 const Options& options)
    : ProcessGroup(rank, size, options.timeout), impl_(std::move(impl)) {
  impl_->start_progress_thread();
}

ProcessGroupMPI::~ProcessGroupMPI() {
  {
    std::lock_guard<std::mutex> lock(g_groups_mu);
    g_groups.erase(impl_.get());
  }
  impl_->stop_progress_thread();
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) {
    MPI_Comm_free(&impl_->check_comm);
    MPI_Comm_free(&impl_->comm);
  }
}

void ProcessGroupMPI::abort() { MPI_Abort(impl_->comm, EXIT_FAILURE); }

// ---- running operations ----

namespace {

// Tests `requests` until all are done or the deadline passes; `done[i]`
// tells which finished. Returns whether all did.
bool test_until(ProcessGroupMPI::Impl& g, std::vector<MPI_Request>& requests,
                std::vector<int>& done, Clock::time_point deadline) {
  done.assign(requests.size(), 0);
  for (int round = 0;; ++round) {
    bool all = true;
    {
      std::lock_guard<std::mutex> lock(g.test_mu);
      for (size_t i = 0; i < requests.size(); ++i) {
        if (done[i]) continue;
        int flag = 0;
        mpi_check(MPI_Test(&requests[i], &flag, MPI_STATUS_IGNORE), "MPI_Test");
        done[i] = flag;
        all = all && flag;
      }
    }
    if (all) return true;
    if (Clock::now() > deadline) return false;
    pause_between_tests(round);
  }
}

struct Launch {
  ProcessGroupMPI::Impl& g;
  const char* op;
  Fingerprint fingerprint;
  Clock::time_point deadline;
};

}  // namespace

// Every rank sends its fingerprint to every other and compares what it gets.
static void exchange_fingerprints(ProcessGroupMPI::Impl& g, const Fingerprint& mine, const char* op,
                                  Clock::time_point deadline, std::chrono::milliseconds timeout) {
  if (!g.check_collectives || g.size == 1) return;
  std::vector<Fingerprint> theirs(static_cast<size_t>(g.size));
  std::vector<MPI_Request> recvs, sends;
  std::vector<int> peers;
  for (int r = 0; r < g.size; ++r) {
    if (r == g.rank) continue;
    MPI_Request rq;
    mpi_check(MPI_Irecv(&theirs[static_cast<size_t>(r)], sizeof(Fingerprint), MPI_BYTE, r, 0,
                        g.check_comm, &rq),
              "MPI_Irecv");
    recvs.push_back(rq);
    mpi_check(MPI_Isend(&mine, sizeof(Fingerprint), MPI_BYTE, r, 0, g.check_comm, &rq),
              "MPI_Isend");
    sends.push_back(rq);
    peers.push_back(r);
  }
  std::vector<int> done;
  if (!test_until(g, recvs, done, deadline)) {
    std::string missing;
    for (size_t i = 0; i < recvs.size(); ++i)
      if (!done[i]) {
        missing += (missing.empty() ? "" : ", ") + std::to_string(peers[i]);
        MPI_Cancel(&recvs[i]);
        MPI_Request_free(&recvs[i]);
      }
    std::string reason =
        mine.describe() + " timed out after " + std::to_string(timeout.count()) + " ms: rank(s) " +
        missing + " did not reach it (stuck in other work, waiting in another collective, or dead)";
    g.break_group(reason);
    BRASA_DIST_THROW(DistTimeoutError, "ProcessGroupMPI.", op, ": ", reason,
                     "; the group can no longer be used");
  }
  std::vector<int> sent;
  test_until(g, sends, sent, Clock::time_point::max());  // matched receives complete sends promptly
  for (size_t i = 0; i < peers.size(); ++i) {
    const Fingerprint& f = theirs[static_cast<size_t>(peers[i])];
    if (!(f == mine))
      BRASA_DIST_THROW(DistError, "ProcessGroupMPI.", op,
                       ": the ranks called different collectives: rank ", g.rank, " called ",
                       mine.describe(), " but rank ", peers[i], " called ", f.describe());
  }
}

namespace {

// Starts an operation: checks the group, compares fingerprints (collectives
// only), lets `launch` post the MPI calls and hands the work to the progress
// thread.
std::shared_ptr<Work> start(ProcessGroupMPI::Impl& g, const char* op,
                            const Fingerprint* fingerprint, std::chrono::milliseconds timeout,
                            const std::function<void(std::vector<MPI_Request>*)>& launch,
                            std::function<void(const std::vector<MPI_Status>&)> on_done,
                            std::vector<Tensor> keep_alive, std::vector<Tensor> outputs,
                            bool record_source = false) {
  if (g.broken) {
    std::lock_guard<std::mutex> lock(g.pending_mu);
    BRASA_DIST_THROW(DistError, "ProcessGroupMPI.", op,
                     ": this group can no longer be used: ", g.broken_reason);
  }
  const auto deadline = Clock::now() + timeout;
  // Threads sharing the group start its collectives one at a time, so that
  // fingerprints and operations go out in the same order.
  std::unique_lock<std::mutex> exec(g.exec_mu, std::defer_lock);
  if (fingerprint) {
    exec.lock();
    exchange_fingerprints(g, *fingerprint, op, deadline, timeout);
  }
  if (fingerprint && !g.background_collectives) {
    // Every rank has arrived: the blocking call (Open MPI's tuned algorithms,
    // much faster than its nonblocking ones) completes.
    auto work = std::make_shared<Work>(op);
    work->set_outputs(std::move(outputs));
    try {
      launch(nullptr);
      if (on_done) on_done({});
      work->finish();
    } catch (...) {
      work->finish(std::current_exception());
    }
    return work;
  }
  auto work = std::make_shared<MPIWork>(op, &g, deadline,
                                        fingerprint ? fingerprint->describe() : std::string(op));
  launch(&work->requests);
  work->on_done = std::move(on_done);
  work->keep_alive = std::move(keep_alive);
  work->set_outputs(std::move(outputs));
  work->record_source = record_source;
  {
    std::lock_guard<std::mutex> lock(g.pending_mu);
    g.pending.push_back(work);
  }
  g.pending_cv.notify_one();
  return work;
}

}  // namespace

std::shared_ptr<Work> ProcessGroupMPI::broadcast(std::vector<Tensor>& tensors,
                                                 const BroadcastOptions& opts) {
  const Tensor t = single("broadcast", tensors);
  check_rank("broadcast", "root", opts.rootRank);
  Tensor buf = staged(t);
  const int n = count_of("broadcast", t.numel());
  Fingerprint f = next(CollectiveKind::kBroadcast, t, t.numel(), ReduceOp::SUM, opts.rootRank);
  MPI_Comm comm = impl_->comm;
  const int root = static_cast<int>(opts.rootRank);
  return start(
      *impl_, "broadcast", &f, effective(opts.timeout),
      [&](std::vector<MPI_Request>* r) {
        if (!r)
          return mpi_check(MPI_Bcast(buf.data_ptr(), n, mpi_type(t.scalar_type()), root, comm),
                           "MPI_Bcast");
        r->resize(1);
        mpi_check(MPI_Ibcast(buf.data_ptr(), n, mpi_type(t.scalar_type()), root, comm, &(*r)[0]),
                  "MPI_Ibcast");
      },
      [t, buf](const auto&) { unstage(t, buf); }, {buf}, {t});
}

std::shared_ptr<Work> ProcessGroupMPI::allreduce(std::vector<Tensor>& tensors,
                                                 const AllreduceOptions& opts) {
  const Tensor t = single("allreduce", tensors);
  check_reduce_op("allreduce", opts.reduceOp, t.scalar_type());
  Tensor buf = staged(t);
  const int n = count_of("allreduce", t.numel());
  Fingerprint f = next(CollectiveKind::kAllreduce, t, t.numel(), opts.reduceOp);
  MPI_Comm comm = impl_->comm;
  const bool avg = opts.reduceOp == ReduceOp::AVG;
  const int size = this->size();
  return start(
      *impl_, "allreduce", &f, effective(opts.timeout),
      [&](std::vector<MPI_Request>* r) {
        if (!r)
          return mpi_check(MPI_Allreduce(MPI_IN_PLACE, buf.data_ptr(), n, mpi_type(t.scalar_type()),
                                         mpi_op(opts.reduceOp, t.scalar_type()), comm),
                           "MPI_Allreduce");
        r->resize(1);
        mpi_check(MPI_Iallreduce(MPI_IN_PLACE, buf.data_ptr(), n, mpi_type(t.scalar_type()),
                                 mpi_op(opts.reduceOp, t.scalar_type()), comm, &(*r)[0]),
                  "MPI_Iallreduce");
      },
      [t, buf, avg, size](const auto&) {
        if (avg) const_cast<Tensor&>(buf).div_(size);
        unstage(t, buf);
      },
      {buf}, {t});
}

std::shared_ptr<Work> ProcessGroupMPI::allreduce_coalesced(std::vector<Tensor>& tensors,
                                                           const AllreduceCoalescedOptions& opts) {
  check_coalesced("allreduce_coalesced", tensors, opts.reduceOp);
  Tensor flat = flat_cat(tensors);
  const int n = count_of("allreduce_coalesced", flat.numel());
  Fingerprint f = next(CollectiveKind::kAllreduceCoalesced, flat, flat.numel(), opts.reduceOp);
  MPI_Comm comm = impl_->comm;
  const bool avg = opts.reduceOp == ReduceOp::AVG;
  const int size = this->size();
  std::vector<Tensor> targets = tensors;
  return start(
      *impl_, "allreduce_coalesced", &f, effective(opts.timeout),
      [&](std::vector<MPI_Request>* r) {
        if (!r)
          return mpi_check(
              MPI_Allreduce(MPI_IN_PLACE, flat.data_ptr(), n, mpi_type(flat.scalar_type()),
                            mpi_op(opts.reduceOp, flat.scalar_type()), comm),
              "MPI_Allreduce");
        r->resize(1);
        mpi_check(MPI_Iallreduce(MPI_IN_PLACE, flat.data_ptr(), n, mpi_type(flat.scalar_type()),
                                 mpi_op(opts.reduceOp, flat.scalar_type()), comm, &(*r)[0]),
                  "MPI_Iallreduce");
      },
      [targets, flat, avg, size](const auto&) {
        if (avg) const_cast<Tensor&>(flat).div_(size);
        scatter_back(targets, flat);
      },
      {flat}, targets);
}

std::shared_ptr<Work> ProcessGroupMPI::reduce(std::vector<Tensor>& tensors,
                                              const ReduceOptions& opts) {
  const Tensor t = single("reduce", tensors);
  check_rank("reduce", "root", opts.rootRank);
  check_reduce_op("reduce", opts.reduceOp, t.scalar_type());
  Tensor buf = staged(t);
  const int n = count_of("reduce", t.numel());
  Fingerprint f = next(CollectiveKind::kReduce, t, t.numel(), opts.reduceOp, opts.rootRank);
  MPI_Comm comm = impl_->comm;
  const int root = static_cast<int>(opts.rootRank);
  const bool is_root = root == rank();
  const bool avg = opts.reduceOp == ReduceOp::AVG;
  const int size = this->size();
  return start(
      *impl_, "reduce", &f, effective(opts.timeout),
      [&](std::vector<MPI_Request>* r) {
        if (!r)
          return mpi_check(
              MPI_Reduce(is_root ? MPI_IN_PLACE : buf.data_ptr(),
                         is_root ? buf.data_ptr() : nullptr, n, mpi_type(t.scalar_type()),
                         mpi_op(opts.reduceOp, t.scalar_type()), root, comm),
              "MPI_Reduce");
        r->resize(1);
        mpi_check(MPI_Ireduce(is_root ? MPI_IN_PLACE : buf.data_ptr(),
                              is_root ? buf.data_ptr() : nullptr, n, mpi_type(t.scalar_type()),
                              mpi_op(opts.reduceOp, t.scalar_type()), root, comm, &(*r)[0]),
                  "MPI_Ireduce");
      },
      [t, buf, is_root, avg, size](const auto&) {
        if (!is_root) return;
        if (avg) const_cast<Tensor&>(buf).div_(size);
        unstage(t, buf);
      },
      {buf}, {t});
}

std::shared_ptr<Work> ProcessGroupMPI::allgather(std::vector<std::vector<Tensor>>& outputs,
                                                 std::vector<Tensor>& inputs,
                                                 const AllgatherOptions& opts) {
  const Tensor in = staged(single("allgather", inputs, "inputs"));
  check_one_list("allgather", outputs, in, "outputs");
  const int n = count_of("allgather", in.numel());
  Tensor gathered = empty({static_cast<int64_t>(size()) * in.numel()}, in.options());
  Fingerprint f = next(CollectiveKind::kAllgather, in, in.numel());
  MPI_Comm comm = impl_->comm;
  std::vector<Tensor> targets = outputs[0];
  MPI_Datatype type = mpi_type(in.scalar_type());
  return start(
      *impl_, "allgather", &f, effective(opts.timeout),
      [&](std::vector<MPI_Request>* r) {
        if (!r)
          return mpi_check(
              MPI_Allgather(in.data_ptr(), n, type, gathered.data_ptr(), n, type, comm),
              "MPI_Allgather");
        r->resize(1);
        mpi_check(
            MPI_Iallgather(in.data_ptr(), n, type, gathered.data_ptr(), n, type, comm, &(*r)[0]),
            "MPI_Iallgather");
      },
      [targets, gathered](const auto&) { scatter_back(targets, gathered); }, {in, gathered},
      targets);
}

std::shared_ptr<Work> ProcessGroupMPI::allgather_into_tensor(Tensor& output, Tensor& input,
                                                             const AllgatherOptions& opts) {
  std::vector<Tensor> in_list{input};
  const Tensor in = staged(single("allgather_into_tensor", in_list, "input"));
  check_blocks("allgather_into_tensor", output, in, "output");
  Tensor out = staged(output);
  const int n = count_of("allgather_into_tensor", in.numel());
  Fingerprint f = next(CollectiveKind::kAllgatherIntoTensor, in, in.numel());
  MPI_Comm comm = impl_->comm;
  MPI_Datatype type = mpi_type(in.scalar_type());
  Tensor target = output;
  return start(
      *impl_, "allgather_into_tensor", &f, effective(opts.timeout),
      [&](std::vector<MPI_Request>* r) {
        if (!r)
          return mpi_check(MPI_Allgather(in.data_ptr(), n, type, out.data_ptr(), n, type, comm),
                           "MPI_Allgather");
        r->resize(1);
        mpi_check(MPI_Iallgather(in.data_ptr(), n, type, out.data_ptr(), n, type, comm, &(*r)[0]),
                  "MPI_Iallgather");
      },
      [target, out](const auto&) { unstage(target, out); }, {in, out}, {target});
}

std::shared_ptr<Work> ProcessGroupMPI::gather(std::vector<std::vector<Tensor>>& outputs,
                                              std::vector<Tensor>& inputs,
                                              const GatherOptions& opts) {
  const Tensor in = staged(single("gather", inputs, "inputs"));
  const int root = static_cast<int>(opts.rootRank);
  const bool is_root = check_root_list("gather", outputs, in, opts.rootRank, "outputs");
  Tensor gathered;
  std::vector<Tensor> targets;
  if (is_root) {
    gathered = empty({static_cast<int64_t>(size()) * in.numel()}, in.options());
    targets = outputs[0];
  }
  const int n = count_of("gather", in.numel());
  Fingerprint f = next(CollectiveKind::kGather, in, in.numel(), ReduceOp::SUM, root);
  MPI_Comm comm = impl_->comm;
  MPI_Datatype type = mpi_type(in.scalar_type());
  return start(
      *impl_, "gather", &f, effective(opts.timeout),
      [&](std::vector<MPI_Request>* r) {
        if (!r)
          return mpi_check(
              MPI_Gather(in.data_ptr(), n, type, is_root ? gathered.data_ptr() : nullptr,
                         is_root ? n : 0, type, root, comm),
              "MPI_Gather");
        r->resize(1);
        mpi_check(MPI_Igather(in.data_ptr(), n, type, is_root ? gathered.data_ptr() : nullptr,
                              is_root ? n : 0, type, root, comm, &(*r)[0]),
                  "MPI_Igather");
      },
      [targets, gathered](const auto&) {
        if (gathered.defined()) scatter_back(targets, gathered);
      },
      {in, gathered.defined() ? gathered : in}, targets);
}

std::shared_ptr<Work> ProcessGroupMPI::scatter(std::vector<Tensor>& outputs,
                                               std::vector<std::vector<Tensor>>& inputs,
                                               const ScatterOptions& opts) {
  const Tensor target = single("scatter", outputs, "outputs");
  const int root = static_cast<int>(opts.rootRank);
  const bool is_root = check_root_list("scatter", inputs, target, opts.rootRank, "inputs");
  Tensor packed;
  if (is_root) {
    packed = flat_cat(inputs[0]);
  }
  Tensor out = staged(target);
  const int n = count_of("scatter", target.numel());
  Fingerprint f = next(CollectiveKind::kScatter, target, target.numel(), ReduceOp::SUM, root);
  MPI_Comm comm = impl_->comm;
  MPI_Datatype type = mpi_type(target.scalar_type());
  return start(
      *impl_, "scatter", &f, effective(opts.timeout),
      [&](std::vector<MPI_Request>* r) {
        if (!r)
          return mpi_check(MPI_Scatter(is_root ? packed.data_ptr() : nullptr, is_root ? n : 0, type,
                                       out.data_ptr(), n, type, root, comm),
                           "MPI_Scatter");
        r->resize(1);
        mpi_check(MPI_Iscatter(is_root ? packed.data_ptr() : nullptr, is_root ? n : 0, type,
                               out.data_ptr(), n, type, root, comm, &(*r)[0]),
                  "MPI_Iscatter");
      },
      [target, out](const auto&) { unstage(target, out); }, {out, packed.defined() ? packed : out},
      {target});
}

std::shared_ptr<Work> ProcessGroupMPI::reduce_scatter(std::vector<Tensor>& outputs,
                                                      std::vector<std::vector<Tensor>>& inputs,
                                                      const ReduceScatterOptions& opts) {
  const Tensor target = single("reduce_scatter", outputs, "outputs");
  check_reduce_op("reduce_scatter", opts.reduceOp, target.scalar_type());
  check_one_list("reduce_scatter", inputs, target, "inputs");
  Tensor packed = flat_cat(inputs[0]);
  Tensor out = staged(target);
  const int n = count_of("reduce_scatter", target.numel());
  Fingerprint f = next(CollectiveKind::kReduceScatter, target, target.numel(), opts.reduceOp);
  MPI_Comm comm = impl_->comm;
  const bool avg = opts.reduceOp == ReduceOp::AVG;
  const int size = this->size();
  return start(
      *impl_, "reduce_scatter", &f, effective(opts.timeout),
      [&](std::vector<MPI_Request>* r) {
        if (!r)
          return mpi_check(MPI_Reduce_scatter_block(
                               packed.data_ptr(), out.data_ptr(), n, mpi_type(target.scalar_type()),
                               mpi_op(opts.reduceOp, target.scalar_type()), comm),
                           "MPI_Reduce_scatter_block");
        r->resize(1);
        mpi_check(MPI_Ireduce_scatter_block(
                      packed.data_ptr(), out.data_ptr(), n, mpi_type(target.scalar_type()),
                      mpi_op(opts.reduceOp, target.scalar_type()), comm, &(*r)[0]),
                  "MPI_Ireduce_scatter_block");
      },
      [target, out, avg, size](const auto&) {
        if (avg) const_cast<Tensor&>(out).div_(size);
        unstage(target, out);
      },
      {packed, out}, {target});
}

std::shared_ptr<Work> ProcessGroupMPI::reduce_scatter_tensor(Tensor& output, Tensor& input,
                                                             const ReduceScatterOptions& opts) {
  std::vector<Tensor> out_list{output};
  const Tensor target = single("reduce_scatter_tensor", out_list, "output");
  check_reduce_op("reduce_scatter_tensor", opts.reduceOp, target.scalar_type());
  check_blocks("reduce_scatter_tensor", input, target, "input");
  Tensor in = staged(input), out = staged(target);
  const int n = count_of("reduce_scatter_tensor", target.numel());
  Fingerprint f = next(CollectiveKind::kReduceScatterTensor, target, target.numel(), opts.reduceOp);
  MPI_Comm comm = impl_->comm;
  const bool avg = opts.reduceOp == ReduceOp::AVG;
  const int size = this->size();
  return start(
      *impl_, "reduce_scatter_tensor", &f, effective(opts.timeout),
      [&](std::vector<MPI_Request>* r) {
        if (!r)
          return mpi_check(MPI_Reduce_scatter_block(
                               in.data_ptr(), out.data_ptr(), n, mpi_type(target.scalar_type()),
                               mpi_op(opts.reduceOp, target.scalar_type()), comm),
                           "MPI_Reduce_scatter_block");
        r->resize(1);
        mpi_check(MPI_Ireduce_scatter_block(
                      in.data_ptr(), out.data_ptr(), n, mpi_type(target.scalar_type()),
                      mpi_op(opts.reduceOp, target.scalar_type()), comm, &(*r)[0]),
                  "MPI_Ireduce_scatter_block");
      },
      [target, out, avg, size](const auto&) {
        if (avg) const_cast<Tensor&>(out).div_(size);
        unstage(target, out);
      },
      {in, out}, {target});
}

namespace {
// MPI's int counts and displacements from element counts per rank.
void to_counts(const char* op, const std::vector<int64_t>& elements, std::vector<int>& counts,
               std::vector<int>& displs) {
  int64_t total = 0;
  counts.clear();
  displs.clear();
  for (int64_t e : elements) {
    displs.push_back(count_of(op, total));
    counts.push_back(count_of(op, e));
    total += e;
  }
}
}  // namespace

std::shared_ptr<Work> ProcessGroupMPI::alltoall_base(Tensor& output, Tensor& input,
                                                     std::vector<int64_t>& output_split_sizes,
                                                     std::vector<int64_t>& input_split_sizes,
                                                     const AllToAllOptions& opts) {
  std::vector<Tensor> in_list{input}, out_list{output};
  const Tensor src = single("alltoall_base", in_list, "input");
  const Tensor target = single("alltoall_base", out_list, "output");
  BRASA_CHECK(src.scalar_type() == target.scalar_type(), name("alltoall_base"), ": input is ",
              toString(src.scalar_type()), " but output is ", toString(target.scalar_type()));
  std::vector<int> send_counts, send_displs, recv_counts, recv_displs;
  to_counts("alltoall_base", split_elements("alltoall_base", src, input_split_sizes, "input"),
            send_counts, send_displs);
  to_counts("alltoall_base", split_elements("alltoall_base", target, output_split_sizes, "output"),
            recv_counts, recv_displs);
  Tensor in = staged(src), out = staged(target);
  // Sizes may differ between ranks; only the kind and dtype are compared.
  Fingerprint f = next(CollectiveKind::kAlltoallBase, src, -1);
  MPI_Comm comm = impl_->comm;
  MPI_Datatype type = mpi_type(src.scalar_type());
  return start(
      *impl_, "alltoall_base", &f, effective(opts.timeout),
      [&](std::vector<MPI_Request>* r) {
        if (!r)
          return mpi_check(
              MPI_Alltoallv(in.data_ptr(), send_counts.data(), send_displs.data(), type,
                            out.data_ptr(), recv_counts.data(), recv_displs.data(), type, comm),
              "MPI_Alltoallv");
        r->resize(1);
        mpi_check(MPI_Ialltoallv(in.data_ptr(), send_counts.data(), send_displs.data(), type,
                                 out.data_ptr(), recv_counts.data(), recv_displs.data(), type, comm,
                                 &(*r)[0]),
                  "MPI_Ialltoallv");
      },
      [target, out](const auto&) { unstage(target, out); }, {in, out}, {target});
}

std::shared_ptr<Work> ProcessGroupMPI::alltoall(std::vector<Tensor>& outputs,
                                                std::vector<Tensor>& inputs,
                                                const AllToAllOptions& opts) {
  std::vector<int64_t> send, recv;
  check_alltoall("alltoall", outputs, inputs, send, recv);
  std::vector<int> send_counts, send_displs, recv_counts, recv_displs;
  to_counts("alltoall", send, send_counts, send_displs);
  to_counts("alltoall", recv, recv_counts, recv_displs);
  int64_t recv_total = 0;
  for (int64_t c : recv) recv_total += c;
  const ScalarType dtype = inputs[0].scalar_type();
  Tensor packed = flat_cat(inputs);
  Tensor received = empty({recv_total}, inputs[0].options());
  Fingerprint f = next(CollectiveKind::kAlltoall, packed, -1);
  MPI_Comm comm = impl_->comm;
  MPI_Datatype type = mpi_type(dtype);
  std::vector<Tensor> targets = outputs;
  return start(
      *impl_, "alltoall", &f, effective(opts.timeout),
      [&](std::vector<MPI_Request>* r) {
        if (!r)
          return mpi_check(MPI_Alltoallv(packed.data_ptr(), send_counts.data(), send_displs.data(),
                                         type, received.data_ptr(), recv_counts.data(),
                                         recv_displs.data(), type, comm),
                           "MPI_Alltoallv");
        r->resize(1);
        mpi_check(MPI_Ialltoallv(packed.data_ptr(), send_counts.data(), send_displs.data(), type,
                                 received.data_ptr(), recv_counts.data(), recv_displs.data(), type,
                                 comm, &(*r)[0]),
                  "MPI_Ialltoallv");
      },
      [targets, received](const auto&) { scatter_back(targets, received); }, {packed, received},
      targets);
}

std::shared_ptr<Work> ProcessGroupMPI::barrier(const BarrierOptions& opts) {
  Fingerprint f = next(CollectiveKind::kBarrier, Tensor(), 0);
  MPI_Comm comm = impl_->comm;
  return start(*impl_, "barrier", &f, effective(opts.timeout),
               [&](std::vector<MPI_Request>* r) {
                 if (!r) return mpi_check(MPI_Barrier(comm), "MPI_Barrier");
                 r->resize(1);
                 mpi_check(MPI_Ibarrier(comm, &(*r)[0]), "MPI_Ibarrier");
               },
               nullptr, {}, {});
}

std::shared_ptr<Work> ProcessGroupMPI::send(std::vector<Tensor>& tensors, int dst_rank, int tag) {
  const Tensor t = single("send", tensors);
  check_rank("send", "destination", dst_rank);
  BRASA_CHECK(tag >= 0, name("send"), ": the tag must be >= 0, got ", tag);
  Tensor buf = staged(t);
  const int n = count_of("send", t.numel());
  MPI_Comm comm = impl_->comm;
  return start(*impl_, "send", nullptr, timeout(),
               [&](std::vector<MPI_Request>* r) {
                 r->resize(1);
                 mpi_check(MPI_Isend(buf.data_ptr(), n, mpi_type(t.scalar_type()), dst_rank, tag,
                                     comm, &(*r)[0]),
                           "MPI_Isend");
               },
               nullptr, {buf}, {t});
}

namespace {
std::shared_ptr<Work> post_recv(ProcessGroupMPI::Impl& g, const char* op, const Tensor& t, int src,
                                int tag, std::chrono::milliseconds timeout) {
  Tensor buf = staged(t);
  const int n = count_of(op, t.numel());
  MPI_Comm comm = g.comm;
  return start(
      g, op, nullptr, timeout,
      [&](std::vector<MPI_Request>* r) {
        r->resize(1);
        mpi_check(MPI_Irecv(buf.data_ptr(), n, mpi_type(t.scalar_type()), src, tag, comm, &(*r)[0]),
                  "MPI_Irecv");
      },
      [t, buf](const std::vector<MPI_Status>&) { unstage(t, buf); }, {buf}, {t},
      /*record_source=*/true);
}
}  // namespace

std::shared_ptr<Work> ProcessGroupMPI::recv(std::vector<Tensor>& tensors, int src_rank, int tag) {
  const Tensor t = single("recv", tensors);
  check_rank("recv", "source", src_rank);
  BRASA_CHECK(tag >= 0, name("recv"), ": the tag must be >= 0, got ", tag);
  return post_recv(*impl_, "recv", t, src_rank, tag, timeout());
}

std::shared_ptr<Work> ProcessGroupMPI::recv_anysource(std::vector<Tensor>& tensors, int tag) {
  const Tensor t = single("recv_anysource", tensors);
  BRASA_CHECK(tag >= 0, name("recv_anysource"), ": the tag must be >= 0, got ", tag);
  return post_recv(*impl_, "recv_anysource", t, MPI_ANY_SOURCE, tag, timeout());
}

}  // namespace brasa::distributed
