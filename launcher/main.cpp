// brasarun: starts the workers of a multi-process Brasa job (see --help).

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "options.h"
#include "output.h"
#include "rendezvous.h"
#include "signals.h"
#include "workers.h"

namespace brasarun {
namespace {

// The program's path as execve needs it: as given when it holds a '/',
// otherwise the first executable file of that name on PATH.
std::string resolve_program(const std::string& name) {
  auto executable = [](const std::string& p) {
    struct stat st {};
    return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
  };
  if (name.find('/') != std::string::npos) return executable(name) ? name : std::string();
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t pos = 0;
  while (pos <= dirs.size()) {
    size_t colon = dirs.find(':', pos);
    std::string dir =
        dirs.substr(pos, colon == std::string::npos ? std::string::npos : colon - pos);
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (executable(candidate)) return candidate;
    if (colon == std::string::npos) break;
    pos = colon + 1;
  }
  return {};
}

// Holds the workers' error files when there is no --log-dir; removed at exit
// (or by the workers' guardians if brasarun is killed).
struct TempDir {
  std::string path;
  explicit TempDir(bool wanted) {
    if (!wanted) return;
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/brasarun-XXXXXX";
    if (::mkdtemp(pattern.data())) path = pattern;
  }
  ~TempDir() {
    if (path.empty()) return;
    if (DIR* d = ::opendir(path.c_str())) {
      while (dirent* e = ::readdir(d))
        if (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, ".."))
          ::unlink((path + "/" + e->d_name).c_str());
      ::closedir(d);
    }
    ::rmdir(path.c_str());
  }
};

std::string indent(const std::string& text, const std::string& prefix) {
  std::string out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    size_t end = nl == std::string::npos ? text.size() : nl;
    out += prefix + text.substr(pos, end - pos) + "\n";
    pos = end + 1;
  }
  return out;
}

int run(int argc, char** argv) {
  Options options;
  std::unique_ptr<Output> output;
  std::string program;
  try {
    if (!parse_options(argc, argv, options)) return 0;
    program = resolve_program(options.command[0]);
    if (program.empty())
      throw UsageError("brasarun: program '" + options.command[0] + "' " +
                       (options.command[0].find('/') != std::string::npos
                            ? "is not an executable file"
                            : "is not an executable file on PATH"));
    output = std::make_unique<Output>(options);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  Output& out = *output;
  install_signal_handlers();
  if (!std::getenv("OMP_NUM_THREADS")) {
    ::setenv("OMP_NUM_THREADS", "1", 1);
    out.notice("setting OMP_NUM_THREADS=1 for each worker so that " +
               std::to_string(options.nproc_per_node) +
               " worker(s) do not oversubscribe the CPUs; set OMP_NUM_THREADS yourself to choose "
               "otherwise");
  }
  TempDir temp(options.log_dir.empty());
  std::string error_dir = options.log_dir.empty() ? temp.path : options.log_dir;
  if (error_dir.empty()) {
    out.error("cannot create a temporary directory for the workers' error files");
    return 1;
  }
  const std::string node =
      options.nnodes > 1 ? " on node " + std::to_string(options.node_rank) : "";

  std::unique_ptr<Coordinator> coordinator;
  try {
    coordinator = make_coordinator(options, out);
  } catch (const RendezvousError& e) {
    out.error(e.what());
    return 1;
  }
  WorkerGroup group(options, out, program, error_dir, options.log_dir.empty());

  for (;;) {
    std::optional<Assignment> assignment;
    try {
      assignment = coordinator->join();
    } catch (const RendezvousError& e) {
      out.error(std::string("the job failed: ") + e.what());
      return 1;
    }
    if (!assignment) {
      int sig = take_stop_signal();
      out.error("got " + signal_name(sig) + " before the workers started; exiting");
      return 128 + sig;
    }
    const Assignment& a = *assignment;
    group.start(a);
    out.notice("attempt " + std::to_string(a.attempt) + ": started " +
               std::to_string(options.nproc_per_node) + " worker(s)" + node + ", ranks " +
               std::to_string(a.rank_base) + ".." +
               std::to_string(a.rank_base + options.nproc_per_node - 1) + " of " +
               std::to_string(a.world_size) + ", MASTER_ADDR=" + options.master_addr +
               " MASTER_PORT=" + std::to_string(a.master_port) + ", run id " + a.run_id);

    bool reported = false;
    std::string local_report;  // set when the failure that ends this attempt is ours
    std::optional<Decision> decision;
    while (!decision) {
      std::vector<pollfd> extra;
      if (coordinator->fd() >= 0) extra.push_back({coordinator->fd(), POLLIN, 0});
      group.poll(options.monitor_interval, extra);
      if (int sig = take_stop_signal()) {
        out.error("got " + signal_name(sig) + "; forwarding it to the workers");
        coordinator->report_abort("brasarun" + node + " got " + signal_name(sig));
        group.stop(sig);
        // Give the rendezvous a moment to pass the word to the other nodes.
        const double until = now_seconds() + 1.0;
        while (!coordinator->decision() && now_seconds() < until) group.poll(0.05, extra);
        return 128 + sig;
      }
      if (!reported) {
        if (const Worker* failed = group.first_failure()) {
          const std::string reason = "rank " + std::to_string(failed->rank) + node +
                                     " (local rank " + std::to_string(failed->local_rank) +
                                     ", pid " + std::to_string(failed->pid) + ") " +
                                     failed->describe_exit();
          out.error(reason + "; stopping the other workers");
          group.stop(SIGTERM);
          local_report = group.failure_report(*failed);
          coordinator->report_failure(reason);
          reported = true;
        } else if (group.all_succeeded()) {
          coordinator->report_success();
          reported = true;
        }
      }
      decision = coordinator->decision();
    }

    if (decision->kind == Decision::kFinish) {
      out.notice("all workers succeeded");
      return 0;
    }
    if (group.any_running()) {
      out.error("stopping this node's workers: " + decision->reason);
      group.stop(SIGTERM);
    }
    if (decision->kind == Decision::kRestart) {
      std::string text = "restarting the worker group (restart " + std::to_string(a.attempt + 1) +
                         " of " + std::to_string(options.max_restarts) +
                         ") after: " + decision->reason;
      if (!local_report.empty()) text += "\n" + indent(local_report, "  ");
      out.error(text);
      continue;
    }
    std::string summary = "the job failed";
    summary += a.attempt > 0 ? " after " + std::to_string(a.attempt) + " restart(s)" : "";
    summary += "\n  first failure: " + decision->reason + "\n";
    if (!local_report.empty()) summary += indent(local_report, "  ");
    out.error(summary);
    return 1;
  }
}

}  // namespace
}  // namespace brasarun

int main(int argc, char** argv) {
  try {
    return brasarun::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "brasarun: %s\n", e.what());
    return 1;
  }
}
