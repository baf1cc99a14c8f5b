// ProcessGroupMPI's machinery: the group state, its progress thread, the fingerprint
// exchange before collectives, and starting an operation (see mpi_group.h).
#include "mpi_group.h"

#include <brasa/comm/errors.h>
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

namespace brasa::distributed {

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

// Starts an operation: checks the group, compares fingerprints (collectives
// only), lets `launch` post the MPI calls and hands the work to the progress
// thread.
std::shared_ptr<Work> mpi_detail::start(
    ProcessGroupMPI::Impl& g, const char* op, const Fingerprint* fingerprint,
    std::chrono::milliseconds timeout, const std::function<void(std::vector<MPI_Request>*)>& launch,
    std::function<void(const std::vector<MPI_Status>&)> on_done, std::vector<Tensor> keep_alive,
    std::vector<Tensor> outputs, bool record_source) {
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

}  // namespace brasa::distributed
