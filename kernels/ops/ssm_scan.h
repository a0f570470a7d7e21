// The recurrence that selective_scan (Mamba) and ssd_scan (Mamba-2) share, for their
// fp64 references and CPU baselines. Per sequence b and channel c, over the tokens in
// order, with h = ssm_state[b, c, :] (fp32, or fp64 in the reference):
//   dt   = delta[b, t, head(c)] + delta_bias[head(c)], then softplus when asked,
//          then clamped to [dt_min, dt_max] when dt_max > 0
//   h[n] = exp(dt A(c, n)) h[n] + dt B[b, t, group(c), n] u[b, t, c]
//   y    = sum_n h[n] C[b, t, group(c), n] + D[head(c)] u[b, t, c]
//   out  = y * silu(z[b, t, c])                                   (z optional)
// A layout says what indexes what: head(c) = c / head_dim (1 for Mamba: all per
// channel); group(c) = c / (channels / groups); A(c, n) = A[c, n], or A[head(c)] for
// every n when a_per_head (Mamba-2's scalar decay a head). softplus(x) = log(1 + e^x),
// x itself above 20 (torch's threshold).
#pragma once

#include "kernels/cpu/elem.h"
#include "kernels/op.h"
#include "kernels/ops/op_util.h"

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

namespace fk::kernels::ssm {

struct ScanLayout {
  int64_t batch = 0, len = 0, channels = 0, n = 0;
  int64_t head_dim = 1;  // channels a head
  int64_t groups = 1;    // B and C hold groups x n states a token
  bool a_per_head = false;
  bool softplus = false;
  double dt_min = 0, dt_max = 0;  // the clamp, when dt_max > 0
};

// The arguments, by index in the op's list.
struct ScanArgs {
  size_t out, u, delta, a, b, c, d, z, delta_bias, state;
};

template <typename F>
F softplus(F x) {
  return x > F(20) ? x : std::log1p(std::exp(x));
}

// T: the activation element type; S: the fp32 (or, in the reference, fp64) tensors'
// type; A: the arithmetic type. Blocks of channels of one sequence keep their states in
// a local buffer while they walk the tokens.
template <typename T, typename S, typename A>
void scan(const OpCall& c, const ScanArgs& i, const ScanLayout& l) {
  const int64_t ch = l.channels, n = l.n, heads = ch / l.head_dim, gw = l.groups * n;
  const int64_t per_group = ch / l.groups;
  const T *u = c.arg(i.u).data_as<T>(), *delta = c.arg(i.delta).data_as<T>();
  const T *bm = c.arg(i.b).data_as<T>(), *cm = c.arg(i.c).data_as<T>();
  const T* z = util::present(c.arg(i.z)) ? c.arg(i.z).data_as<T>() : nullptr;
  const S* a = c.arg(i.a).data_as<S>();
  const S* dskip = util::present(c.arg(i.d)) ? c.arg(i.d).data_as<S>() : nullptr;
  const S* dbias = util::present(c.arg(i.delta_bias)) ? c.arg(i.delta_bias).data_as<S>() : nullptr;
  S* state = c.arg(i.state).data_as<S>();
  T* out = c.arg(i.out).data_as<T>();
  constexpr int64_t kBlock = 64;
  const int64_t blocks = (ch + kBlock - 1) / kBlock;
#pragma omp parallel for schedule(static) if (l.batch * l.len * ch * n > 65536)
  for (int64_t job = 0; job < l.batch * blocks; ++job) {
    const int64_t s = job / blocks, c0 = (job % blocks) * kBlock, c1 = std::min(ch, c0 + kBlock);
    std::vector<A> h(static_cast<size_t>((c1 - c0) * n));
    for (int64_t j = c0; j < c1; ++j)
      for (int64_t k = 0; k < n; ++k)
        h[static_cast<size_t>((j - c0) * n + k)] = static_cast<A>(state[(s * ch + j) * n + k]);
    for (int64_t t = 0; t < l.len; ++t) {
      const int64_t row = s * l.len + t;
      for (int64_t j = c0; j < c1; ++j) {
        const int64_t hd = j / l.head_dim;
        const T* br = bm + row * gw + j / per_group * n;
        const T* cr = cm + row * gw + j / per_group * n;
        A dt = static_cast<A>(cpu::load(delta[row * heads + hd]));
        if (dbias != nullptr) dt += static_cast<A>(dbias[hd]);
        if (l.softplus) dt = softplus(dt);
        if (l.dt_max > 0) dt = std::clamp(dt, static_cast<A>(l.dt_min), static_cast<A>(l.dt_max));
        const A x = static_cast<A>(cpu::load(u[row * ch + j]));
        A* hj = h.data() + (j - c0) * n;
        A y = 0;
        const A head_decay = l.a_per_head ? std::exp(dt * static_cast<A>(a[hd])) : A(0);
        for (int64_t k = 0; k < n; ++k) {
          const A decay = l.a_per_head ? head_decay : std::exp(dt * static_cast<A>(a[j * n + k]));
          hj[k] = decay * hj[k] + dt * static_cast<A>(cpu::load(br[k])) * x;
          y += hj[k] * static_cast<A>(cpu::load(cr[k]));
        }
        if (dskip != nullptr) y += static_cast<A>(dskip[hd]) * x;
        if (z != nullptr) {
          const A g = static_cast<A>(cpu::load(z[row * ch + j]));
          y *= g / (A(1) + std::exp(-g));
        }
        out[row * ch + j] = cpu::put<T>(y);
      }
    }
    for (int64_t j = c0; j < c1; ++j)
      for (int64_t k = 0; k < n; ++k)
        state[(s * ch + j) * n + k] = static_cast<S>(h[static_cast<size_t>((j - c0) * n + k)]);
  }
}

}  // namespace fk::kernels::ssm
