// PyTorch's .pt files: files written by Python's torch.save (1.13, made by
// gen_pt_files.py) are read, including state_dicts into modules; files
// Brasa writes read back and (when python3-torch is installed) load in
// Python; hostile and broken files are refused with errors that say why.
#include <brasa/serialize/zip_archive.h>
#include <brasa/torch.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "../test_util.h"

namespace {

using namespace brasa;
using brasa::testing::values;

std::string pt(const std::string& name) { return std::string(BRASA_PT_DIR) + "/" + name; }

std::vector<char> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<char>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(PtFormat, ReadsTensorsAndViewsSavedByPython) {
  Tensor x;
  torch::load(x, pt("tensor.pt"));
  EXPECT_TRUE(x.equal(arange(12, TensorOptions().dtype(kFloat)).view({3, 4})));
  std::vector<Tensor> list;
  torch::load(list, pt("list.pt"));
  ASSERT_EQ(list.size(), 6u);
  EXPECT_TRUE(list[1].is_alias_of(list[0]));  // x[1]: one storage, offset 4
  EXPECT_EQ(list[1].storage_offset(), 4);
  EXPECT_EQ(values(list[1]), (std::vector<double>{4, 5, 6, 7}));
  EXPECT_EQ(list[2].strides().vec(), (std::vector<int64_t>{1, 4}));  // x.t()
  EXPECT_TRUE(list[2].equal(list[0].t()));
  EXPECT_EQ(list[3].scalar_type(), kDouble);
  EXPECT_EQ(values(list[3]), (std::vector<double>{0, 0.25, 0.5}));
  EXPECT_EQ(list[4].dim(), 0);
  EXPECT_EQ(list[4].item<double>(), 7.5);
  EXPECT_EQ(list[5].sizes().vec(), (std::vector<int64_t>{0, 3}));
  list[1].fill_(-1);  // aliasing is real
  EXPECT_EQ(list[0][1][2].item<double>(), -1);
}

TEST(PtFormat, LoadsAPythonStateDictIntoAModule) {
  auto net = nn::Sequential(nn::Linear(3, 2), nn::BatchNorm1d(2));
  torch::load(net, pt("state_dict.pt"));
  auto sd = net->state_dict();
  EXPECT_TRUE(sd["0.weight"].equal(arange(6, TensorOptions().dtype(kFloat)).view({2, 3}) / 10));
  EXPECT_EQ(values(sd["0.bias"]), (std::vector<double>{0.5, -0.5}));
  EXPECT_EQ(values(sd["1.running_mean"]), (std::vector<double>{1, 2}));
  EXPECT_EQ(sd["1.num_batches_tracked"].item<int64_t>(), 3);
  auto wrong = nn::Linear(3, 3);
  EXPECT_ERROR("does not match", torch::load(wrong, pt("state_dict.pt")));
}

TEST(PtFormat, EveryDtypeAndParameters) {
  IValue v = torch::pickle_load(file_bytes(pt("dtypes.pt")));
  const std::map<std::string, ScalarType> want = {
      {"float16", kHalf}, {"bfloat16", kBFloat16}, {"float64", kDouble},
      {"int8", kChar},    {"uint8", kByte},        {"int16", kShort},
      {"int32", kInt},    {"int64", kLong},        {"bool", kBool}};
  auto dict = v.toTensorDict();
  ASSERT_EQ(dict.size(), want.size());
  for (const auto& [name, dtype] : want) {
    const Tensor& t = dict.at(name);
    EXPECT_EQ(t.scalar_type(), dtype) << name;
    Tensor expect = (arange(4) * 3 - 4).to(dtype);
    EXPECT_TRUE(t.equal(expect)) << name;
  }
  Tensor p;
  torch::load(p, pt("parameter.pt"));
  EXPECT_TRUE(p.requires_grad());
  EXPECT_EQ(values(p), std::vector<double>(4, 1.0));
}

TEST(PtFormat, WritesFilesThatReadBackAndKeepAliasing) {
  Tensor x = arange(10, TensorOptions().dtype(kDouble)).view({2, 5});
  IValue::TensorDict items = {
      {"x", x}, {"row", x[1]}, {"flag", ones({2}, TensorOptions().dtype(kBool))}};
  IValue back = torch::pickle_load(torch::pickle_save(IValue(items)));
  const auto& got = back.toTensorItems();
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].first, "x");
  EXPECT_TRUE(got[0].second.equal(x));
  EXPECT_TRUE(got[1].second.is_alias_of(got[0].second));
  EXPECT_TRUE(got[1].second.equal(x[1]));
  EXPECT_EQ(got[2].second.scalar_type(), kBool);
  for (const IValue& v : {IValue(int64_t{-70000}), IValue(int64_t{1} << 40), IValue(2.5),
                          IValue(true), IValue("text"), IValue(std::vector<int64_t>{1, -2, 300})}) {
    IValue r = torch::pickle_load(torch::pickle_save(v));
    EXPECT_EQ(r.isInt(), v.isInt());
    if (v.isInt()) {
      EXPECT_EQ(r.toInt(), v.toInt());
    }
    if (v.isDouble()) {
      EXPECT_EQ(r.toDouble(), v.toDouble());
    }
    if (v.isString()) {
      EXPECT_EQ(r.toStringRef(), v.toStringRef());
    }
    if (v.isIntList()) {
      EXPECT_EQ(r.toIntVector(), v.toIntVector());
    }
  }
  // A module saved as .pt loads back (and brasa::save stays safetensors).
  const std::string path = "/tmp/brasa_pt_test_" + std::to_string(getpid()) + ".pt";
  auto net = nn::Linear(3, 2);
  serialize::save_pt(path, IValue(net->named_parameters()));
  auto other = nn::Linear(3, 2);
  torch::load(other, path);
  EXPECT_TRUE(other->weight.equal(net->weight));
  torch::save(x, path);
  EXPECT_FALSE(serialize::looks_like_zip(serialize::read_whole_file(path)));
  Tensor y;
  torch::load(y, path);
  EXPECT_TRUE(y.equal(x));
  std::remove(path.c_str());
}

// Python's torch.load reads what Brasa writes (when python3-torch is here).
TEST(PtFormat, PythonLoadsBrasasFiles) {
  if (std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "python3-torch is not installed";
  const std::string path = "/tmp/brasa_pt_py_" + std::to_string(getpid()) + ".pt";
  Tensor x = arange(6, TensorOptions().dtype(kFloat)).view({2, 3});
  serialize::save_pt(path, IValue(IValue::TensorDict{{"w", x}, {"t", x.t()}}));
  const std::string check =
      "/usr/bin/python3 -c \"import torch; d = torch.load('" + path +
      "'); assert list(d) == ['w', 't']; assert d['w'].tolist() == [[0, 1, 2], [3, 4, 5]]; "
      "assert d['t'].tolist() == [[0, 3], [1, 4], [2, 5]]; "
      "assert d['t'].storage().data_ptr() == d['w'].storage().data_ptr()\"";
  EXPECT_EQ(std::system(check.c_str()), 0) << check;
  std::remove(path.c_str());
}

TEST(PtFormat, HostileAndBrokenFilesAreRefused) {
  Tensor x;
  EXPECT_ERROR("refusing to load: the file asks to call Python's posix.system",
               torch::load(x, pt("evil.pt")));
  EXPECT_ERROR("which Brasa's IValue cannot hold",
               torch::pickle_load(file_bytes(pt("int_dict.pt"))));
  auto bytes = file_bytes(pt("tensor.pt"));
  EXPECT_ERROR("is not a valid zip archive",
               torch::pickle_load(std::vector<char>(bytes.begin(), bytes.begin() + 100)));
  serialize::ZipWriter script;
  script.add("m/data.pkl", ".");
  script.add("m/constants.pkl", ".");
  std::string s = script.finish();
  EXPECT_ERROR("is a TorchScript module archive",
               torch::pickle_load(std::vector<char>(s.begin(), s.end())));
  serialize::ZipWriter truncated;
  truncated.add("a/data.pkl", std::string("\x80\x02]q\x00(K\x01", 8));
  s = truncated.finish();
  EXPECT_ERROR("the pickle has no STOP opcode",
               torch::pickle_load(std::vector<char>(s.begin(), s.end())));
  auto net = nn::Linear(2, 2);
  EXPECT_ERROR("holds no state_dict (a dict of tensors) to load into Linear",
               torch::load(net, pt("tensor.pt")));
  std::vector<Tensor> list;
  EXPECT_ERROR("holds no tensor or list of tensors", torch::load(list, pt("dtypes.pt")));
  EXPECT_ERROR("pickle_save: an undefined tensor cannot be saved",
               torch::pickle_save(IValue(Tensor())));
  EXPECT_ERROR("cannot open '/nonexistent/brasa.pt'", torch::load(x, "/nonexistent/brasa.pt"));
  serialize::ZipWriter opcode;
  opcode.add("a/data.pkl", std::string("\x80\x02"
                                       "F1.0\n.",
                                       8));  // FLOAT: a text opcode
  s = opcode.finish();
  EXPECT_ERROR("unsupported pickle opcode 0x46 at offset 2",
               torch::pickle_load(std::vector<char>(s.begin(), s.end())));
  serialize::ZipWriter missing;
  // (storage, torch.FloatStorage, "9", "cpu", 4) as a persistent id, no record data/9.
  missing.add("a/data.pkl", std::string("\x80\x02(X\x07\x00\x00\x00storage"
                                        "ctorch\nFloatStorage\n"
                                        "X\x01\x00\x00\x00"
                                        "9"
                                        "X\x03\x00\x00\x00"
                                        "cpu"
                                        "K\x04tQ.",
                                        54));
  s = missing.finish();
  EXPECT_ERROR("storage record 'a/data/9' is missing",
               torch::pickle_load(std::vector<char>(s.begin(), s.end())));
}

}  // namespace
