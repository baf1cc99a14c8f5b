// Module::clone: deep copies of built-in modules, containers and user
// modules written against libtorch's Cloneable contract.
#include "../test_util.h"

namespace brasa {
namespace {

// Every parameter and buffer of `copy` equals the original's and owns its storage.
void expect_deep_copy(nn::Module& original, nn::Module& copy) {
  auto a = original.state_dict(), b = copy.state_dict();
  ASSERT_EQ(a.keys(), b.keys());
  for (const auto& item : a) {
    const Tensor& t = b[item.key()];
    EXPECT_TRUE(t.equal(item.value())) << item.key();
    EXPECT_NE(t.data_ptr(), item.value().data_ptr()) << item.key() << " shares storage";
    EXPECT_EQ(t.requires_grad(), item.value().requires_grad()) << item.key();
  }
}

TEST(Clone, LinearIsIndependentAndKeepsMembersInSync) {
  manual_seed(0);
  nn::Linear fc(4, 3);
  auto copy = std::dynamic_pointer_cast<nn::LinearImpl>(fc->clone());
  ASSERT_TRUE(copy);
  expect_deep_copy(*fc, *copy);
  // The copy's members are its own registered tensors.
  EXPECT_TRUE(copy->weight.is_same(copy->named_parameters()["weight"]));
  EXPECT_FALSE(copy->weight.is_same(fc->weight));
  Tensor x = randn({2, 4});
  EXPECT_TRUE(copy->forward(x).allclose(fc->forward(x)));
  {
    NoGradGuard g;
    copy->weight.fill_(1.0);
  }
  EXPECT_FALSE(fc->weight.eq(1.0).all().item<bool>());
  EXPECT_EQ(copy->options.in_features_, 4);
}

TEST(Clone, ContainersCloneTheirItemsAndKeepTrainingFlags) {
  manual_seed(1);
  nn::Sequential seq(nn::Conv2d(1, 2, 3), nn::BatchNorm2d(2), nn::ReLU(), nn::Flatten(),
                     nn::Linear(8, 2));
  seq->train();
  Tensor x = randn({3, 1, 4, 4});
  seq->forward(x);  // moves the running statistics away from their initial values
  seq->eval();
  auto copy = std::dynamic_pointer_cast<nn::SequentialImpl>(seq->clone());
  ASSERT_TRUE(copy);
  expect_deep_copy(*seq, *copy);
  EXPECT_FALSE(copy->is_training());
  EXPECT_FALSE(copy->children()[1]->is_training());
  EXPECT_TRUE(copy->forward(x).equal(seq->forward(x)));
  for (size_t i = 0; i < seq->children().size(); ++i)
    EXPECT_NE(copy->children()[i], seq->children()[i]);

  nn::ModuleList list(nn::Linear(2, 2), nn::GELU("tanh"));
  auto list_copy = std::dynamic_pointer_cast<nn::ModuleListImpl>(list->clone());
  ASSERT_TRUE(list_copy);
  expect_deep_copy(*list, *list_copy);
  ASSERT_EQ(list_copy->size(), 2u);
  EXPECT_NE((*list_copy)[0], (*list)[0]);
  EXPECT_TRUE(list_copy->ptr<nn::GELUImpl>(1));
  Tensor g = randn({5});
  EXPECT_TRUE(list_copy->ptr<nn::GELUImpl>(1)->forward(g).equal(F::gelu(g, "tanh")));
}

TEST(Clone, LayersWithStateProduceEqualOutputs) {
  manual_seed(2);
  Tensor seq = randn({5, 2, 4});
  nn::LSTM lstm(nn::LSTMOptions(4, 3).num_layers(2).bidirectional(true));
  auto lstm_copy = std::dynamic_pointer_cast<nn::LSTMImpl>(lstm->clone());
  ASSERT_TRUE(lstm_copy);
  expect_deep_copy(*lstm, *lstm_copy);
  EXPECT_TRUE(std::get<0>(lstm_copy->forward(seq)).equal(std::get<0>(lstm->forward(seq))));

  nn::TransformerEncoderLayer layer(
      nn::TransformerEncoderLayerOptions(4, 2).dim_feedforward(8).dropout(0.0));
  auto layer_copy = std::dynamic_pointer_cast<nn::TransformerEncoderLayerImpl>(layer->clone());
  ASSERT_TRUE(layer_copy);
  expect_deep_copy(*layer, *layer_copy);
  EXPECT_TRUE(layer_copy->forward(seq).allclose(layer->forward(seq)));
  EXPECT_NE(layer_copy->self_attn.get(), layer->self_attn.get());

  nn::Embedding emb(nn::EmbeddingOptions(6, 3).padding_idx(0).max_norm(1.0));
  auto emb_copy = std::dynamic_pointer_cast<nn::EmbeddingImpl>(emb->clone());
  ASSERT_TRUE(emb_copy);
  EXPECT_EQ(emb_copy->padding_idx, std::optional<int64_t>(0));
  EXPECT_EQ(emb_copy->max_norm, std::optional<double>(1.0));
  expect_deep_copy(*emb, *emb_copy);

  nn::GroupNorm gn(2, 4, 1e-5, /*affine=*/false);
  auto gn_copy = std::dynamic_pointer_cast<nn::GroupNormImpl>(gn->clone());
  ASSERT_TRUE(gn_copy);
  EXPECT_EQ(gn_copy->num_channels, 4);
  EXPECT_FALSE(gn_copy->weight.defined());
}

// A user module as libtorch documents it: reset() registers everything.
struct UserNetImpl : nn::Cloneable<UserNetImpl> {
  UserNetImpl() { reset(); }
  void reset() override {
    fc = register_module("fc", nn::Linear(3, 2));
    scale = register_parameter("scale", ones({2}));
    register_buffer("count", zeros({1}));
  }
  Tensor forward(const Tensor& x) { return fc->forward(x) * scale; }
  nn::Linear fc{nullptr};
  Tensor scale;
};
BRASA_MODULE(UserNet);

TEST(Clone, UserModulesFollowLibtorchsContract) {
  manual_seed(3);
  UserNet net;
  {
    NoGradGuard g;
    net->scale.fill_(2.0);
    net->named_buffers()["count"].fill_(7.0);
  }
  auto copy = std::dynamic_pointer_cast<UserNetImpl>(net->clone());
  ASSERT_TRUE(copy);
  expect_deep_copy(*net, *copy);
  // Members point at the copy's own registered tensors and modules.
  EXPECT_TRUE(copy->scale.is_same(copy->named_parameters()["scale"]));
  EXPECT_EQ(copy->fc.get(), copy->named_children()["fc"].get());
  EXPECT_NE(copy->fc.get(), net->fc.get());
  Tensor x = randn({4, 3});
  EXPECT_TRUE(copy->forward(x).equal(net->forward(x)));
  // Training the copy leaves the original alone.
  copy->forward(x).sum().backward();
  EXPECT_TRUE(copy->scale.grad().defined());
  EXPECT_FALSE(net->scale.grad().defined());
}

struct PlainImpl : nn::Module {
  PlainImpl() : nn::Module("Plain") { register_parameter("w", ones({1})); }
  Tensor forward(const Tensor& x) { return x; }
};

struct NoResetImpl : nn::Cloneable<NoResetImpl> {
  NoResetImpl() : Cloneable("NoReset") { register_parameter("w", ones({1})); }
};

TEST(Clone, ModulesThatCannotCloneSayWhy) {
  PlainImpl plain;
  EXPECT_ERROR("clone() has not been implemented for Plain. Subclass nn::Cloneable<Plain>",
               plain.clone());
  auto no_reset = std::make_shared<NoResetImpl>();
  EXPECT_ERROR("override reset()", no_reset->clone());
  // A container holding a module that cannot be cloned names it.
  nn::Sequential seq;
  seq->push_back(nn::ModuleHolder<PlainImpl>(std::make_shared<PlainImpl>()));
  EXPECT_ERROR("clone() has not been implemented for Plain", seq->clone());
}

}  // namespace
}  // namespace brasa
