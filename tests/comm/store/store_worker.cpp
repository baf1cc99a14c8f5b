// One rank of a multi-process store test, started by brasarun: every rank
// publishes a key, reads everyone's, races for a compare_set and meets the
// others at a barrier made of add + wait. Exits non-zero on any mismatch.

#include <brasa/comm/store/file_store.h>
#include <brasa/comm/store/tcp_store.h>
#include <brasa/util/launch_env.h>

#include <cstdio>
#include <string>

using namespace brasa::distributed;

#define REQUIRE(cond, ...)                                              \
  do {                                                                  \
    if (!(cond)) {                                                      \
      std::fprintf(stderr, "rank %d: check failed: %s\n", rank, #cond); \
      return 1;                                                         \
    }                                                                   \
  } while (0)

int main(int argc, char** argv) {
  auto info = brasa::launch::launch_info();
  const int rank = info.rank, world = info.world_size;
  if (argc < 2) return 2;
  const std::string kind = argv[1];
  std::shared_ptr<Store> store;
  if (kind == "tcp") {
    TCPStoreOptions o;
    o.port = static_cast<uint16_t>(info.master_port);
    o.isServer = rank == 0;
    o.numWorkers = static_cast<size_t>(world);
    o.timeout = std::chrono::seconds(30);
    store = std::make_shared<TCPStore>(info.master_addr, o);
  } else if (kind == "file" && argc == 3) {
    store = std::make_shared<FileStore>(std::string(argv[2]) + "." + info.run_id, world,
                                        std::chrono::seconds(30));
  } else {
    return 2;
  }

  store->set("rank/" + std::to_string(rank), "hello from " + std::to_string(rank));
  for (int r = 0; r < world; ++r)
    REQUIRE(to_string(store->get("rank/" + std::to_string(r))) ==
            "hello from " + std::to_string(r));

  // Exactly one rank wins the race; everyone sees the same winner.
  Bytes winner = store->compare_set("leader", {}, to_bytes(std::to_string(rank)));
  store->set("saw/" + std::to_string(rank), winner);
  for (int r = 0; r < world; ++r) REQUIRE(store->get("saw/" + std::to_string(r)) == winner);

  int64_t arrived = store->add("arrived", 1);
  REQUIRE(arrived >= 1 && arrived <= world);
  if (arrived == world) store->set("all_arrived", "1");
  store->wait({"all_arrived"});
  REQUIRE(store->add("arrived", 0) == world);
  // The TCPStore server lives in rank 0: it leaves only after the others.
  if (rank != 0 && store->add("departed", 1) == world - 1) store->set("all_departed", "1");
  if (rank == 0 && world > 1) store->wait({"all_departed"});
  std::printf("rank %d ok: leader %s\n", rank, to_string(winner).c_str());
  return 0;
}
