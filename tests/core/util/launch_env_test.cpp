// The launch environment helper, read under the variables each launcher sets.

#include <brasa/util/launch_env.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>

namespace {

using brasa::launch::launch_info;
using brasa::launch::LaunchSource;

// Sets variables for one test and restores what was there before.
class EnvGuard {
 public:
  static constexpr const char* kAll[] = {"RANK",
                                         "WORLD_SIZE",
                                         "LOCAL_RANK",
                                         "LOCAL_WORLD_SIZE",
                                         "GROUP_RANK",
                                         "MASTER_ADDR",
                                         "MASTER_PORT",
                                         "BRASA_RESTART_COUNT",
                                         "BRASA_MAX_RESTARTS",
                                         "BRASA_RUN_ID",
                                         "BRASA_ERROR_FILE",
                                         "OMPI_COMM_WORLD_RANK",
                                         "OMPI_COMM_WORLD_SIZE",
                                         "OMPI_COMM_WORLD_LOCAL_RANK",
                                         "OMPI_COMM_WORLD_LOCAL_SIZE",
                                         "PMI_RANK",
                                         "PMI_SIZE",
                                         "MPI_LOCALRANKID",
                                         "MPI_LOCALNRANKS"};
  EnvGuard(std::map<std::string, std::string> vars) {
    for (const char* k : kAll) {
      const char* v = std::getenv(k);
      saved_[k] = v ? std::optional<std::string>(v) : std::nullopt;
      unsetenv(k);
    }
    for (const auto& [k, v] : vars) setenv(k.c_str(), v.c_str(), 1);
  }
  ~EnvGuard() {
    for (const auto& [k, v] : saved_) v ? setenv(k.c_str(), v->c_str(), 1) : unsetenv(k.c_str());
  }

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

TEST(LaunchEnv, SingleProcessWithoutALauncher) {
  EnvGuard env({});
  auto info = launch_info();
  EXPECT_FALSE(info.launched());
  EXPECT_EQ(info.source, LaunchSource::kNone);
  EXPECT_EQ(info.rank, 0);
  EXPECT_EQ(info.world_size, 1);
  EXPECT_EQ(info.local_world_size, 1);
}

TEST(LaunchEnv, BrasarunVariables) {
  EnvGuard env({{"RANK", "5"},
                {"WORLD_SIZE", "8"},
                {"LOCAL_RANK", "1"},
                {"LOCAL_WORLD_SIZE", "4"},
                {"GROUP_RANK", "1"},
                {"MASTER_ADDR", "10.0.0.1"},
                {"MASTER_PORT", "29500"},
                {"BRASA_RESTART_COUNT", "2"},
                {"BRASA_MAX_RESTARTS", "3"},
                {"BRASA_RUN_ID", "job7"},
                {"BRASA_ERROR_FILE", "/tmp/e.txt"},
                // brasarun's variables win over an mpirun that started brasarun
                {"OMPI_COMM_WORLD_RANK", "0"},
                {"OMPI_COMM_WORLD_SIZE", "2"}});
  auto info = launch_info();
  EXPECT_EQ(info.source, LaunchSource::kBrasarun);
  EXPECT_EQ(info.rank, 5);
  EXPECT_EQ(info.world_size, 8);
  EXPECT_EQ(info.local_rank, 1);
  EXPECT_EQ(info.local_world_size, 4);
  EXPECT_EQ(info.group_rank, 1);
  EXPECT_EQ(info.master_addr, "10.0.0.1");
  EXPECT_EQ(info.master_port, 29500);
  EXPECT_EQ(info.restart_count, 2);
  EXPECT_EQ(info.max_restarts, 3);
  EXPECT_EQ(info.run_id, "job7");
  EXPECT_EQ(info.error_file, "/tmp/e.txt");
}

TEST(LaunchEnv, RankAndWorldSizeOnlyMeansOneProcessPerNode) {
  EnvGuard env({{"RANK", "3"}, {"WORLD_SIZE", "4"}});
  auto info = launch_info();
  EXPECT_EQ(info.local_rank, 0);
  EXPECT_EQ(info.local_world_size, 1);
  EXPECT_EQ(info.group_rank, 3);
}

TEST(LaunchEnv, OpenMpiVariables) {
  EnvGuard env({{"OMPI_COMM_WORLD_RANK", "3"},
                {"OMPI_COMM_WORLD_SIZE", "4"},
                {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}});
  auto info = launch_info();
  EXPECT_EQ(info.source, LaunchSource::kOpenMPI);
  EXPECT_EQ(info.rank, 3);
  EXPECT_EQ(info.world_size, 4);
  EXPECT_EQ(info.local_rank, 1);
  EXPECT_EQ(info.local_world_size, 2);
  EXPECT_EQ(info.group_rank, 1);
  EXPECT_EQ(info.master_port, 0);
  EXPECT_TRUE(info.master_addr.empty());
}

TEST(LaunchEnv, PmiVariables) {
  EnvGuard env(
      {{"PMI_RANK", "2"}, {"PMI_SIZE", "3"}, {"MPI_LOCALRANKID", "2"}, {"MPI_LOCALNRANKS", "3"}});
  auto info = launch_info();
  EXPECT_EQ(info.source, LaunchSource::kPMI);
  EXPECT_EQ(info.rank, 2);
  EXPECT_EQ(info.world_size, 3);
  EXPECT_EQ(info.local_rank, 2);
  EXPECT_EQ(info.group_rank, 0);
}

void expect_error(const std::map<std::string, std::string>& vars, const std::string& message) {
  EnvGuard env(vars);
  try {
    launch_info();
    ADD_FAILURE() << "expected an error containing: " << message;
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
  }
}

TEST(LaunchEnv, MalformedOrContradictoryValuesAreErrors) {
  expect_error({{"RANK", "one"}, {"WORLD_SIZE", "2"}}, "RANK='one' is not an integer");
  expect_error({{"RANK", "0"}, {"WORLD_SIZE", "0"}}, "WORLD_SIZE='0' is not an integer in [1,");
  expect_error({{"RANK", "2"}, {"WORLD_SIZE", "2"}}, "rank 2 is not below world size 2");
  expect_error({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "99999"}},
               "MASTER_PORT='99999'");
  expect_error({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "2"}, {"LOCAL_WORLD_SIZE", "2"}},
               "local rank 2 is not below local world size 2");
  expect_error({{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2x"}},
               "OMPI_COMM_WORLD_SIZE='2x'");
  expect_error({{"PMI_RANK", "0"}, {"PMI_SIZE", "2"}, {"MPI_LOCALNRANKS", "3"}},
               "local world size 3 is larger than world size 2");
}

TEST(LaunchEnv, WriteErrorFile) {
  std::string path = ::testing::TempDir() + "/launch_env_error.txt";
  {
    EnvGuard env({});
    EXPECT_FALSE(brasa::launch::write_error_file("nowhere to go"));
  }
  EnvGuard env({{"BRASA_ERROR_FILE", path}});
  EXPECT_TRUE(brasa::launch::write_error_file("step 7: loss is NaN"));
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str(), "step 7: loss is NaN");
  std::remove(path.c_str());
}

}  // namespace
