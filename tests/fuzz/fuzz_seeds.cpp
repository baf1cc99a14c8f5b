// Writes the seed corpus of each fuzz target with Brasa's own writers:
//   fuzz_seeds DIR   ->   DIR/safetensors, DIR/npy, DIR/idx, DIR/checkpoint,
//                         DIR/pt, DIR/tcp_store
#include <brasa/brasa.h>
#include <brasa/comm/store/tcp_store_wire.h>
#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

using namespace brasa;
using namespace brasa::distributed;

namespace {

void write(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

std::string u32_be(uint32_t v) { return {char(v >> 24), char(v >> 16), char(v >> 8), char(v)}; }

// A TCPStore request of the wire format.
std::string request(wire::Op op, const std::function<void(wire::Writer&)>& fields = {}) {
  wire::Writer w(static_cast<uint8_t>(op));
  if (fields) fields(w);
  const Bytes f = w.finish();
  return std::string(f.begin(), f.end());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_seeds DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  for (const char* sub : {"", "/safetensors", "/npy", "/idx", "/checkpoint", "/pt", "/tcp_store"})
    ::mkdir((dir + sub).c_str(), 0755);
  manual_seed(0);
  serialize::TensorDict tensors;
  tensors.insert("weight", randn({3, 4}));
  tensors.insert("ids", arange(5, TensorOptions().dtype(kLong)));
  tensors.insert("half", ones({2}, kHalf));
  serialize::save_safetensors(dir + "/safetensors/two.safetensors", tensors, {{"epoch", "3"}});
  save_npy(dir + "/npy/float.npy", randn({2, 3}));
  save_npy(dir + "/npy/long.npy", arange(4, TensorOptions().dtype(kLong)));
  save_npy(dir + "/npy/fortran.npy", randn({3, 2}).t());
  // IDX: images (magic 0x803, count, rows, cols, bytes) and labels (0x801).
  write(dir + "/idx/images",
        u32_be(0x803) + u32_be(2) + u32_be(28) + u32_be(28) + std::string(2 * 28 * 28, '\x7f'));
  write(dir + "/idx/labels", u32_be(0x801) + u32_be(2) + std::string("\x03\x07", 2));
  auto model = std::make_shared<nn::LinearImpl>(3, 2);
  optim::SGD sgd(model->parameters(), optim::SGDOptions(0.1).momentum(0.9));
  model->forward(randn({4, 3})).sum().backward();
  sgd.step();
  serialize::save_checkpoint(dir + "/checkpoint/linear.safetensors", *model, &sgd,
                             {{"epoch", "1"}});
  std::vector<char> pt = pickle_save(IValue(randn({2, 2})));
  write(dir + "/pt/tensor.pt", std::string(pt.begin(), pt.end()));
  using wire::Op;
  write(dir + "/tcp_store/set_get", request(Op::kSet, [](auto& w) {
                                      w.str("k").bytes(to_bytes("v"));
                                    }) + request(Op::kGet, [](auto& w) { w.str("k"); }));
  write(dir + "/tcp_store/add", request(Op::kAdd, [](auto& w) { w.str("n").u64(5); }));
  write(dir + "/tcp_store/check_wait", request(Op::kCheck, [](auto& w) { w.keys({"k"}); }) +
                                           request(Op::kWait, [](auto& w) { w.keys({"absent"}); }));
  write(dir + "/tcp_store/num_keys", request(Op::kNumKeys));
  write(dir + "/tcp_store/multi_set", request(Op::kMultiSet, [](auto& w) {
          w.keys({"a", "b"}).bytes(to_bytes("1")).bytes(to_bytes("2"));
        }));
  write(dir + "/tcp_store/auth", request(Op::kAuth, [](auto& w) { w.str("token"); }));
  return 0;
}
