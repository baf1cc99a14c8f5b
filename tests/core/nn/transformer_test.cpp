// The transformer modules (nn/transformer.h) and ParameterList /
// ParameterDict (nn/parameter_containers.h): values against PyTorch's,
// parameter names and order as libtorch has them, clones, errors.
#include <brasa/torch.h>

#include <sstream>

#include "../ops/golden_util.h"
#include "../test_util.h"

namespace {

using namespace brasa;
using golden::expect_golden;
using golden::S;
using golden::set_sequential_weights;

TEST(Transformer, DecoderLayerAndFullModelMatchPyTorch) {
  torch::nn::TransformerDecoderLayer layer(
      torch::nn::TransformerDecoderLayerOptions(4, 2).dim_feedforward(6).dropout(0.0).activation(
          torch::kGELU));
  layer->to(kDouble);
  set_sequential_weights(*layer);
  layer->eval();
  Tensor mask = torch::nn::TransformerImpl::generate_square_subsequent_mask(2).to(kDouble);
  expect_golden("transformer_decoder_layer", layer(S({2, 2, 4}), S({3, 2, 4}, 0.5, 0.3), mask),
                1e-9);

  torch::nn::Transformer model(
      torch::nn::TransformerOptions(4, 2, 2, 1).dim_feedforward(6).dropout(0.0));
  model->to(kDouble);
  set_sequential_weights(*model);
  model->eval();
  expect_golden("transformer", model->forward(S({3, 2, 4}), S({2, 2, 4}, 0.5, 0.3), {}, mask),
                1e-9);
}

// libtorch's activation_t: a callable in place of kReLU / kGELU, in the
// encoder layer, the decoder layer and the whole Transformer.
TEST(Transformer, ActivationMayBeACallable) {
  auto gelu = [](const Tensor& x) { return torch::nn::functional::gelu(x); };
  auto swish = [](const Tensor& x) { return x * torch::sigmoid(x); };
  auto encoder_output = [](torch::nn::activation_t a) {
    torch::nn::TransformerEncoderLayer layer(
        torch::nn::TransformerEncoderLayerOptions(4, 2).dim_feedforward(6).dropout(0.0).activation(
            a));
    layer->to(kDouble);
    set_sequential_weights(*layer);
    return layer(S({3, 2, 4}));
  };
  EXPECT_TRUE(encoder_output(gelu).equal(encoder_output(torch::kGELU)));
  EXPECT_FALSE(encoder_output(swish).allclose(encoder_output(torch::kReLU)));
  // Python's spelling still works.
  torch::nn::TransformerEncoderLayerOptions named(4, 2);
  named.activation("gelu");
  EXPECT_TRUE(std::holds_alternative<ActivationKind>(named.activation()));
  EXPECT_EQ(std::get<ActivationKind>(named.activation()), torch::kGELU);

  auto decoder_output = [](torch::nn::activation_t a) {
    torch::nn::TransformerDecoderLayer layer(
        torch::nn::TransformerDecoderLayerOptions(4, 2).dim_feedforward(6).dropout(0.0).activation(
            a));
    layer->to(kDouble);
    set_sequential_weights(*layer);
    return layer(S({2, 2, 4}), S({3, 2, 4}, 0.5, 0.3));
  };
  EXPECT_TRUE(decoder_output(gelu).equal(decoder_output(torch::kGELU)));

  auto model_output = [](torch::nn::activation_t a) {
    torch::nn::Transformer model(
        torch::nn::TransformerOptions(4, 2, 1, 1).dim_feedforward(6).dropout(0.0).activation(a));
    model->to(kDouble);
    set_sequential_weights(*model);
    return model(S({3, 2, 4}), S({2, 2, 4}, 0.5, 0.3));
  };
  EXPECT_TRUE(model_output(gelu).equal(model_output(torch::kGELU)));
  EXPECT_FALSE(model_output(swish).allclose(model_output(torch::kGELU)));
}

TEST(Transformer, ParameterNamesFollowLibtorch) {
  torch::nn::Transformer model(torch::nn::TransformerOptions(4, 2, 2, 1).dim_feedforward(6));
  auto names = model->named_parameters().keys();
  ASSERT_FALSE(names.empty());
  EXPECT_EQ(names.front(), "encoder.layers.0.self_attn.in_proj_weight");
  EXPECT_EQ(names.back(), "decoder.norm.bias");
  EXPECT_TRUE(model->named_parameters().contains("encoder.layers.1.linear2.weight"));
  EXPECT_TRUE(
      model->named_parameters().contains("decoder.layers.0.multihead_attn.out_proj.weight"));
  EXPECT_TRUE(model->named_parameters().contains("decoder.layers.0.norm3.weight"));
  // 2 encoder layers of 12 tensors, their norm (2), 1 decoder layer of 18, its norm (2).
  EXPECT_EQ(names.size(), 2u * 12 + 2 + 18 + 2);
  Tensor mask = torch::nn::TransformerImpl::generate_square_subsequent_mask(3);
  EXPECT_EQ(mask[0][1].item<float>(), -INFINITY);
  EXPECT_EQ(mask[1][1].item<float>(), 0.0f);
  EXPECT_EQ(mask[2][0].item<float>(), 0.0f);
}

TEST(Transformer, EncoderAndDecoderStacksCloneTheirLayer) {
  torch::nn::TransformerEncoderLayer layer(torch::nn::TransformerEncoderLayerOptions(8, 2));
  torch::nn::TransformerEncoder encoder(torch::nn::TransformerEncoderOptions(layer, 3).norm(
      torch::nn::LayerNorm(std::vector<int64_t>{8})));
  EXPECT_EQ(encoder->layers->size(), 3u);
  auto first = encoder->layers->ptr<nn::TransformerEncoderLayerImpl>(0);
  EXPECT_FALSE(first->linear1->weight.is_alias_of(layer->linear1->weight));
  EXPECT_TRUE(first->linear1->weight.equal(layer->linear1->weight));  // clones of one layer
  encoder->eval();
  Tensor src = torch::randn({5, 2, 8});
  Tensor out = encoder(src);
  EXPECT_SHAPE(out, {5, 2, 8});
  EXPECT_NEAR(out.mean(-1).abs().max().item<float>(), 0.0f, 1e-5);  // the final LayerNorm
  // A clone of the stack computes the same.
  auto copy = std::dynamic_pointer_cast<nn::TransformerEncoderImpl>(encoder->clone());
  copy->eval();
  EXPECT_TRUE(copy->forward(src).allclose(out));
  torch::nn::TransformerDecoder decoder(
      torch::nn::TransformerDecoderOptions(torch::nn::TransformerDecoderLayerOptions(8, 2), 2));
  EXPECT_SHAPE(decoder(torch::randn({3, 2, 8}), out), {3, 2, 8});
  std::ostringstream os;
  decoder->pretty_print(os);
  EXPECT_EQ(os.str(), "torch::nn::TransformerDecoderImpl");
  // Trains: a gradient reaches every parameter.
  torch::nn::Transformer model(torch::nn::TransformerOptions(8, 2, 1, 1).dim_feedforward(16));
  model(torch::randn({4, 2, 8}), torch::randn({3, 2, 8})).pow(2).mean().backward();
  for (auto& p : model->named_parameters()) EXPECT_TRUE(p.value().grad().defined()) << p.key();
}

TEST(Transformer, BadInputGetsClearErrors) {
  torch::nn::Transformer model(torch::nn::TransformerOptions(8, 2, 1, 1).dim_feedforward(16));
  EXPECT_ERROR("the feature number of src and tgt must be equal to d_model (8)",
               model(torch::randn({4, 2, 6}), torch::randn({3, 2, 6})));
  EXPECT_ERROR("with the same batch size", model(torch::randn({4, 2, 8}), torch::randn({3, 3, 8})));
  EXPECT_ERROR(
      "TransformerDecoderLayer: activation must be torch::kReLU, torch::kGELU or a "
      "callable, got torch::kTanh",
      torch::nn::TransformerDecoderLayer(
          torch::nn::TransformerDecoderLayerOptions(8, 2).activation(torch::kTanh)));
  EXPECT_ERROR(
      "TransformerEncoderLayer: the activation callable is empty",
      torch::nn::TransformerEncoderLayer(torch::nn::TransformerEncoderLayerOptions(8, 2).activation(
          std::function<Tensor(const Tensor&)>())));
  EXPECT_ERROR("the encoder layer is empty",
               torch::nn::TransformerEncoder(torch::nn::TransformerEncoderOptions(nullptr, 2)));
  EXPECT_ERROR("must be non-negative",
               torch::nn::TransformerImpl::generate_square_subsequent_mask(-1));
}

// A user's encoder and decoder, as libtorch's custom_encoder/custom_decoder
// take them: the Transformer calls clones of them through AnyModule.
struct ScaleEncoderImpl : torch::nn::Cloneable<ScaleEncoderImpl> {
  ScaleEncoderImpl() { reset(); }
  void reset() override { scale = register_parameter("scale", torch::full({1}, 2.0)); }
  Tensor forward(const Tensor& src, const Tensor& mask, const Tensor& key_padding_mask) {
    EXPECT_FALSE(mask.defined());
    EXPECT_FALSE(key_padding_mask.defined());
    return src * scale;
  }
  Tensor scale;
};
TORCH_MODULE(ScaleEncoder);

struct AddMemoryDecoderImpl : torch::nn::Cloneable<AddMemoryDecoderImpl> {
  void reset() override {}
  Tensor forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask,
                 const Tensor& memory_mask, const Tensor&, const Tensor&) {
    EXPECT_TRUE(tgt_mask.defined());
    EXPECT_FALSE(memory_mask.defined());
    return tgt + memory.sum(0);
  }
};
TORCH_MODULE(AddMemoryDecoder);

TEST(Transformer, CustomEncoderAndDecoderAreCalledThroughAnyModule) {
  ScaleEncoder encoder;
  torch::nn::Transformer model(torch::nn::TransformerOptions(4, 2)
                                   .custom_encoder(torch::nn::AnyModule(encoder))
                                   .custom_decoder(torch::nn::AnyModule(AddMemoryDecoder())));
  EXPECT_FALSE(model->options.custom_encoder().is_empty());
  // The model holds a clone: its own parameter, registered as "encoder.scale".
  EXPECT_EQ(model->named_parameters().keys(), std::vector<std::string>{"encoder.scale"});
  EXPECT_FALSE(model->encoder.get<ScaleEncoderImpl>().scale.is_alias_of(encoder->scale));
  EXPECT_EQ(model->encoder.ptr<ScaleEncoderImpl>()->scale.item<double>(), 2.0);
  EXPECT_EQ(model->encoder.type_info(), typeid(ScaleEncoderImpl));
  Tensor src = torch::arange(24.0).reshape({3, 2, 4}), tgt = torch::ones({2, 2, 4});
  Tensor mask = torch::nn::TransformerImpl::generate_square_subsequent_mask(2);
  Tensor out = model->forward(src, tgt, {}, mask);
  EXPECT_TRUE(out.equal(tgt + (src * 2).sum(0))) << out;
  out.sum().backward();
  // d/dscale of sum(tgt + sum_s(src * scale)) = sum(src) * 2 (tgt's two rows).
  EXPECT_EQ(model->parameters()[0].grad().item<double>(), src.sum().item<double>() * 2);
}

TEST(AnyModule, CallsAnyForwardAndChecksArguments) {
  torch::nn::Linear linear(3, 2);
  torch::nn::AnyModule any(linear);
  Tensor x = torch::ones({4, 3});
  EXPECT_TRUE(any.forward(x).equal(linear(x)));
  EXPECT_TRUE(any.any_forward(x).get<Tensor>().equal(linear(x)));
  EXPECT_EQ(any.ptr().get(), linear.ptr().get());  // wraps, does not copy
  EXPECT_EQ(any.get<torch::nn::Linear>().ptr().get(), linear.ptr().get());
  EXPECT_EQ(&any.get<torch::nn::LinearImpl>(), linear.get());
  torch::nn::AnyModule copy = any;  // copies call the same module
  EXPECT_EQ(copy.ptr().get(), linear.ptr().get());
  torch::nn::AnyModule cloned = any.clone();  // clones copy it
  EXPECT_NE(cloned.ptr().get(), linear.ptr().get());
  EXPECT_TRUE(cloned.forward(x).equal(linear(x)));
  // A module with a tuple result and one from a moved-in module value.
  torch::nn::AnyModule lstm(torch::nn::LSTM(3, 2));
  auto [out, state] =
      lstm.forward<std::tuple<Tensor, std::tuple<Tensor, Tensor>>>(torch::ones({5, 1, 3}));
  EXPECT_SHAPE(out, {5, 1, 2});
  EXPECT_SHAPE(std::get<1>(state), {1, 1, 2});
  torch::nn::AnyModule relu(torch::nn::ReLUImpl{});
  EXPECT_EQ(relu.forward(torch::full({1}, -1.0)).item<double>(), 0.0);

  // Defaults declared with FORWARD_HAS_DEFAULT_ARGS may be left out.
  torch::nn::AnyModule encoder(torch::nn::TransformerEncoder(
      torch::nn::TransformerEncoderOptions(torch::nn::TransformerEncoderLayerOptions(4, 2), 1)));
  EXPECT_SHAPE(encoder.forward(torch::randn({3, 2, 4})), {3, 2, 4});
  EXPECT_ERROR("expects at least 1 argument(s) and at most 3 argument(s), but received 4",
               encoder.forward(x, x, x, x));

  EXPECT_ERROR("expects 1 argument(s), but received 2", any.forward(x, x));
  EXPECT_ERROR("Attempted to cast AnyValue to brasa::Tensor, but its actual type is int",
               any.forward(1));
  EXPECT_ERROR("Attempted to cast AnyValue to int, but its actual type is brasa::Tensor",
               any.forward<int>(x));
  EXPECT_ERROR("to a type that it is not", any.get<torch::nn::ReLUImpl>());
  torch::nn::AnyModule empty;
  EXPECT_TRUE(empty.is_empty());
  EXPECT_ERROR("Cannot call forward() on an empty AnyModule", empty.forward(x));
  EXPECT_ERROR("Cannot call ptr() on an empty AnyModule", empty.ptr());
  EXPECT_ERROR("Cannot call get() on an empty AnyModule", empty.get<torch::nn::ReLUImpl>());
  EXPECT_ERROR("Cannot call type_info() on an empty AnyModule", empty.type_info());
  EXPECT_TRUE(empty.clone().is_empty());
}

TEST(ParameterContainers, ListAndDictRegisterTheirTensors) {
  torch::nn::ParameterList list(torch::ones({2}), torch::zeros({3}));
  list->append(torch::randn({4}));
  EXPECT_EQ(list->size(), 3u);
  EXPECT_SHAPE((*list)[2], {4});
  EXPECT_TRUE((*list)[0].requires_grad());
  EXPECT_EQ(list->named_parameters().keys(), (std::vector<std::string>{"0", "1", "2"}));
  EXPECT_ERROR("index 3 is out of range for 3 parameters", (*list)[3]);
  std::ostringstream os;
  list->pretty_print(os);
  EXPECT_EQ(os.str(),
            "torch::nn::ParameterList(\n(0): Parameter containing: [Float of size [2]]\n"
            "(1): Parameter containing: [Float of size [3]]\n"
            "(2): Parameter containing: [Float of size [4]]\n)");

  torch::nn::ParameterDict dict;
  dict->insert("scale", torch::ones({3}));
  dict->insert("shift", torch::zeros({3}));
  EXPECT_TRUE(dict->contains("scale"));
  EXPECT_EQ(dict->keys(), (std::vector<std::string>{"scale", "shift"}));
  Tensor popped = dict->pop("scale");
  EXPECT_SHAPE(popped, {3});
  EXPECT_EQ(dict->size(), 1u);
  EXPECT_EQ(dict->named_parameters().keys(), (std::vector<std::string>{"shift"}));
  dict->insert("shift", torch::full({2}, 5.0));  // replaces
  EXPECT_EQ((*dict)["shift"][0].item<float>(), 5.0f);
  EXPECT_ERROR("no parameter with key 'scale'", (*dict)["scale"]);

  // Held by a module, they train and clone as any parameters.
  struct Net : nn::Module {
    Net() : nn::Module("Net") { weights = register_module("weights", torch::nn::ParameterList()); }
    torch::nn::ParameterList weights{nullptr};
  };
  auto net = std::make_shared<Net>();
  net->weights->append(torch::ones({2}));
  EXPECT_EQ(net->named_parameters().keys(), (std::vector<std::string>{"weights.0"}));
  auto copy = std::dynamic_pointer_cast<nn::ParameterListImpl>(list->clone());
  EXPECT_TRUE((*copy)[1].equal((*list)[1]));
  EXPECT_FALSE((*copy)[1].is_alias_of((*list)[1]));
}

}  // namespace
