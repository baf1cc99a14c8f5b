#include "rendezvous.h"

#include <brasa/util/secret.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <thread>

#include "net.h"
#include "signals.h"

namespace brasarun {

namespace {

std::string make_run_id() {
  std::random_device rd;
  char buf[32];
  std::snprintf(buf, sizeof buf, "brasa-%08x", rd());
  return buf;
}

bool parse_int(const std::string& s, int* out) {
  if (s.empty() || s.size() > 9) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  *out = std::stoi(s);
  return true;
}

// ---- one node ----

class LocalCoordinator : public Coordinator {
 public:
  explicit LocalCoordinator(const Options& o)
      : options_(o), run_id_(o.run_id.empty() ? make_run_id() : o.run_id) {}

  std::optional<Assignment> join() override {
    Assignment a;
    a.attempt = ++attempt_;
    a.world_size = options_.nproc_per_node;
    a.master_port = options_.master_port != 0 ? options_.master_port : pick_free_port();
    if (a.master_port == 0) throw RendezvousError("cannot find a free port for MASTER_PORT");
    a.run_id = run_id_;
    decision_.reset();
    return a;
  }
  void report_failure(const std::string& reason) override {
    decision_ =
        Decision{attempt_ < options_.max_restarts ? Decision::kRestart : Decision::kAbort, reason};
  }
  void report_abort(const std::string& reason) override {
    decision_ = Decision{Decision::kAbort, reason};
  }
  void report_success() override { decision_ = Decision{Decision::kFinish, ""}; }
  std::optional<Decision> decision() override { return decision_; }

 private:
  const Options& options_;
  std::string run_id_;
  int attempt_ = -1;
  std::optional<Decision> decision_;
};

// ---- several nodes: the server on node 0 ----

class RendezvousServer {
 public:
  RendezvousServer(const Options& o, int listen_fd, std::string run_id)
      : options_(o), listen_fd_(listen_fd), run_id_(std::move(run_id)) {
    if (::pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0)
      throw RendezvousError(std::string("pipe2: ") + std::strerror(errno));
    deadline_ = now_seconds() + options_.rdzv_timeout;
    thread_ = std::thread([this] { loop(); });
  }
  ~RendezvousServer() {
    (void)!::write(wake_[1], "x", 1);
    thread_.join();
    ::close(wake_[0]);
    ::close(wake_[1]);
    ::close(listen_fd_);
  }

 private:
  struct Client {
    LineChannel channel;
    double accepted_at = 0;
    bool authenticated = false;  // after "auth TOKEN" with the job's token
    int node = -1;               // known after its first join
    int nproc = 0;
    bool joined = false;
    bool done = false;
  };
  enum Phase { kJoining, kRunning, kEnded };

  void loop() {
    for (;;) {
      std::vector<pollfd> fds{{wake_[0], POLLIN, 0}, {listen_fd_, POLLIN, 0}};
      for (auto& c : clients_) fds.push_back({c->channel.fd(), POLLIN, 0});
      int timeout_ms = 1000;
      if (phase_ == kJoining)
        timeout_ms = std::clamp(static_cast<int>((deadline_ - now_seconds()) * 1000) + 1, 0, 1000);
      ::poll(fds.data(), fds.size(), timeout_ms);
      if (fds[0].revents) return;
      if (fds[1].revents & POLLIN) accept_one();
      for (size_t i = 0; i < fds.size() - 2 && i < clients_.size(); ++i) {
        if (!fds[i + 2].revents) continue;
        Client& c = *clients_[i];
        std::vector<std::string> lines;
        bool alive = c.channel.receive(lines);
        for (const auto& line : lines) handle(c, line);
        if (!alive) disconnected(c);
      }
      close_unauthenticated(kAuthSeconds);
      clients_.erase(std::remove_if(clients_.begin(), clients_.end(),
                                    [](const auto& c) { return !c->channel.open(); }),
                     clients_.end());
      if (phase_ == kJoining && now_seconds() > deadline_) {
        std::string missing;
        for (int n = 0; n < options_.nnodes; ++n)
          if (!joined(n)) missing += (missing.empty() ? "" : ", ") + std::to_string(n);
        end_with("error the rendezvous timed out after " +
                 std::to_string(int(options_.rdzv_timeout)) + " s: node(s) " + missing +
                 " did not join");
      }
    }
  }

  // A connection must present the job's token within this time.
  static constexpr double kAuthSeconds = 10;

  // Strangers cannot crowd out the nodes: past a bound, a new connection
  // displaces the oldest one that has not authenticated (or is refused, and
  // when out of descriptors, the listener rests for a moment instead of
  // spinning).
  void accept_one() {
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (!close_unauthenticated(0)) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      return;
    }
    const size_t bound = 2 * static_cast<size_t>(options_.nnodes) + 16;
    if (clients_.size() >= bound && !close_unauthenticated(0)) {
      LineChannel(fd).send("error the rendezvous has too many connections");
      return;
    }
    auto c = std::make_unique<Client>(Client{LineChannel(fd)});
    c->accepted_at = now_seconds();
    clients_.push_back(std::move(c));
  }

  // Closes the oldest connection that has not authenticated for longer than
  // `seconds` (with 0: the oldest one). False when there is none.
  bool close_unauthenticated(double seconds) {
    Client* oldest = nullptr;
    for (auto& c : clients_)
      if (c->channel.open() && !c->authenticated &&
          (!oldest || c->accepted_at < oldest->accepted_at))
        oldest = c.get();
    if (!oldest || now_seconds() - oldest->accepted_at < seconds) return false;
    reject(*oldest, "no job token within " + std::to_string(int(kAuthSeconds)) + " s");
    if (seconds > 0) close_unauthenticated(seconds);  // the others that are as late
    return true;
  }

  bool joined(int node) const {
    return std::any_of(clients_.begin(), clients_.end(),
                       [&](const auto& c) { return c->joined && c->node == node; });
  }

  void reject(Client& c, const std::string& reason) {
    c.channel.send("error " + one_line(reason));
    c.channel.close();
  }

  void handle(Client& c, const std::string& line) {
    auto w = split_words(line, 1);
    const std::string& verb = w[0];
    if (!c.authenticated) {
      // Nothing from a connection counts before it shows the job's token.
      if (verb != "auth") return reject(c, "this rendezvous needs the job's token first");
      if (!brasa::util::same_secret(w[1], job_token()))
        return reject(c, "wrong job token (BRASA_JOB_TOKEN differs from node 0's)");
      c.authenticated = true;
      return;
    }
    if (verb == "auth") return;  // a node that joins again introduces itself again
    if (verb == "join") {
      auto f = split_words(line, 5);  // join node nproc max_restarts run_id
      int node = 0, nproc = 0, max_restarts = 0;
      if (!parse_int(f[1], &node) || !parse_int(f[2], &nproc) || !parse_int(f[3], &max_restarts))
        return reject(c, "malformed join: '" + line + "'");
      if (phase_ != kJoining)
        return reject(c, "node " + f[1] + " tried to join while the job is " +
                             (phase_ == kRunning ? "running" : "over"));
      if (node >= options_.nnodes)
        return reject(
            c, "node rank " + f[1] + " is not below --nnodes " + std::to_string(options_.nnodes));
      if (c.node != node && std::any_of(clients_.begin(), clients_.end(), [&](const auto& o) {
            return o.get() != &c && o->node == node;
          }))
        return reject(c, "two nodes use --node-rank " + f[1]);
      c.node = node;  // from here on, errors reach it with everyone else
      if (max_restarts != options_.max_restarts)
        return end_with("error node " + f[1] + " has --max-restarts " + f[3] + " but node 0 has " +
                        std::to_string(options_.max_restarts));
      if (f[4] != "-" && f[4] != run_id_)
        return end_with("error node " + f[1] + " has --run-id " + f[4] + " but node 0 has " +
                        run_id_);
      c.nproc = nproc;
      c.joined = true;
      for (int n = 0; n < options_.nnodes; ++n)
        if (!joined(n)) return;
      start_attempt();
    } else if (verb == "failed") {
      auto f = split_words(line, 2);
      int attempt = -1;
      if (phase_ != kRunning || !parse_int(f[1], &attempt) || attempt != attempt_) return;
      if (attempt_ < options_.max_restarts) {
        ++attempt_;
        phase_ = kJoining;
        deadline_ = now_seconds() + options_.rdzv_timeout;
        for (auto& o : clients_) o->joined = o->done = false;
        broadcast("restart " + f[2]);
      } else {
        end_with("abort " + f[2]);
      }
    } else if (verb == "abort") {
      if (phase_ != kEnded) end_with("abort " + split_words(line, 1)[1]);
    } else if (verb == "done") {
      auto f = split_words(line, 2);
      int attempt = -1;
      if (phase_ != kRunning || !parse_int(f[1], &attempt) || attempt != attempt_) return;
      c.done = true;
      if (std::all_of(clients_.begin(), clients_.end(),
                      [](const auto& o) { return !o->joined || o->done; }))
        end_with("finish");
    } else {
      reject(c, "unknown message '" + one_line(line) + "'");
    }
  }

  void disconnected(Client& c) {
    c.channel.close();
    if (c.node >= 0 && phase_ != kEnded)
      end_with("abort lost contact with brasarun on node " + std::to_string(c.node));
  }

  void start_attempt() {
    std::vector<int> nproc(static_cast<size_t>(options_.nnodes), 0);
    for (auto& c : clients_)
      if (c->joined) nproc[static_cast<size_t>(c->node)] = c->nproc;
    int world = 0;
    for (int n : nproc) world += n;
    int port = pick_free_port();
    for (auto& c : clients_) {
      if (!c->joined) continue;
      int base = 0;
      for (int n = 0; n < c->node; ++n) base += nproc[static_cast<size_t>(n)];
      c->channel.send("start " + std::to_string(attempt_) + " " + std::to_string(world) + " " +
                      std::to_string(base) + " " + std::to_string(port) + " " + run_id_ + " " +
                      std::to_string(options_.nnodes));
    }
    phase_ = kRunning;
  }

  void broadcast(const std::string& line) {
    for (auto& c : clients_)
      if (c->node >= 0) c->channel.send(line);
  }

  void end_with(const std::string& line) {
    broadcast(line);
    phase_ = kEnded;
  }

  const Options& options_;
  int listen_fd_;
  std::string run_id_;
  int wake_[2] = {-1, -1};
  std::vector<std::unique_ptr<Client>> clients_;
  Phase phase_ = kJoining;
  int attempt_ = 0;
  double deadline_ = 0;
  std::thread thread_;  // last: starts after everything above exists
};

// ---- several nodes: every node's side ----

class RemoteCoordinator : public Coordinator {
 public:
  RemoteCoordinator(const Options& o, Output& out, std::unique_ptr<RendezvousServer> server,
                    int port)
      : options_(o), output_(out), server_(std::move(server)), port_(port) {}

  std::optional<Assignment> join() override {
    const double deadline = now_seconds() + options_.rdzv_timeout + 5;
    const std::string where = options_.master_addr + ":" + std::to_string(port_);
    std::string error;
    while (!channel_.open()) {
      int fd = connect_tcp(options_.master_addr, port_, &error);
      if (fd >= 0) {
        channel_ = LineChannel(fd);
        break;
      }
      if (pending_stop_signal()) return std::nullopt;
      if (now_seconds() > deadline)
        throw RendezvousError("cannot reach the rendezvous at " + where + ": " + error +
                              " (is brasarun running on node 0 with this --master-port?)");
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    decision_.reset();
    if (!channel_.send("auth " + job_token()) ||
        !channel_.send("join " + std::to_string(options_.node_rank) + " " +
                       std::to_string(options_.nproc_per_node) + " " +
                       std::to_string(options_.max_restarts) + " " +
                       (options_.run_id.empty() ? "-" : options_.run_id)))
      throw RendezvousError("lost contact with the rendezvous at " + where);
    for (;;) {
      pollfd fds[2] = {{channel_.fd(), POLLIN, 0}, {signal_fd(), POLLIN, 0}};
      ::poll(fds, 2, 200);
      if (fds[1].revents) drain_signal_pipe();
      if (pending_stop_signal()) return std::nullopt;
      std::vector<std::string> lines;
      bool alive = channel_.receive(lines);
      for (const auto& line : lines) {
        auto f = split_words(line, 7);
        if (f[0] == "start") {
          Assignment a;
          if (!parse_int(f[1], &a.attempt) || !parse_int(f[2], &a.world_size) ||
              !parse_int(f[3], &a.rank_base) || !parse_int(f[4], &a.master_port) ||
              !parse_int(f[6], &a.group_world_size))
            throw RendezvousError("malformed message from the rendezvous: '" + line + "'");
          a.run_id = f[5];
          attempt_ = a.attempt;
          return a;
        }
        if (f[0] == "error" || f[0] == "abort") throw RendezvousError(split_words(line, 1)[1]);
      }
      if (!alive) throw RendezvousError("lost contact with the rendezvous at " + where);
      if (now_seconds() > deadline)
        throw RendezvousError("no word from the rendezvous at " + where + " within --rdzv-timeout");
    }
  }

  int fd() const override { return channel_.fd(); }

  void report_failure(const std::string& reason) override {
    channel_.send("failed " + std::to_string(attempt_) + " " + one_line(reason));
  }
  void report_abort(const std::string& reason) override {
    channel_.send("abort " + one_line(reason));
  }
  void report_success() override { channel_.send("done " + std::to_string(attempt_)); }

  std::optional<Decision> decision() override {
    if (decision_) return decision_;
    std::vector<std::string> lines;
    bool alive = channel_.receive(lines);
    for (const auto& line : lines) {
      auto f = split_words(line, 1);
      if (f[0] == "restart") decision_ = Decision{Decision::kRestart, f[1]};
      if (f[0] == "abort" || f[0] == "error") decision_ = Decision{Decision::kAbort, f[1]};
      if (f[0] == "finish") decision_ = Decision{Decision::kFinish, ""};
      if (decision_) break;
    }
    if (!decision_ && !alive) {
      channel_.close();
      decision_ = Decision{Decision::kAbort, "lost contact with the rendezvous on node 0"};
    }
    return decision_;
  }

 private:
  const Options& options_;
  Output& output_;
  std::unique_ptr<RendezvousServer> server_;
  int port_;
  LineChannel channel_;
  int attempt_ = 0;
  std::optional<Decision> decision_;
};

}  // namespace

std::unique_ptr<Coordinator> make_coordinator(const Options& options, Output& output) {
  if (options.nnodes == 1) return std::make_unique<LocalCoordinator>(options);
  int port = options.master_port;
  std::unique_ptr<RendezvousServer> server;
  if (options.node_rank == 0) {
    std::string error;
    int fd = listen_tcp(options.master_port, &port, &error);
    if (fd < 0) throw RendezvousError("cannot start the rendezvous on node 0: " + error);
    server = std::make_unique<RendezvousServer>(
        options, fd, options.run_id.empty() ? make_run_id() : options.run_id);
    if (options.master_port == 0)
      output.error("rendezvous listening on port " + std::to_string(port) +
                   "; start the other nodes with --master-addr <this host> --master-port " +
                   std::to_string(port));
  }
  return std::make_unique<RemoteCoordinator>(options, output, std::move(server), port);
}

}  // namespace brasarun
