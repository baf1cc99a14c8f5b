// Gradcheck table entries of the ops and modules added for libtorch
// programs (ops/arrange.h, ops/counting.h, nn/activations.h,
// nn/loss_modules.h, nn/image_modules.h).
#include <limits>

#include "gradcheck_table.h"

namespace brasa {

void add_libtorch_port_entries(std::vector<OpCase>& t) {
  auto entry = [&](std::string name, std::function<variable_list()> in, Fn fn, bool gg = true) {
    t.push_back({std::move(name), std::move(in), std::move(fn), gg});
  };
  auto r34 = [] { return R({3, 4}); };
  auto r4 = [] { return R({4}); };

  entry("trace / kron / diff",
        in2(r34,
            [] {
              return R({2, 2});
            }),
        [](const variable_list& v) {
          return variable_list{
              trace(v[0]), kron(v[0], v[1]),
              diff(v[0], 2, 1, v[1].reshape({-1}).narrow(0, 0, 3).reshape({3, 1}))};
        });
  entry("rot90 / diag_embed", in1(r34), [](const variable_list& v) {
    return variable_list{rot90(v[0], 1), rot90(v[0], -1, {1, 0}), diag_embed(v[0], 1, 0, 2),
                         diag_embed(v[0], -2)};
  });
  entry("meshgrid / repeat_interleave", in2(r4, [] { return R({3}); }), [](const variable_list& v) {
    auto g = meshgrid({v[0], v[1]}, "xy");
    return variable_list{g[0] * g[1], repeat_interleave(v[0], Idx({2, 0, 1, 3}), 0)};
  });
  entry("cdist by matrix products (more than 25 rows)",
        in2(
            [] {
              return R({30, 3});
            },
            [] {
              return R({4, 3});
            }),
        [](const variable_list& v) {
          return variable_list{cdist(v[0], v[1]), cdist(v[0].unsqueeze(0), v[1].unsqueeze(0))};
        });
  entry("cross / cdist",
        in2(
            [] {
              return R({4, 3});
            },
            [] {
              return R({2, 3});
            }),
        [](const variable_list& v) {
          return variable_list{cross(v[0], v[0].flip({0}), 1), cdist(v[0], v[1]),
                               cdist(v[0], v[1], 1.5)};
        });
  entry("index_copy / index_fill / masked_scatter",
        in2(r34,
            [] {
              return R({3, 2});
            }),
        [](const variable_list& v) {
          return variable_list{
              index_copy(v[0], 1, Idx({3, 0}), v[1]), index_fill(v[0], 0, Idx({1}), v[1].sum()),
              masked_scatter(v[0], v[0].detach() > 0, v[1].reshape({-1}).repeat({2}))};
        });
  entry("softmin / softsign / shrinks / logsigmoid / celu / glu", in1(r34),
        [](const variable_list& v) {
          return variable_list{F::softmin(v[0], 1),
                               F::softsign(v[0]),
                               F::softshrink(v[0], 0.3),
                               F::hardshrink(v[0], 0.3),
                               F::tanhshrink(v[0]),
                               F::logsigmoid(v[0]),
                               F::celu(v[0], F::CELUFuncOptions().alpha(0.7)),
                               F::glu(v[0], 1)};
        });
  entry("ranking / hinge / cosine / triplet / poisson / multilabel losses",
        in2(r34,
            [] {
              return R({3, 4});
            }),
        [](const variable_list& v) {
          Tensor sign = tensor(std::vector<double>{1, -1, 1}, f64());
          Tensor y = (v[1].detach() > 0).to(kDouble);
          return variable_list{F::margin_ranking_loss(v[0].select(1, 0), v[1].select(1, 0), sign),
                               F::hinge_embedding_loss(v[0], sign.unsqueeze(1).expand({3, 4})),
                               F::cosine_embedding_loss(v[0], v[1], sign),
                               F::triplet_margin_loss(v[0], v[1], v[1].flip({0})),
                               F::poisson_nll_loss(v[0], y * 2),
                               F::multilabel_soft_margin_loss(v[0], y),
                               F::pairwise_distance(v[0], v[1])};
        });
  entry("pixel_shuffle / unshuffle / padding modules", in1([] {
          return R({1, 4, 2, 2});
        }),
        [](const variable_list& v) {
          return variable_list{F::pixel_shuffle(v[0], 2), F::pixel_unshuffle(v[0], 2),
                               nn::ReflectionPad2d(1)(v[0]), nn::ZeroPad2d(1)(v[0])};
        });
  entry("median / mode / threshold", in1(r34), [](const variable_list& v) {
    return variable_list{median(v[0]), std::get<0>(median(v[0], 1, true)),
                         std::get<0>(mode(v[0], 0)), threshold(v[0], 0.1, 2.0)};
  });
  entry("3-d, adaptive and divisor-override pooling", in1([] {
          return R({1, 2, 4, 5, 5});
        }),
        [](const variable_list& v) {
          Tensor x1 = v[0].flatten(2);  // [1, 2, 100]
          return variable_list{
              F::max_pool3d(v[0], F::MaxPool3dFuncOptions(3).stride(2).padding(1)),
              F::max_pool3d(v[0], F::MaxPool3dFuncOptions(2).dilation({1, 2, 2}).ceil_mode(true)),
              F::avg_pool3d(v[0], F::AvgPool3dFuncOptions(3).stride(2).padding(1).ceil_mode(true)),
              F::avg_pool3d(v[0], F::AvgPool3dFuncOptions(3).padding(1).count_include_pad(false)),
              F::avg_pool2d(v[0][0], F::AvgPool2dFuncOptions(2).divisor_override(3)),
              F::adaptive_avg_pool3d(v[0], {2, 3, 2}),
              F::adaptive_max_pool3d(v[0], {3, 2, 4}),
              F::adaptive_avg_pool1d(x1, 7),
              F::adaptive_max_pool1d(x1, 6)};
        });
  entry("acosh / asinh / atanh / hypot / logaddexp / xlogy / logit / sinc / nansum", in2(r34, r34),
        [](const variable_list& v) {
          Tensor p = v[0].abs() + 0.1, q = v[1].abs() + 0.1;
          return variable_list{acosh(p + 1.2),    asinh(v[0] * 3),       atanh(v[0].tanh() * 0.9),
                               hypot(v[0], v[1]), logaddexp(v[0], v[1]), logaddexp2(v[0], v[1]),
                               xlogy(v[0], q),    logit(p.sigmoid()),    sinc(v[0] + 0.05),
                               nansum(v[0]),      nanmean(v[1]),         deg2rad(v[0])};
        });
  entry("copying views and *_scatter", in2(r34, r4), [](const variable_list& v) {
    return variable_list{
        narrow_copy(v[0], 1, 1, 2),
        permute_copy(v[0], {1, 0}),
        unfold_copy(v[1], 0, 2, 1),
        select_scatter(v[0], v[1], 0, 1),
        slice_scatter(v[0], v[1].narrow(0, 0, 2).reshape({1, 2}).expand({3, 2}), 1, 0, 4, 2),
        diagonal_scatter(v[0], v[1].narrow(0, 0, 3), 1),
        as_strided_scatter(v[0], v[1].reshape({2, 2}), {2, 2}, {1, 4}, 1),
        fill(v[0], v[1].sum())};
  });
  entry("tensor_split / dstack / block_diag / cartesian_prod / combinations", in2(r34, r4),
        [](const variable_list& v) {
          auto parts = tensor_split(v[0], 3, 1);
          return variable_list{parts[0] * 2,
                               parts[2],
                               dstack({v[0], v[0] * v[0]}),
                               block_diag({v[0], v[1], v[1].sum()}),
                               cartesian_prod({v[1], v[1].narrow(0, 0, 2)}),
                               combinations(v[1], 2),
                               combinations(v[1].narrow(0, 0, 3), 2, true),
                               diagflat(v[1], 1),
                               take_along_dim(v[0], Idx({2, 0, 1, 1}).reshape({1, 4}), 0)};
        });
  entry("vander / inner / chain_matmul / dist / renorm / frobenius_norm", in2(r34, r4),
        [](const variable_list& v) {
          return variable_list{vander(v[1], 3),
                               inner(v[0], v[1].reshape({1, 4})),
                               chain_matmul({v[0], v[1].reshape({4, 1}), v[1].reshape({1, 4})}),
                               dist(v[0], v[0].flip({0}), 3),
                               renorm(v[0], 2, 0, 1.0),
                               frobenius_norm(v[0]),
                               frobenius_norm(v[0], {1}, true)};
        });
  entry("erfc / lgamma / digamma / polygamma / mvlgamma / i0", in1([] {
          return Pos({3, 4});
        }),
        [](const variable_list& v) {
          return variable_list{erfc(v[0]),         lgamma(v[0] + 0.2),    digamma(v[0] + 0.3),
                               polygamma(2, v[0]), mvlgamma(v[0] + 1, 3), i0(v[0] * 3 - 2)};
        });
  entry("copysign / fmax / fmin / float_power / ldexp", in2(r34, r34), [](const variable_list& v) {
    return variable_list{copysign(v[0], v[1].detach()), fmax(v[0], v[1]), fmin(v[0], v[1]),
                         float_power(v[0].abs() + 0.5, v[1]), ldexp(v[0], Idx({1, -2, 0, 3}))};
  });
  entry("alpha_dropout / feature_alpha_dropout / dropout3d (fixed seed)", in1([] {
          return R({2, 3, 2, 2, 2});
        }),
        [](const variable_list& v) {
          manual_seed(6);
          return variable_list{alpha_dropout(v[0], 0.4, true),
                               feature_alpha_dropout(v[0], 0.5, true),
                               F::dropout3d(v[0], 0.5, true)};
        });
  t.back().draws_random = true;
  entry("instance_norm / batch_norm 5-d",
        in2(
            [] {
              return R({2, 3, 2, 2, 2});
            },
            [] { return Pos({3}); }),
        [](const variable_list& v) {
          Tensor mean = on_case_device(zeros({3}, TensorOptions().dtype(kDouble)));
          Tensor var = on_case_device(ones({3}, TensorOptions().dtype(kDouble)));
          return variable_list{
              F::instance_norm(v[0], F::InstanceNormFuncOptions().weight(v[1]).bias(v[1] * 0.5)),
              F::instance_norm(
                  v[0],
                  F::InstanceNormFuncOptions().running_mean(mean).running_var(var).use_input_stats(
                      false)),
              batch_norm(v[0], v[1], std::nullopt, mean.clone(), var.clone(), true, 0.1, 1e-5)};
        });
  entry("rnn / lstm / gru cells",
        in2(
            [] {
              return R({2, 3});
            },
            [] {
              return R({12, 3});
            }),
        [](const variable_list& v) {
          // v[1]'s rows serve as both weights (input size 3, hidden size 3).
          Tensor w4 = v[1], w3 = v[1].narrow(0, 0, 9), w1 = v[1].narrow(0, 0, 3);
          Tensor h = v[0].flip({0}), b4 = v[1].select(1, 0);
          auto [h1, c1] = lstm_cell(v[0], {h, h * 0.5}, w4, w4 * 0.5, b4, b4 * 0.3);
          return variable_list{rnn_tanh_cell(v[0], h, w1, w1.t(), w1.select(1, 1)),
                               rnn_relu_cell(v[0], h, w1, w1 * 0.7), h1, c1,
                               gru_cell(v[0], h, w3, w3 * 0.5, w3.select(1, 2))};
        });
  entry(
      "unfold / fold / lp_pool / max_unpool / local_response_norm / softmax2d", in1([] {
        return R({1, 2, 4, 5});
      }),
      [](const variable_list& v) {
        Tensor cols = F::unfold(v[0], F::UnfoldFuncOptions({2, 3}).padding({1, 0}).stride({2, 1}));
        auto [pooled, idx] = F::max_pool2d_with_indices(v[0].detach(), F::MaxPool2dFuncOptions(2));
        (void)pooled;
        Tensor squashed = v[0].narrow(2, 0, 2).narrow(3, 0, 2);
        return variable_list{
            cols,
            F::fold(cols, F::FoldFuncOptions({4, 5}, {2, 3}).padding({1, 0}).stride({2, 1})),
            F::lp_pool2d(v[0].abs() + 0.1, F::LPPool2dFuncOptions(2, 2)),
            F::lp_pool1d(v[0][0].abs() + 0.1, F::LPPool1dFuncOptions(1.5, 3).stride(2)),
            F::max_unpool2d(squashed, idx,
                            F::MaxUnpool2dFuncOptions(2).output_size(std::vector<int64_t>{4, 5})),
            F::local_response_norm(v[0], F::LocalResponseNormFuncOptions(2).alpha(0.3).k(1.5)),
            nn::Softmax2d()(v[0])};
      });
  entry("rrelu (fixed seed) / prelu / bilinear / channel_shuffle / pdist", in2(r34, r4),
        [](const variable_list& v) {
          manual_seed(8);
          Tensor w = v[1].reshape({2, 1, 2});
          return variable_list{
              F::rrelu(v[0], F::RReLUFuncOptions().training(true)),
              F::rrelu(v[0]),
              F::prelu(v[0].reshape({2, 2, 3}), v[1].narrow(0, 0, 2)),
              F::prelu(v[0], v[1].narrow(0, 3, 1)),  // one slope
              F::bilinear(v[0], v[0].flip({1}), v[0].reshape({3, 4, 1}).expand({3, 4, 4}),
                          v[1].narrow(0, 0, 3)),
              channel_shuffle(v[0].reshape({1, 4, 3}), 2),
              F::pdist(v[0]),
              w.sum()};
        });
  t.back().draws_random = true;
  entry("multi_margin / multilabel_margin / triplet_margin_with_distance", in2(r34, r34),
        [](const variable_list& v) {
          Tensor y = Idx({1, 0, 3});
          Tensor labels = Idx({3, 0, -1, 1, 1, 2, 0, 3, 2, -1, 0, 0}).reshape({3, 4});
          return variable_list{
              F::multi_margin_loss(
                  v[0], y, F::MultiMarginLossFuncOptions().margin(0.7).weight(v[1][0].abs() + 0.1)),
              F::multi_margin_loss(v[0], y, F::MultiMarginLossFuncOptions().p(2)),
              F::multilabel_margin_loss(v[0], labels),
              F::triplet_margin_with_distance_loss(
                  v[0], v[1], v[1].flip({0}),
                  F::TripletMarginWithDistanceLossFuncOptions().swap(true))};
        });
  auto sq = [] { return (R({3, 3}) + eye(3, f64()) * 3).detach().requires_grad_(); };
  entry("det / slogdet / logdet / inverse / matrix_power / matrix_exp", in1(sq),
        [](const variable_list& v) {
          Tensor a = v[0];
          return variable_list{det(a),
                               std::get<1>(slogdet(a)),
                               logdet(matmul(a, a.t())),
                               inverse(a),
                               matrix_power(a, 3),
                               matrix_power(a, -2),
                               matrix_exp(a * 0.3)};
        });
  entry(
      "det of a singular matrix", in1([] {
        return R({3, 2});
      }),
      [](const variable_list& v) {
        Tensor a = matmul(v[0], v[0].t());  // rank 2
        return one(det(a));
      },
      false);
  entry("cholesky / cholesky_solve / cholesky_inverse / triangular_solve",
        in2(sq,
            [] {
              return R({3, 2});
            }),
        [](const variable_list& v) {
          Tensor spd = matmul(v[0], v[0].t()) + eye(3, f64());
          Tensor L = cholesky(spd), U = cholesky(spd, true);
          Tensor up = triu(v[0]), low = tril(v[0]);
          return variable_list{L,
                               U,
                               cholesky_solve(v[1], L),
                               cholesky_inverse(U, true),
                               std::get<0>(triangular_solve(v[1], up)),
                               std::get<0>(triangular_solve(v[1], low, false, true)),
                               std::get<0>(triangular_solve(v[1], up, true, false, true)),
                               std::get<1>(triangular_solve(v[1], up))};
        });
  entry("lu_unpack / lu_solve",
        in2(sq,
            [] {
              return R({3, 2});
            }),
        [](const variable_list& v) {
          // Pivots and LU data of a fixed matrix; the data then moves with the input.
          Tensor fixed =
              on_case_device(tensor(std::vector<double>{1, 4, 2, 3, 1, 5, 2, 6, 1}, f64()))
                  .reshape({3, 3});
          auto [LU, piv] = linalg_lu_factor(fixed);
          Tensor lu = LU + v[0] * 0.1;
          auto [P, L, U] = lu_unpack(lu, piv);
          return variable_list{L, U, lu_solve(v[1], lu, piv)};
        });
  auto tall = [] { return R({4, 3}); };
  // Decompositions up to the signs of their vectors: sign-free functions of them.
  entry("qr", in1(tall), [](const variable_list& v) {
    auto [Q, Rq] = qr(v[0]);
    Tensor s = Rq.diagonal().sign().detach();
    return variable_list{Q * s, Rq * s.unsqueeze(1)};
  });
  // The reflectors and scales as free inputs (the diagonal and upper triangle
  // of A are not read, so their gradient is zero, as in PyTorch).
  entry("householder_product / orgqr / ormqr", in2(tall, [] { return R({3}); }),
        [](const variable_list& v) {
          Tensor other = on_case_device(arange(8, f64()).reshape({4, 2}) * 0.1 - 0.3);
          Tensor wide = on_case_device(arange(12, f64()).reshape({3, 4}) * 0.05 + 0.1);
          return variable_list{linalg::householder_product(v[0], v[1]),
                               orgqr(v[0].narrow(-1, 0, 2), v[1].narrow(-1, 0, 2)),
                               ormqr(v[0], v[1], other),
                               ormqr(v[0], v[1], other, true, true),
                               ormqr(v[0], v[1], wide, false),
                               ormqr(v[0], v[1], wide, false, true)};
        });
  // Real eigenvalues, and a complex pair; the eigenvectors through a function
  // free of their phase, each one's outer product v v^H (unit norm keeps it
  // well conditioned, unlike ratios of entries).
  entry("linalg::eig / eigvals",
        in2(sq,
            [] {
              return R({2, 2});
            }),
        [](const variable_list& v) {
          Tensor distinct = v[0] * 0.2 + on_case_device(diag(arange(1, 4, f64())));
          Tensor rotation =
              v[1] * 0.2 +
              on_case_device(tensor(std::vector<double>{0, -2, 2, 0.5}, f64()).view({2, 2}));
          auto outer = [](const Tensor& V) {  // [i, j, k] = V[i, k] conj(V[j, k])
            return view_as_real(V.unsqueeze(-2) * conj(V).unsqueeze(-3));
          };
          auto [L, V] = linalg::eig(distinct);
          auto [Lc, Vc] = linalg::eig(rotation);
          return variable_list{view_as_real(L), outer(V), view_as_real(linalg::eigvals(rotation)),
                               outer(Vc)};
        });
  entry("svd", in1(tall), [](const variable_list& v) {
    auto [U, S, V] = svd(v[0]);
    return variable_list{S, matmul(U * S.unsqueeze(0), V.t()), U * U, V * V};
  });
  entry("symeig", in1(tall), [](const variable_list& v) {
    Tensor sym = matmul(v[0].t(), v[0]) + v[0].narrow(0, 0, 3);
    sym = sym + sym.t();
    auto [e, E] = symeig(sym, true);
    return variable_list{e, E * E};
  });
  entry("pinverse / nuclear_norm", in1(tall), [](const variable_list& v) {
    return variable_list{pinverse(v[0]), nuclear_norm(v[0])};
  });
  entry("linalg::solve / solve_triangular / lu / tensorsolve / tensorinv",
        in2(sq,
            [] {
              return R({3, 2});
            }),
        [](const variable_list& v) {
          Tensor a = v[0];
          auto [P, L, U] = linalg::lu(a);
          return variable_list{
              linalg::solve(a, v[1]),
              linalg::solve(a, v[1].t(), false),
              linalg::solve(a.expand({2, 3, 3}), v[1].select(1, 0)),
              linalg::solve_triangular(triu(a), v[1].t(), true, false),
              L,
              U,
              linalg::tensorsolve(a.reshape({3, 1, 3}), v[1].select(1, 1).reshape({3, 1})),
              linalg::tensorinv(a.reshape({3, 1, 3}), 2)};
        });
  entry("linalg::lstsq (QR and SVD paths) / svd / svdvals / eigh / pinv hermitian", in1(tall),
        [](const variable_list& v) {
          Tensor b = on_case_device(arange(8, f64()).reshape({4, 2}).sin());
          // Rank 2 (deficient): the SVD path; its derivative holds away from the cut.
          Tensor deficient = matmul(v[0].narrow(1, 0, 2), v[0].narrow(0, 0, 2));
          auto [U, S, Vh] = linalg::svd(v[0]);
          Tensor sym = matmul(v[0].t(), v[0]) + v[0].narrow(0, 0, 3);
          sym = sym + sym.t();
          return variable_list{std::get<0>(linalg::lstsq(v[0], b)),
                               std::get<1>(linalg::lstsq(v[0], b, c10::nullopt, "gelsd")),
                               std::get<0>(linalg::lstsq(v[0].t(), b.narrow(0, 0, 3))),
                               std::get<0>(linalg::lstsq(deficient, b, 1e-8, "gelsd")),
                               S,
                               matmul(U.narrow(1, 0, 3) * S.unsqueeze(0), Vh),
                               linalg::svdvals(v[0].t()),
                               linalg::eigvalsh(sym, "U"),
                               linalg::pinv(sym, 1e-15, true)};
        });
  entry("linalg norms / multi_dot", in1(tall), [](const variable_list& v) {
    return variable_list{linalg::vector_norm(v[0], 2, {1}),
                         linalg::vector_norm(v[0], -1.5),
                         linalg::vector_norm(v[0], 3.5, {0}, true),
                         linalg::matrix_norm(v[0]),
                         linalg::matrix_norm(v[0], "nuc"),
                         linalg::matrix_norm(v[0], 1),
                         linalg::matrix_norm(v[0], -std::numeric_limits<double>::infinity()),
                         linalg::matrix_norm(v[0], 2),
                         linalg::norm(v[0], c10::nullopt, {0, 1}),
                         linalg::multi_dot({v[0].select(1, 0), v[0], v[0].t(), v[0]})};
  });
  entry("special:: i0e / i1e / erfcx / ndtr / log_ndtr / entr / ndtri / xlog1py / zeta", in1(r4),
        [](const variable_list& v) {
          Tensor x = v[0] * 3, unit = v[0].sigmoid();
          // erfcx grows as exp(x^2) for negative x: its argument stays above -1
          // so that the second-order finite differences are not lost to rounding.
          Tensor above_minus_one = unit * 3 - 1;
          Tensor s = on_case_device(tensor(std::vector<double>{2.0, 3.5, 4.0, 2.5}, f64()));
          return variable_list{
              special::i0e(x),      special::i1e(x),           special::erfcx(above_minus_one),
              special::ndtr(x),     special::log_ndtr(x),      special::entr(unit),
              special::ndtri(unit), special::xlog1py(x, unit), special::zeta(s, unit + 0.5)};
        });
  entry("cummax / cummin / nanmedian / aminmax / quantile / nanquantile", in1(r34),
        [](const variable_list& v) {
          Tensor q = on_case_device(tensor(std::vector<double>{0.2, 0.75}, f64()));
          auto [lo, hi] = aminmax(v[0], 1);
          return variable_list{std::get<0>(cummax(v[0], 1)),
                               std::get<0>(cummin(v[0], 0)),
                               std::get<0>(nanmedian(v[0], 1)),
                               lo,
                               hi,
                               quantile(v[0], q, 1),
                               quantile(v[0], 0.4, std::nullopt, false, "midpoint"),
                               nanquantile(v[0], 0.6, 0)};
        });
  entry("cov / corrcoef / trapezoid / cumulative_trapezoid / put / norm_except_dim", in2(r34, r4),
        [](const variable_list& v) {
          Tensor x = v[1].cumsum(0);  // sample points
          return variable_list{cov(v[0]),
                               cov(v[0], 0, std::nullopt, v[1].abs() + 0.1),
                               corrcoef(v[0]),
                               trapezoid(v[0], x),
                               trapezoid(v[0], 0.5, 0),
                               cumulative_trapezoid(v[0], x),
                               put(v[0], Idx({5, 0, -1}), v[1].narrow(0, 0, 3), true),
                               norm_except_dim(v[0], 2, 1)};
        });
  // Soft samples only: the hard (straight-through) gradient is not the derivative.
  entry("gumbel_softmax (fixed seed)", in1(r34), [](const variable_list& v) {
    manual_seed(12);
    return variable_list{F::gumbel_softmax(v[0], F::GumbelSoftmaxFuncOptions().tau(0.7)),
                         F::gumbel_softmax(v[0], F::GumbelSoftmaxFuncOptions().dim(0))};
  });
  t.back().draws_random = true;
  entry("scatter_reduce (every reduction, with and without self) / index_reduce",
        in2(r34,
            [] {
              return R({3, 3});
            }),
        [](const variable_list& v) {
          Tensor idx =
              on_case_device(tensor(std::vector<int64_t>{0, 1, 0, 2, 2, 2, 3, 0, 3})).view({3, 3});
          variable_list out;
          for (const char* reduce : {"sum", "prod", "mean", "amax", "amin"})
            for (bool self_too : {true, false})
              out.push_back(scatter_reduce(v[0], 1, idx, v[1], reduce, self_too));
          out.push_back(index_reduce(v[0], 1, Idx({3, 0, 3}), v[1], "prod"));
          out.push_back(index_reduce(v[0], 0, Idx({2, 0}),
                                     v[1].t().narrow(0, 0, 2).repeat({1, 2}).narrow(1, 0, 4),
                                     "mean", false));
          return out;
        });
  entry("logcumsumexp / gradient (uniform and at coordinates, both edge orders)", in1(r34),
        [](const variable_list& v) {
          std::vector<Tensor> x{on_case_device(tensor(std::vector<double>{0, 0.3, 1.0, 1.2}))};
          return variable_list{logcumsumexp(v[0] * 2, 1),
                               logcumsumexp(v[0], 0),
                               gradient(v[0], std::optional<Scalar>(0.5))[0],
                               gradient(v[0], std::optional<Scalar>(0.5), std::nullopt, 2)[1],
                               gradient(v[0], x, IntArrayRef{1})[0],
                               gradient(v[0], x, std::optional<int64_t>(1), 2)[0]};
        });
  entry("igamma / igammac (in x)", in1(r34), [](const variable_list& v) {
    Tensor a = on_case_device(tensor(std::vector<double>{0.6, 1.0, 2.5, 4.0}));
    Tensor x = v[0].abs() + 0.3;
    return variable_list{igamma(a, x), igammac(a, x)};
  });
  entry("max_pool3d_with_indices / adaptive_max_pool{1,2,3}d with indices", in1([] {
          return R({1, 2, 4, 5, 4});
        }),
        [](const variable_list& v) {
          return variable_list{
              std::get<0>(F::max_pool3d_with_indices(v[0], F::MaxPool3dFuncOptions(2).padding(1))),
              std::get<0>(adaptive_max_pool1d(v[0].flatten(2), {5})),
              std::get<0>(adaptive_max_pool2d(v[0].flatten(1, 2), {3, 3})),
              std::get<0>(adaptive_max_pool3d(v[0], {3, 2, 3}))};
        });
  entry("conv_transpose3d (stride, padding, output_padding, groups, dilation)",
        in2(
            [] {
              return R({1, 2, 2, 3, 2});
            },
            [] {
              return R({2, 2, 2, 2, 1});
            }),
        [](const variable_list& v) {
          return variable_list{
              conv_transpose3d(v[0], v[1], {}, {2, 1, 2}, {1, 0, 0}, {1, 0, 0}, 2, {1, 2, 1}),
              conv_transpose3d(v[0], v[1].narrow(0, 0, 2), v[1].flatten().narrow(0, 0, 2)),
              conv_tbc(v[0].view({4, 2, 3}), v[1].flatten().narrow(0, 0, 12).view({2, 3, 2}),
                       v[1].flatten().narrow(0, 12, 2), 1)};
        });
  entry("grid_sample (bilinear, nearest, bicubic; every padding) / affine_grid",
        in2(
            [] {
              return R({1, 2, 3, 4});
            },
            [] {
              return Unit({1, 2, 3, 2});
            }),
        [](const variable_list& v) {
          Tensor g = v[1] * 1.6;  // reaches outside [-1, 1]
          auto opts = [](InterpolateMode m, PaddingMode p, bool a) {
            return F::GridSampleFuncOptions().mode(m).padding_mode(p).align_corners(a);
          };
          Tensor theta = v[1].flatten().narrow(0, 0, 6).view({1, 2, 3});
          return variable_list{
              F::grid_sample(v[0], g, opts(kBilinear, kZeros, false)),
              F::grid_sample(v[0], g, opts(kBilinear, kBorder, true)),
              F::grid_sample(v[0], g, opts(kBilinear, kReflection, false)),
              F::grid_sample(v[0], g.detach(), opts(kNearest, kReflection, true)),
              F::grid_sample(v[0], g, opts(kBicubic, kZeros, false)),
              F::grid_sample(v[0], g, opts(kBicubic, kReflection, true)),
              F::affine_grid(theta, {1, 1, 2, 3}),
              grid_sampler_3d(stack({v[0], v[0] * 0.5}, 2),
                              cat({g, g.narrow(3, 0, 1)}, 3).unsqueeze(1), 0, 0, false)};
        });
  // ctc_loss's gradient is PyTorch's, exact through the log_softmax before it.
  entry(
      "ctc_loss (through log_softmax; every reduction)", in1([] {
        return R({5, 2, 4});
      }),
      [](const variable_list& v) {
        Tensor lp = F::log_softmax(v[0], 2);
        Tensor targets =
            on_case_device(tensor(std::vector<int64_t>{1, 2, 2, 3, 0, 0})).view({2, 3});
        return variable_list{ctc_loss(lp, targets, IntArrayRef{5, 4}, IntArrayRef{3, 1}, 0, 0),
                             ctc_loss(lp, targets, IntArrayRef{5, 5}, IntArrayRef{2, 1}, 0, 1),
                             ctc_loss(lp, targets, IntArrayRef{4, 5}, IntArrayRef{3, 0}, 0, 2)};
      },
      false);
  entry(
      "fractional_max_pool2d/3d (given samples)",
      in2(
          [] {
            return R({1, 2, 5, 6});
          },
          [] {
            return R({3, 2, 2});
          }),
      [](const variable_list& v) {
        Tensor u = on_case_device(tensor(std::vector<double>{0.2, 0.7, 0.5, 0.1})).view({1, 2, 2});
        Tensor u3 = on_case_device(tensor(std::vector<double>{0.2, 0.7, 0.4, 0.5, 0.1, 0.9}))
                        .view({1, 2, 3});
        return variable_list{
            F::fractional_max_pool2d(v[0], F::FractionalMaxPool2dFuncOptions(2)
                                               .output_size(std::vector<int64_t>{3, 4})
                                               ._random_samples(u)),
            F::fractional_max_pool3d(
                v[0].unsqueeze(2).repeat({1, 1, 3, 1, 1}) * 0.5 + v[0].unsqueeze(2),
                F::FractionalMaxPool3dFuncOptions({2, 2, 2})
                    .output_size(std::vector<int64_t>{2, 3, 3})
                    ._random_samples(u3))};
      });
  entry("multi_head_attention_forward (bias_k/v, zero attention, masks)",
        in2(
            [] {
              return R({3, 2, 4});
            },
            [] {
              return R({12, 4});
            }),
        [](const variable_list& v) {
          Tensor mask =
              on_case_device(tensor(std::vector<int64_t>{0, 1, 0, 0, 0, 0})).to(kBool).view({2, 3});
          auto [out, w] = F::multi_head_attention_forward(
              v[0], v[0] * 0.5, v[0].flip({0}),
              F::MultiheadAttentionForwardFuncOptions(
                  4, 2, v[1], v[1].select(1, 0), v[1][0].view({1, 1, 4}), v[1][1].view({1, 1, 4}),
                  true, 0.0, v[1].narrow(0, 4, 4), {})
                  .key_padding_mask(mask)
                  .average_attn_weights(false));
          return variable_list{out, w};
        });
  entry("AdaptiveLogSoftmaxWithLoss (output, log_prob)", in1([] {
          return R({4, 6});
        }),
        [](const variable_list& v) {
          static nn::AdaptiveLogSoftmaxWithLoss asm_ = [] {
            nn::AdaptiveLogSoftmaxWithLoss m(
                nn::AdaptiveLogSoftmaxWithLossOptions(6, 8, {2, 5}).div_value(2.0));
            m->to(kDouble);
            return m;
          }();
          auto m = on_case_device(asm_);
          auto out = m(v[0], on_case_device(tensor(std::vector<int64_t>{0, 3, 7, 5})));
          return variable_list{out.output, m->log_prob(v[0])};
        });
  entry("stft / istft (real form)",
        in2(
            [] {
              return R({2, 20});
            },
            [] {
              return R({5, 4, 2});
            }),
        [](const variable_list& v) {
          Tensor window = hann_window(8, f64()) + 0.2;
          return variable_list{
              stft(v[0], 8, 3, std::nullopt, window, true, "reflect", true, std::nullopt, false),
              stft(v[0], 6, 2, 5, std::nullopt, false, false, false),
              istft(v[1], 8, 2, std::nullopt, window, true, false, std::nullopt, 7)};
        });
  entry("torch::fft transforms (c2c, r2c, c2r, Hermitian, n-d, Bluestein)",
        in2(
            [] {
              return R({3, 5, 2});
            },
            [] {
              return R({3, 6});
            }),
        [](const variable_list& v) {
          Tensor z = view_as_complex(v[0]);  // [3, 5]
          return variable_list{view_as_real(fft::fft(z)),
                               view_as_real(fft::ifft(z, 7, 0, "ortho")),
                               view_as_real(fft::fft(z, 37)),  // a prime above the radices
                               view_as_real(fft::rfft(v[1])),
                               view_as_real(fft::rfft(v[1], 5, 0, "forward")),
                               fft::irfft(z),
                               fft::irfft(z, 7, -1, "ortho"),
                               fft::hfft(z, 6),
                               view_as_real(fft::ihfft(v[1])),
                               view_as_real(fft::fftn(z, {4, 6})),
                               fft::irfftn(z, {2, 6}),
                               view_as_real(fft::rfft2(v[1]))};
        });
  entry("lstm / gru / rnn_tanh sequences",
        in2(
            [] {
              return R({3, 2, 2});
            },
            [] {
              return R({12, 2});
            }),
        [](const variable_list& v) {
          // Input size 2, hidden size 2; v[1]'s rows serve as the weights.
          Tensor h0 = v[0][0].unsqueeze(0);
          Tensor w8 = v[1].narrow(0, 0, 8), w6 = v[1].narrow(0, 0, 6), w2 = v[1].narrow(0, 0, 2);
          auto [out, h, c] =
              lstm(v[0], {h0, h0 * 0.5}, {w8, w8 * 0.5}, false, 1, 0.0, false, false, false);
          auto [gout, gh] = gru(v[0], h0.repeat({2, 1, 1}), {w6, w6 * 0.5, w6.flip({0}), w6 * 0.3},
                                false, 1, 0.0, false, true, false);
          auto [rout, rh] = rnn_tanh(v[0], h0, {w2, w2 * 0.5, w2.select(1, 0), w2.select(1, 1)},
                                     true, 1, 0.0, false, false, false);
          return variable_list{out, h, c, gout, gh, rout, rh};
        });
  entry("pack_padded_sequence / pad_packed_sequence / pad_sequence",
        in2(
            [] {
              return R({4, 3, 2});
            },
            [] {
              return R({2, 2});
            }),
        [](const variable_list& v) {
          namespace rnn = nn::utils::rnn;
          auto packed = rnn::pack_padded_sequence(v[0], tensor({2, 4, 3}), false, false);
          auto [padded, lengths] = rnn::pad_packed_sequence(packed, true, 0.5, 5);
          return variable_list{packed.data(), padded,
                               rnn::pad_sequence({v[1], v[0].select(1, 0)}, false, -1)};
        });
  entry("lstm / gru / rnn_tanh on packed sequences (lengths 3, 2, 2, 1)",
        in2(
            [] {
              return R({8, 2});
            },
            [] {
              return R({12, 2});
            }),
        [](const variable_list& v) {
          // Input size 2, hidden size 2; v[1]'s rows serve as the weights.
          Tensor batch_sizes = tensor({4, 3, 1}, TensorOptions().dtype(kLong));
          Tensor h0 = v[1].narrow(0, 8, 4).unsqueeze(0);
          Tensor w8 = v[1].narrow(0, 0, 8), w6 = v[1].narrow(0, 0, 6);
          auto [out, h, c] = lstm(v[0], batch_sizes, {h0.narrow(2, 0, 2), h0.narrow(2, 0, 2) * 0.5},
                                  {w8, w8 * 0.5}, false, 1, 0.0, false, false);
          auto [gout, gh] = gru(v[0], batch_sizes, h0.narrow(2, 0, 2).repeat({2, 1, 1}),
                                {w6, w6 * 0.5, w6.flip({0}), w6 * 0.3}, false, 1, 0.0, false, true);
          auto [rout, rh] =
              rnn_tanh(v[0], batch_sizes, h0.narrow(2, 0, 2),
                       {v[1].narrow(0, 0, 2), v[1].narrow(0, 2, 2)}, false, 1, 0.0, false, false);
          return variable_list{out, h, c, gout, gh, rout, rh};
        });
  entry("lstm with projections (proj_size 1, hidden 2, no biases)",
        in2(
            [] {
              return R({3, 2, 2});
            },
            [] {
              return R({8, 2});
            }),
        [](const variable_list& v) {
          // h0 [1, 2, 1] narrower than c0 [1, 2, 2]: w_ih [8, 2], w_hh [8, 1], w_hr [1, 2].
          Tensor h0 = v[0][0].narrow(1, 0, 1).unsqueeze(0), c0 = v[0][1].unsqueeze(0);
          auto [out, h, c] =
              lstm(v[0], {h0, c0}, {v[1], v[1].narrow(1, 0, 1) * 0.5, v[1].narrow(0, 0, 1) * 0.3},
                   false, 1, 0.0, false, false, false);
          return variable_list{out, h, c};
        });
  entry("interpolate: every mode, antialias, scale factors",
        in2(
            [] {
              return R({1, 2, 5});
            },
            [] {
              return R({1, 1, 5, 6});
            }),
        [](const variable_list& v) {
          using O = F::InterpolateFuncOptions;
          const auto size = [](std::vector<int64_t> s) { return O().size(s); };
          Tensor v3 = v[1].unsqueeze(0);  // [1, 1, 1, 5, 6]
          return variable_list{
              F::interpolate(v[0], size({7}).mode(kLinear).align_corners(false)),
              F::interpolate(v[0], O().scale_factor({0.7}).mode(kLinear).align_corners(true)),
              F::interpolate(v[0], size({3}).mode(kArea)),
              F::interpolate(v[0], size({8}).mode(kNearestExact)),
              F::interpolate(v[1], size({7, 4}).mode(kBicubic).align_corners(false)),
              F::interpolate(v[1], size({3, 8}).mode(kBicubic).align_corners(true)),
              F::interpolate(v[1], size({2, 3}).mode(kBilinear).antialias(true)),
              F::interpolate(v[1], size({3, 4}).mode(kBicubic).antialias(true)),
              F::interpolate(v3, size({2, 3, 4}).mode(kTrilinear).align_corners(false)),
              F::interpolate(v3, size({1, 2, 3}).mode(kArea)),
              F::interpolate(v[0], O().scale_factor({1.7})),
              F::interpolate(v[1], size({3, 8}).mode(kNearestExact)),
              F::interpolate(v3, size({2, 3, 4})),
              F::interpolate(v3, size({2, 7, 3}).mode(kNearestExact))};
        });
  // The fused CPU kernel (bags reduced straight from the table) with what the
  // nn table's entry leaves out: padding, a 2-D input, include_last_offset;
  // its double backward runs the composite formulas.
  entry(
      "embedding_bag fused: padding_idx, 2-D input, include_last_offset, double backward",
      [] {
        return variable_list{R({6, 3}), R({8})};
      },
      [](const variable_list& v) {
        Tensor in = Idx({1, 2, 5, 5, 3, 0, 2, 4}), off = Idx({0, 3, 3, 8});
        Tensor in2 = Idx({1, 2, 5, 0, 3, 2, 2, 4}).view({2, 4});
        return variable_list{
            F::embedding_bag(in, v[0], off, EmbeddingBagMode::Sum, v[1], true, 2),
            F::embedding_bag(in, v[0], off, EmbeddingBagMode::Mean, {}, false, 5),
            F::embedding_bag(in2, v[0], {}, kMax, {}, false, 2),
            F::embedding_bag(in2, v[0], {}, EmbeddingBagMode::Sum, v[1].view({2, 4}))};
      });
  // matmul with batch dims broadcast on one side only (folded into the
  // other side's rows and columns: linalg.cpp).
  entry(
      "matmul folding one-sided broadcast batch dims",
      [] {
        return variable_list{R({1, 3, 2, 2, 3}), R({2, 3, 1, 3, 2})};
      },
      [](const variable_list& v) {
        return variable_list{matmul(v[0], v[1]), matmul(v[0], v[1].narrow(-1, 0, 1)),
                             matmul(v[0].select(0, 0), v[1].unsqueeze(0))};
      });
  // 1x1 convolutions on maps of 32 pixels or more (one product per sample
  // on NCHW: conv.cpp), conv2d with a bias and conv1d without.
  entry(
      "conv2d and conv1d, 1x1 on maps of 32+ pixels",
      [] {
        return variable_list{R({2, 3, 4, 8}), R({2, 3, 1, 1}), R({2}), R({2, 2, 40})};
      },
      [](const variable_list& v) {
        return variable_list{conv2d(v[0], v[1], v[2]),
                             conv1d(v[3], v[1].narrow(1, 0, 2).squeeze(3))};
      });
  // F::pad's reflect, replicate and circular modes over 1, 2 and 3 dims (one
  // gather and one scatter-add: ops/padding.cpp).
  entry(
      "pad reflect / replicate / circular, 1-3 dims",
      [] {
        return variable_list{R({1, 2, 3, 4, 4})};
      },
      [](const variable_list& v) {
        variable_list outs;
        for (auto mode : {PaddingMode::Reflect, PaddingMode::Replicate, PaddingMode::Circular}) {
          outs.push_back(F::pad(v[0].select(0, 0), F::PadFuncOptions({2, 1}).mode(mode)));
          outs.push_back(F::pad(v[0].select(0, 0), F::PadFuncOptions({1, 0, 2, 2}).mode(mode)));
          outs.push_back(F::pad(v[0], F::PadFuncOptions({1, 2, 0, 1, 2, 1}).mode(mode)));
        }
        return outs;
      });
}

}  // namespace brasa
