#pragma once
// What a process learns from the launcher that started it. Shared by brasarun
// (which sets these variables) and by Brasa programs (which read them), so the
// two sides cannot disagree. Header-only and standard C++ + POSIX only: the
// launcher must not link brasa_core.
//
// Sources, in order of precedence:
//   brasarun / torchrun style: RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE,
//                              GROUP_RANK, MASTER_ADDR, MASTER_PORT
//   Open MPI (mpirun):         OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK, _LOCAL_SIZE
//   PMI (MPICH/Hydra):         PMI_RANK, PMI_SIZE, MPI_LOCALRANKID, MPI_LOCALNRANKS
//   none of them:              a single process, rank 0 of 1.

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>

namespace brasa::launch {

// Variables brasarun sets for every worker.
inline constexpr const char* kRank = "RANK";
inline constexpr const char* kLocalRank = "LOCAL_RANK";
inline constexpr const char* kWorldSize = "WORLD_SIZE";
inline constexpr const char* kLocalWorldSize = "LOCAL_WORLD_SIZE";
inline constexpr const char* kGroupRank = "GROUP_RANK";
inline constexpr const char* kGroupWorldSize = "GROUP_WORLD_SIZE";
inline constexpr const char* kMasterAddr = "MASTER_ADDR";
inline constexpr const char* kMasterPort = "MASTER_PORT";
inline constexpr const char* kRestartCount = "BRASA_RESTART_COUNT";
inline constexpr const char* kMaxRestarts = "BRASA_MAX_RESTARTS";
inline constexpr const char* kRunId = "BRASA_RUN_ID";
inline constexpr const char* kErrorFile = "BRASA_ERROR_FILE";

// Where the values of LaunchInfo came from.
enum class LaunchSource { kNone, kBrasarun, kOpenMPI, kPMI };

inline const char* to_string(LaunchSource s) {
  switch (s) {
    case LaunchSource::kBrasarun:
      return "brasarun";
    case LaunchSource::kOpenMPI:
      return "Open MPI";
    case LaunchSource::kPMI:
      return "PMI";
    case LaunchSource::kNone:
      break;
  }
  return "none (single process)";
}

struct LaunchInfo {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  int local_world_size = 1;
  int group_rank = 0;       // index of this node
  int restart_count = 0;    // brasarun only
  int max_restarts = 0;     // brasarun only
  std::string master_addr;  // empty when the launcher did not say (mpirun)
  int master_port = 0;      // 0 when the launcher did not say
  std::string run_id;
  std::string error_file;  // where to write a failure reason; empty if none
  LaunchSource source = LaunchSource::kNone;

  bool launched() const { return source != LaunchSource::kNone; }
};

namespace detail {

inline const char* env_or_null(const char* name) {
  const char* v = std::getenv(name);
  return (v && *v) ? v : nullptr;
}

// Strict decimal parse: the whole string, in [lo, hi]; otherwise a message
// that names the variable and its value.
inline int parse_env_int(const char* name, const char* value, int lo, int hi) {
  errno = 0;
  char* end = nullptr;
  long v = std::strtol(value, &end, 10);
  if (errno != 0 || end == value || *end != '\0' || v < lo || v > hi) {
    throw std::runtime_error(std::string("launch environment: ") + name + "='" + value +
                             "' is not an integer in [" + std::to_string(lo) + ", " +
                             std::to_string(hi) + "]");
  }
  return static_cast<int>(v);
}

inline int env_int(const char* name, int fallback, int lo = 0, int hi = INT_MAX) {
  const char* v = env_or_null(name);
  return v ? parse_env_int(name, v, lo, hi) : fallback;
}

inline void check_consistent(const LaunchInfo& info) {
  auto fail = [&](const std::string& what) {
    throw std::runtime_error(std::string("launch environment (") + to_string(info.source) +
                             "): " + what);
  };
  if (info.rank >= info.world_size)
    fail("rank " + std::to_string(info.rank) + " is not below world size " +
         std::to_string(info.world_size));
  if (info.local_rank >= info.local_world_size)
    fail("local rank " + std::to_string(info.local_rank) + " is not below local world size " +
         std::to_string(info.local_world_size));
  if (info.local_world_size > info.world_size)
    fail("local world size " + std::to_string(info.local_world_size) +
         " is larger than world size " + std::to_string(info.world_size));
}

}  // namespace detail

// Reads the environment as described at the top of this file. Throws
// std::runtime_error naming the variable when a value is malformed or the
// values contradict each other (say RANK=4 with WORLD_SIZE=4).
inline LaunchInfo launch_info() {
  using detail::env_int;
  using detail::env_or_null;
  LaunchInfo info;
  if (env_or_null(kRank) && env_or_null(kWorldSize)) {
    info.source = LaunchSource::kBrasarun;
    info.world_size = env_int(kWorldSize, 1, 1);
    info.rank = env_int(kRank, 0);
    // A launcher that sets only RANK/WORLD_SIZE (a hand-written job script)
    // is taken as one process per node.
    info.local_rank = env_int(kLocalRank, 0);
    info.local_world_size =
        env_int(kLocalWorldSize, env_or_null(kLocalRank) ? info.world_size : 1, 1);
    info.group_rank = env_int(kGroupRank, info.rank / info.local_world_size);
    info.restart_count = env_int(kRestartCount, 0);
    info.max_restarts = env_int(kMaxRestarts, 0);
    if (const char* a = env_or_null(kMasterAddr)) info.master_addr = a;
    info.master_port = env_int(kMasterPort, 0, 0, 65535);
    if (const char* r = env_or_null(kRunId)) info.run_id = r;
    if (const char* e = env_or_null(kErrorFile)) info.error_file = e;
  } else if (env_or_null("OMPI_COMM_WORLD_RANK") && env_or_null("OMPI_COMM_WORLD_SIZE")) {
    info.source = LaunchSource::kOpenMPI;
    info.world_size = env_int("OMPI_COMM_WORLD_SIZE", 1, 1);
    info.rank = env_int("OMPI_COMM_WORLD_RANK", 0);
    info.local_rank = env_int("OMPI_COMM_WORLD_LOCAL_RANK", 0);
    info.local_world_size = env_int("OMPI_COMM_WORLD_LOCAL_SIZE", 1, 1);
    // Open MPI does not name the node; with the same number of ranks per node
    // (mpirun's default mapping) this is its index.
    info.group_rank = info.rank / info.local_world_size;
  } else if (env_or_null("PMI_RANK") && env_or_null("PMI_SIZE")) {
    info.source = LaunchSource::kPMI;
    info.world_size = env_int("PMI_SIZE", 1, 1);
    info.rank = env_int("PMI_RANK", 0);
    info.local_rank = env_int("MPI_LOCALRANKID", 0);
    info.local_world_size = env_int("MPI_LOCALNRANKS", 1, 1);
    info.group_rank = info.rank / info.local_world_size;
  }
  if (info.launched()) detail::check_consistent(info);
  return info;
}

// Writes `message` to the file named by BRASA_ERROR_FILE (when set), where
// brasarun's failure summary shows it. Returns whether a file was written.
inline bool write_error_file(std::string_view message) {
  const char* path = detail::env_or_null(kErrorFile);
  if (!path) return false;
  std::FILE* f = std::fopen(path, "w");
  if (!f) return false;
  bool ok = std::fwrite(message.data(), 1, message.size(), f) == message.size();
  ok = (std::fclose(f) == 0) && ok;
  return ok;
}

}  // namespace brasa::launch
