#include <brasa/nn/transformer.h>
#include <brasa/ops/binary.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/shape.h>

#include <cmath>

namespace brasa::nn {

namespace {
void check_layers(const char* module, int64_t num_layers) {
  BRASA_CHECK(num_layers >= 0, module, ": num_layers must be non-negative, got ", num_layers);
}
// num_layers clones of the layer in a ModuleList, and a clone of the norm when set.
template <class Impl, class Holder>
ModuleList clone_layers(const Holder& layer, int64_t num_layers) {
  ModuleList layers;
  for (int64_t i = 0; i < num_layers; ++i)
    layers->push_back(Holder(std::dynamic_pointer_cast<Impl>(layer->clone())));
  return layers;
}
LayerNorm clone_norm(const LayerNorm& norm) {
  return norm.is_empty() ? LayerNorm(nullptr)
                         : LayerNorm(std::dynamic_pointer_cast<LayerNormImpl>(norm->clone()));
}
}  // namespace

TransformerEncoderImpl::TransformerEncoderImpl(const TransformerEncoderOptions& o)
    : Cloneable("TransformerEncoder"), options(o) {
  check_layers("TransformerEncoder", o.num_layers_);
  BRASA_CHECK(!o.encoder_layer_.is_empty(), "TransformerEncoder: the encoder layer is empty");
  layers = register_module(
      "layers", clone_layers<TransformerEncoderLayerImpl>(o.encoder_layer_, o.num_layers_));
  norm = clone_norm(o.norm_);
  if (!norm.is_empty()) register_module("norm", norm);
}

TransformerEncoderImpl::TransformerEncoderImpl(const TransformerEncoderImpl& o)
    : TransformerEncoderImpl(o.options) {}

Tensor TransformerEncoderImpl::forward(const Tensor& src, const Tensor& src_mask,
                                       const Tensor& src_key_padding_mask) {
  Tensor x = src;
  for (size_t i = 0; i < layers->size(); ++i)
    x = layers->ptr<TransformerEncoderLayerImpl>(i)->forward(x, src_mask, src_key_padding_mask);
  return norm.is_empty() ? x : norm->forward(x);
}

void TransformerEncoderImpl::pretty_print(std::ostream& os) const {
  os << "torch::nn::TransformerEncoderImpl";
}

TransformerDecoderLayerImpl::TransformerDecoderLayerImpl(const TransformerDecoderLayerOptions& o)
    : Cloneable("TransformerDecoderLayer"), options(o) {
  detail::check_activation("TransformerDecoderLayer", o.activation_);
  // Registered in libtorch's order, so that printing and state_dict match.
  self_attn = register_module("self_attn", MultiheadAttention(o.d_model_, o.nhead_, o.dropout_));
  multihead_attn =
      register_module("multihead_attn", MultiheadAttention(o.d_model_, o.nhead_, o.dropout_));
  linear1 = register_module("linear1", Linear(o.d_model_, o.dim_feedforward_));
  dropout = register_module("dropout", Dropout(o.dropout_));
  linear2 = register_module("linear2", Linear(o.dim_feedforward_, o.d_model_));
  norm1 = register_module("norm1", LayerNorm(std::vector<int64_t>{o.d_model_}));
  norm2 = register_module("norm2", LayerNorm(std::vector<int64_t>{o.d_model_}));
  norm3 = register_module("norm3", LayerNorm(std::vector<int64_t>{o.d_model_}));
  dropout1 = register_module("dropout1", Dropout(o.dropout_));
  dropout2 = register_module("dropout2", Dropout(o.dropout_));
  dropout3 = register_module("dropout3", Dropout(o.dropout_));
}

Tensor TransformerDecoderLayerImpl::forward(const Tensor& tgt, const Tensor& memory,
                                            const Tensor& tgt_mask, const Tensor& memory_mask,
                                            const Tensor& tgt_key_padding_mask,
                                            const Tensor& memory_key_padding_mask) {
  auto self_block = [&](const Tensor& x) {
    return dropout1->forward(
        std::get<0>(self_attn->forward(x, x, x, tgt_key_padding_mask, false, tgt_mask)));
  };
  auto memory_block = [&](const Tensor& x) {
    return dropout2->forward(std::get<0>(
        multihead_attn->forward(x, memory, memory, memory_key_padding_mask, false, memory_mask)));
  };
  auto feed_forward = [&](const Tensor& x) {
    Tensor h = detail::apply_activation(options.activation_, linear1->forward(x));
    return dropout3->forward(linear2->forward(dropout->forward(h)));
  };
  if (options.norm_first_) {
    Tensor x = tgt + self_block(norm1->forward(tgt));
    x = x + memory_block(norm2->forward(x));
    return x + feed_forward(norm3->forward(x));
  }
  Tensor x = norm1->forward(tgt + self_block(tgt));
  x = norm2->forward(x + memory_block(x));
  return norm3->forward(x + feed_forward(x));
}

void TransformerDecoderLayerImpl::pretty_print(std::ostream& os) const {
  os << "torch::nn::TransformerDecoderLayerImpl";
}

TransformerDecoderImpl::TransformerDecoderImpl(const TransformerDecoderOptions& o)
    : Cloneable("TransformerDecoder"), options(o) {
  check_layers("TransformerDecoder", o.num_layers_);
  BRASA_CHECK(!o.decoder_layer_.is_empty(), "TransformerDecoder: the decoder layer is empty");
  layers = register_module(
      "layers", clone_layers<TransformerDecoderLayerImpl>(o.decoder_layer_, o.num_layers_));
  norm = clone_norm(o.norm_);
  if (!norm.is_empty()) register_module("norm", norm);
}

TransformerDecoderImpl::TransformerDecoderImpl(const TransformerDecoderImpl& o)
    : TransformerDecoderImpl(o.options) {}

Tensor TransformerDecoderImpl::forward(const Tensor& tgt, const Tensor& memory,
                                       const Tensor& tgt_mask, const Tensor& memory_mask,
                                       const Tensor& tgt_key_padding_mask,
                                       const Tensor& memory_key_padding_mask) {
  Tensor x = tgt;
  for (size_t i = 0; i < layers->size(); ++i)
    x = layers->ptr<TransformerDecoderLayerImpl>(i)->forward(
        x, memory, tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask);
  return norm.is_empty() ? x : norm->forward(x);
}

void TransformerDecoderImpl::pretty_print(std::ostream& os) const {
  os << "torch::nn::TransformerDecoderImpl";
}

TransformerImpl::TransformerImpl(const TransformerOptions& o)
    : Cloneable("Transformer"), options(o) {
  detail::check_activation("Transformer", o.activation_);
  auto final_norm = [&] { return LayerNorm(std::vector<int64_t>{o.d_model_}); };
  if (!o.custom_encoder_.is_empty()) {
    encoder = o.custom_encoder_.clone();
  } else {
    encoder = AnyModule(TransformerEncoder(
        TransformerEncoderOptions(TransformerEncoderLayerOptions(o.d_model_, o.nhead_)
                                      .dim_feedforward(o.dim_feedforward_)
                                      .dropout(o.dropout_)
                                      .activation(o.activation_),
                                  o.num_encoder_layers_)
            .norm(final_norm())));
  }
  if (!o.custom_decoder_.is_empty()) {
    decoder = o.custom_decoder_.clone();
  } else {
    decoder = AnyModule(TransformerDecoder(
        TransformerDecoderOptions(TransformerDecoderLayerOptions(o.d_model_, o.nhead_)
                                      .dim_feedforward(o.dim_feedforward_)
                                      .dropout(o.dropout_)
                                      .activation(o.activation_),
                                  o.num_decoder_layers_)
            .norm(final_norm())));
  }
  register_module("encoder", encoder.ptr());
  register_module("decoder", decoder.ptr());
}

Tensor TransformerImpl::forward(const Tensor& src, const Tensor& tgt, const Tensor& src_mask,
                                const Tensor& tgt_mask, const Tensor& memory_mask,
                                const Tensor& src_key_padding_mask,
                                const Tensor& tgt_key_padding_mask,
                                const Tensor& memory_key_padding_mask) {
  BRASA_CHECK(src.dim() == 3 && tgt.dim() == 3 && src.size(1) == tgt.size(1),
              "Transformer: expected src [S, N, E] and tgt [T, N, E] with the same batch size, "
              "got ",
              src.sizes(), " and ", tgt.sizes());
  BRASA_CHECK(src.size(2) == options.d_model_ && tgt.size(2) == options.d_model_,
              "Transformer: the feature number of src and tgt must be equal to d_model (",
              options.d_model_, "), got ", src.size(2), " and ", tgt.size(2));
  Tensor memory = encoder.forward<Tensor>(src, src_mask, src_key_padding_mask);
  return decoder.forward<Tensor>(tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask,
                                 memory_key_padding_mask);
}

void TransformerImpl::pretty_print(std::ostream& os) const { os << "torch::nn::TransformerImpl"; }

Tensor TransformerImpl::generate_square_subsequent_mask(int64_t sz) {
  BRASA_CHECK(sz >= 0,
              "Input size must be non-negative to generate a valid square subsequent "
              "mask, but got ",
              sz);
  return triu(full({sz, sz}, -INFINITY), 1);
}

}  // namespace brasa::nn
