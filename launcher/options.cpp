#include "options.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <thread>

namespace brasarun {

const char* usage_text() {
  return R"(usage: brasarun [options] program [args...]

Starts the workers of a multi-process Brasa job on this node, gives each its
place in the job through the environment, prefixes their output with their
rank, and stops or restarts the whole group when one of them fails.

options (each also as --name=value; '_' may replace '-' in names):
  --nproc-per-node N   workers on this node (default 1; 'auto' = number of CPUs)
  --nnodes M           nodes in the job (default 1)
  --node-rank R        this node's index, 0..M-1 (default 0)
  --master-addr A      address of node 0 (default 127.0.0.1)
  --master-port P      single node: the MASTER_PORT given to the workers.
                       several nodes: the port of brasarun's rendezvous on
                       node 0; the workers then get a free port node 0 picks.
                       0 (default) picks a free port; on several nodes only
                       node 0 may pass 0, and it prints the port it picked.
  --max-restarts K     restart the whole group up to K times after a failure
                       (default 0)
  --log-dir D          write D/rank_<R>.log per worker and D/combined.log
                       (all ranks, prefixed, with brasarun's own notices)
  --tee[=S]            with --log-dir: worker output goes to the console and
                       the log files (the default with --log-dir)
  --redirect[=S]       with --log-dir: worker output goes to the log files only
                       S selects the streams: 1 stdout, 2 stderr, 3 both
                       (default 3)
  --run-id ID          a name for the job (default: made up by node 0); every
                       node must give the same one or none
  --monitor-interval S seconds between checks of the workers (default 0.1)
  --timeout-grace S    seconds between SIGTERM and SIGKILL when stopping
                       workers (default 5)
  --rdzv-timeout S     seconds node 0 waits for all nodes to join (default 300)
  --quiet              no notices from brasarun itself (failures still print)
  --help               this text
  --                   ends the options (useful if the program starts with -)

every worker gets:
  RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK (node index),
  GROUP_WORLD_SIZE, MASTER_ADDR, MASTER_PORT, BRASA_RESTART_COUNT,
  BRASA_MAX_RESTARTS, BRASA_RUN_ID, BRASA_ERROR_FILE (a file the worker may
  write its failure reason to; the summary shows it) and OMP_NUM_THREADS=1
  unless OMP_NUM_THREADS is already set.

behaviour:
  Workers write to a terminal of their own, so their stdout is line-buffered;
  brasarun forwards whole lines only, each as "[rank R] line". Standard input
  of the workers is /dev/null.
  When a worker exits non-zero or is killed by a signal, the others get
  SIGTERM, then SIGKILL after the grace period; the group is restarted while
  restarts remain, otherwise brasarun exits 1 with a summary naming the first
  failing rank, its exit code or signal, its error file and its last lines.
  SIGINT, SIGTERM and SIGHUP sent to brasarun are forwarded to the workers;
  brasarun then exits with 128 + the signal number. Workers die with brasarun
  even when it is killed with SIGKILL.

exit codes: 0 all workers succeeded; 1 the job failed; 2 bad command line;
128+N stopped by signal N.
)";
}

namespace {

std::string normalize(std::string name) {
  for (char& c : name)
    if (c == '_') c = '-';
  return name;
}

int parse_int(const std::string& opt, const std::string& v, int lo, int hi) {
  errno = 0;
  char* end = nullptr;
  long x = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || errno != 0 || *end != '\0' || x < lo || x > hi)
    throw UsageError("brasarun: " + opt + " expects an integer in [" + std::to_string(lo) + ", " +
                     std::to_string(hi) + "], got '" + v + "'");
  return static_cast<int>(x);
}

double parse_seconds(const std::string& opt, const std::string& v, bool allow_zero) {
  errno = 0;
  char* end = nullptr;
  double x = std::strtod(v.c_str(), &end);
  if (v.empty() || errno != 0 || *end != '\0' || !std::isfinite(x) || x < 0 ||
      (!allow_zero && x == 0) || x > 1e7)
    throw UsageError("brasarun: " + opt + " expects a number of seconds" +
                     (allow_zero ? " >= 0" : " > 0") + ", got '" + v + "'");
  return x;
}

int parse_streams(const std::string& opt, const std::string& v) {
  if (v == "1" || v == "2" || v == "3") return v[0] - '0';
  throw UsageError("brasarun: " + opt + " expects 1 (stdout), 2 (stderr) or 3 (both), got '" + v +
                   "'");
}

}  // namespace

bool parse_options(int argc, char** argv, Options& o) {
  bool port_given = false;
  int i = 1;
  for (; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg.size() < 2 || arg[0] != '-') break;  // the program
    if (arg[1] != '-')
      throw UsageError("brasarun: unknown option '" + arg +
                       "' (options start with --; see --help)");
    std::string name = arg, value;
    bool has_value = false;
    if (auto eq = arg.find('='); eq != std::string::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      has_value = true;
    }
    name = normalize(name);
    // Fetches the option's value: after '=' or as the next argument.
    auto need = [&]() -> std::string {
      if (has_value) return value;
      if (i + 1 >= argc) throw UsageError("brasarun: " + name + " needs a value");
      return argv[++i];
    };
    auto flag_only = [&] {
      if (has_value) throw UsageError("brasarun: " + name + " takes no value");
    };
    if (name == "--help" || name == "-h") {
      std::fputs(usage_text(), stdout);
      return false;
    } else if (name == "--nproc-per-node") {
      std::string v = need();
      o.nproc_per_node = v == "auto"
                             ? static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))
                             : parse_int(name, v, 1, 4096);
    } else if (name == "--nnodes") {
      o.nnodes = parse_int(name, need(), 1, 65536);
    } else if (name == "--node-rank") {
      o.node_rank = parse_int(name, need(), 0, 65535);
    } else if (name == "--master-addr") {
      o.master_addr = need();
      if (o.master_addr.empty()) throw UsageError("brasarun: --master-addr must not be empty");
    } else if (name == "--master-port") {
      o.master_port = parse_int(name, need(), 0, 65535);
      port_given = true;
    } else if (name == "--max-restarts") {
      o.max_restarts = parse_int(name, need(), 0, 1000000);
    } else if (name == "--log-dir") {
      o.log_dir = need();
      if (o.log_dir.empty()) throw UsageError("brasarun: --log-dir must not be empty");
    } else if (name == "--tee") {
      o.tee = has_value ? parse_streams(name, value) : kBothStreams;
    } else if (name == "--redirect") {
      o.redirect = has_value ? parse_streams(name, value) : kBothStreams;
    } else if (name == "--run-id") {
      o.run_id = need();
      for (char c : o.run_id)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.'))
          throw UsageError(
              "brasarun: --run-id may hold letters, digits, '-', '_' and '.' only, got '" +
              o.run_id + "'");
      if (o.run_id.empty() || o.run_id.size() > 128)
        throw UsageError("brasarun: --run-id must have 1 to 128 characters");
    } else if (name == "--monitor-interval") {
      o.monitor_interval = parse_seconds(name, need(), false);
    } else if (name == "--timeout-grace") {
      o.timeout_grace = parse_seconds(name, need(), true);
    } else if (name == "--rdzv-timeout") {
      o.rdzv_timeout = parse_seconds(name, need(), false);
    } else if (name == "--quiet") {
      flag_only();
      o.quiet = true;
    } else {
      throw UsageError("brasarun: unknown option '" + arg + "' (see --help)");
    }
  }
  for (; i < argc; ++i) o.command.emplace_back(argv[i]);

  if (o.command.empty()) throw UsageError("brasarun: no program given (see --help)");
  if (o.node_rank >= o.nnodes)
    throw UsageError("brasarun: --node-rank " + std::to_string(o.node_rank) +
                     " is not below --nnodes " + std::to_string(o.nnodes));
  if (o.nnodes > 1 && o.node_rank > 0 && (!port_given || o.master_port == 0))
    throw UsageError(
        "brasarun: node " + std::to_string(o.node_rank) +
        " needs --master-port: the port of the rendezvous on node 0 (node 0 prints it when it "
        "picks one)");
  if ((o.tee || o.redirect) && o.log_dir.empty())
    throw UsageError("brasarun: --tee and --redirect need --log-dir");
  if (o.tee & o.redirect)
    throw UsageError("brasarun: a stream cannot be both tee'd and redirected");
  if (!o.log_dir.empty() && !o.redirect && !o.tee) o.tee = kBothStreams;
  const char* token = std::getenv("BRASA_JOB_TOKEN");
  if (o.nnodes > 1 && (!token || !*token))
    throw UsageError(
        "brasarun: a job of several nodes needs a shared secret, so that nobody else can join "
        "or stop it: set BRASA_JOB_TOKEN to the same value on every node (for example the "
        "output of `od -An -N16 -tx1 /dev/urandom | tr -d ' \\n'`)");
  return true;
}

}  // namespace brasarun
