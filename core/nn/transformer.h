#pragma once
// The rest of libtorch's transformer: TransformerEncoder (N clones of an
// encoder layer, then an optional norm), TransformerDecoderLayer,
// TransformerDecoder and the full Transformer, with their options and
// parameter names. Sequence-first [S, N, E], as libtorch 1.13.
#include <brasa/nn/any_module.h>
#include <brasa/nn/sequence_modules.h>

#include <ostream>

namespace brasa::nn {

struct TransformerEncoderOptions {
  TransformerEncoderOptions(TransformerEncoderLayer encoder_layer, int64_t num_layers)
      : encoder_layer_(std::move(encoder_layer)), num_layers_(num_layers) {}
  TransformerEncoderOptions(const TransformerEncoderLayerOptions& layer, int64_t num_layers)
      : encoder_layer_(TransformerEncoderLayer(layer)), num_layers_(num_layers) {}
  BRASA_ARG(TransformerEncoderLayer, encoder_layer, nullptr);
  BRASA_ARG(int64_t, num_layers);
  BRASA_ARG(LayerNorm, norm, nullptr);  // applied after the last layer when set
};

class TransformerEncoderImpl : public Cloneable<TransformerEncoderImpl> {
 public:
  explicit TransformerEncoderImpl(const TransformerEncoderOptions& o);
  TransformerEncoderImpl(TransformerEncoderLayer layer, int64_t num_layers)
      : TransformerEncoderImpl(TransformerEncoderOptions(std::move(layer), num_layers)) {}
  TransformerEncoderImpl(const TransformerEncoderImpl& o);
  Tensor forward(const Tensor& src, const Tensor& src_mask = {},
                 const Tensor& src_key_padding_mask = {});
  void pretty_print(std::ostream& os) const override;
  FORWARD_HAS_DEFAULT_ARGS({1, AnyValue(Tensor())}, {2, AnyValue(Tensor())})
  TransformerEncoderOptions options;
  ModuleList layers{nullptr};
  LayerNorm norm{nullptr};
};
BRASA_MODULE(TransformerEncoder);

struct TransformerDecoderLayerOptions {
  TransformerDecoderLayerOptions(int64_t d_model, int64_t nhead)
      : d_model_(d_model), nhead_(nhead) {}
  BRASA_ARG(int64_t, d_model);
  BRASA_ARG(int64_t, nhead);
  BRASA_ARG(int64_t, dim_feedforward, 2048);
  BRASA_ARG(double, dropout, 0.1);
  BRASA_ARG(activation_t, activation, kReLU);  // kGELU, or a callable
  BRASA_ARG(bool, norm_first, false);
};

// Self-attention over the target, attention to the encoder's output
// (memory) and a feed-forward block, each with a residual and LayerNorm.
class TransformerDecoderLayerImpl : public Cloneable<TransformerDecoderLayerImpl> {
 public:
  explicit TransformerDecoderLayerImpl(const TransformerDecoderLayerOptions& o);
  TransformerDecoderLayerImpl(int64_t d_model, int64_t nhead)
      : TransformerDecoderLayerImpl(TransformerDecoderLayerOptions(d_model, nhead)) {}
  TransformerDecoderLayerImpl(const TransformerDecoderLayerImpl& o)
      : TransformerDecoderLayerImpl(o.options) {}
  Tensor forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask = {},
                 const Tensor& memory_mask = {}, const Tensor& tgt_key_padding_mask = {},
                 const Tensor& memory_key_padding_mask = {});
  void pretty_print(std::ostream& os) const override;
  FORWARD_HAS_DEFAULT_ARGS({2, AnyValue(Tensor())}, {3, AnyValue(Tensor())},
                           {4, AnyValue(Tensor())}, {5, AnyValue(Tensor())})
  TransformerDecoderLayerOptions options;
  MultiheadAttention self_attn{nullptr}, multihead_attn{nullptr};
  Linear linear1{nullptr}, linear2{nullptr};
  Dropout dropout{nullptr}, dropout1{nullptr}, dropout2{nullptr}, dropout3{nullptr};
  LayerNorm norm1{nullptr}, norm2{nullptr}, norm3{nullptr};
};
BRASA_MODULE(TransformerDecoderLayer);

struct TransformerDecoderOptions {
  TransformerDecoderOptions(TransformerDecoderLayer decoder_layer, int64_t num_layers)
      : decoder_layer_(std::move(decoder_layer)), num_layers_(num_layers) {}
  TransformerDecoderOptions(const TransformerDecoderLayerOptions& layer, int64_t num_layers)
      : decoder_layer_(TransformerDecoderLayer(layer)), num_layers_(num_layers) {}
  BRASA_ARG(TransformerDecoderLayer, decoder_layer, nullptr);
  BRASA_ARG(int64_t, num_layers);
  BRASA_ARG(LayerNorm, norm, nullptr);
};

class TransformerDecoderImpl : public Cloneable<TransformerDecoderImpl> {
 public:
  explicit TransformerDecoderImpl(const TransformerDecoderOptions& o);
  TransformerDecoderImpl(TransformerDecoderLayer layer, int64_t num_layers)
      : TransformerDecoderImpl(TransformerDecoderOptions(std::move(layer), num_layers)) {}
  TransformerDecoderImpl(const TransformerDecoderImpl& o);
  Tensor forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask = {},
                 const Tensor& memory_mask = {}, const Tensor& tgt_key_padding_mask = {},
                 const Tensor& memory_key_padding_mask = {});
  void pretty_print(std::ostream& os) const override;
  FORWARD_HAS_DEFAULT_ARGS({2, AnyValue(Tensor())}, {3, AnyValue(Tensor())},
                           {4, AnyValue(Tensor())}, {5, AnyValue(Tensor())})
  TransformerDecoderOptions options;
  ModuleList layers{nullptr};
  LayerNorm norm{nullptr};
};
BRASA_MODULE(TransformerDecoder);

struct TransformerOptions {
  TransformerOptions() = default;
  TransformerOptions(int64_t d_model, int64_t nhead) : d_model_(d_model), nhead_(nhead) {}
  TransformerOptions(int64_t d_model, int64_t nhead, int64_t num_encoder_layers,
                     int64_t num_decoder_layers)
      : d_model_(d_model),
        nhead_(nhead),
        num_encoder_layers_(num_encoder_layers),
        num_decoder_layers_(num_decoder_layers) {}
  BRASA_ARG(int64_t, d_model, 512);
  BRASA_ARG(int64_t, nhead, 8);
  BRASA_ARG(int64_t, num_encoder_layers, 6);
  BRASA_ARG(int64_t, num_decoder_layers, 6);
  BRASA_ARG(int64_t, dim_feedforward, 2048);
  BRASA_ARG(double, dropout, 0.1);
  BRASA_ARG(activation_t, activation, kReLU);
  // Used instead of the built encoder / decoder when set (a clone of it):
  // forward(src, src_mask, src_key_padding_mask) -> memory and
  // forward(tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask,
  // memory_key_padding_mask) -> output, all Tensors.
  BRASA_ARG(AnyModule, custom_encoder);
  BRASA_ARG(AnyModule, custom_decoder);
};

// An encoder (with a final LayerNorm) and a decoder (likewise), or the
// custom ones of the options; held as AnyModules, as in libtorch.
class TransformerImpl : public Cloneable<TransformerImpl> {
 public:
  explicit TransformerImpl(const TransformerOptions& o = {});
  TransformerImpl(const TransformerImpl& o) : TransformerImpl(o.options) {}
  Tensor forward(const Tensor& src, const Tensor& tgt, const Tensor& src_mask = {},
                 const Tensor& tgt_mask = {}, const Tensor& memory_mask = {},
                 const Tensor& src_key_padding_mask = {}, const Tensor& tgt_key_padding_mask = {},
                 const Tensor& memory_key_padding_mask = {});
  void pretty_print(std::ostream& os) const override;
  // A float [sz, sz] mask: 0 on and below the diagonal, -inf above (no
  // attention to later positions).
  static Tensor generate_square_subsequent_mask(int64_t sz);
  TransformerOptions options;
  AnyModule encoder;
  AnyModule decoder;
};
BRASA_MODULE(Transformer);

}  // namespace brasa::nn
