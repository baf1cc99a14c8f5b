// The autograd engine's semantics: programs from the paper and PyTorch's
// docs, error paths, hooks and callbacks, grad modes, custom functions.
#include "../test_util.h"

namespace brasa {
namespace {

using autograd::variable_list;

TEST(AutogradDocs, GradOfQuadraticAtOneIsSeven) {
  Tensor x = tensor({1.0}).requires_grad_();
  Tensor y = x * x + 5 * x + 4;
  auto g = autograd::grad({y}, {x}, {ones_like(y)});
  EXPECT_VALUES(g[0], {7});
  EXPECT_FALSE(x.grad().defined());  // grad() does not accumulate into .grad
}

TEST(AutogradDocs, TwoLayerNetworkTrainedByHand) {
  manual_seed(0);
  const int64_t N = 32, D_in = 10, H = 20, D_out = 3;
  Tensor x = randn({N, D_in}), y = randn({N, D_out});
  Tensor w1 = (randn({D_in, H}) * 0.1).detach().requires_grad_();
  Tensor w2 = (randn({H, D_out}) * 0.1).detach().requires_grad_();
  double first = 0, last = 0;
  for (int t = 0; t < 200; ++t) {
    Tensor y_pred = x.mm(w1).clamp_min(0).mm(w2);
    Tensor loss = (y_pred - y).pow(2).sum();
    if (t == 0) first = loss.item<double>();
    last = loss.item<double>();
    loss.backward();
    {
      NoGradGuard g;
      w1 -= 1e-3 * w1.grad();
      w2 -= 1e-3 * w2.grad();
      w1.grad().zero_();
      w2.grad().zero_();
    }
  }
  EXPECT_LT(last, 0.5 * first);
  // The hand gradient of the last step matches the analytic one.
  Tensor h = x.mm(w1.detach());
  Tensor hr = h.clamp_min(0);
  Tensor y_pred = hr.mm(w2.detach());
  Tensor gy = 2 * (y_pred - y);
  Tensor expect_w2 = hr.t().mm(gy);
  Tensor loss = (x.mm(w1).clamp_min(0).mm(w2) - y).pow(2).sum();
  loss.backward();
  EXPECT_TRUE(w2.grad().allclose(expect_w2, 1e-4, 1e-4));
}

TEST(AutogradDocs, DataDependentControlFlowWithInPlaceRowUpdates) {
  manual_seed(1);
  Tensor w = randn({3}).requires_grad_();
  Tensor rows = zeros({4, 3});
  for (int64_t i = 0; i < 4; ++i) {
    if (i % 2 == 0)
      rows[i] = w * static_cast<double>(i + 1);  // operator= on a row: copy_ through a view
    else
      rows.index_put_({i}, w.pow(2));
  }
  Tensor loss = rows.sum();
  loss.backward();
  // d/dw: (1 + 3) from the even rows + 2 * 2w from the odd rows.
  Tensor expected = 4 + 4 * w.detach();
  EXPECT_TRUE(w.grad().allclose(expected));
  EXPECT_EQ(rows.grad_fn()->name(), "CopySlices");
}

TEST(AutogradSurface, LeafFlagsNamesEdgesAndVersions) {
  Tensor a = tensor({1.0, 2.0}).requires_grad_();
  Tensor b = a * 2;
  EXPECT_TRUE(a.is_leaf());
  EXPECT_FALSE(b.is_leaf());
  EXPECT_EQ(b.grad_fn()->name(), "MulBackward1");  // libtorch's name for Tensor * Scalar
  EXPECT_EQ(b.grad_fn()->next_edges().size(), 2u);
  EXPECT_EQ(b.grad_fn()->next_edges()[0].function->name(), "torch::autograd::AccumulateGrad");
  EXPECT_FALSE(b.grad_fn()->next_edges()[1].is_valid());
  auto [v, i] = a.max(0);
  EXPECT_EQ(v.output_nr(), 0);
  EXPECT_FALSE(i.requires_grad());
  EXPECT_EQ(b._version(), 0u);
  b.add_(1);
  EXPECT_EQ(b._version(), 1u);
  EXPECT_EQ(b.grad_fn()->name(), "AddBackward0");
  Tensor d = b.detach();
  EXPECT_FALSE(d.requires_grad());
  EXPECT_TRUE(d.is_alias_of(b));
  Tensor c = a * 3;
  c.detach_();
  EXPECT_TRUE(c.is_leaf());
  EXPECT_FALSE(c.requires_grad());
  EXPECT_ERROR("leaf variables", b.requires_grad_(false));
}

TEST(AutogradSurface, BackwardWithGradientRetainGraphAndCreateGraph) {
  Tensor x = tensor({1.0, 2.0, 3.0}).requires_grad_();
  Tensor y = x * x * x;
  y.backward(tensor({1.0, 1.0, 1.0}), /*retain_graph=*/true);
  EXPECT_VALUES(x.grad(), {3, 12, 27});
  y.backward(tensor({1.0, 0.0, 0.0}));  // accumulates
  EXPECT_VALUES(x.grad(), {6, 12, 27});
  // Double backward: d2/dx2 x^3 = 6x.
  x.grad().reset();
  Tensor z = (x * x * x).sum();
  auto g = autograd::grad({z}, {x}, {}, std::nullopt, /*create_graph=*/true);
  EXPECT_TRUE(g[0].requires_grad());
  auto gg = autograd::grad({g[0].sum()}, {x});
  EXPECT_VALUES(gg[0], {6, 12, 18});
  // Third order through create_graph again.
  Tensor x2 = tensor({2.0}).requires_grad_();
  Tensor y2 = x2.pow(4);
  auto d1 = autograd::grad({y2}, {x2}, {}, true, true);
  auto d2 = autograd::grad({d1[0]}, {x2}, {}, true, true);
  auto d3 = autograd::grad({d2[0]}, {x2});
  EXPECT_VALUES(d3[0], {48});  // 24 x
}

TEST(AutogradSurface, BackwardInputsRestrictsAccumulation) {
  Tensor a = tensor({1.0}).requires_grad_(), b = tensor({2.0}).requires_grad_();
  Tensor y = a * b;
  Tensor mid = y * 3;
  (mid * mid).sum().backward({}, std::nullopt, false, std::vector<Tensor>{a});
  EXPECT_TRUE(a.grad().defined());
  EXPECT_FALSE(b.grad().defined());
  EXPECT_VALUES(a.grad(), {2 * 9 * 2 * 2});  // d/da (3ab)^2 = 18 a b^2
}

TEST(AutogradSurface, ViewsKnowTheirBase) {
  Tensor x = randn({4, 3}).requires_grad_();
  Tensor v = x.select(0, 1).narrow(0, 0, 2);
  EXPECT_TRUE(v.is_view());
  EXPECT_TRUE(v._base().is_same(x));  // the root, not the intermediate view
  EXPECT_EQ(v.grad_fn()->name(), "SliceBackward0");
  {
    NoGradGuard g;
    EXPECT_FALSE(x.select(0, 1).is_view());  // no-grad views are plain aliases
  }
  (v * 2).sum().backward();
  EXPECT_VALUES(x.grad(), {0, 0, 0, 2, 2, 0, 0, 0, 0, 0, 0, 0});
}

TEST(AutogradSurface, RetainGradOnNonLeaf) {
  Tensor x = tensor({1.0, 2.0}).requires_grad_();
  Tensor y = x * 3;
  y.retain_grad();
  EXPECT_TRUE(y.retains_grad());
  (y * y).sum().backward();
  EXPECT_VALUES(y.grad(), {6, 12});
  EXPECT_VALUES(x.grad(), {18, 36});
}

TEST(AutogradErrors, BackwardTwiceModifiedSavedInPlaceOnLeafAndMore) {
  Tensor x = randn({3}).requires_grad_();
  Tensor y = (x.exp() * x).sum();
  y.backward();
  EXPECT_ERROR("retain_graph=true", y.backward());

  Tensor s = randn({16, 128}).requires_grad_();
  Tensor sm = s.softmax(1);
  sm.mul_(2);
  EXPECT_ERROR(
      "one of the variables needed for gradient computation has been modified by an inplace "
      "operation: "
      "[CPUFloatType [16, 128]], which is output 0 of SoftmaxBackward0, is at version 1; expected "
      "version "
      "0 instead",
      sm.sum().backward());

  EXPECT_ERROR("a leaf Variable that requires grad is being used in an in-place operation",
               x.add_(1));
  EXPECT_ERROR("a view of a leaf Variable that requires grad", x.narrow(0, 0, 2).mul_(2));
  EXPECT_ERROR("grad can be implicitly created only for scalar outputs", (x * 2).backward());
  EXPECT_ERROR(
      "Mismatch in shape: grad_output[0] has a shape of [2] and output[0] has a shape of [3]",
      autograd::grad({x * 2}, {x}, {ones({2})}));
  Tensor unused = randn({2}).requires_grad_();
  EXPECT_ERROR("appears to not have been used in the graph",
               autograd::grad({(x * 2).sum()}, {x, unused}));
  auto g =
      autograd::grad({(x * 2).sum()}, {x, unused}, {}, std::nullopt, false, /*allow_unused=*/true);
  EXPECT_FALSE(g[1].defined());
  EXPECT_ERROR("does not require grad", tensor({1.0}).backward());
  EXPECT_ERROR("only Tensors of floating point and complex dtype", tensor({1, 2}).requires_grad_());
  Tensor out = empty({3});
  EXPECT_ERROR("functions with out=... arguments don't support automatic differentiation",
               add_out(out, x, x));
  {
    NoGradGuard g;
    add_out(out, x, x);  // fine without grad
  }
  EXPECT_ERROR("final callbacks can only be installed during the backward pass",
               autograd::Engine::get_default_engine().queue_callback([] {}));
}

TEST(AutogradErrors, ModifiedInputOfAnotherOpNamesItsProducer) {
  Tensor a = randn({4}).requires_grad_();
  Tensor b = a * 2;    // MulBackward1 output
  Tensor c = b.sin();  // saves b
  b.add_(1);
  EXPECT_ERROR("which is output 0 of MulBackward1, is at version 1; expected version 0",
               c.sum().backward());
}

TEST(AutogradHooks, TensorHooksRunInOrderAndMayReplaceTheGradient) {
  Tensor x = tensor({1.0, 2.0}).requires_grad_();
  std::vector<std::string> order;
  Tensor y = x * 2;
  y.register_hook([&](const Tensor& g) {
    order.push_back("first");
    return g * 10;
  });
  unsigned h = y.register_hook([&](const Tensor&) { order.push_back("removed"); });
  y.register_hook([&](const Tensor& g) {
    order.push_back("second");
    EXPECT_VALUES(g, {10, 10});  // sees the replacement
  });
  y.remove_hook(h);
  x.register_hook([&](const Tensor& g) {
    order.push_back("leaf");
    return g + 1;
  });
  y.sum().backward();
  EXPECT_EQ(order, (std::vector<std::string>{"first", "second", "leaf"}));
  EXPECT_VALUES(x.grad(), {21, 21});
}

TEST(AutogradHooks, PostAccumulateGradHooksAndCallbacksAcrossTwoBackwards) {
  Tensor w = tensor({1.0, 2.0}).requires_grad_();
  std::vector<std::vector<double>> seen;
  int callbacks = 0;
  w.register_post_accumulate_grad_hook([&](const Tensor& leaf) {
    seen.push_back(testing::values(leaf.grad()));
    autograd::Engine::get_default_engine().queue_callback([&] { ++callbacks; });
  });
  (w * 3).sum().backward();
  EXPECT_EQ(callbacks, 1);
  (w * w).sum().backward();
  EXPECT_EQ(callbacks, 2);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0], (std::vector<double>{3, 3}));
  EXPECT_EQ(seen[1], (std::vector<double>{5, 7}));  // accumulated: 3 + 2w
}

TEST(AutogradHooks, CallbackRunsOnceAfterAllGradientsAreAccumulated) {
  Tensor a = tensor({1.0}).requires_grad_(), b = tensor({2.0}).requires_grad_();
  int runs = 0;
  double a_at_callback = 0, b_at_callback = 0;
  a.register_hook([&](const Tensor&) {
    autograd::Engine::get_default_engine().queue_callback([&] {
      ++runs;
      a_at_callback = a.grad().item<double>();
      b_at_callback = b.grad().item<double>();
    });
  });
  (a * b * 5).sum().backward();
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(a_at_callback, 10);
  EXPECT_EQ(b_at_callback, 5);
}

TEST(AutogradEngine, AccumulateGradStealsAPrivateBuffer) {
  Tensor w = randn({64}).requires_grad_();
  Tensor y = w * 2;
  y.backward(ones({64}) * 1.0);
  EXPECT_VALUES(w.grad().slice(0, 0, 2), {2, 2});
  // Gradients summed at a node with two paths.
  Tensor v = tensor({3.0}).requires_grad_();
  Tensor u = v * v + v.exp() + v;
  u.backward();
  EXPECT_NEAR(v.grad().item<double>(), 6 + std::exp(3.0) + 1, 1e-4);
}

TEST(AutogradEngine, AccumulateGradReusesTheIncomingBuffer) {
  Tensor w = randn({1024}).requires_grad_();
  const void* incoming = nullptr;
  w.register_hook([&](const Tensor& g) { incoming = g.data_ptr(); });
  (w * 2).sum().backward();
  EXPECT_EQ(w.grad().data_ptr(), incoming);  // stolen, not copied
  const void* first = w.grad().data_ptr();
  (w * 3).sum().backward();
  EXPECT_EQ(w.grad().data_ptr(), first);  // accumulated in place
  EXPECT_VALUES(w.grad().slice(0, 0, 1), {5});
}

struct WrongShape : autograd::Function<WrongShape> {
  static Tensor forward(autograd::AutogradContext*, Tensor x) { return x * 1; }
  static variable_list backward(autograd::AutogradContext*, variable_list) {
    return {ones({5, 2})};
  }
};

TEST(AutogradEngine, ValidatesGradientShapes) {
  Tensor x = randn({3}).requires_grad_();
  EXPECT_ERROR(
      "returned an invalid gradient at index 0 - got [5, 2] but expected shape compatible with [3]",
      WrongShape::apply(x).sum().backward());
}

TEST(AutogradEngine, ViewOfNonLeafInPlaceAndBaseModifiedThroughAnotherView) {
  Tensor x = tensor({1.0, 2.0, 3.0, 4.0}).requires_grad_();
  Tensor y = x * 1;
  Tensor v1 = y.narrow(0, 0, 2), v2 = y.narrow(0, 1, 2);
  v1.mul_(10);                   // y = [10, 20, 3, 4] * x-path
  Tensor out = (v2 * v2).sum();  // v2 sees y after the write: [20, 3]
  out.backward();
  // y1 = 10 x1, y2 = x2: d/dx (100 x1^2 ... ) -> out = (10 x1)^2 + x2^2 wait v2 = [y1, y2] =
  // [10*x1? no] v1 covers y[0..1], v2 covers y[1..2]: v2 = [10 * x1(index 1), x2(index 2)].
  EXPECT_VALUES(x.grad(), {0, 2 * 100 * 2, 2 * 3, 0});
}

TEST(AutogradEngine, GradModesRecordNothing) {
  Tensor x = randn({3}).requires_grad_();
  {
    NoGradGuard g;
    EXPECT_FALSE(is_grad_enabled());
    Tensor y = x * 2;
    EXPECT_FALSE(y.requires_grad());
    EXPECT_EQ(y.grad_fn(), nullptr);
    {
      AutoGradMode on(true);
      EXPECT_TRUE((x * 2).requires_grad());
    }
  }
  {
    InferenceMode im;
    EXPECT_TRUE(InferenceMode::is_enabled());
    EXPECT_FALSE((x * 2).requires_grad());
  }
  EXPECT_FALSE(InferenceMode::is_enabled());
  EXPECT_TRUE(is_grad_enabled());
  EXPECT_TRUE((x * 2).requires_grad());
  // Integer results of float inputs are constants.
  EXPECT_FALSE(x.argmax().requires_grad());
  EXPECT_FALSE((x > 0).requires_grad());
}

struct MulConstant : autograd::Function<MulConstant> {
  static Tensor forward(autograd::AutogradContext* ctx, Tensor x, double c) {
    ctx->saved_data["c"] = c;
    ctx->save_for_backward({x});
    return x * c;
  }
  static variable_list backward(autograd::AutogradContext* ctx, variable_list g) {
    auto saved = ctx->get_saved_variables();
    EXPECT_EQ(saved.size(), 1u);
    return {g[0] * ctx->saved_data["c"].toDouble(), Tensor()};
  }
};

struct ScaleInPlace : autograd::Function<ScaleInPlace> {
  static Tensor forward(autograd::AutogradContext* ctx, Tensor x) {
    x.mul_(2);
    ctx->mark_dirty({x});
    return x;
  }
  static variable_list backward(autograd::AutogradContext*, variable_list g) { return {g[0] * 2}; }
};

struct SortedWithIndices : autograd::Function<SortedWithIndices> {
  static variable_list forward(autograd::AutogradContext* ctx, Tensor x) {
    auto [v, i] = x.sort(0);
    ctx->mark_non_differentiable({i});
    ctx->save_for_backward({i});
    ctx->set_materialize_grads(false);
    return {v, i};
  }
  static variable_list backward(autograd::AutogradContext* ctx, variable_list g) {
    Tensor idx = ctx->get_saved_variables()[0];
    return {zeros_like(g[0]).scatter(0, idx, g[0])};
  }
};

struct WrongCount : autograd::Function<WrongCount> {
  static Tensor forward(autograd::AutogradContext*, Tensor x, Tensor y) { return x * y; }
  static variable_list backward(autograd::AutogradContext*, variable_list g) { return {g[0]}; }
};

TEST(AutogradFunction, CustomFunctionsDifferentiate) {
  Tensor x = tensor({1.0, 2.0}).requires_grad_();
  Tensor y = MulConstant::apply(x, 5.0);
  EXPECT_EQ(y.grad_fn()->name(), "MulConstantBackward");
  y.sum().backward();
  EXPECT_VALUES(x.grad(), {5, 5});
  EXPECT_TRUE(autograd::gradcheck(
      [](const variable_list& v) { return variable_list{MulConstant::apply(v[0], 3.0)}; },
      {randn({3}, TensorOptions().dtype(kDouble)).requires_grad_()}));

  Tensor a = tensor({1.0, 2.0}).requires_grad_();
  Tensor b = a * 1;
  Tensor r = ScaleInPlace::apply(b);
  EXPECT_TRUE(r.is_same(b));
  EXPECT_EQ(b.grad_fn()->name(), "ScaleInPlaceBackward");
  (b * b).sum().backward();
  EXPECT_VALUES(a.grad(), {2 * 2 * 2 * 1, 2 * 2 * 2 * 2});  // d/da (2a)^2 = 8a

  Tensor s = tensor({3.0, 1.0, 2.0}).requires_grad_();
  auto outs = SortedWithIndices::apply(s);
  EXPECT_FALSE(outs[1].requires_grad());
  (outs[0] * tensor({1.0, 10.0, 100.0})).sum().backward();
  EXPECT_VALUES(s.grad(), {100, 1, 10});

  Tensor p = randn({2}).requires_grad_(), q = randn({2}).requires_grad_();
  EXPECT_ERROR("returned an incorrect number of gradients (expected 2, got 1)",
               WrongCount::apply(p, q).sum().backward());
}

TEST(AutogradAnomaly, NamesTheForwardOpWhoseBackwardMadeNaN) {
  Tensor x = tensor({0.0, 1.0}).requires_grad_();
  {
    autograd::DetectAnomalyGuard guard;
    Tensor y = x.sqrt();  // d sqrt at 0 = inf; times 0 -> nan below
    Tensor z = (y * tensor({0.0, 1.0})).sum();
    EXPECT_ERROR("Function 'SqrtBackward0' returned nan values in its 0th output", z.backward());
  }
  // Outside anomaly mode the NaN propagates silently, like PyTorch.
  Tensor y = x.sqrt();
  (y * tensor({0.0, 1.0})).sum().backward();
  EXPECT_TRUE(std::isnan(x.grad()[0].item<double>()));
}

TEST(AutogradGradcheck, DetectsAWrongFormula) {
  struct BadSquare : autograd::Function<BadSquare> {
    static Tensor forward(autograd::AutogradContext* ctx, Tensor x) {
      ctx->save_for_backward({x});
      return x * x;
    }
    static variable_list backward(autograd::AutogradContext* ctx, variable_list g) {
      return {g[0] * ctx->get_saved_variables()[0] * 3};  // should be 2x
    }
  };
  Tensor x = randn({3}, TensorOptions().dtype(kDouble)).requires_grad_();
  auto fn = [](const variable_list& v) { return variable_list{BadSquare::apply(v[0])}; };
  EXPECT_ERROR("Jacobian mismatch for output 0 with respect to input 0",
               autograd::gradcheck(fn, {x}));
  autograd::GradcheckOptions quiet;
  quiet.raise_exception = false;
  EXPECT_FALSE(autograd::gradcheck(fn, {x}, quiet));
  EXPECT_ERROR("needs float64", autograd::gradcheck(fn, {randn({2}).requires_grad_()}));
}

}  // namespace
}  // namespace brasa
