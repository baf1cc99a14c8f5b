// safetensors: every dtype round trips, the header layout is byte-exact,
// corrupt files raise clear errors; checkpoints resume training exactly.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "../test_util.h"

namespace brasa {
namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("brasa_" + std::to_string(::getpid()) + "_" + name))
      .string();
}
std::string read_all(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

TEST(Safetensors, EveryDtypeRoundTrips) {
  std::string p = temp_path("all.safetensors");
  serialize::TensorDict d;
  for (ScalarType t :
       {kFloat, kDouble, kHalf, kBFloat16, kLong, kInt, kShort, kChar, kByte, kBool}) {
    Tensor x = arange(6).to(t).view({2, 3});
    if (t == kBool) x = arange(6).remainder(2).to(kBool).view({2, 3});
    d.insert(std::string("t_") + toString(t), t == kBool ? x : x.t());  // non-contiguous too
  }
  serialize::save_safetensors(p, d, {{"epoch", "3"}});
  serialize::Metadata meta;
  auto back = serialize::load_safetensors(p, &meta);
  EXPECT_EQ(meta["epoch"], "3");
  ASSERT_EQ(back.size(), d.size());
  for (auto& item : d) {
    const Tensor& b = back[item.key()];
    EXPECT_EQ(b.dtype(), item.value().dtype()) << item.key();
    EXPECT_EQ(b.sizes(), item.value().sizes()) << item.key();
    EXPECT_TRUE(b.equal(item.value())) << item.key();
  }
  std::remove(p.c_str());
}

TEST(Safetensors, HeaderLayoutIsByteExact) {
  std::string p = temp_path("exact.safetensors");
  serialize::TensorDict d;
  d.insert("a", tensor({1.0f, 2.0f}));
  d.insert("b", tensor(std::vector<int64_t>{7}));
  serialize::save_safetensors(p, d);
  std::string bytes = read_all(p);
  const std::string json =
      R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"I64","shape":[1],"data_offsets":[8,16]}})";
  std::string padded = json + std::string((8 - json.size() % 8) % 8, ' ');
  ASSERT_GE(bytes.size(), 8 + padded.size() + 16);
  uint64_t len = 0;
  for (int i = 0; i < 8; ++i)
    len |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[i])) << (8 * i);
  EXPECT_EQ(len, padded.size());
  EXPECT_EQ(bytes.substr(8, len), padded);
  float f[2];
  std::memcpy(f, bytes.data() + 8 + len, 8);
  EXPECT_EQ(f[0], 1.0f);
  EXPECT_EQ(f[1], 2.0f);
  EXPECT_EQ(bytes.size(), 8 + len + 16);
  std::remove(p.c_str());
}

TEST(Safetensors, CorruptFilesRaiseClearErrors) {
  std::string p = temp_path("bad.safetensors");
  serialize::TensorDict d;
  d.insert("w", ones({4, 4}));
  serialize::save_safetensors(p, d);
  std::string good = read_all(p);
  auto expect = [&](const std::string& content, const std::string& needle) {
    std::ofstream(p, std::ios::binary) << content;
    try {
      serialize::load_safetensors(p);
      ADD_FAILURE() << "no error for " << needle;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << "the path is named";
    }
  };
  expect(good.substr(0, good.size() - 10), "outside the");  // truncated data
  expect(good.substr(0, 5), "truncated");
  std::string broken = good;
  broken[8] = '#';
  expect(broken, "corrupt JSON header");
  EXPECT_THROW(serialize::load_safetensors(temp_path("missing.safetensors")), Error);
  // Headers of the right JSON shape with fields of the wrong type or length
  // (found by tests/fuzz: a one-element data_offsets was read past its end).
  auto with_header = [](const std::string& json) {
    std::string h = json;
    std::string len;
    for (int i = 0; i < 8; ++i) len.push_back(static_cast<char>((h.size() >> (8 * i)) & 0xff));
    return len + h + std::string(64, '\0');
  };
  const std::string needs = "needs a string dtype, a shape of non-negative integers";
  expect(with_header(R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[0]}})"), needs);
  expect(with_header(R"({"w":{"dtype":"F32","shape":"4","data_offsets":[0,16]}})"), needs);
  expect(with_header(R"({"w":{"dtype":7,"shape":[4],"data_offsets":[0,16]}})"), needs);
  expect(with_header(R"({"w":{"dtype":"F32","shape":[-4],"data_offsets":[0,16]}})"), needs);
  expect(with_header(R"({"w":{"dtype":"F32","shape":[4],"data_offsets":["0",16]}})"), needs);
  expect(with_header(R"({"__metadata__":{"epoch":3}})"), "metadata 'epoch' is not a string");
  expect(with_header(R"({"__metadata__":[1]})"), "__metadata__ is not a JSON object");
  expect(with_header(R"({"w":{"dtype":"F32","shape":[4294967296,4294967296,4],)"
                     R"("data_offsets":[0,16]}})"),
         "has more elements than the file's 64 data bytes");
  std::remove(p.c_str());
}

// Model, optimizer (Adam, whose beta1 OneCycleLR cycles) and scheduler all
// come back: three steps, save, load into fresh objects, three more steps
// equal six uninterrupted ones.
// A load that fails for any reason — a mutated model tensor, optimizer
// entry or scheduler entry — leaves model, optimizer and scheduler exactly as
// they were (bit for bit), even when an earlier part had already loaded.
TEST(Checkpoint, AFailedLoadChangesNothing) {
  manual_seed(21);
  auto model = nn::Sequential(nn::Linear(3, 4), nn::ReLU(), nn::Linear(4, 2));
  optim::SGD opt(model->parameters(), optim::SGDOptions(0.1).momentum(0.9));
  optim::StepLR sched(opt, 2);
  Tensor x = randn({8, 3}), y = randn({8, 2});
  auto step = [&] {
    opt.zero_grad();
    F::mse_loss(model->forward(x), y).backward();
    opt.step();
    sched.step();
  };
  step();
  const std::string good = temp_path("ckpt_good.safetensors");
  serialize::save_checkpoint(good, *model, &opt, {{"epoch", "1"}}, &sched);
  step();
  step();  // the live objects now differ from the file
  auto snapshot = [&] {
    std::vector<Tensor> all;
    for (const auto& i : model->state_dict()) all.push_back(i.value().clone());
    for (const auto& i : opt.state_dict()) all.push_back(i.value().clone());
    for (const auto& i : sched.state_dict()) all.push_back(i.value().clone());
    return all;
  };
  const std::vector<Tensor> before = snapshot();
  serialize::Metadata meta;
  const serialize::TensorDict saved = serialize::load_safetensors(good, &meta);
  struct Mutation {
    std::string key;
    Tensor value;  // undefined: drop the key
    const char* error;
  };
  const std::vector<Mutation> mutations = {
      {"model.2.bias", zeros({3}), "size mismatch for 2.bias"},
      {"model.2.weight", Tensor(), "missing keys: [\"2.weight\"]"},
      {"optim.state.3.momentum_buffer", zeros({5}), "has shape [5] but parameter 3"},
      {"optim.param_groups.0.lr", zeros({2}), "'param_groups.0.lr' must hold one number"},
      {"optim.state.1.step", zeros({2}), "'state.1.step' must hold one number"},
      {"optim.param_groups.0.bogus", zeros({1}), "unexpected key 'param_groups.0.bogus'"},
      {"sched.last_epoch", zeros({2, 2}), "does not match the scheduler"},
  };
  for (const Mutation& m : mutations) {
    serialize::TensorDict bad;
    for (const auto& item : saved)
      if (item.key() != m.key) bad.insert(item.key(), item.value());
    if (m.value.defined()) bad.insert(m.key, m.value);
    const std::string path = temp_path("ckpt_bad.safetensors");
    serialize::save_safetensors(path, bad, meta);
    EXPECT_ERROR(m.error, serialize::load_checkpoint(path, *model, &opt, &sched));
    const std::vector<Tensor> after = snapshot();
    ASSERT_EQ(after.size(), before.size()) << m.key;
    for (size_t i = 0; i < after.size(); ++i)
      EXPECT_TRUE(after[i].equal(before[i])) << "changed by the failed load of " << m.key;
    std::remove(path.c_str());
  }
  // The good file still loads, and then the objects hold its state.
  serialize::load_checkpoint(good, *model, &opt, &sched);
  EXPECT_EQ(sched.last_epoch(), 1);
  std::remove(good.c_str());
}

TEST(Checkpoint, ResumeEqualsUninterruptedTraining) {
  auto make = [] {
    manual_seed(11);
    return nn::Sequential(nn::Linear(3, 4), nn::ReLU(), nn::Linear(4, 2));
  };
  manual_seed(12);
  Tensor x = randn({8, 3}), y = randn({8, 2});
  auto train_steps = [&](nn::Sequential& m, optim::Adam& opt, optim::OneCycleLR& sched, int steps) {
    for (int i = 0; i < steps; ++i) {
      opt.zero_grad();
      F::mse_loss(m->forward(x), y).backward();
      opt.step();
      sched.step();
    }
  };
  auto full = make();
  optim::Adam full_opt(full->parameters(), optim::AdamOptions(0.01));
  optim::OneCycleLR full_sched(full_opt, 0.05, 8);
  train_steps(full, full_opt, full_sched, 6);

  std::string p = temp_path("ckpt.safetensors");
  {
    auto first = make();
    optim::Adam opt(first->parameters(), optim::AdamOptions(0.01));
    optim::OneCycleLR sched(opt, 0.05, 8);
    train_steps(first, opt, sched, 3);
    serialize::save_checkpoint(p, *first, &opt, {{"epoch", "3"}}, &sched);
  }
  auto resumed = make();
  optim::Adam opt(resumed->parameters(), optim::AdamOptions(0.01));
  optim::OneCycleLR sched(opt, 0.05, 8);
  auto meta = serialize::load_checkpoint(p, *resumed, &opt, &sched);
  EXPECT_EQ(meta["epoch"], "3");
  EXPECT_EQ(sched.last_epoch(), 3);
  train_steps(resumed, opt, sched, 3);
  auto a = full->parameters(), b = resumed->parameters();
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(a[i].equal(b[i])) << i;
  EXPECT_EQ(sched.get_last_lr(), full_sched.get_last_lr());
  const auto& beta1 = [](optim::Adam& o) {
    return std::get<0>(static_cast<optim::AdamOptions&>(o.param_groups()[0].options()).betas_);
  };
  EXPECT_EQ(beta1(opt), beta1(full_opt));

  // A checkpoint without scheduler state cannot restore one.
  std::string q = temp_path("ckpt_nosched.safetensors");
  serialize::save_checkpoint(q, *resumed, &opt);
  EXPECT_ERROR("holds no scheduler state", serialize::load_checkpoint(q, *resumed, &opt, &sched));
  optim::SGD sgd(resumed->parameters(), optim::SGDOptions(0.1));
  EXPECT_ERROR(
      "does not match the optimizer: Optimizer::load_state_dict: missing key "
      "'param_groups.0.momentum'",
      serialize::load_checkpoint(q, *resumed, &sgd));
  std::remove(q.c_str());

  auto other = nn::Sequential(nn::Linear(3, 5), nn::ReLU(), nn::Linear(5, 2));
  try {
    serialize::load_checkpoint(p, *other, nullptr);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("size mismatch for 0.weight"), std::string::npos)
        << e.what();
  }
  std::remove(p.c_str());
}

// A process killed while saving never leaves a half-written checkpoint:
// the file at the path is always a complete old or new version.
TEST(Checkpoint, KillDuringSaveLeavesAValidFile) {
  std::string p = temp_path("killed.safetensors");
  serialize::TensorDict d;
  d.insert("w", full({1024, 1024}, 0.0));  // 4 MiB: a save takes a while
  serialize::save_safetensors(p, d, {{"version", "0"}});
  for (int round = 0; round < 5; ++round) {
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      for (int v = 1;; ++v) {
        serialize::TensorDict nd;
        nd.insert("w", full({1024, 1024}, static_cast<double>(v)));
        serialize::save_safetensors(p, nd, {{"version", std::to_string(v)}});
      }
    }
    usleep(20000 + 15000 * round);
    kill(child, SIGKILL);
    int status = 0;
    waitpid(child, &status, 0);
    serialize::Metadata meta;
    auto back = serialize::load_safetensors(p, &meta);  // must not throw
    double v = std::stod(meta.at("version"));
    EXPECT_TRUE(back["w"].eq(v).all().item<bool>()) << "a mixed file at version " << v;
  }
  // The next successful save removes the temp files the killed writers left.
  serialize::save_safetensors(p, d);
  int leftovers = 0;
  for (auto& e : std::filesystem::directory_iterator(std::filesystem::temp_directory_path()))
    if (e.path().filename().string().rfind(
            "brasa_" + std::to_string(::getpid()) + "_killed.safetensors.tmp", 0) == 0)
      ++leftovers;
  EXPECT_EQ(leftovers, 0);
  std::remove(p.c_str());
}

TEST(SaveLoad, TensorsModulesAndOptimizers) {
  std::string p = temp_path("saveload.safetensors");
  Tensor t = randn({3, 2}).t();
  save(t, p);
  Tensor back;
  load(back, p);
  EXPECT_TRUE(back.equal(t));
  std::vector<Tensor> list{arange(3), ones({2}, kHalf)}, list_back;
  save(list, p);
  load(list_back, p);
  ASSERT_EQ(list_back.size(), 2u);
  EXPECT_TRUE(list_back[1].equal(list[1]));

  nn::Linear a(4, 3), b(4, 3);
  save(a, p);
  load(b, p);
  EXPECT_TRUE(a->weight.equal(b->weight));
  nn::Linear c(5, 3);
  EXPECT_THROW(load(c, p), Error);

  optim::SGD opt(a->parameters(), optim::SGDOptions(0.1).momentum(0.9));
  a(ones({1, 4})).sum().backward();
  opt.step();
  save(opt, p);
  optim::SGD opt2(a->parameters(), optim::SGDOptions(0.5).momentum(0.9));
  load(opt2, p);
  EXPECT_EQ(opt2.param_groups()[0].options().get_lr(), 0.1);
  EXPECT_TRUE(opt2.state_of(a->weight)
                  .buffers.at("momentum_buffer")
                  .equal(opt.state_of(a->weight).buffers.at("momentum_buffer")));
  std::remove(p.c_str());
}

}  // namespace
}  // namespace brasa
