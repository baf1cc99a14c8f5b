// One table of every differentiable op: each entry is gradchecked (and
// gradgradchecked where marked), and every backward formula the library
// registers must be reached by some entry, so an op added later without an
// entry fails CoverageOfRegisteredFormulas.
#include <brasa/autograd/record.h>
#include <brasa/nn/modules.h>

#include <set>

#include "../test_util.h"
#include "gradcheck_table.h"

namespace brasa {
namespace {

std::vector<OpCase> make_table() {
  std::vector<OpCase> t;
  auto entry = [&](std::string name, std::function<variable_list()> in, Fn fn, bool gg = true) {
    t.push_back({std::move(name), std::move(in), std::move(fn), gg});
  };
  auto r34 = [] { return R({3, 4}); };
  auto r4 = [] { return R({4}); };
  auto nc34 = [] { return NonContig(3, 4); };
  auto pos34 = [] { return Pos({3, 4}); };
  auto unit34 = [] { return Unit({3, 4}); };

  // ---- unary ----
  using U = Tensor (*)(const Tensor&);
  struct UnaryEntry {
    const char* name;
    U f;
    int domain;  // 0: any, 1: positive, 2: (-0.8, 0.8)
  };
  const UnaryEntry unary[] = {
      {"neg", neg, 0},
      {"abs", abs, 0},
      {"sign", sign, 0},
      {"exp", exp, 0},
      {"exp2", exp2, 0},
      {"expm1", expm1, 0},
      {"log", log, 1},
      {"log2", log2, 1},
      {"log10", log10, 1},
      {"log1p", log1p, 1},
      {"sqrt", sqrt, 1},
      {"rsqrt", rsqrt, 1},
      {"reciprocal", reciprocal, 1},
      {"sin", sin, 0},
      {"cos", cos, 0},
      {"tan", tan, 2},
      {"asin", asin, 2},
      {"acos", acos, 2},
      {"atan", atan, 0},
      {"sinh", sinh, 0},
      {"cosh", cosh, 0},
      {"tanh", tanh, 0},
      {"sigmoid", sigmoid, 0},
      {"relu", relu, 0},
      {"erf", erf, 0},
      {"erfinv", erfinv, 2},
      {"floor", floor, 0},
      {"ceil", ceil, 0},
      {"round", round, 0},
      {"trunc", trunc, 0},
      {"frac", frac, 0},
      {"square", square, 0},
  };
  for (const auto& u : unary) {
    std::function<Tensor()> make = u.domain == 1   ? std::function<Tensor()>(pos34)
                                   : u.domain == 2 ? std::function<Tensor()>(unit34)
                                                   : std::function<Tensor()>(r34);
    U f = u.f;
    entry(u.name, in1(make), [f](const variable_list& v) { return one(f(v[0])); });
    // Non-contiguous input through the same op.
    if (u.domain == 0)
      entry(std::string(u.name) + " (non-contiguous)", in1(nc34),
            [f](const variable_list& v) { return one(f(v[0])); });
  }
  entry("in-place exp_ on a non-leaf", in1(r34), [](const variable_list& v) {
    Tensor y = v[0] * 1.5;
    y.exp_();
    return one(y);
  });
  // The gradient reaches the slice's base transposed, so the in-place
  // write's backward re-lays it out; the double backward must see the
  // values, not the re-layout buffer's old contents (a freed block filled
  // with 1e6 is likely to be that buffer).
  entry("copy_ into a slice, gradient arriving in another layout", in1(r34),
        [](const variable_list& v) {
          { Tensor junk = full({5, 4}, 1e6, f64()); }
          Tensor out = zeros({5, 4}, f64());
          out.narrow(0, 1, 3).copy_(v[0]);
          return one(out.t() * 2.0);
        });
  entry("nan_to_num", in1(r34), [](const variable_list& v) { return one(nan_to_num(v[0])); });

  // ---- binary, with broadcasting and non-contiguous operands ----
  entry("add broadcast", in2(r34, r4),
        [](const variable_list& v) { return one(add(v[0], v[1], 2.5)); });
  entry("sub non-contiguous", in2(nc34, r34),
        [](const variable_list& v) { return one(sub(v[0], v[1], 0.5)); });
  entry("mul broadcast", in2(r34, r4), [](const variable_list& v) { return one(v[0] * v[1]); });
  entry("mul scalar", in1(r34), [](const variable_list& v) { return one(v[0] * 3.0); });
  entry("div", in2(r34, [] { return Pos({4}); }),
        [](const variable_list& v) { return one(v[0] / v[1]); });
  entry("div floor", in2(r34, [] { return Pos({4}); }),
        [](const variable_list& v) { return one(div(v[0], v[1], "floor") + v[0]); });
  entry("pow tensor", in2(pos34, r34), [](const variable_list& v) { return one(pow(v[0], v[1])); });
  entry("pow scalar", in1(pos34), [](const variable_list& v) { return one(pow(v[0], 2.5)); });
  entry("pow scalar base", in1(r34),
        [](const variable_list& v) { return one(pow(Scalar(1.7), v[0])); });
  entry("atan2", in2(r34, r34), [](const variable_list& v) { return one(atan2(v[0], v[1])); });

  // ---- complex: real inputs and outputs through complex intermediates ----
  auto r342 = [] { return R({3, 4, 2}); };
  entry("complex, complex mul and view_as_real", in2(r34, r4), [](const variable_list& v) {
    Tensor z = complex(v[0], v[1].expand({3, 4})), w = complex(v[1].expand({3, 4}), v[0] * 0.5);
    return one(view_as_real(z * w));
  });
  entry("view_as_complex, conj, add and parts", in1(r342), [](const variable_list& v) {
    Tensor z = view_as_complex(v[0]);
    Tensor w = conj(z) + z * 2.0 - z.select(0, 1);  // broadcast [4] over [3, 4]
    return variable_list{real(w), imag(w), view_as_real(-w)};
  });
  entry("polar, abs and angle", in2(pos34, unit34), [](const variable_list& v) {
    Tensor z = polar(v[0], v[1]);
    return variable_list{abs(z), angle(z), view_as_real_copy(z)};
  });
  entry("complex sum and mean", in1(r342), [](const variable_list& v) {
    Tensor z = view_as_complex(v[0]);
    return variable_list{view_as_real(z.sum(1)), view_as_real(z.mean()),
                         view_as_real(z.sum({0}, true))};
  });
  entry("complex div, exp, log, sqrt, reciprocal and sgn",
        in2(r342,
            [] {
              return R({4, 2}) + 1.5;
            }),
        [](const variable_list& v) {
          Tensor z = view_as_complex(v[0]), w = view_as_complex(v[1]);
          return variable_list{view_as_real(z / w),         view_as_real(exp(z)),
                               view_as_real(log(w)),        view_as_real(sqrt(w)),
                               view_as_real(reciprocal(w)), view_as_real(sgn(z)),
                               view_as_real(z / 2.0)};
        });
  entry("complex matmul, bmm and prod",
        in2(r342,
            [] {
              return R({4, 3, 2});
            }),
        [](const variable_list& v) {
          Tensor a = view_as_complex(v[0]), b = view_as_complex(v[1]);
          Tensor batch = a.unsqueeze(0).expand({2, 3, 4});
          return variable_list{view_as_real(matmul(a, b)),
                               view_as_real(bmm(batch, b.unsqueeze(0).expand({2, 4, 3}))),
                               view_as_real(a.prod(1)), view_as_real(a.prod())};
        });
  entry("angle of a real tensor", in1(r34),
        [](const variable_list& v) { return one(angle(v[0])); });
  entry("fmod",
        in2(
            [] {
              return Pos({3, 4}) * 3;
            },
            [] { return Pos({4}); }),
        [](const variable_list& v) { return one(fmod(v[0], v[1])); });
  entry("remainder",
        in2(
            [] {
              return Pos({3, 4}) * 3;
            },
            [] { return Pos({4}); }),
        [](const variable_list& v) { return one(remainder(v[0], v[1])); });
  entry("minimum", in2(r34, r34), [](const variable_list& v) { return one(minimum(v[0], v[1])); });
  entry("maximum", in2(r34, r4), [](const variable_list& v) { return one(maximum(v[0], v[1])); });
  entry(
      "lerp",
      [] {
        return variable_list{R({3, 4}), R({3, 4}), Unit({4})};
      },
      [](const variable_list& v) { return one(lerp(v[0], v[1], v[2])); });
  entry(
      "addcmul",
      [] {
        return variable_list{R({3, 4}), R({3, 4}), R({4})};
      },
      [](const variable_list& v) { return one(addcmul(v[0], v[1], v[2], 0.7)); });
  entry(
      "addcdiv",
      [] {
        return variable_list{R({3, 4}), R({3, 4}), Pos({4})};
      },
      [](const variable_list& v) { return one(addcdiv(v[0], v[1], v[2], 0.7)); });
  entry("where", in2(r34, r4),
        [](const variable_list& v) { return one(where(v[0] > 0, v[0], v[1])); });
  entry("masked_fill tensor value", in2(r34, [] { return R({}); }),
        [](const variable_list& v) { return one(masked_fill(v[0], v[0] > 0, v[1])); });
  entry("clamp", in1(r34), [](const variable_list& v) { return one(clamp(v[0], -0.5, 0.5)); });
  entry("clamp tensor bounds", in2(r34, r4), [](const variable_list& v) {
    return one(clamp(v[0], std::optional<Tensor>(v[1]), std::optional<Tensor>()));
  });

  // ---- copies ----
  entry("clone", in1(nc34), [](const variable_list& v) { return one(v[0].clone()); });
  entry("to (copy)", in1(r34),
        [](const variable_list& v) { return one(v[0].to(kDouble, false, true)); });
  entry("copy_ broadcast into a fresh tensor", in1(r4), [](const variable_list& v) {
    Tensor z = zeros({3, 4}, f64());
    z.copy_(v[0]);
    return one(z);
  });
  entry("fill_ with a tensor value", in2(r34, [] { return R({}); }), [](const variable_list& v) {
    Tensor y = v[0] * 2;
    y.fill_(v[1]);
    return one(y * v[0]);
  });
  entry("in-place through a view (CopySlices)", in2(r34, r4), [](const variable_list& v) {
    Tensor y = v[0] * 1.0;
    y.select(0, 1).mul_(v[1]);
    Tensor row = y.select(0, 1);  // regenerated view of the updated base
    return variable_list{y, row * 2};
  });

  // ---- views and shape ----
  entry("view", in1(r34), [](const variable_list& v) { return one(v[0].view({2, 6})); });
  entry("reshape non-contiguous", in1(nc34),
        [](const variable_list& v) { return one(v[0].reshape({12})); });
  entry(
      "permute",
      [] {
        return variable_list{R({2, 3, 4})};
      },
      [](const variable_list& v) {
        return one(v[0].permute({2, 0, 1}));
      });
  entry("t", in1(r34), [](const variable_list& v) { return one(v[0].t() * 2); });
  entry(
      "transpose",
      [] {
        return variable_list{R({2, 3, 4})};
      },
      [](const variable_list& v) { return one(v[0].transpose(0, 2) * 2); });
  entry(
      "squeeze/unsqueeze",
      [] {
        return variable_list{R({3, 1, 4})};
      },
      [](const variable_list& v) { return one(v[0].squeeze(1).unsqueeze(0)); });
  entry(
      "squeeze all",
      [] {
        return variable_list{R({3, 1, 4})};
      },
      [](const variable_list& v) { return one(v[0].squeeze()); });
  entry("expand", in1([] {
          return R({3, 1});
        }),
        [](const variable_list& v) {
          return one(v[0].expand({2, 3, 4}));
        });
  entry("slice with step", in1(r34),
        [](const variable_list& v) { return one(v[0].slice(1, 0, 4, 2)); });
  entry("narrow of non-contiguous", in1(nc34),
        [](const variable_list& v) { return one(v[0].narrow(0, 1, 2)); });
  entry("select", in1(r34), [](const variable_list& v) { return one(v[0].select(1, 2)); });
  entry("unfold (overlapping windows)", in1([] { return R({7}); }),
        [](const variable_list& v) { return one(v[0].unfold(0, 3, 2)); });
  entry("diagonal", in1(r34), [](const variable_list& v) { return one(v[0].diagonal(1)); });
  entry("as_strided (overlapping)", in1([] { return R({6}); }), [](const variable_list& v) {
    return one(v[0].as_strided({3, 3}, {1, 1}, 0));
  });
  entry("as_strided (every slice overlapping)", in1([] { return R({5}); }),
        [](const variable_list& v) {
          return one(v[0].as_strided({2, 2, 2}, {1, 1, 1}, 1));
        });
  entry("chunk/split/unbind", in1(r34), [](const variable_list& v) {
    auto c = v[0].chunk(2, 1);
    auto u = v[0].unbind(0);
    return variable_list{c[0] * c[1], u[2] * 3};
  });
  entry("cat",
        in2(r34,
            [] {
              return R({3, 2});
            }),
        [](const variable_list& v) {
          return one(cat({v[0], v[1]}, 1));
        });
  entry("stack", in2(r34, r34), [](const variable_list& v) { return one(stack({v[0], v[1]}, 1)); });
  entry("flip", in1(r34), [](const variable_list& v) { return one(v[0].flip({0, 1})); });
  entry("roll", in1(r34), [](const variable_list& v) { return one(v[0].roll({1, -1}, {0, 1})); });
  entry("repeat", in1([] {
          return R({2, 3});
        }),
        [](const variable_list& v) {
          return one(v[0].repeat({2, 1, 2}));
        });
  entry("diag of a vector", in1(r4), [](const variable_list& v) { return one(diag(v[0], 1)); });
  entry("diag of a matrix", in1(r34), [](const variable_list& v) { return one(diag(v[0], -1)); });
  entry("tril", in1(r34), [](const variable_list& v) { return one(tril(v[0], 1)); });
  entry("triu", in1(r34), [](const variable_list& v) { return one(triu(v[0], -1)); });

  // ---- reductions ----
  entry("sum all", in1(nc34), [](const variable_list& v) { return one(v[0].sum()); });
  entry(
      "sum dims keepdim",
      [] {
        return variable_list{R({2, 3, 4})};
      },
      [](const variable_list& v) {
        return one(v[0].sum({0, 2}, true));
      });
  entry("mean dim", in1(r34), [](const variable_list& v) { return one(v[0].mean({1})); });
  entry("prod all", in1(r34), [](const variable_list& v) { return one(v[0].prod()); });
  entry("prod dim", in1(r34), [](const variable_list& v) { return one(v[0].prod(1, true)); });
  entry("prod dim with zeros", in1([] {
          Tensor keep = tensor({1., 0, 1, 1, 1, 1, 1, 1, 0, 1, 0, 1}, f64()).reshape({3, 4});
          return (randn({3, 4}, f64()) * keep).requires_grad_();
        }),
        [](const variable_list& v) { return one(v[0].prod(1, true)); });
  entry("max/min all", in1(r34), [](const variable_list& v) {
    return variable_list{v[0].max(), v[0].min()};
  });
  entry("max dim", in1(r34), [](const variable_list& v) { return one(std::get<0>(v[0].max(1))); });
  entry("min dim keepdim", in1(r34),
        [](const variable_list& v) { return one(std::get<0>(v[0].min(0, true))); });
  entry(
      "amax/amin dims",
      [] {
        return variable_list{R({2, 3, 4})};
      },
      [](const variable_list& v) {
        return variable_list{v[0].amax({0, 2}), v[0].amin({1}, true)};
      });
  entry("var", in1(r34), [](const variable_list& v) {
    return variable_list{v[0].var({1}), v[0].var(false)};
  });
  entry("std", in1(r34), [](const variable_list& v) {
    return variable_list{v[0].std({0}, true, true), v[0].std()};
  });
  entry("norm p=2 / 1 / 3 / inf", in1(r34), [](const variable_list& v) {
    return variable_list{v[0].norm(), v[0].norm(1, {1}), v[0].norm(3, {0}, true),
                         v[0].norm(INFINITY, {1})};
  });
  entry("logsumexp", in1(r34), [](const variable_list& v) { return one(v[0].logsumexp({1})); });
  entry("softmax", in1(nc34), [](const variable_list& v) { return one(v[0].softmax(1)); });
  entry("log_softmax", in1(r34), [](const variable_list& v) { return one(v[0].log_softmax(0)); });
  entry("cumsum", in1(r34), [](const variable_list& v) { return one(v[0].cumsum(1)); });
  entry("cumprod", in1(r34), [](const variable_list& v) { return one(v[0].cumprod(0)); });
  // Zeros along dim 0: first in column 0, in the middle of column 1, twice in
  // column 2, none in column 3.
  auto with_zeros = [] {
    Tensor keep = tensor({0., 1, 1, 1, 1, 0, 0, 1, 1, 1, 0, 1}, f64()).reshape({3, 4});
    return (randn({3, 4}, f64()) * keep).requires_grad_();
  };
  entry("cumprod with zeros", in1(with_zeros),
        [](const variable_list& v) { return one(v[0].cumprod(0)); });
  entry("cumprod with zeros, last dim",
        in1([with_zeros] { return with_zeros().t().contiguous().requires_grad_(); }),
        [](const variable_list& v) { return one(v[0].cumprod(1)); });

  // ---- linear algebra ----
  entry("mm",
        in2(r34,
            [] {
              return R({4, 2});
            }),
        [](const variable_list& v) { return one(mm(v[0], v[1])); });
  entry("mm non-contiguous", in2(nc34, [] { return NonContig(4, 2); }),
        [](const variable_list& v) { return one(mm(v[0], v[1])); });
  entry("bmm",
        in2(
            [] {
              return R({2, 3, 4});
            },
            [] {
              return R({2, 4, 2});
            }),
        [](const variable_list& v) { return one(bmm(v[0], v[1])); });
  entry(
      "addmm",
      [] {
        return variable_list{R({2}), R({3, 4}), R({4, 2})};
      },
      [](const variable_list& v) { return one(addmm(v[0], v[1], v[2], 0.5, 2.0)); });
  entry(
      "addmv and addr",
      [] {
        return variable_list{R({3}), R({3, 4}), R({4})};
      },
      [](const variable_list& v) {
        return variable_list{addmv(v[0], v[1], v[2], 0.5, 2.0), addr(v[1], v[0], v[2], 0.5, 2.0)};
      });
  entry(
      "addbmm and baddbmm",
      [] {
        return variable_list{R({3, 2}), R({2, 3, 4}), R({2, 4, 2})};
      },
      [](const variable_list& v) {
        return variable_list{addbmm(v[0], v[1], v[2], 0.5, 2.0),
                             baddbmm(v[0], v[1], v[2], 0.5, 2.0)};
      });
  entry(
      "addmm_ addmv_ addr_ baddbmm_ (in place on non-leaves)",
      [] {
        return variable_list{R({3, 4}), R({4, 2}), R({3}), R({4})};
      },
      [](const variable_list& v) {
        Tensor a = v[0].mm(v[1]) * 1.0, b = v[2] * 1.0, c = v[0] * 1.0, d = v[0].unsqueeze(0) * 1.0;
        a.addmm_(v[0], v[1], 0.5, 2.0);
        b.addmv_(v[0], v[3], 0.5, 2.0);
        c.addr_(v[2], v[3], 0.5, 2.0);
        d.baddbmm_(v[0].unsqueeze(0), v[1].mm(v[1].t()).unsqueeze(0), 0.5, 2.0);
        return variable_list{a, b, c, d};
      });
  entry("matmul broadcast batch",
        in2(
            [] {
              return R({2, 1, 3, 4});
            },
            [] {
              return R({3, 4, 2});
            }),
        [](const variable_list& v) { return one(matmul(v[0], v[1])); });
  entry("matmul vector cases", in2(r4, r34), [](const variable_list& v) {
    return variable_list{matmul(v[1], v[0]), matmul(v[0], v[0]), outer(v[0], v[0])};
  });
  entry("einsum",
        in2(r34,
            [] {
              return R({4, 2});
            }),
        [](const variable_list& v) {
          return one(einsum("ij,jk->ik", {v[0], v[1]}));
        });

  // ---- indexing ----
  entry("index with tensors and a mask", in1(r34), [](const variable_list& v) {
    return variable_list{v[0].index({Idx({0, 2, 0})}), v[0].index({v[0].detach() > 0})};
  });
  entry("index_put (repeated indices accumulate)", in2(r34, r4), [](const variable_list& v) {
    return one(index_put(v[0], {Idx({1, 1})}, v[1].unsqueeze(0).expand({2, 4}) * 1.0, true));
  });
  entry("index_put_ rows (in place on a non-leaf)", in2(r34, r4), [](const variable_list& v) {
    Tensor y = v[0] * 1.0;
    y.index_put_({Idx({2})}, v[1].unsqueeze(0));
    return one(y);
  });
  entry("gather", in1(r34), [](const variable_list& v) {
    return one(v[0].gather(
        1, on_case_device(tensor(std::vector<int64_t>{0, 3, 3, 1, 2, 2})).view({3, 2})));
  });
  entry("scatter (tensor and value)",
        in2(r34,
            [] {
              return R({3, 2});
            }),
        [](const variable_list& v) {
          Tensor idx = on_case_device(tensor(std::vector<int64_t>{0, 3, 1, 2, 2, 0})).view({3, 2});
          return variable_list{v[0].scatter(1, idx, v[1]), v[0].scatter(1, idx, 5.0)};
        });
  entry(
      "scatter_add",
      in2(r34,
          [] {
            return R({3, 2});
          }),
      [](const variable_list& v) {
        return one(v[0].scatter_add(
            1, on_case_device(tensor(std::vector<int64_t>{0, 0, 1, 2, 3, 3})).view({3, 2}), v[1]));
      });
  entry("index_select", in1(r34), [](const variable_list& v) {
    return one(v[0].index_select(1, Idx({3, 0, 3})));
  });
  entry("index_add",
        in2(r34,
            [] {
              return R({3, 2});
            }),
        [](const variable_list& v) {
          return one(v[0].index_add(1, Idx({1, 1}), v[1], 2.0));
        });
  entry("masked_select", in1(r34),
        [](const variable_list& v) { return one(v[0].masked_select(v[0].detach() > 0)); });
  entry("take", in1(r34), [](const variable_list& v) { return one(take(v[0], Idx({0, 11, 5}))); });
  entry("sort/topk/kthvalue", in1(r34), [](const variable_list& v) {
    return variable_list{std::get<0>(v[0].sort(1)), std::get<0>(v[0].topk(2, 0)),
                         std::get<0>(kthvalue(v[0], 2, 1))};
  });

  add_nn_entries(t);
  add_libtorch_port_entries(t);
  return t;
}

void collect_names(const std::shared_ptr<autograd::Node>& n, std::set<std::string>& names,
                   std::set<autograd::Node*>& seen) {
  if (!n || !seen.insert(n.get()).second) return;
  names.insert(n->name());
  for (const auto& e : n->next_edges()) collect_names(e.function, names, seen);
}

class GradcheckTable : public ::testing::TestWithParam<size_t> {};

TEST_P(GradcheckTable, GradAndGradGrad) {
  manual_seed(1234 + GetParam());
  auto table = make_table();
  const OpCase& c = table[GetParam()];
  SCOPED_TRACE(c.name);
  RecordProperty("case", c.name);
  variable_list in = c.inputs();
  EXPECT_TRUE(autograd::gradcheck(c.fn, in));
  if (c.gradgrad) {
    EXPECT_TRUE(autograd::gradgradcheck(c.fn, in));
  }
}

// On a CUDA device, each case with its inputs moved there gives the CPU's
// outputs and first-order gradients (which GradAndGradGrad checks against
// finite differences). A case whose op has no CUDA kernel yet skips, naming
// the op, so the device log lists what is missing.
TEST_P(GradcheckTable, SameOutputsAndGradientsOnCuda) {
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  auto table = make_table();
  const OpCase& c = table[GetParam()];
  SCOPED_TRACE(c.name);
  manual_seed(4321 + GetParam());
  variable_list in = c.inputs(), on_device;
  for (const Tensor& t : in)
    on_device.push_back(t.defined() ? t.detach().cuda().requires_grad_(t.requires_grad()) : t);
  if (c.draws_random) GTEST_SKIP() << c.name << ": draws on CUDA differ from the CPU's";
  variable_list outs = c.fn(in), device_outs;
  variable_list diff_in, diff_device_in, used_outs, used_device_outs, grad_outs, device_grad_outs;
  CaseOnDevice constants_on_cuda{Device(kCUDA)};
  try {
    device_outs = c.fn(on_device);
  } catch (const Error& e) {
    GTEST_SKIP() << c.name << ": not on CUDA yet: " << e.message();
  }
  ASSERT_EQ(device_outs.size(), outs.size());
  for (size_t i = 0; i < outs.size(); ++i) {
    if (!outs[i].defined()) continue;
    if (!device_outs[i].is_cuda()) GTEST_SKIP() << "the case makes its output on the CPU itself";
    EXPECT_TRUE(allclose(device_outs[i].cpu(), outs[i], 1e-7, 1e-9)) << "output " << i;
    if (outs[i].requires_grad()) {
      used_outs.push_back(outs[i]);
      used_device_outs.push_back(device_outs[i]);
      grad_outs.push_back(randn_like(outs[i]));
      device_grad_outs.push_back(grad_outs.back().cuda());
    }
  }
  for (size_t i = 0; i < in.size(); ++i)
    if (in[i].defined() && in[i].requires_grad()) {
      diff_in.push_back(in[i]);
      diff_device_in.push_back(on_device[i]);
    }
  if (used_outs.empty() || diff_in.empty()) return;
  variable_list g, dg;
  {
    CaseOnDevice constants_on_cpu{Device(kCPU)};
    g = autograd::grad(used_outs, diff_in, grad_outs, true, false, true);
  }
  try {
    dg = autograd::grad(used_device_outs, diff_device_in, device_grad_outs, true, false, true);
  } catch (const Error& e) {
    GTEST_SKIP() << c.name << ": backward not on CUDA yet: " << e.message();
  }
  for (size_t i = 0; i < g.size(); ++i) {
    ASSERT_EQ(g[i].defined(), dg[i].defined()) << "gradient " << i;
    if (g[i].defined()) {
      EXPECT_TRUE(allclose(dg[i].cpu(), g[i], 1e-7, 1e-9)) << "gradient " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, GradcheckTable, ::testing::Range<size_t>(0, make_table().size()));

// Every registered backward formula is reached by the table, in the forward
// graph or in the graph of the first-order gradients (double backward). With
// a CUDA device the cases run there too, which reaches (and registers) the
// formulas of device-only kernels such as cuDNN's batch norm.
TEST(GradcheckTableCoverage, CoverageOfRegisteredFormulas) {
  manual_seed(7);
  std::set<std::string> names;
  std::set<autograd::Node*> seen;
  std::vector<variable_list> keep_alive;
  for (const auto& c : make_table()) {
    variable_list in = c.inputs();
    variable_list outs = c.fn(in);
    for (const auto& o : outs)
      if (o.defined() && o.requires_grad()) {
        collect_names(o.grad_fn(), names, seen);
        Tensor go =
            ones_like(o).requires_grad_(c.gradgrad);  // as gradgradcheck: grad_outputs require grad
        variable_list g = autograd::grad({o}, in, {go}, true, /*create_graph=*/c.gradgrad, true);
        for (const auto& gi : g)
          if (gi.defined() && gi.requires_grad()) collect_names(gi.grad_fn(), names, seen);
        keep_alive.push_back(g);
      }
    keep_alive.push_back(outs);
  }
  if (cuda::is_available()) {  // after the CPU pass, which makes the cases' static state
    CaseOnDevice constants_on_cuda{Device(kCUDA)};
    for (const auto& c : make_table()) {
      variable_list in;
      for (const Tensor& t : c.inputs())
        in.push_back(t.defined() ? t.detach().cuda().requires_grad_(t.requires_grad()) : t);
      try {
        for (const auto& o : c.fn(in))
          if (o.defined() && o.requires_grad()) {
            collect_names(o.grad_fn(), names, seen);
            keep_alive.push_back({o});
          }
      } catch (const Error&) {
        // Not on CUDA yet: SameOutputsAndGradientsOnCuda names it.
      }
    }
  }
  std::vector<std::string> missing;
  for (const char* n : autograd::registered_backward_names())
    if (!names.count(n)) missing.push_back(n);
  EXPECT_TRUE(missing.empty()) << "backward formulas without a gradcheck table entry: "
                               << ::testing::PrintToString(missing);
  EXPECT_GT(autograd::registered_backward_names().size(), 80u);
}

}  // namespace
}  // namespace brasa
