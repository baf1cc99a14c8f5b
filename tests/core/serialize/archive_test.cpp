// serialize::OutputArchive / InputArchive and Module::save/load(archive), as
// libtorch programs use them; torch::load(module, path, device).
#include <brasa/torch.h>

#include <filesystem>
#include <sstream>

#include "../test_util.h"

namespace {

using namespace brasa;

std::string tmp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("brasa_archive_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

struct NetImpl : torch::nn::Module {
  NetImpl() {
    fc1 = register_module("fc1", torch::nn::Linear(4, 3));
    bn = register_module("bn", torch::nn::BatchNorm1d(3));
    act = register_module("act", torch::nn::ReLU());
    fc2 = register_module("fc2", torch::nn::Linear(3, 2));
  }
  torch::Tensor forward(torch::Tensor x) { return fc2(act(bn(fc1(x)))); }
  torch::nn::Linear fc1{nullptr}, fc2{nullptr};
  torch::nn::BatchNorm1d bn{nullptr};
  torch::nn::ReLU act{nullptr};
};
TORCH_MODULE(Net);

TEST(Archive, TensorsScalarsAndNestedArchivesRoundTripThroughAFile) {
  torch::serialize::OutputArchive out, inner;
  out.write("w", torch::arange(6, torch::kFloat).view({2, 3}));
  out.write("steps", torch::IValue(int64_t{1} << 40));
  out.write("lr", torch::IValue(0.125));
  out.write("done", torch::IValue(true));
  inner.write("m", torch::ones({2}), /*is_buffer=*/true);
  out.write("inner", inner);
  const std::string path = tmp_path("roundtrip.pt");
  out.save_to(path);

  torch::serialize::InputArchive in;
  in.load_from(path);
  EXPECT_EQ(in.keys(), (std::vector<std::string>{"w", "steps", "lr", "done", "inner"}));
  torch::Tensor w;  // undefined: becomes the stored tensor
  in.read("w", w);
  EXPECT_VALUES(w.flatten(), {0, 1, 2, 3, 4, 5});
  torch::Tensor into = torch::zeros({2, 3}, torch::requires_grad());  // defined: copied into
  in.read("w", into);
  EXPECT_VALUES(into.flatten(), {0, 1, 2, 3, 4, 5});
  EXPECT_TRUE(into.requires_grad());
  torch::IValue steps, lr, done;
  in.read("steps", steps);
  in.read("lr", lr);
  in.read("done", done);
  EXPECT_EQ(steps.toInt(), int64_t{1} << 40);
  EXPECT_EQ(lr.toDouble(), 0.125);
  EXPECT_TRUE(done.toBool());
  torch::serialize::InputArchive nested;
  in.read("inner", nested);
  torch::Tensor m;
  EXPECT_TRUE(nested.try_read("m", m, /*is_buffer=*/true));
  EXPECT_VALUES(m, {1, 1});
  EXPECT_FALSE(in.try_read("absent", m));
  std::filesystem::remove(path);
}

TEST(Archive, StreamsAndWriterFunctions) {
  torch::serialize::OutputArchive out;
  out.write("x", torch::tensor({1.5, -2.0}));
  std::stringstream stream;
  out.save_to(stream);
  std::string via_writer;
  out.save_to([&](const void* data, size_t n) {
    via_writer.append(static_cast<const char*>(data), n);
    return n;
  });
  EXPECT_EQ(stream.str(), via_writer);

  torch::serialize::InputArchive from_stream, from_bytes;
  from_stream.load_from(stream);
  from_bytes.load_from(via_writer.data(), via_writer.size());
  torch::Tensor a, b;
  from_stream.read("x", a);
  from_bytes.read("x", b);
  EXPECT_VALUES(a, {1.5, -2.0});
  EXPECT_TRUE(a.equal(b));
}

TEST(Archive, ModuleSaveAndLoadThroughArchives) {
  torch::manual_seed(1);
  Net a, b;
  a->eval();
  b->eval();
  {
    torch::NoGradGuard g;
    a->bn->running_mean.fill_(0.25);
  }
  torch::serialize::OutputArchive out;
  a->save(out);
  // The archive's entries are the state_dict's keys (module by module).
  auto sorted = [](std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  EXPECT_EQ(sorted(out.tensors().keys()), sorted(a->state_dict().keys()));
  const std::string path = tmp_path("module.pt");
  out.save_to(path);
  torch::serialize::InputArchive in;
  in.load_from(path, torch::kCPU);
  b->load(in);
  torch::Tensor x = torch::randn({5, 4});
  EXPECT_TRUE(a->forward(x).equal(b->forward(x)));
  EXPECT_VALUES(b->bn->running_mean, {0.25, 0.25, 0.25});

  // torch::load(module, path, device), from the archive file and from torch::save's.
  Net c, d;
  torch::load(c, path, torch::kCPU);
  c->eval();
  EXPECT_TRUE(a->forward(x).equal(c->forward(x)));
  const std::string saved = tmp_path("module.safetensors");
  torch::save(a, saved);
  torch::serialize::InputArchive from_safetensors;
  from_safetensors.load_from(saved);
  d->load(from_safetensors);
  d->eval();
  EXPECT_TRUE(a->forward(x).equal(d->forward(x)));
  std::filesystem::remove(path);
  std::filesystem::remove(saved);
}

TEST(Archive, BadUseGetsClearErrors) {
  torch::serialize::OutputArchive out;
  EXPECT_ERROR("OutputArchive::write: 'name' holds a string; an archive stores tensors",
               out.write("name", torch::IValue("text")));
  EXPECT_ERROR("OutputArchive::write: 'u' is an undefined tensor", out.write("u", torch::Tensor()));
  out.write("w", torch::zeros({2, 2}));
  EXPECT_ERROR("'w' already", out.write("w", torch::zeros({1})));
  const std::string path = tmp_path("bad.pt");
  out.save_to(path);
  torch::serialize::InputArchive in;
  in.load_from(path);
  torch::Tensor wrong = torch::zeros({3});
  EXPECT_ERROR("InputArchive::read: 'w' in '" + path +
                   "' has shape [2, 2], the tensor read into "
                   "has shape [3]",
               in.read("w", wrong));
  EXPECT_ERROR("InputArchive::read: no entry 'v' in '" + path + "'", in.read("v", wrong));
  torch::serialize::InputArchive nested;
  EXPECT_ERROR("InputArchive::read: no archive 'sub'", in.read("sub", nested));
  // A module whose parameters the archive lacks.
  Net net;
  EXPECT_ERROR("InputArchive::read: no archive 'fc1' in '" + path + "'", net->load(in));
  EXPECT_ERROR("OutputArchive::write: the key must not be empty", out.write("", torch::ones({1})));
  torch::serialize::OutputArchive empty_nested;
  EXPECT_ERROR("OutputArchive::write: the key must not be empty", out.write("", empty_nested));
  std::ostringstream broken;
  broken.setstate(std::ios::badbit);
  EXPECT_ERROR("OutputArchive::save_to: writing ", out.save_to(broken));
  EXPECT_ERROR("OutputArchive::save_to: the writer took 0 of ",
               out.save_to([](const void*, size_t) { return size_t{0}; }));
  const std::string lone = tmp_path("lone.pt");
  torch::serialize::save_pt(lone, torch::IValue(torch::ones({2})));
  torch::serialize::InputArchive not_a_dict;
  EXPECT_ERROR(
      "InputArchive::load_from: '" + lone + "' holds no archive (a dict of tensors), but a",
      not_a_dict.load_from(lone));
  std::filesystem::remove(lone);
  torch::serialize::InputArchive bytes;
  EXPECT_ERROR("the 3 bytes given are not an archive", bytes.load_from("abc", 3));
  EXPECT_ERROR("cannot", bytes.load_from(tmp_path("absent.pt")));
  const std::string good = tmp_path("good.pt");
  torch::save(net, good);
  if (!torch::cuda::is_available()) {
    EXPECT_ERROR("cuda", torch::load(net, good, torch::Device("cuda:0")));
  } else {  // with a device, the parameters are loaded onto it
    torch::load(net, good, torch::Device("cuda:0"));
    for (const auto& p : net->parameters()) EXPECT_TRUE(p.is_cuda());
  }
  std::filesystem::remove(good);
  std::filesystem::remove(path);
}

}  // namespace
