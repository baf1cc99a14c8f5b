#!/usr/bin/env python3
"""Writes libtorch_goldens.h: outputs of PyTorch for the libtorch functions
Brasa added for porting (top-level nn functions, rearranging and counting
ops), on inputs both sides build alike: S(shape, a, b) = sin(arange * a + b)
in float64. Run with Debian's python3-torch; the output is committed, CI
does not need torch."""
import math
import torch
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)


def S(shape, a=0.37, b=0.1):
    n = math.prod(shape)
    return torch.sin(torch.arange(n, dtype=torch.float64) * a + b).view(shape)


L = lambda v: torch.tensor(v, dtype=torch.int64)

def updated_stats():
    mean, var = S([3]) * 0.1, S([3]).abs() + 0.5
    F.instance_norm(S([2, 3, 4]), running_mean=mean, running_var=var, momentum=0.3)
    return mean, var


def with_sequential_weights(module):
    """Sets every parameter, in named_parameters order, to S(shape, 0.1 k + 0.3, 0.2)."""
    with torch.no_grad():
        for k, (_, p) in enumerate(module.named_parameters()):
            p.copy_(S(list(p.shape), 0.1 * k + 0.3, 0.2))
    return module


def rnn_module():
    rnn = with_sequential_weights(torch.nn.RNN(3, 2, num_layers=2, nonlinearity="relu", bidirectional=True))
    return rnn(S([4, 2, 3]), S([4, 2, 2], 0.5, 0.3))


def mha_options_module():
    """MultiheadAttention with kdim/vdim (separate projections), bias_k/bias_v and a zero row."""
    m = with_sequential_weights(torch.nn.MultiheadAttention(4, 2, add_bias_kv=True, add_zero_attn=True, kdim=3, vdim=5))
    return m(S([2, 3, 4]), S([3, 3, 3], 0.5, 0.3), S([3, 3, 5], 0.7, 0.4), average_attn_weights=False)


def lstm_projected():
    """A 2-layer bidirectional LSTM with proj_size, with given states."""
    m = with_sequential_weights(torch.nn.LSTM(3, 4, num_layers=2, bidirectional=True, proj_size=2))
    out, (h, c) = m(S([5, 2, 3]), (S([4, 2, 2], 0.5, 0.3), S([4, 2, 4], 0.8, 0.6)))
    return out, h, c


def decoder_layer():
    layer = with_sequential_weights(torch.nn.TransformerDecoderLayer(4, 2, dim_feedforward=6, dropout=0.0, activation="gelu"))
    layer.eval()
    return layer(S([2, 2, 4]), S([3, 2, 4], 0.5, 0.3), tgt_mask=torch.nn.Transformer.generate_square_subsequent_mask(2))


def transformer():
    model = with_sequential_weights(torch.nn.Transformer(4, 2, 2, 1, dim_feedforward=6, dropout=0.0))
    model.eval()
    return model(S([3, 2, 4]), S([2, 2, 4], 0.5, 0.3), tgt_mask=model.generate_square_subsequent_mask(2))


def scatter_prod_zero_grads():
    """Gradients of prod scatter_reduce where self and src hold zeros (one or two per position)."""
    x = torch.tensor([[2.0, 0.0, 3.0, 1.5]], requires_grad=True)
    src = torch.tensor([[0.0, 4.0, 0.0, 5.0, 0.0, 2.0]], requires_grad=True)
    index = L([[0, 1, 2, 2, 3, 3]])
    x.scatter_reduce(1, index, src, "prod").backward(torch.tensor([[1.0, 2.0, 3.0, 4.0]]))
    return torch.cat([x.grad.flatten(), src.grad.flatten()])


def adaptive_max_grad():
    """The input gradient of adaptive max pooling: only each window's chosen element."""
    x = S([1, 2, 5, 7]).requires_grad_()
    F.adaptive_max_pool2d(x, (3, 4)).backward(S([1, 2, 3, 4], 0.3, 0.2))
    return x.grad


def grid_sample_grads():
    """Gradients of bilinear reflection sampling in both the input and the grid."""
    x = S([1, 2, 4, 5]).requires_grad_()
    g = (S([1, 3, 2, 2], 1.3, 0.2) * 1.7).requires_grad_()
    F.grid_sample(x, g, "bilinear", "reflection", align_corners=False).backward(S([1, 2, 3, 2], 0.4, 0.3))
    return torch.cat([x.grad.flatten(), g.grad.flatten()])


def ctc_lp():
    return F.log_softmax(S([6, 3, 5], 0.9, 0.3) * 2, 2)


def ctc_grads():
    """PyTorch's gradients of the mean CTC loss in log_probs and in the logits before log_softmax."""
    logits = (S([6, 3, 5], 0.9, 0.3) * 2).requires_grad_()
    lp = F.log_softmax(logits, 2)
    lp.retain_grad()
    F.ctc_loss(lp, L([[1, 2, 2, 0], [3, 1, 0, 0], [2, 0, 0, 0]]), L([6, 5, 4]), L([3, 2, 0])).backward()
    return torch.cat([lp.grad.flatten(), logits.grad.flatten()])


def mha_forward():
    """F.multi_head_attention_forward with bias_k/bias_v, a zero attention row and both masks."""
    E, H = 4, 2
    return F.multi_head_attention_forward(
        S([3, 2, E]), S([5, 2, E], 0.5, 0.3), S([5, 2, E], 0.7, 0.1), E, H,
        S([3 * E, E], 0.3, 0.2), S([3 * E], 0.2, 0.1), S([1, 1, E], 0.9, 0.4), S([1, 1, E], 1.1, 0.2),
        True, 0.0, S([E, E], 0.6, 0.5), S([E], 0.4, 0.3), training=False,
        key_padding_mask=torch.tensor([[False, False, True, False, False], [False, True, False, False, False]]),
        attn_mask=S([3, 5], 0.8, 0.1), average_attn_weights=False)


def mha_separate():
    E, H = 4, 2
    return F.multi_head_attention_forward(
        S([3, 2, E]), S([5, 2, E], 0.5, 0.3), S([5, 2, E], 0.7, 0.1), E, H,
        None, S([3 * E], 0.2, 0.1), None, None, False, 0.0, S([E, E], 0.6, 0.5), None,
        training=False, use_separate_proj_weight=True, q_proj_weight=S([E, E], 0.3, 0.2),
        k_proj_weight=S([E, E], 0.45, 0.2), v_proj_weight=S([E, E], 0.35, 0.6),
        static_v=S([4, 5, 2], 0.25, 0.3), need_weights=False)


def asm_module():
    return with_sequential_weights(torch.nn.AdaptiveLogSoftmaxWithLoss(6, 10, [3, 6], div_value=2.0, head_bias=True))


def embedding_freq_grads():
    """The table gradient of F.embedding with scale_grad_by_freq. (PyTorch 1.13's
    embedding_bag divides by other counts than the indices' own, so it is not a golden.)"""
    w = S([5, 3]).requires_grad_()
    idx = L([[0, 2, 2], [4, 2, 0]])
    (F.embedding(idx, w, scale_grad_by_freq=True) * S([2, 3, 3], 0.3, 0.2)).sum().backward()
    return w.grad


def W(shape):
    """A full-rank variant of S (a matrix of S's values has rank 2)."""
    return S(shape) + 0.5 * S(shape, 1.7, 0.3) ** 2


def spd(n):
    x = W([n, n])
    return x @ x.T + torch.eye(n)


SPECIAL_X = torch.tensor([-30.0, -8.5, -3.0, -1.2, -0.5, -1e-3, 0.0, 1e-9, 0.3, 1.0, 2.5, 7.0, 24.9, 25.1, 40.0, 120.0])
SPECIAL_POLY_X = torch.tensor([-1.0, -0.7, -0.2, 0.0, 0.3, 0.5, 1.0, 1.7, -2.5, 0.9, 0.4, 3.0])
SPECIAL_POLY_N = torch.tensor([3.0, 0.0, 5.0, 2.0, 7.0, 12.0, 4.0, 6.0, 3.0, -1.0, 1.0, 9.0])


def special_grads():
    """Gradients of the differentiable special functions at a few points."""
    out = []
    for f, x in [(torch.special.i0e, [-2.0, 0.0, 0.5, 35.0]), (torch.special.i1e, [-2.0, 0.0, 0.5, 35.0]),
                 (torch.special.entr, [0.5, 2.0]), (torch.special.erfcx, [-1.0, 0.5, 30.0]),
                 (torch.special.ndtr, [-2.0, 0.3]), (torch.special.log_ndtr, [-40.0, -2.0, 3.0]),
                 (torch.special.ndtri, [1e-10, 0.3, 0.8])]:
        t = torch.tensor(x, requires_grad=True)
        f(t).sum().backward()
        out.append(t.grad)
    q = torch.tensor([0.7, 2.0], requires_grad=True)
    torch.special.zeta(torch.tensor([3.5, 2.0]), q).sum().backward()
    out.append(q.grad)
    return torch.cat(out)


def special_exact():
    """The special functions at SPECIAL_X (and Airy's points) by mpmath at 30
    digits: PyTorch 1.13's Bessel functions are off by up to 3e-8 for
    5 < |x| < 25, so Brasa's are checked against these too."""
    import mpmath as mp
    mp.mp.dps = 30
    nan, inf = float("nan"), float("inf")

    def positive(f, at_zero):
        return lambda x: nan if x < 0 else (at_zero if x == 0 else float(f(x)))

    rows = [
        lambda x: float(mp.besselj(0, x)),
        lambda x: float(mp.besselj(1, x)),
        positive(lambda x: mp.bessely(0, x), -inf),
        positive(lambda x: mp.bessely(1, x), -inf),
        positive(lambda x: mp.besselk(0, x), inf),
        positive(lambda x: mp.besselk(1, x), inf),
        positive(lambda x: mp.besselk(0, x) * mp.exp(x), inf),
        positive(lambda x: mp.besselk(1, x) * mp.exp(x), inf),
        lambda x: float(mp.besseli(0, x) * mp.exp(-abs(x))),
        lambda x: float(mp.besseli(1, x) * mp.exp(-abs(x))),
        lambda x: float(mp.exp(mp.mpf(x) ** 2) * mp.erfc(x)),
        lambda x: float(mp.log(mp.ncdf(x))),
    ]
    values = [[f(x) for x in SPECIAL_X.tolist()] for f in rows]
    airy = [float(mp.airyai(x)) for x in [-30.0, -12.0, -10.9, -10.7, -8.0, -5.0, -2.0, -0.5, 0.0, 1e-9, 0.5, 2.0, 5.0, 10.0, 30.0, 110.0]]
    ndtri = [float(mp.sqrt(2) * mp.erfinv(2 * mp.mpf(p) - 1)) for p in [1e-20, 1e-5, 0.02, 0.3, 0.51, 0.9, 0.999999]]
    return torch.cat([torch.tensor(values).flatten(), torch.tensor(airy), torch.tensor(ndtri)])


def special_tiny_exact():
    """Bessel, Airy and K functions at tiny arguments (where series take over), by mpmath."""
    import mpmath as mp
    mp.mp.dps = 40
    xs = [1e-300, 1e-12, 3e-9]
    fs = [lambda x: mp.bessely(0, x), lambda x: mp.bessely(1, x), lambda x: mp.besselk(0, x),
          lambda x: mp.besselk(1, x), lambda x: mp.besselk(0, x) * mp.exp(x), mp.airyai,
          lambda x: mp.airyai(-x)]
    return torch.tensor([float(f(mp.mpf(x))) for f in fs for x in xs])


def lbfgs_rosenbrock(steps, **options):
    x = torch.tensor([-1.5, 2.0], requires_grad=True)
    opt = torch.optim.LBFGS([x], **options)

    def closure():
        opt.zero_grad()
        loss = (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2
        loss.backward()
        return loss

    for _ in range(steps):
        opt.step(closure)
    return x.detach()


def Z(shape, a=0.37, b=0.1):
    """A complex tensor whose real view is S(shape + [2], a, b)."""
    return torch.view_as_complex(S(list(shape) + [2], a, b))

def fft_grads():
    """Gradients through torch.fft's transforms, PyTorch's complex convention."""
    z = Z([3, 6]).clone().requires_grad_()
    x = S([3, 7], 0.6, 0.3).clone().requires_grad_()
    h = Z([3, 5], 0.4, 0.2).clone().requires_grad_()
    loss = ((torch.fft.fft(z, 8, norm="ortho").abs() ** 2) * S([8], 0.3, 0.1)).sum()
    loss = loss + (torch.fft.rfft(x).real * S([4], 0.5, 0.2)).sum() + (torch.fft.rfft(x).imag ** 2).sum()
    loss = loss + (torch.fft.irfft(h, 9) * S([9], 0.7, 0.3)).sum() + (torch.fft.hfft(h) ** 2).sum() * 0.01
    loss = loss + (torch.fft.ifft2(z, s=(4, 5)).real ** 2).sum()
    loss.backward()
    return torch.cat([torch.view_as_real(z.grad).flatten(), x.grad.flatten(), torch.view_as_real(h.grad).flatten()])



def complex_ops_grad():
    """The gradient of a real loss through complex div, exp, matmul and prod, in the real view."""
    x = S([2, 3, 2]).requires_grad_()
    z = torch.view_as_complex(x)
    loss = (torch.view_as_real(z / Z([3], 0.6, 0.4)).sum() + torch.view_as_real(z.exp()).pow(2).sum()
            + torch.view_as_real(z @ Z([3, 2], 0.5, 0.2)).sum() * 0.5 + torch.view_as_real(z.prod(1)).sum())
    loss.backward()
    return x.grad


def complex_grad():
    """The gradient of a real loss through complex ops, in the real view of the input."""
    x = S([2, 3, 2]).requires_grad_()
    z = torch.view_as_complex(x)
    loss = (z * Z([3], 0.6, 0.4) + torch.conj(z)).abs().sum() + torch.angle(z).sum()
    loss.backward()
    return x.grad


def polar_grads():
    r, th = (S([4]).abs() + 0.1).requires_grad_(), S([4], 0.9, 0.3).requires_grad_()
    z = torch.polar(r, th)
    (torch.view_as_real(z * Z([4], 0.5, 0.2)) * S([4, 2], 0.8, 0.6)).sum().backward()
    return torch.cat([r.grad, th.grad])


CASES = {
    "trace": lambda: torch.trace(S([3, 4])),
    "kron": lambda: torch.kron(S([2, 3]), S([2, 2], 0.7, 0.2)),
    "kron_1d_2d": lambda: torch.kron(S([3]), S([2, 2], 0.7, 0.2)),
    "diff_n2_prepend": lambda: torch.diff(S([3, 5]), n=2, dim=1, prepend=S([3, 1], 0.9, 0.3)),
    "diff_dim0_append": lambda: torch.diff(S([3, 2]), dim=0, append=S([2, 2], 0.5, 0.5)),
    "diff_bool": lambda: torch.diff(torch.tensor([True, False, False, True])).double(),
    "rot90_k1": lambda: torch.rot90(S([2, 3, 4]), 1, [1, 2]),
    "rot90_km1": lambda: torch.rot90(S([2, 3, 4]), -1, [0, 2]),
    "rot90_k2": lambda: torch.rot90(S([2, 3, 4]), 2, [0, 1]),
    "diag_embed_offset1": lambda: torch.diag_embed(S([2, 3]), offset=1, dim1=0, dim2=2),
    "diag_embed_offsetm1": lambda: torch.diag_embed(S([2, 3]), offset=-1),
    "meshgrid_ij_0": lambda: torch.meshgrid(S([3]), S([2], 0.6), indexing="ij")[0],
    "meshgrid_ij_1": lambda: torch.meshgrid(S([3]), S([2], 0.6), indexing="ij")[1],
    "meshgrid_xy_0": lambda: torch.meshgrid(S([3]), S([2], 0.6), indexing="xy")[0],
    "meshgrid_xy_1": lambda: torch.meshgrid(S([3]), S([2], 0.6), indexing="xy")[1],
    "repeat_interleave_flat": lambda: torch.repeat_interleave(S([2, 3]), 2),
    "repeat_interleave_dim1": lambda: torch.repeat_interleave(S([2, 3]), L([1, 0, 2]), dim=1),
    "repeat_interleave_index": lambda: torch.repeat_interleave(L([2, 0, 3])).double(),
    "cross_dim1": lambda: torch.cross(S([4, 3]), S([4, 3], 0.5, 0.4), dim=1),
    "cross_default": lambda: torch.cross(S([3, 2]), S([3, 2], 0.5, 0.4)),
    "cdist_p2": lambda: torch.cdist(S([2, 3, 4]), S([2, 5, 4], 0.6, 0.2)),
    "cdist_p1": lambda: torch.cdist(S([2, 3, 4]), S([2, 5, 4], 0.6, 0.2), p=1),
    "cdist_p3": lambda: torch.cdist(S([2, 3, 4]), S([2, 5, 4], 0.6, 0.2), p=3),
    "cdist_pinf": lambda: torch.cdist(S([2, 3, 4]), S([2, 5, 4], 0.6, 0.2), p=float("inf")),
    "cdist_p0": lambda: torch.cdist(torch.tensor([[0., 1, 2], [1, 1, 1]]), torch.tensor([[0., 1, 5]]), p=0),
    "index_copy": lambda: torch.index_copy(S([4, 3]), 0, L([3, 0]), S([2, 3], 0.8, 0.5)),
    "index_fill": lambda: torch.index_fill(S([3, 4]), 1, L([0, 2]), -1.5),
    "masked_scatter": lambda: torch.masked_scatter(S([3, 4]), S([3, 4], 1.3, 0.2) > 0, S([12], 0.4, 0.9)),
    "median_all": lambda: torch.median(S([5, 4])),
    "median_dim_values": lambda: torch.median(S([5, 4]), 1).values,
    "median_dim_indices": lambda: torch.median(S([5, 4]), 1).indices.double(),
    "mode_values": lambda: torch.mode(L([[1, 2, 2, 3, 3], [5, 5, 4, 4, 1]]), 1).values.double(),
    "mode_indices": lambda: torch.mode(L([[1, 2, 2, 3, 3], [5, 5, 4, 4, 1]]), 1).indices.double(),
    "histc_range": lambda: torch.histc(S([50]), bins=7, min=-0.5, max=0.8),
    "histc_data_range": lambda: torch.histc(S([50]), bins=5),
    "bincount_weights": lambda: torch.bincount(L([0, 1, 1, 3, 7]), weights=S([5])),
    "bincount_minlength": lambda: torch.bincount(L([0, 1, 1, 3, 7]), minlength=10).double(),
    "bucketize_left": lambda: torch.bucketize(S([3, 4]) * 5, torch.tensor([-3., -1, 0, 1, 3])).double(),
    "bucketize_right": lambda: torch.bucketize(torch.tensor([-3., 0, 0.5, 3]), torch.tensor([-3., -1, 0, 1, 3]), right=True).double(),
    "searchsorted_2d": lambda: torch.searchsorted(torch.sort(S([2, 6])).values, S([2, 3], 0.7, 0.1)).double(),
    "searchsorted_right": lambda: torch.searchsorted(torch.tensor([1., 3, 5, 7, 9]), torch.tensor([[3., 6, 9], [3, 6, 9]]), side="right").double(),
    "searchsorted_sorter": lambda: torch.searchsorted(torch.tensor([5., 1, 9, 3, 7]), torch.tensor([4., 9]), sorter=L([1, 3, 0, 4, 2])).double(),
    # Top-level nn functions (libtorch's at:: signatures).
    "nll_loss_weight_ignore_sum": lambda: torch.nn.functional.nll_loss(torch.log_softmax(S([5, 3]), 1), L([0, 2, 1, 1, 2]), weight=torch.tensor([0.2, 1.0, 3.0]), ignore_index=1, reduction="sum"),
    "mse_loss_none": lambda: F.mse_loss(S([2, 3]), S([2, 3], 0.5, 0.3), reduction="none"),
    "smooth_l1_loss_beta": lambda: F.smooth_l1_loss(S([8]) * 2, S([8], 0.5, 0.3), beta=0.5),
    "binary_cross_entropy_weight": lambda: F.binary_cross_entropy(torch.sigmoid(S([6])), (S([6], 0.9, 0.4) > 0).double(), weight=S([6], 0.2, 1.0)),
    "gelu_tanh": lambda: F.gelu(S([7]) * 3, approximate="tanh"),
    "layer_norm_affine": lambda: F.layer_norm(S([2, 3, 4]), [3, 4], S([3, 4], 0.3, 0.7), S([3, 4], 0.2, 0.1)),
    "embedding_padding": lambda: F.embedding(L([[0, 2], [3, 2]]), S([4, 3]), padding_idx=2),
    "pad_reflect": lambda: F.pad(S([1, 2, 5]), [1, 2], mode="reflect"),
    "pad_constant_value": lambda: F.pad(S([2, 3]), [1, 0, 0, 2], value=0.5),
    "threshold": lambda: F.threshold(S([9]), 0.1, 20.0),
    "hardtanh": lambda: F.hardtanh(S([9]), -0.5, 0.5),
    "interpolate_nearest_scale2": lambda: F.interpolate(S([1, 2, 3, 4]), scale_factor=2.0, mode="nearest"),
    "interpolate_bilinear_size": lambda: F.interpolate(S([1, 2, 3, 4]), size=(5, 7), mode="bilinear", align_corners=False),
    # Every interpolate mode and rank (nn/interpolate.cpp).
    "interp_nearest_1d_scale": lambda: F.interpolate(S([2, 2, 5]), scale_factor=1.7, mode="nearest"),
    "interp_nearest_1d_scale_recompute": lambda: F.interpolate(S([2, 2, 5]), scale_factor=1.7, mode="nearest", recompute_scale_factor=True),
    "interp_nearest_2d_size": lambda: F.interpolate(S([1, 2, 3, 4]), size=(5, 3), mode="nearest"),
    "interp_nearest_exact_2d": lambda: F.interpolate(S([1, 2, 3, 4]), size=(5, 7), mode="nearest-exact"),
    "interp_nearest_exact_down": lambda: F.interpolate(S([1, 1, 7, 9]), size=(3, 4), mode="nearest-exact"),
    "interp_nearest_3d_scale": lambda: F.interpolate(S([1, 2, 2, 3, 4]), scale_factor=(1.5, 2.0, 0.5), mode="nearest"),
    "interp_linear_size": lambda: F.interpolate(S([2, 2, 5]), size=7, mode="linear", align_corners=False),
    "interp_linear_align": lambda: F.interpolate(S([2, 2, 5]), size=7, mode="linear", align_corners=True),
    "interp_linear_scale": lambda: F.interpolate(S([1, 2, 5]), scale_factor=1.7, mode="linear"),
    "interp_linear_scale_recompute": lambda: F.interpolate(S([1, 2, 5]), scale_factor=1.7, mode="linear", recompute_scale_factor=True),
    "interp_bilinear_align": lambda: F.interpolate(S([1, 2, 3, 4]), size=(5, 7), mode="bilinear", align_corners=True),
    "interp_bilinear_down_scale": lambda: F.interpolate(S([1, 2, 7, 9]), scale_factor=0.6, mode="bilinear"),
    "interp_bicubic_size": lambda: F.interpolate(S([1, 2, 3, 4]), size=(5, 7), mode="bicubic"),
    "interp_bicubic_align": lambda: F.interpolate(S([1, 2, 3, 4]), size=(5, 7), mode="bicubic", align_corners=True),
    "interp_bicubic_down": lambda: F.interpolate(S([1, 1, 6, 7]), size=(2, 3), mode="bicubic"),
    "interp_bicubic_scale": lambda: F.interpolate(S([1, 1, 4, 5]), scale_factor=(1.5, 2.5), mode="bicubic"),
    "interp_trilinear_size": lambda: F.interpolate(S([1, 2, 2, 3, 4]), size=(3, 4, 5), mode="trilinear"),
    "interp_trilinear_align": lambda: F.interpolate(S([1, 1, 2, 3, 4]), size=(3, 5, 2), mode="trilinear", align_corners=True),
    "interp_area_1d": lambda: F.interpolate(S([1, 2, 7]), size=3, mode="area"),
    "interp_area_2d": lambda: F.interpolate(S([1, 2, 5, 7]), size=(2, 3), mode="area"),
    "interp_area_3d": lambda: F.interpolate(S([1, 1, 4, 5, 6]), size=(2, 3, 4), mode="area"),
    "interp_aa_bilinear_down": lambda: F.interpolate(S([1, 2, 9, 10]), size=(4, 3), mode="bilinear", antialias=True),
    "interp_aa_bilinear_up": lambda: F.interpolate(S([1, 1, 3, 4]), size=(5, 7), mode="bilinear", antialias=True),
    "interp_aa_bilinear_align": lambda: F.interpolate(S([1, 1, 9, 10]), size=(4, 3), mode="bilinear", antialias=True, align_corners=True),
    "interp_aa_bilinear_scale": lambda: F.interpolate(S([1, 1, 9, 10]), scale_factor=0.4, mode="bilinear", antialias=True),
    "interp_aa_bicubic_down": lambda: F.interpolate(S([1, 2, 9, 10]), size=(4, 3), mode="bicubic", antialias=True),
    "interp_bicubic_scale_same_h": lambda: F.interpolate(S([1, 1, 4, 5]), scale_factor=(1.1, 2.0), mode="bicubic"),
    "interp_linear_scale_same": lambda: F.interpolate(S([1, 1, 5]), scale_factor=1.1, mode="linear"),
    "interp_nearest_exact_scale_same": lambda: F.interpolate(S([1, 1, 5]), scale_factor=1.1, mode="nearest-exact"),
    "interp_aa_bilinear_same_w": lambda: F.interpolate(S([1, 1, 8, 5]), scale_factor=(0.5, 1.1), mode="bilinear", antialias=True),
    "interp_aa_bicubic_mixed": lambda: F.interpolate(S([1, 1, 5, 12]), size=(8, 5), mode="bicubic", antialias=True),
    # More activations and losses (nn/activations.h, nn/loss_modules.h).
    "softmin": lambda: F.softmin(S([2, 5]) * 2, dim=1),
    "softsign": lambda: F.softsign(S([7]) * 3),
    "softshrink": lambda: F.softshrink(S([9]), 0.3),
    "hardshrink": lambda: F.hardshrink(S([9]), 0.3),
    "tanhshrink": lambda: F.tanhshrink(S([7]) * 2),
    "logsigmoid": lambda: F.logsigmoid(S([7]) * 5),
    "celu": lambda: F.celu(S([7]) * 2, alpha=0.7),
    "glu": lambda: F.glu(S([2, 6]), dim=1),
    "threshold_module": lambda: torch.nn.Threshold(0.2, -3.0)(S([8])),
    "margin_ranking_loss": lambda: F.margin_ranking_loss(S([6]), S([6], 0.5, 0.3), torch.tensor([1., -1, 1, 1, -1, -1]), margin=0.1),
    "hinge_embedding_loss": lambda: F.hinge_embedding_loss(S([6]) * 2, torch.tensor([1., -1, 1, -1, -1, 1]), margin=0.5, reduction="none"),
    "cosine_embedding_loss": lambda: F.cosine_embedding_loss(S([4, 3]), S([4, 3], 0.5, 0.3), torch.tensor([1., -1, -1, 1]), margin=0.2),
    "triplet_margin_loss": lambda: F.triplet_margin_loss(S([4, 3]), S([4, 3], 0.5, 0.3), S([4, 3], 0.8, 0.9), margin=0.5, p=1.5),
    "triplet_margin_loss_swap": lambda: F.triplet_margin_loss(S([4, 3]), S([4, 3], 0.5, 0.3), S([4, 3], 0.8, 0.9), swap=True, reduction="none"),
    "poisson_nll_loss": lambda: F.poisson_nll_loss(S([6]), S([6], 0.5, 0.3).abs() * 3),
    "poisson_nll_loss_full": lambda: F.poisson_nll_loss(S([6]).abs() + 0.1, S([6], 0.5, 0.3).abs() * 3, log_input=False, full=True, reduction="sum"),
    "multilabel_soft_margin_loss": lambda: F.multilabel_soft_margin_loss(S([3, 4]) * 2, (S([3, 4], 0.9, 0.2) > 0).double(), weight=S([4], 0.3, 1.1)),
    "pairwise_distance": lambda: F.pairwise_distance(S([3, 4]), S([3, 4], 0.5, 0.3), p=3, keepdim=True),
    # Image modules (nn/image_modules.h).
    "pixel_shuffle": lambda: F.pixel_shuffle(S([1, 8, 2, 3]), 2),
    "pixel_unshuffle": lambda: F.pixel_unshuffle(S([1, 2, 4, 6]), 2),
    "zero_pad2d": lambda: torch.nn.ZeroPad2d((1, 0, 2, 1))(S([1, 1, 2, 3])),
    "constant_pad1d": lambda: torch.nn.ConstantPad1d(2, 3.5)(S([1, 2, 3])),
    "reflection_pad2d": lambda: torch.nn.ReflectionPad2d(1)(S([1, 1, 3, 3])),
    "replication_pad1d": lambda: torch.nn.ReplicationPad1d((2, 1))(S([1, 2, 3])),
    "upsample_bilinear": lambda: torch.nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True)(S([1, 1, 2, 3])),
    # Pooling in 1, 2 and 3 dims (nn/pooling_modules.h).
    "max_pool3d": lambda: F.max_pool3d(S([1, 2, 4, 5, 5]), 2),
    "max_pool3d_pad_dilation_ceil": lambda: F.max_pool3d(S([2, 1, 5, 6, 7]), (3, 2, 3), stride=(2, 1, 2), padding=(1, 0, 1), dilation=(1, 2, 1), ceil_mode=True),
    "avg_pool3d": lambda: F.avg_pool3d(S([1, 2, 4, 4, 5]), 2),
    "avg_pool3d_pad_ceil": lambda: F.avg_pool3d(S([1, 1, 5, 5, 6]), 3, stride=2, padding=1, ceil_mode=True),
    "avg_pool3d_exclude_pad": lambda: F.avg_pool3d(S([1, 1, 5, 5, 6]), 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
    "avg_pool3d_divisor": lambda: F.avg_pool3d(S([1, 1, 4, 4, 4]), 2, divisor_override=3),
    "avg_pool2d_divisor": lambda: F.avg_pool2d(S([1, 2, 5, 5]), 3, stride=2, padding=1, divisor_override=4),
    "adaptive_avg_pool1d": lambda: F.adaptive_avg_pool1d(S([2, 3, 10]), 4),
    "adaptive_max_pool1d": lambda: F.adaptive_max_pool1d(S([2, 3, 10]), 4),
    "adaptive_avg_pool3d": lambda: F.adaptive_avg_pool3d(S([1, 2, 5, 6, 7]), (2, 3, 4)),
    "adaptive_max_pool3d": lambda: F.adaptive_max_pool3d(S([1, 2, 5, 6, 7]), (3, 2, 4)),
    "max_pool3d_module": lambda: torch.nn.MaxPool3d(3, stride=2, padding=1)(S([1, 1, 5, 5, 5])),
    # Aliases and small composites (ops/aliases.h).
    "acosh": lambda: torch.acosh(S([7]).abs() * 3 + 1),
    "asinh": lambda: torch.asinh(S([7]) * 40),
    "atanh": lambda: torch.atanh(S([7]) * 0.9),
    "deg2rad": lambda: torch.deg2rad(S([5]) * 180),
    "rad2deg": lambda: torch.rad2deg(S([5])),
    "hypot": lambda: torch.hypot(S([6]), S([6], 0.5, 0.3)),
    "logaddexp": lambda: torch.logaddexp(S([6]) * 800, S([6], 0.5, 0.3) * 3),
    "logaddexp2": lambda: torch.logaddexp2(S([6]) * 5, S([6], 0.5, 0.3) * 3),
    "xlogy": lambda: torch.xlogy(torch.tensor([0.0, 2.0, 0.0, 1.5]), torch.tensor([0.0, 3.0, 5.0, 0.5])),
    "logit_eps": lambda: torch.logit(S([7]).abs(), eps=0.1),
    "sinc": lambda: torch.sinc(torch.tensor([0.0, 0.5, -1.5, 2.25])),
    "nansum": lambda: torch.nansum(torch.tensor([1.0, float("nan"), 2.5, float("nan")])),
    "nanmean": lambda: torch.nanmean(torch.tensor([1.0, float("nan"), 2.5, float("nan")])),
    "column_stack": lambda: torch.column_stack([S([3]), S([3, 2], 0.5, 0.3)]),
    "fliplr": lambda: torch.fliplr(S([2, 3])),
    "avg_pool1d_module": lambda: torch.nn.AvgPool1d(3, stride=2, padding=1, count_include_pad=False)(S([1, 2, 7])),
    # Type queries, copying views, splitting and combining (ops/copy_variants.h, ops/split_combine.h).
    "fill_tensor": lambda: torch.fill(S([2, 3]), torch.tensor(1.5)),
    "adjoint": lambda: torch.adjoint(S([2, 3, 4])),
    "narrow_copy": lambda: torch.narrow_copy(S([4, 5]), 1, 1, 3),
    "permute_copy": lambda: torch.permute_copy(S([2, 3, 4]), [2, 0, 1]),
    "diagonal_copy": lambda: torch.diagonal_copy(S([3, 4]), 1),
    "unfold_copy": lambda: torch.unfold_copy(S([7]), 0, 3, 2),
    "select_scatter": lambda: torch.select_scatter(S([3, 4]), S([4], 0.9, 0.2), 0, 1),
    "slice_scatter": lambda: torch.slice_scatter(S([4, 5]), S([4, 2], 0.9, 0.2), 1, 1, 5, 2),
    "diagonal_scatter": lambda: torch.diagonal_scatter(S([3, 4]), S([3], 0.9, 0.2), 1),
    "as_strided_scatter": lambda: torch.as_strided_scatter(S([3, 4]), S([2, 2], 0.9, 0.2), (2, 2), (1, 2), 1),
    "tensor_split_sections_1": lambda: torch.tensor_split(S([7, 2]), 3)[1],
    "tensor_split_indices_2": lambda: torch.tensor_split(S([3, 8]), [1, 5], dim=1)[2],
    "hsplit_1": lambda: torch.hsplit(S([2, 6]), 3)[1],
    "dsplit_0": lambda: torch.dsplit(S([2, 2, 5]), [2])[0],
    "vsplit_1": lambda: torch.vsplit(S([4, 2]), 2)[1],
    "dstack": lambda: torch.dstack([S([2, 3]), S([2, 3], 0.5, 0.3)]),
    "block_diag": lambda: torch.block_diag(S([2, 2]), S([3], 0.5, 0.3), torch.tensor(7.0), S([2, 1], 0.9, 0.1)),
    "cartesian_prod": lambda: torch.cartesian_prod(S([3]), S([2], 0.5, 0.3)),
    "combinations": lambda: torch.combinations(S([4]), r=3),
    "combinations_replacement": lambda: torch.combinations(S([3]), r=2, with_replacement=True),
    "diagflat": lambda: torch.diagflat(S([2, 2]), -1),
    "take_along_dim": lambda: torch.take_along_dim(S([3, 4]), L([[0, 2, 1, 1]]), dim=0),
    "take_along_dim_flat": lambda: torch.take_along_dim(S([3, 4]), L([11, 0, 5])),
    "tril_indices": lambda: torch.tril_indices(3, 4, 1).double(),
    "triu_indices": lambda: torch.triu_indices(4, 3, -1).double(),
    "range": lambda: torch.range(1, 2.5, 0.5, dtype=torch.float64),
    "vander": lambda: torch.vander(S([3]), N=4),
    "vander_increasing": lambda: torch.vander(S([3]), increasing=True),
    "inner": lambda: torch.inner(S([2, 3]), S([4, 3], 0.5, 0.3)),
    "chain_matmul": lambda: torch.chain_matmul(S([2, 3]), S([3, 4], 0.5, 0.3), S([4, 2], 0.9, 0.1)),
    "dist_p3": lambda: torch.dist(S([2, 3]), S([2, 3], 0.5, 0.3), 3),
    "renorm": lambda: torch.renorm(S([3, 4]) * 3, 1, 0, 2.0),
    "frobenius_norm_dim": lambda: torch.frobenius_norm(S([3, 4]), [1]),
    # Elementwise and special functions (ops/math_extra.h, ops/special.h).
    "copysign": lambda: torch.copysign(S([6]), S([6], 0.5, 0.3)),
    "fmax": lambda: torch.fmax(torch.tensor([1.0, float("nan"), 3.0, float("nan")]), torch.tensor([2.0, 5.0, float("nan"), float("nan")])),
    "fmin": lambda: torch.fmin(torch.tensor([1.0, float("nan"), 3.0]), torch.tensor([2.0, 5.0, float("nan")])),
    "heaviside": lambda: torch.heaviside(torch.tensor([-1.5, 0.0, 2.0]), torch.tensor([0.5, 0.5, 0.5])),
    "float_power": lambda: torch.float_power(S([5]).abs(), 2.5),
    "ldexp": lambda: torch.ldexp(S([4]), L([1, 2, -1, 3])),
    "gcd": lambda: torch.gcd(L([12, 0, -18, 7]), L([8, 5, 12, 0])).double(),
    "lcm": lambda: torch.lcm(L([4, 0, -6, 7]), L([6, 5, 4, 3])).double(),
    "erfc": lambda: torch.erfc(S([7]) * 4),
    "lgamma": lambda: torch.lgamma(torch.tensor([0.5, 1.0, 2.5, 10.0, -0.5, -2.5, 100.0])),
    "digamma": lambda: torch.digamma(torch.tensor([0.5, 1.0, 2.5, 10.0, -0.5, -2.5, 100.0, 1e-3])),
    "polygamma1": lambda: torch.polygamma(1, torch.tensor([0.5, 1.0, 2.5, 10.0, -0.5, -2.5])),
    "polygamma3": lambda: torch.polygamma(3, torch.tensor([0.5, 1.0, 2.5, 10.0, -0.5])),
    "mvlgamma": lambda: torch.mvlgamma(S([5]).abs() + 2, 3),
    "i0": lambda: torch.i0(torch.tensor([0.0, 0.5, -1.5, 4.0, 20.0, -50.0])),
    # Norms, cells and recurrent layers (nn/norm_modules.h, nn/recurrent_cells.h).
    "instance_norm_affine": lambda: F.instance_norm(S([2, 3, 4]), weight=S([3], 0.6, 0.4), bias=S([3], 0.5, 0.3)),
    "instance_norm_running": lambda: F.instance_norm(S([2, 3, 4]), running_mean=S([3]) * 0.1, running_var=S([3]).abs() + 0.5, use_input_stats=False),
    "instance_norm_updated_mean": lambda: updated_stats()[0],
    "instance_norm_updated_var": lambda: updated_stats()[1],
    "instance_norm2d_module": lambda: torch.nn.InstanceNorm2d(2, affine=True)(S([2, 2, 3, 3])),
    "batch_norm_5d": lambda: torch.batch_norm(S([2, 3, 2, 2, 2]), S([3], 0.6, 0.4), None, torch.zeros(3), torch.ones(3), True, 0.1, 1e-5, False),
    "rnn_tanh_cell": lambda: torch.rnn_tanh_cell(S([2, 3]), S([2, 4], 0.5, 0.3), S([4, 3], 0.7, 0.1), S([4, 4], 0.9, 0.2), S([4], 0.3, 0.4), S([4], 0.2, 0.5)),
    "rnn_relu_cell": lambda: torch.rnn_relu_cell(S([2, 3]), S([2, 4], 0.5, 0.3), S([4, 3], 0.7, 0.1), S([4, 4], 0.9, 0.2)),
    "lstm_cell_h": lambda: torch.lstm_cell(S([2, 3]), (S([2, 2], 0.5, 0.3), S([2, 2], 0.8, 0.6)), S([8, 3], 0.7, 0.1), S([8, 2], 0.9, 0.2), S([8], 0.3, 0.4), S([8], 0.2, 0.5))[0],
    "lstm_cell_c": lambda: torch.lstm_cell(S([2, 3]), (S([2, 2], 0.5, 0.3), S([2, 2], 0.8, 0.6)), S([8, 3], 0.7, 0.1), S([8, 2], 0.9, 0.2), S([8], 0.3, 0.4), S([8], 0.2, 0.5))[1],
    "gru_cell": lambda: torch.gru_cell(S([2, 3]), S([2, 2], 0.5, 0.3), S([6, 3], 0.7, 0.1), S([6, 2], 0.9, 0.2), S([6], 0.3, 0.4), S([6], 0.2, 0.5)),
    "rnn_relu_2layer_bidir_out": lambda: rnn_module()[0],
    "rnn_relu_2layer_bidir_h": lambda: rnn_module()[1],
    "mha_kdim_vdim_bias_kv_out": lambda: mha_options_module()[0],
    "mha_kdim_vdim_bias_kv_weights": lambda: mha_options_module()[1],
    "lstm_proj_out": lambda: lstm_projected()[0],
    "lstm_proj_h": lambda: lstm_projected()[1],
    "lstm_proj_c": lambda: lstm_projected()[2],
    # Top-level nn spellings (nn/aten_functions.h).
    "channel_shuffle": lambda: torch.channel_shuffle(S([1, 6, 2]), 3),
    "prelu_channels": lambda: torch.prelu(S([2, 3, 2]), torch.tensor([0.1, 0.2, 0.3])),
    "bilinear_lead_dims": lambda: F.bilinear(S([2, 2, 3]), S([2, 2, 4], 0.5, 0.3), S([5, 3, 4], 0.7, 0.1), S([5], 0.3, 0.4)),
    "pdist_p2": lambda: torch.pdist(S([4, 3])),
    "pdist_p1": lambda: torch.pdist(S([4, 3]), 1.0),
    "max_pool1d_top": lambda: torch.max_pool1d(S([1, 2, 7]), 3, 2, 1),
    "avg_pool1d_top": lambda: torch.avg_pool1d(S([1, 2, 7]), 3, 2, 1, True, False),
    "convolution_2d": lambda: torch.convolution(S([1, 2, 5, 5]), S([3, 2, 3, 3], 0.5, 0.3), S([3], 0.3, 0.4), [2, 1], [1, 0], [1, 1], False, [0, 0], 1),
    "convolution_transposed_1d": lambda: torch.convolution(S([1, 2, 5]), S([2, 3, 3], 0.5, 0.3), None, [2], [1], [1], True, [1], 1),
    # Activations, losses and window layers (nn/activations.h, nn/loss_modules.h, nn/window_modules.h).
    "softmax2d": lambda: torch.nn.Softmax2d()(S([2, 3, 2, 2])),
    "rrelu_eval": lambda: F.rrelu(S([7]), 0.1, 0.3, training=False),
    "reflection_pad3d": lambda: torch.nn.ReflectionPad3d(1)(S([1, 1, 2, 3, 3])),
    "replication_pad3d": lambda: torch.nn.ReplicationPad3d((1, 0, 2, 1, 0, 1))(S([1, 2, 2, 2, 2])),
    "unfold": lambda: F.unfold(S([2, 2, 4, 5]), (2, 3), dilation=(1, 2), padding=(1, 0), stride=(2, 1)),
    "fold": lambda: F.fold(S([2, 8, 9]), (4, 5), (2, 2), dilation=(1, 2), padding=(1, 0), stride=(2, 1)),
    "lp_pool1d": lambda: F.lp_pool1d(S([1, 2, 7]), 3, 2, stride=2, ceil_mode=True),
    "lp_pool2d": lambda: F.lp_pool2d(S([1, 2, 4, 5]).abs(), 1.5, (2, 3), stride=(1, 2)),
    "max_unpool2d": lambda: F.max_unpool2d(*F.max_pool2d(S([1, 2, 4, 4]), 2, return_indices=True), 2),
    "max_unpool1d_size": lambda: F.max_unpool1d(*F.max_pool1d(S([1, 1, 7]), 2, return_indices=True), 2, output_size=[7]),
    "local_response_norm_3d": lambda: F.local_response_norm(S([2, 5, 3]), 3, alpha=0.2, beta=0.6, k=2.0),
    "local_response_norm_4d": lambda: F.local_response_norm(S([1, 4, 2, 3]), 2),
    "multi_margin_loss": lambda: F.multi_margin_loss(S([3, 4]), L([1, 0, 3]), margin=0.7, weight=S([4], 0.3, 1.1).abs()),
    "multi_margin_loss_p2": lambda: F.multi_margin_loss(S([3, 4]), L([2, 2, 0]), p=2, reduction="none"),
    "multilabel_margin_loss": lambda: F.multilabel_margin_loss(S([2, 4]), L([[3, 0, -1, 1], [1, 2, 0, 3]]), reduction="none"),
    "triplet_margin_with_distance_loss": lambda: F.triplet_margin_with_distance_loss(S([4, 3]), S([4, 3], 0.5, 0.3), S([4, 3], 0.8, 0.9), margin=0.5, swap=True),
    "triplet_margin_with_cosine_distance": lambda: F.triplet_margin_with_distance_loss(S([4, 3]), S([4, 3], 0.5, 0.3), S([4, 3], 0.8, 0.9), distance_function=lambda a, b: 1 - F.cosine_similarity(a, b), reduction="sum"),
    # The transformer (nn/transformer.h), weights set in parameter order, no dropout.
    "transformer_decoder_layer": lambda: decoder_layer(),
    "transformer": lambda: transformer(),
    # Linear algebra (ops/decompositions.h).
    "det": lambda: torch.det(W([2, 3, 3]) + 2 * torch.eye(3)),
    "det_singular": lambda: torch.det(torch.tensor([[1.0, 2.0], [2.0, 4.0]])),
    "logdet": lambda: torch.logdet(spd(3)),
    "slogdet_sign": lambda: torch.slogdet(W([3, 3]))[0],
    "slogdet_logabs": lambda: torch.slogdet(W([3, 3]))[1],
    "inverse": lambda: torch.inverse(W([2, 3, 3]) + 3 * torch.eye(3)),
    "cholesky": lambda: torch.cholesky(spd(4)),
    "cholesky_upper": lambda: torch.cholesky(spd(4), upper=True),
    "cholesky_solve": lambda: torch.cholesky_solve(S([4, 2], 0.5, 0.3), torch.linalg.cholesky(spd(4))),
    "cholesky_inverse": lambda: torch.cholesky_inverse(torch.linalg.cholesky(spd(3))),
    "triangular_solve": lambda: torch.triangular_solve(S([3, 2], 0.5, 0.3), torch.triu(W([3, 3])) + 2 * torch.eye(3)).solution,
    "triangular_solve_lower_t_unit": lambda: torch.triangular_solve(S([3, 2], 0.5, 0.3), torch.tril(W([3, 3])), upper=False, transpose=True, unitriangular=True).solution,
    "lu_unpack_P": lambda: torch.lu_unpack(*torch.linalg.lu_factor(W([4, 4])))[0],
    "lu_unpack_L": lambda: torch.lu_unpack(*torch.linalg.lu_factor(W([4, 4])))[1],
    "lu_unpack_U": lambda: torch.lu_unpack(*torch.linalg.lu_factor(W([4, 4])))[2],
    "lu_solve": lambda: torch.lu_solve(S([4, 2], 0.5, 0.3), *torch.linalg.lu_factor(W([4, 4]))),
    "qr_Q": lambda: torch.qr(W([4, 3]))[0],
    "qr_R": lambda: torch.qr(W([4, 3]))[1],
    "qr_complete_Q": lambda: torch.qr(W([4, 3]), some=False)[0],
    "qr_wide_R": lambda: torch.qr(W([2, 4]))[1],
    "geqrf_a": lambda: torch.geqrf(W([4, 3]))[0],
    "geqrf_tau": lambda: torch.geqrf(W([4, 3]))[1],
    "orgqr": lambda: torch.orgqr(*torch.geqrf(W([4, 3]))),
    "ormqr": lambda: torch.ormqr(*torch.geqrf(W([4, 3])), S([4, 2], 0.5, 0.3), left=True, transpose=True),
    "svd_S": lambda: torch.svd(W([4, 3]))[1],
    "svd_U_abs": lambda: torch.svd(W([4, 3]))[0].abs(),
    "svd_V_abs": lambda: torch.svd(W([4, 3]))[2].abs(),
    "symeig_e": lambda: torch.linalg.eigvalsh(spd(4) - 3 * torch.eye(4)),
    "symeig_V_abs": lambda: torch.linalg.eigh(spd(4) - 3 * torch.eye(4))[1].abs(),
    "pinverse": lambda: torch.pinverse(W([4, 3])),
    "matrix_power_3": lambda: torch.matrix_power(W([3, 3]), 3),
    "matrix_power_m2": lambda: torch.matrix_power(W([3, 3]) + 2 * torch.eye(3), -2),
    "matrix_exp": lambda: torch.matrix_exp(W([2, 3, 3]) * 2),
    "nuclear_norm": lambda: torch.nuclear_norm(W([4, 3])),
    "nuclear_norm_dims": lambda: torch.nuclear_norm(W([2, 3, 4]), dim=(0, 2)),
    # Statistics, sets and windows (ops/statistics.h, ops/counting.h).
    "nanmedian_dim": lambda: torch.nanmedian(torch.tensor([[1.0, float("nan"), 3.0, 2.0], [float("nan")] * 4, [4.0, 1.0, float("nan"), 2.0]]), 1).values,
    "cummax_values": lambda: torch.cummax(torch.tensor([1.0, 3.0, 3.0, 2.0, float("nan"), 5.0]), 0).values,
    "cummax_indices": lambda: torch.cummax(torch.tensor([1.0, 3.0, 3.0, 2.0, float("nan"), 5.0]), 0).indices.double(),
    "cummin_indices": lambda: torch.cummin(S([3, 4]), 1).indices.double(),
    "quantile_linear": lambda: torch.quantile(S([3, 5]), torch.tensor([0.1, 0.5, 0.9]), dim=1, keepdim=True),
    "quantile_all": lambda: torch.quantile(S([3, 5]), 0.3),
    "quantile_lower": lambda: torch.quantile(S([3, 5]), 0.3, dim=0, interpolation="lower"),
    "quantile_higher": lambda: torch.quantile(S([3, 5]), 0.3, dim=0, interpolation="higher"),
    "quantile_midpoint": lambda: torch.quantile(S([3, 5]), 0.3, dim=0, interpolation="midpoint"),
    "quantile_nearest": lambda: torch.quantile(S([4, 5]), torch.tensor([0.25, 0.5]), dim=1, interpolation="nearest"),
    "nanquantile": lambda: torch.nanquantile(torch.tensor([[1.0, float("nan"), 3.0, 2.0], [float("nan")] * 4]), 0.4, dim=1),
    "isin": lambda: torch.isin(L([1, 5, 2, 7, 2]), L([2, 7, 9])).double(),
    "unique_consecutive_out": lambda: torch.unique_consecutive(L([1, 1, 2, 2, 3, 1, 1, 2])).double(),
    "unique_consecutive_inverse": lambda: torch.unique_consecutive(L([1, 1, 2, 2, 3, 1, 1, 2]), return_inverse=True)[1].double(),
    "unique_consecutive_counts": lambda: torch.unique_consecutive(L([1, 1, 2, 2, 3, 1, 1, 2]), return_counts=True)[1].double(),
    "unique_consecutive_dim": lambda: torch.unique_consecutive(torch.tensor([[1.0, 1, 2, 2], [3, 3, 4, 5]]), dim=1),
    "cov": lambda: torch.cov(S([3, 6])),
    "cov_weights": lambda: torch.cov(S([3, 6]), correction=0, fweights=L([1, 2, 1, 3, 1, 1]), aweights=S([6]).abs() + 0.1),
    "corrcoef": lambda: torch.corrcoef(S([3, 6])),
    "trapezoid_x": lambda: torch.trapezoid(S([2, 5]), torch.tensor([0.0, 0.5, 1.5, 2.0, 4.0])),
    "trapezoid_dx": lambda: torch.trapezoid(S([2, 5]), dx=0.3, dim=0),
    "cumulative_trapezoid": lambda: torch.cumulative_trapezoid(S([2, 5]), torch.tensor([0.0, 0.5, 1.5, 2.0, 4.0])),
    "histogram_hist": lambda: torch.histogram(S([20]), 4, weight=S([20], 0.2, 0.4).abs())[0],
    "histogram_edges": lambda: torch.histogram(S([20]), 4)[1],
    "histogram_density": lambda: torch.histogram(S([20]), torch.tensor([-1.0, -0.2, 0.3, 1.0]), density=True)[0],
    "put": lambda: torch.put(S([2, 3]), L([5, 0, -1]), torch.tensor([10.0, 20.0, 30.0]), accumulate=True),
    "hann_window": lambda: torch.hann_window(6, dtype=torch.float64),
    "hamming_window_symmetric": lambda: torch.hamming_window(5, periodic=False, dtype=torch.float64),
    "blackman_window": lambda: torch.blackman_window(6, dtype=torch.float64),
    "bartlett_window": lambda: torch.bartlett_window(7, dtype=torch.float64),
    "kaiser_window": lambda: torch.kaiser_window(6, True, 8.0, dtype=torch.float64),
    "bitwise_left_shift": lambda: torch.bitwise_left_shift(L([1, -3, 5, 7]), L([2, 1, 0, 62])).double(),
    "bitwise_right_shift": lambda: torch.bitwise_right_shift(L([16, -16, 5, -1]), L([2, 3, 1, 70])).double(),
    "norm_except_dim": lambda: torch.norm_except_dim(S([3, 4]), 2, 1),
    # Scatter/index reductions, logcumsumexp, gradient, igamma, histogramdd.
    "scatter_reduce_sum": lambda: S([3, 4]).scatter_reduce(1, L([[0, 1, 0], [2, 2, 2], [3, 0, 3]]), S([3, 3], 0.5, 0.2), "sum"),
    "scatter_reduce_prod_excl": lambda: S([3, 4]).scatter_reduce(1, L([[0, 1, 0], [2, 2, 2], [3, 0, 3]]), S([3, 3], 0.5, 0.2), "prod", include_self=False),
    "scatter_reduce_mean": lambda: S([3, 4]).scatter_reduce(0, L([[0, 1, 0, 2], [2, 2, 0, 1]]), S([2, 5], 0.5, 0.2), "mean"),
    "scatter_reduce_mean_excl": lambda: S([3, 4]).scatter_reduce(0, L([[0, 1, 0, 2], [2, 2, 0, 1]]), S([2, 5], 0.5, 0.2), "mean", include_self=False),
    "scatter_reduce_amax": lambda: S([3, 4]).scatter_reduce(1, L([[0, 1, 0], [2, 2, 2], [3, 0, 3]]), S([3, 3], 0.5, 0.2), "amax"),
    "scatter_reduce_amin_excl": lambda: S([3, 4]).scatter_reduce(1, L([[0, 1, 0], [2, 2, 2], [3, 0, 3]]), S([3, 3], 0.5, 0.2), "amin", include_self=False),
    "scatter_reduce_mean_int": lambda: L([10, 20, 30]).scatter_reduce(0, L([0, 0, 2, 2]), L([1, 2, 7, -4]), "mean").double(),
    "scatter_reduce_prod_zero_grads": lambda: scatter_prod_zero_grads(),
    "index_reduce_prod": lambda: S([3, 4]).index_reduce(0, L([0, 2, 0]), S([3, 4], 0.5, 0.2), "prod"),
    "index_reduce_mean_excl": lambda: S([3, 4]).index_reduce(1, L([3, 0, 3]), S([3, 3], 0.5, 0.2), "mean", include_self=False),
    "index_reduce_amax": lambda: S([3, 4]).index_reduce(1, L([3, 0, 3]), S([3, 3], 0.5, 0.2), "amax"),
    "logcumsumexp": lambda: torch.logcumsumexp(S([3, 4]) * 3, 1),
    "logcumsumexp_extreme": lambda: torch.logcumsumexp(torch.tensor([-1000.0, 0.0, 800.0, float("-inf"), 800.0]), 0),
    "gradient_uniform": lambda: torch.stack(torch.gradient(S([4, 5]) ** 2, spacing=0.5)),
    "gradient_order2": lambda: torch.stack(torch.gradient(S([4, 5]) ** 2, spacing=[0.5, 2.0], edge_order=2)),
    "gradient_coordinates": lambda: torch.gradient(S([4, 5]) ** 2, spacing=(torch.tensor([0.0, 0.3, 1.0, 1.2, 2.0]),), dim=1)[0],
    "gradient_coordinates_order2": lambda: torch.gradient(S([4, 5]) ** 2, spacing=(torch.tensor([0.0, 0.3, 1.0, 1.2, 2.0]),), dim=1, edge_order=2)[0],
    "igamma": lambda: torch.igamma(torch.tensor([0.5, 1.0, 2.5, 10.0, 3.0, 0.1]), torch.tensor([0.2, 1.0, 4.0, 9.0, 0.01, 30.0])),
    "igammac": lambda: torch.igammac(torch.tensor([0.5, 1.0, 2.5, 10.0, 3.0, 0.1]), torch.tensor([0.2, 1.0, 4.0, 9.0, 0.01, 30.0])),
    "igamma_edges": lambda: torch.igamma(torch.tensor([0.0, 0.0, 2.0, -1.0, float("inf"), 2.0]), torch.tensor([1.0, 0.0, 0.0, 1.0, 3.0, float("inf")])),
    "histogramdd_hist": lambda: torch.histogramdd(S([20, 2]), bins=[3, 4], weight=S([20], 0.2, 0.4).abs()).hist,
    "histogramdd_edges1": lambda: torch.histogramdd(S([20, 2]), bins=[3, 4]).bin_edges[1],
    "histogramdd_range_density": lambda: torch.histogramdd(S([4, 5, 2]), bins=2, range=[-1.0, 0.5, -0.5, 1.0], density=True).hist,
    "histogramdd_edges_tensors": lambda: torch.histogramdd(S([20, 2]), bins=[torch.tensor([-1.0, 0.0, 1.0]), torch.tensor([-1.0, -0.5, 0.2, 1.0])]).hist,
    # Max pooling with positions, transposed 3-d convolution.
    "max_pool3d_wi_values": lambda: F.max_pool3d(S([1, 2, 4, 5, 5]), (2, 3, 2), (2, 2, 1), (1, 1, 0), return_indices=True)[0],
    "max_pool3d_wi_indices": lambda: F.max_pool3d(S([1, 2, 4, 5, 5]), (2, 3, 2), (2, 2, 1), (1, 1, 0), return_indices=True)[1].double(),
    "max_pool3d_wi_ceil_dilated": lambda: F.max_pool3d(S([2, 5, 6, 5]), 2, 2, 0, 2, ceil_mode=True, return_indices=True)[1].double(),
    "adaptive_max_pool1d_wi": lambda: torch.cat([t.double().flatten() for t in F.adaptive_max_pool1d(S([2, 3, 7]), 3, return_indices=True)]),
    "adaptive_max_pool2d_wi": lambda: torch.cat([t.double().flatten() for t in F.adaptive_max_pool2d(S([2, 3, 5, 7]), (3, 4), return_indices=True)]),
    "adaptive_max_pool3d_wi": lambda: torch.cat([t.double().flatten() for t in F.adaptive_max_pool3d(S([3, 4, 5, 6]), (2, 3, 4), return_indices=True)]),
    "adaptive_max_pool2d_grad": lambda: adaptive_max_grad(),
    "conv_transpose3d": lambda: F.conv_transpose3d(S([2, 4, 3, 4, 3]), W([4, 3, 2, 3, 2]), S([6], 0.9, 0.1), stride=(2, 1, 2), padding=(1, 0, 1), output_padding=(1, 0, 0), groups=2, dilation=(1, 2, 1)),
    "conv_transpose3d_plain": lambda: F.conv_transpose3d(S([1, 2, 2, 3, 2]), W([2, 3, 2, 2, 2])),
    "conv_transpose3d_module": lambda: with_sequential_weights(torch.nn.ConvTranspose3d(2, 4, (2, 3, 1), stride=2, padding=(0, 1, 0), output_padding=1))(S([1, 2, 2, 3, 3])),
    # Spatial transformers (nn/grid_sample.h).
    "affine_grid_2d": lambda: F.affine_grid(S([2, 2, 3], 0.7, 0.2), [2, 3, 3, 4], align_corners=False),
    "affine_grid_2d_align": lambda: F.affine_grid(S([2, 2, 3], 0.7, 0.2), [2, 3, 3, 4], align_corners=True),
    "affine_grid_3d": lambda: F.affine_grid(S([1, 3, 4], 0.7, 0.2), [1, 2, 2, 3, 2], align_corners=False),
    "grid_sample_bilinear_zeros": lambda: F.grid_sample(S([2, 3, 4, 5]), S([2, 3, 2, 2], 1.3, 0.2) * 1.3, "bilinear", "zeros", align_corners=False),
    "grid_sample_bilinear_border_align": lambda: F.grid_sample(S([2, 3, 4, 5]), S([2, 3, 2, 2], 1.3, 0.2) * 1.3, "bilinear", "border", align_corners=True),
    "grid_sample_bilinear_reflection": lambda: F.grid_sample(S([2, 3, 4, 5]), S([2, 3, 2, 2], 1.3, 0.2) * 2.7, "bilinear", "reflection", align_corners=False),
    "grid_sample_bilinear_reflection_align": lambda: F.grid_sample(S([2, 3, 4, 5]), S([2, 3, 2, 2], 1.3, 0.2) * 2.7, "bilinear", "reflection", align_corners=True),
    "grid_sample_nearest_zeros": lambda: F.grid_sample(S([2, 3, 4, 5]), S([2, 3, 2, 2], 1.3, 0.2) * 1.3, "nearest", "zeros", align_corners=False),
    "grid_sample_nearest_reflection": lambda: F.grid_sample(S([2, 3, 4, 5]), S([2, 3, 2, 2], 1.3, 0.2) * 2.7, "nearest", "reflection", align_corners=True),
    "grid_sample_bicubic_zeros": lambda: F.grid_sample(S([2, 3, 4, 5]), S([2, 3, 2, 2], 1.3, 0.2) * 1.3, "bicubic", "zeros", align_corners=False),
    "grid_sample_bicubic_border": lambda: F.grid_sample(S([2, 3, 4, 5]), S([2, 3, 2, 2], 1.3, 0.2) * 1.3, "bicubic", "border", align_corners=True),
    "grid_sample_bicubic_reflection": lambda: F.grid_sample(S([2, 3, 4, 5]), S([2, 3, 2, 2], 1.3, 0.2) * 2.7, "bicubic", "reflection", align_corners=False),
    "grid_sample_3d_bilinear": lambda: F.grid_sample(S([1, 2, 3, 4, 3]), S([1, 2, 2, 3, 3], 1.3, 0.2) * 1.2, "bilinear", "zeros", align_corners=False),
    "grid_sample_3d_nearest_border": lambda: F.grid_sample(S([1, 2, 3, 4, 3]), S([1, 2, 2, 3, 3], 1.3, 0.2) * 1.2, "nearest", "border", align_corners=True),
    "grid_sample_grads": lambda: grid_sample_grads(),
    # CTC loss (nn/ctc_loss.h).
    "ctc_none": lambda: F.ctc_loss(ctc_lp(), L([[1, 2, 2, 0], [3, 1, 0, 0], [2, 0, 0, 0]]), L([6, 5, 4]), L([3, 2, 0]), reduction="none"),
    "ctc_mean_blank": lambda: F.ctc_loss(ctc_lp(), L([[1, 2, 0, 0], [3, 4, 4, 0], [2, 0, 0, 0]]), L([6, 5, 4]), L([2, 3, 1]), blank=4 - 4 + 0, reduction="mean"),
    "ctc_sum_concat_blank2": lambda: F.ctc_loss(ctc_lp(), L([1, 3, 3, 4, 0, 1]), L([6, 6, 3]), L([3, 2, 1]), blank=2, reduction="sum"),
    "ctc_zero_infinity": lambda: F.ctc_loss(ctc_lp(), L([[1, 1, 1, 1], [3, 1, 0, 0], [2, 0, 0, 0]]), L([6, 5, 4]), L([4, 2, 1]), reduction="none", zero_infinity=True),
    "ctc_grads": lambda: ctc_grads(),
    # Fractional max pooling with given samples.
    "fractional_max_pool2d": lambda: torch.cat([t.double().flatten() for t in F.fractional_max_pool2d(S([2, 2, 7, 8]), (2, 3), output_size=(4, 3), return_indices=True, _random_samples=torch.tensor([[[0.1, 0.7], [0.55, 0.3]], [[0.9, 0.05], [0.4, 0.8]]]))]),
    "fractional_max_pool2d_ratio": lambda: F.fractional_max_pool2d(S([1, 2, 9, 7]), 2, output_ratio=0.6, _random_samples=torch.tensor([[[0.25, 0.75], [0.6, 0.1]]])),
    "fractional_max_pool3d": lambda: torch.cat([t.double().flatten() for t in F.fractional_max_pool3d(S([1, 2, 6, 7, 8]), (2, 2, 3), output_size=(3, 4, 3), return_indices=True, _random_samples=torch.tensor([[[0.1, 0.7, 0.35], [0.55, 0.3, 0.95]]]))]),
    # multi_head_attention_forward, AdaptiveLogSoftmaxWithLoss, conv_tbc, embedding_bag.
    "mha_forward_out": lambda: mha_forward()[0],
    "mha_forward_weights": lambda: mha_forward()[1],
    "mha_separate_static": lambda: mha_separate()[0],
    "asm_output": lambda: asm_module().forward(S([5, 6]), L([0, 3, 5, 9, 7])).output,
    "asm_log_prob": lambda: asm_module().log_prob(S([5, 6])),
    "asm_predict": lambda: asm_module().predict(S([5, 6], 1.1, 0.5)).double(),
    "conv_tbc": lambda: torch.conv_tbc(S([5, 2, 3]), W([3, 3, 4]), S([4], 0.5, 0.1), 1),
    "embedding_bag_max": lambda: torch.cat([t.double().flatten() for t in torch.embedding_bag(S([5, 3]), L([0, 2, 1, 4, 3]), L([0, 2, 2]), False, 2)]),
    "embedding_scale_grad_by_freq": lambda: embedding_freq_grads(),
    # Short-time Fourier transforms in the real [..., 2] form (ops/spectral.h).
    "stft_hann_center": lambda: torch.stft(S([2, 40], 0.9, 0.2), 16, hop_length=5, window=torch.hann_window(12, dtype=torch.float64), win_length=12, center=True, return_complex=False),
    "stft_plain_twosided": lambda: torch.stft(S([30], 0.7, 0.2), 8, center=False, normalized=True, onesided=False, return_complex=False),
    "stft_constant_pad": lambda: torch.stft(S([30], 0.7, 0.2), 9, hop_length=4, center=True, pad_mode="constant", return_complex=False),
    "istft_roundtrip": lambda: torch.istft(torch.stft(S([2, 40], 0.9, 0.2), 16, hop_length=4, window=torch.hann_window(16, dtype=torch.float64), return_complex=True), 16, hop_length=4, window=torch.hann_window(16, dtype=torch.float64)),
    "istft_length_normalized": lambda: torch.istft(torch.view_as_complex(S([9, 7, 2], 0.45, 0.3).contiguous()), 16, hop_length=4, window=torch.hann_window(16, dtype=torch.float64), normalized=True, length=35),
    "istft_odd_nocenter": lambda: torch.istft(torch.view_as_complex(S([5, 6, 2], 0.45, 0.3).contiguous()), 9, hop_length=3, window=torch.hann_window(9, dtype=torch.float64) + 0.1, center=False),
    # Discrete Fourier transforms (ops/fft.h), complex results through their real view.
    "fft_n_pad_dim0": lambda: torch.view_as_real(torch.fft.fft(Z([5, 3]), n=7, dim=0)),
    "fft_real_input_trim_ortho": lambda: torch.view_as_real(torch.fft.fft(S([2, 9], 0.8, 0.1), n=6, norm="ortho")),
    "ifft_forward_norm": lambda: torch.view_as_real(torch.fft.ifft(Z([2, 10]), norm="forward")),
    "rfft_odd_dim0": lambda: torch.view_as_real(torch.fft.rfft(S([9, 2], 0.6, 0.3), dim=0)),
    "rfft_even_pad": lambda: torch.view_as_real(torch.fft.rfft(S([3, 10], 0.6, 0.3), n=12)),
    "irfft_default_n": lambda: torch.fft.irfft(Z([2, 6], 0.5, 0.2)),
    "irfft_odd_n_ortho": lambda: torch.fft.irfft(Z([2, 6], 0.5, 0.2), n=9, norm="ortho"),
    "irfft_n_longer": lambda: torch.fft.irfft(Z([4], 0.5, 0.2), n=12),
    "hfft_default": lambda: torch.fft.hfft(Z([2, 5], 0.3, 0.7)),
    "hfft_odd_forward": lambda: torch.fft.hfft(Z([2, 5], 0.3, 0.7), n=7, norm="forward"),
    "ihfft_odd": lambda: torch.view_as_real(torch.fft.ihfft(S([2, 7], 0.45, 0.2)).resolve_conj()),
    "fft2_s": lambda: torch.view_as_real(torch.fft.fft2(Z([2, 4, 5]), s=(3, 6))),
    "ifft2_dims": lambda: torch.view_as_real(torch.fft.ifft2(Z([3, 4, 5]), dim=(0, 2), norm="ortho")),
    "fftn_all": lambda: torch.view_as_real(torch.fft.fftn(Z([3, 4, 5]))),
    "fftn_s_only": lambda: torch.view_as_real(torch.fft.fftn(Z([3, 4, 5]), s=(5, -1))),
    "ifftn_dim": lambda: torch.view_as_real(torch.fft.ifftn(Z([3, 4, 5]), dim=(1,))),
    "rfftn_all": lambda: torch.view_as_real(torch.fft.rfftn(S([3, 4, 5], 0.6, 0.3))),
    "rfft2_s": lambda: torch.view_as_real(torch.fft.rfft2(S([2, 4, 6], 0.6, 0.3), s=(5, 7))),
    "irfftn_all": lambda: torch.fft.irfftn(Z([3, 4, 5], 0.5, 0.2)),
    "irfft2_s": lambda: torch.fft.irfft2(Z([2, 4, 5], 0.5, 0.2), s=(3, 7), norm="forward"),
    "hfft2_default": lambda: torch.fft.hfft2(Z([2, 3, 4], 0.3, 0.7)),
    "ihfft2_default": lambda: torch.view_as_real(torch.fft.ihfft2(S([2, 3, 5], 0.45, 0.2)).resolve_conj()),
    "hfftn_s": lambda: torch.fft.hfftn(Z([3, 4], 0.3, 0.7), s=(3, 5), dim=(0, 1), norm="ortho"),
    "ihfftn_dims": lambda: torch.view_as_real(torch.fft.ihfftn(S([3, 4, 6], 0.45, 0.2), dim=(0, 2)).resolve_conj()),
    "fft_prime_bluestein": lambda: torch.view_as_real(torch.fft.fft(Z([2, 37], 0.21, 0.4))),
    "fft_mixed_radix_7_11": lambda: torch.view_as_real(torch.fft.fft(Z([1, 77], 0.21, 0.4))),
    "fftfreq_even": lambda: torch.fft.fftfreq(8, 0.5),
    "fftfreq_odd": lambda: torch.fft.fftfreq(7),
    "rfftfreq_odd": lambda: torch.fft.rfftfreq(9, 2.0),
    "fftshift_all": lambda: torch.fft.fftshift(S([3, 5])),
    "ifftshift_dim": lambda: torch.fft.ifftshift(S([3, 5]), dim=(1,)),
    "fft_grads": lambda: fft_grads(),
    # Complex tensors (ops/complex.h), compared through their real view.
    "complex_broadcast": lambda: torch.view_as_real(torch.complex(S([2, 3]), S([3], 0.7, 0.2))),
    "polar": lambda: torch.view_as_real(torch.polar(S([2, 3]).abs() + 0.1, S([2, 3], 0.9, 0.3) * 3)),
    "complex_arithmetic": lambda: torch.view_as_real(Z([2, 3]) * Z([3], 0.6, 0.4) + Z([2, 3]) - Z([3], 0.6, 0.4) * 2 - S([2, 3], 0.2, 0.5)),
    "complex_abs": lambda: Z([2, 3]).abs(),
    "complex_angle": lambda: torch.angle(Z([2, 3])),
    "complex_conj_neg": lambda: torch.view_as_real(-torch.conj(Z([2, 3])).resolve_conj()),
    "complex_isreal": lambda: torch.isreal(torch.complex(S([4]), torch.tensor([0.0, 1.0, 0.0, -2.0]))).double(),
    "angle_real": lambda: torch.angle(torch.tensor([-2.0, 0.0, 3.0, float("nan"), -0.0, -float("inf")])),
    "angle_int": lambda: torch.angle(L([-2, 0, 3])).double(),
    "complex_sum_dim": lambda: torch.view_as_real(Z([2, 3, 4]).sum([0, -1], keepdim=True)),
    "complex_mean": lambda: torch.view_as_real(Z([2, 3]).mean()),
    "complex_div": lambda: torch.view_as_real(torch.cat([(Z([2, 3]) / Z([3], 0.6, 0.4)).flatten(), (Z([2, 3]) / (S([3], 0.5, 0.2) + 2)).flatten()])),
    "complex_exp_log_sqrt_reciprocal_sgn": lambda: torch.view_as_real(torch.stack([Z([2, 3]).exp(), Z([2, 3]).log(), Z([2, 3]).sqrt(), Z([2, 3]).reciprocal(), Z([2, 3]).sgn()])),
    "complex_matmul": lambda: torch.view_as_real(torch.cat([(Z([2, 3]) @ Z([3, 4], 0.6, 0.4)).flatten(), (Z([2, 2, 3], 0.2, 0.9) @ Z([3, 4], 0.6, 0.4)).flatten()])),
    "complex_prod": lambda: torch.view_as_real(torch.cat([Z([3, 5], 0.9, 0.3).prod(1), Z([3, 5], 0.9, 0.3).prod(0), Z([3, 5], 0.9, 0.3).prod().reshape(1)])),
    "complex_ops_grad": lambda: complex_ops_grad(),
    "complex_grad": lambda: complex_grad(),
    "polar_grads": lambda: polar_grads(),

    # torch::linalg (ops/linalg_functions.h).
    "linalg_solve": lambda: torch.linalg.solve(W([3, 3]) + 2 * torch.eye(3), S([3, 2], 0.5, 0.3)),
    "linalg_solve_batched_vector": lambda: torch.linalg.solve(W([2, 3, 3]) + 2 * torch.eye(3), S([3], 0.5, 0.3)),
    "linalg_solve_right": lambda: torch.linalg.solve(W([3, 3]) + 2 * torch.eye(3), S([2, 3], 0.5, 0.3), left=False),
    "linalg_solve_ex_info": lambda: torch.linalg.solve_ex(torch.stack([torch.eye(3), torch.zeros(3, 3)]), S([3]))[1],
    "linalg_solve_triangular_right": lambda: torch.linalg.solve_triangular(torch.triu(W([3, 3])) + 2 * torch.eye(3), S([2, 3], 0.5, 0.3), upper=True, left=False),
    "linalg_solve_triangular_lower_unit": lambda: torch.linalg.solve_triangular(torch.tril(W([3, 3])), S([3, 2], 0.5, 0.3), upper=False, unitriangular=True),
    "linalg_lstsq_gels": lambda: torch.linalg.lstsq(W([5, 3]), S([5, 2], 0.5, 0.3), driver="gels").solution,
    "linalg_lstsq_gels_residuals": lambda: torch.linalg.lstsq(W([5, 3]), S([5, 2], 0.5, 0.3), driver="gels").residuals,
    "linalg_lstsq_gelsy": lambda: torch.linalg.lstsq(W([5, 3]), S([5, 2], 0.5, 0.3)).solution,
    "linalg_lstsq_gelsy_rank": lambda: torch.linalg.lstsq(W([2, 5, 3]), S([2, 5, 2], 0.5, 0.3)).rank.double(),
    "linalg_lstsq_gelsd_residuals": lambda: torch.linalg.lstsq(W([5, 3]), S([5, 2], 0.5, 0.3), driver="gelsd").residuals,
    "linalg_lstsq_gelss_singular_values": lambda: torch.linalg.lstsq(W([5, 3]), S([5, 2], 0.5, 0.3), driver="gelss").singular_values,
    "linalg_lstsq_deficient": lambda: torch.linalg.lstsq(S([5, 3]), S([5, 2], 0.5, 0.3), driver="gelsd").solution,
    "linalg_lstsq_deficient_rank": lambda: torch.linalg.lstsq(S([5, 3]), S([5, 2], 0.5, 0.3), driver="gelsd").rank.double(),
    "linalg_lstsq_wide": lambda: torch.linalg.lstsq(W([3, 5]), S([3, 2], 0.5, 0.3)).solution,
    "linalg_lstsq_vector": lambda: torch.linalg.lstsq(W([5, 3]), S([5], 0.5, 0.3), driver="gels").solution,
    "linalg_eig_values": lambda: torch.view_as_real(torch.linalg.eig(W([2, 4, 4]))[0]),
    "linalg_eig_vectors": lambda: torch.view_as_real(torch.linalg.eig(W([2, 4, 4]))[1]),
    "linalg_eigvals_real": lambda: torch.view_as_real(torch.linalg.eigvals(spd(3))),
    "linalg_eigh_upper": lambda: torch.linalg.eigh(W([3, 3]), UPLO="U")[0],
    "linalg_eigvalsh": lambda: torch.linalg.eigvalsh(W([2, 3, 3])),
    "linalg_lu_P": lambda: torch.linalg.lu(W([4, 3]))[0],
    "linalg_lu_L": lambda: torch.linalg.lu(W([4, 3]))[1],
    "linalg_lu_U": lambda: torch.linalg.lu(W([4, 3]))[2],
    "linalg_ldl_LD": lambda: torch.linalg.ldl_factor(W([4, 4]) + W([4, 4]).T)[0],
    "linalg_ldl_pivots": lambda: torch.linalg.ldl_factor(W([4, 4]) + W([4, 4]).T)[1].double(),
    "linalg_ldl_solve": lambda: torch.linalg.ldl_solve(*torch.linalg.ldl_factor(W([4, 4]) + W([4, 4]).T), S([4, 2], 0.5, 0.3)),
    "linalg_householder_product": lambda: torch.linalg.householder_product(*torch.geqrf(W([4, 3]))),
    "linalg_vector_norm": lambda: torch.stack([torch.linalg.vector_norm(S([2, 3, 4]), o, dim=(1, 2)) for o in [2, 1, math.inf, -math.inf, 0, 3.5, -1.5]]),
    "linalg_vector_norm_all_keepdim": lambda: torch.linalg.vector_norm(S([2, 3, 4]), 3, keepdim=True),
    "linalg_matrix_norm": lambda: torch.stack([torch.linalg.matrix_norm(W([2, 3, 4]), o) for o in ["fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf]]),
    "linalg_matrix_norm_dims_keepdim": lambda: torch.cat([torch.linalg.matrix_norm(W([3, 2, 4]), o, dim=(2, 0), keepdim=True).flatten() for o in ["fro", "nuc", 1, -2, math.inf]]),
    "linalg_norm": lambda: torch.stack([torch.linalg.norm(S([2, 3, 4])), torch.linalg.norm(W([3, 4]), "nuc"), torch.linalg.norm(S([4]), 3), torch.linalg.norm(W([3, 4]), math.inf), torch.linalg.norm(W([3, 4]), -2)]),
    "linalg_norm_dim": lambda: torch.linalg.norm(S([2, 3, 4]), dim=(1,), keepdim=True),
    "linalg_matrix_rank": lambda: torch.stack([torch.linalg.matrix_rank(S([5, 3])), torch.linalg.matrix_rank(W([5, 3])), torch.linalg.matrix_rank(W([5, 3]), atol=0.5), torch.linalg.matrix_rank(W([5, 3]), atol=0.1, rtol=0.3), torch.linalg.matrix_rank(spd(3), hermitian=True)]).double(),
    "linalg_pinv_hermitian": lambda: torch.linalg.pinv(W([3, 3]) + W([3, 3]).T, hermitian=True),
    "linalg_multi_dot": lambda: torch.linalg.multi_dot([S([3]), W([3, 4]), W([4, 2]), S([2], 0.5, 0.3)]),
    "linalg_multi_dot_matrices": lambda: torch.linalg.multi_dot([W([2, 5]), W([5, 3]), W([3, 6]), W([6, 2])]),
    "linalg_tensorinv": lambda: torch.linalg.tensorinv((W([6, 6]) + 2 * torch.eye(6)).reshape(6, 2, 3), ind=1),
    "linalg_tensorsolve": lambda: torch.linalg.tensorsolve((W([6, 6]) + 2 * torch.eye(6)).reshape(2, 3, 6), S([2, 3], 0.5, 0.3)),
    "linalg_tensorsolve_dims": lambda: torch.linalg.tensorsolve((W([6, 6]) + 2 * torch.eye(6)).reshape(6, 2, 3), S([2, 3], 0.5, 0.3), dims=(0,)),
    "linalg_svd_full_S": lambda: torch.linalg.svd(W([2, 5, 3]))[1],

    # torch::special (ops/special_functions.h), over each function's ranges.
    "special_i0e_i1e": lambda: torch.stack([torch.special.i0e(SPECIAL_X), torch.special.i1e(SPECIAL_X)]),
    "special_k": lambda: torch.stack([f(SPECIAL_X) for f in [torch.special.modified_bessel_k0, torch.special.modified_bessel_k1, torch.special.scaled_modified_bessel_k0, torch.special.scaled_modified_bessel_k1]]),
    "special_j_y": lambda: torch.stack([f(SPECIAL_X) for f in [torch.special.bessel_j0, torch.special.bessel_j1, torch.special.bessel_y0, torch.special.bessel_y1, torch.special.spherical_bessel_j0]]),
    "special_modified_i": lambda: torch.stack([torch.special.modified_bessel_i0(SPECIAL_X), torch.special.modified_bessel_i1(SPECIAL_X)]),
    "special_airy_ai": lambda: torch.special.airy_ai(torch.tensor([-30.0, -12.0, -10.9, -10.7, -8.0, -5.0, -2.0, -0.5, 0.0, 1e-9, 0.5, 2.0, 5.0, 10.0, 30.0, 110.0])),
    "special_normal": lambda: torch.stack([f(SPECIAL_X) for f in [torch.special.erfcx, torch.special.ndtr, torch.special.log_ndtr]]),
    "special_ndtri": lambda: torch.special.ndtri(torch.tensor([0.0, 1e-300, 1e-20, 1e-5, 0.02, 0.3, 0.5, 0.51, 0.9, 0.999999, 1.0, 1.5, -0.1])),
    "special_entr_expit": lambda: torch.stack([torch.special.entr(SPECIAL_X), torch.special.expit(SPECIAL_X)]),
    "special_xlog1py": lambda: torch.special.xlog1py(torch.tensor([0.0, 0.0, 2.0, -1.5, 3.0]), torch.tensor([float("nan"), 0.5, 0.5, 3.0, -1.0])),
    "special_zeta": lambda: torch.special.zeta(torch.tensor([2.0, 3.5, 1.0, 0.5, 2.0, 4.0, 30.0, 2.0]), torch.tensor([1.0, 0.7, 2.0, 1.0, -1.0, -1.5, 1.3, 50.0])),
    "special_polynomials": lambda: torch.stack([f(SPECIAL_POLY_X, SPECIAL_POLY_N) for f in [torch.special.chebyshev_polynomial_t, torch.special.chebyshev_polynomial_u, torch.special.chebyshev_polynomial_v, torch.special.chebyshev_polynomial_w, torch.special.shifted_chebyshev_polynomial_t, torch.special.shifted_chebyshev_polynomial_u, torch.special.shifted_chebyshev_polynomial_v, torch.special.shifted_chebyshev_polynomial_w, torch.special.hermite_polynomial_h, torch.special.hermite_polynomial_he, torch.special.laguerre_polynomial_l, torch.special.legendre_polynomial_p]]),
    "special_polynomial_scalar_n": lambda: torch.special.legendre_polynomial_p(S([5]), 3),
    "special_grads": lambda: special_grads(),
    "special_exact": lambda: special_exact(),
    "special_tiny_exact": lambda: special_tiny_exact(),

    "unique_dim_values": lambda: torch.unique(L([[1, 2, 1, 3, 2], [0, 5, 0, 5, 5], [2, 2, 2, 2, 2]]), dim=1).double(),
    "unique_dim_inverse": lambda: torch.unique(L([[1, 2, 1, 3, 2], [0, 5, 0, 5, 5], [2, 2, 2, 2, 2]]), dim=1, return_inverse=True)[1].double(),
    "unique_dim_counts": lambda: torch.unique(L([[1, 2, 1, 3, 2], [0, 5, 0, 5, 5], [2, 2, 2, 2, 2]]), dim=1, return_counts=True)[1].double(),
    "unique_dim_float_rows": lambda: torch.unique(torch.tensor([[0.5, -1.0], [0.5, -2.0], [-3.0, 7.0], [0.5, -1.0]]), dim=0),
    "lbfgs_strong_wolfe": lambda: lbfgs_rosenbrock(steps=2, lr=1.0, line_search_fn="strong_wolfe"),
    "lbfgs_fixed_step": lambda: lbfgs_rosenbrock(steps=3, lr=0.05, max_iter=6),
    # at::upsample_*: scales other than the sizes' ratio set the sampled positions.
    "upsample_nearest1d_scale": lambda: torch._C._nn.upsample_nearest1d(S([2, 3, 4]), [7], 1.5),
    "upsample_nearest2d": lambda: torch._C._nn.upsample_nearest2d(S([1, 2, 3, 4]), [5, 7]),
    "upsample_nearest2d_scales": lambda: torch._C._nn.upsample_nearest2d(S([1, 2, 3, 4]), [5, 7], 1.5, 2.0),
    "upsample_nearest3d": lambda: torch._C._nn.upsample_nearest3d(S([1, 1, 2, 3, 4]), [3, 5, 7]),
    "upsample_linear1d_align": lambda: torch._C._nn.upsample_linear1d(S([2, 3, 4]), [7], True),
    "upsample_linear1d_scale": lambda: torch._C._nn.upsample_linear1d(S([2, 3, 4]), [7], False, 1.5),
    "upsample_bilinear2d_scales": lambda: torch._C._nn.upsample_bilinear2d(S([1, 2, 3, 4]), [5, 7], False, 1.5, 2.0),
    "upsample_bicubic2d_scales": lambda: torch._C._nn.upsample_bicubic2d(S([1, 2, 3, 4]), [5, 7], False, 1.5, 2.0),
    "upsample_trilinear3d_scales": lambda: torch._C._nn.upsample_trilinear3d(S([1, 1, 2, 3, 4]), [3, 5, 7], False, 2.0, 1.5, 2.0),
}


def num(x):
    x = float(x)
    if math.isnan(x):
        return "NAN"
    if math.isinf(x):
        return "INFINITY" if x > 0 else "-INFINITY"
    return repr(x)


def fmt(xs):
    return ", ".join(num(x) for x in xs)


with open(__file__.replace("gen_libtorch_goldens.py", "libtorch_goldens.h"), "w") as out:
    out.write(f"// Generated by gen_libtorch_goldens.py with PyTorch {torch.__version__}; do not edit.\n")
    out.write("#pragma once\n#include <cmath>\n#include <cstdint>\n#include <map>\n#include <string>\n#include <vector>\n")
    out.write("namespace libtorch_goldens {\nstruct Golden {\n  std::vector<int64_t> shape;\n  std::vector<double> values;\n};\n")
    out.write("inline const std::map<std::string, Golden> kGoldens = {\n")
    for name, f in CASES.items():
        y = f().detach().double()
        shape = ", ".join(str(s) for s in y.shape)
        out.write(f'    {{"{name}", {{{{{shape}}}, {{{fmt(y.flatten().tolist())}}}}}}},\n')
    out.write("};\n}  // namespace libtorch_goldens\n")
