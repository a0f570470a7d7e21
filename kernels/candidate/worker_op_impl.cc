// worker_op_impl (kernels/candidate/worker.h): a model-stage op whose every call runs
// in a worker, its arguments copied into the worker's arena and its outputs back.
#include "kernels/candidate/worker.h"

#include "core/error.h"
#include "kernels/candidate/channel.h"
#include "kernels/fk_kernel.h"

#include <cstring>
#include <fmt/format.h>
#include <vector>

namespace fk::kernels {
namespace {

// Writes the contiguous bytes at `src` into `dst`, which may be strided.
void copy_strided(const Tensor& dst, const unsigned char* src) {
  if (dst.is_contiguous()) {
    std::memcpy(dst.data(), src, dst.nbytes());
    return;
  }
  const size_t es = dtype_size(dst.dtype());
  const int64_t nd = dst.dim();
  std::vector<int64_t> idx(static_cast<size_t>(nd), 0);
  auto* out = static_cast<unsigned char*>(dst.data());
  for (int64_t i = 0; i < dst.numel(); ++i) {
    int64_t off = 0;
    for (int64_t d = 0; d < nd; ++d) off += idx[static_cast<size_t>(d)] * dst.strides()[static_cast<size_t>(d)];
    std::memcpy(out + off * static_cast<int64_t>(es), src + static_cast<size_t>(i) * es, es);
    for (int64_t d = nd - 1; d >= 0; --d) {
      if (++idx[static_cast<size_t>(d)] < dst.shape()[static_cast<size_t>(d)]) break;
      idx[static_cast<size_t>(d)] = 0;
    }
  }
}


}  // namespace

OpImpl worker_op_impl(std::shared_ptr<Worker> worker, const OpImpl& fallback, std::shared_ptr<RemoteFailure> failure,
                      Backend* model) {
  OpImpl impl;
  impl.op = fallback.op;
  impl.name = worker->config().library.empty() ? fallback.name : worker->config().name;
  impl.device = DeviceKind::kCpu;
  const OpImpl* base = &fallback;
  impl.run = [worker, base, failure, model](const OpCall& call) {
    if (!failure->verdict.empty() || !worker->alive()) {
      base->run(call);
      return;
    }
    // Device tensors reach a host arena through host copies.
    const bool staged = !worker->on_device() && model != nullptr && model->kind() != DeviceKind::kCpu;
    worker->reset_arena();
    const OpCall remote = worker->copy_in(staged ? model->to_host(call) : call);
    const std::string op = worker->config().library.empty() ? base->op : worker->config().op;
    const auto reply = worker->call(op, remote);
    if (!reply) {
      *failure = worker_failure_verdict(*worker, "a model-stage call of " + op);
      base->run(call);
      return;
    }
    if (reply->code == FK_ERROR_UNSUPPORTED)
      fail(ErrorKind::kUnsupported, "{} does not support this call: {}", worker->config().name, reply->message);
    if (reply->code == sandbox::kReplyDeviceFault) {
      *failure = worker_failure_verdict(*worker, "a model-stage call of " + op);
      base->run(call);
      return;
    }
    if (reply->code != FK_OK) {
      *failure = {"RUNTIME_ERROR", fmt::format("returned error code {} in a model-stage call of {}: {}", reply->code, op,
                                               reply->message)};
      base->run(call);
      return;
    }
    const OpDef& def = OpRegistry::global().def(op);
    for (size_t i = 0; i < call.args.size() && i < def.args.size(); ++i)
      if (call.args[i].defined() && def.args[i].role != ArgRole::kIn) {
        const Tensor& dst = call.args[i];
        if (dst.device().kind != DeviceKind::kCpu && worker->on_device()) {
          worker->read_into(dst, remote.args[i]);
        } else if (dst.device().kind != DeviceKind::kCpu) {  // host arena -> the model's device
          model->copy_rows(dst, model->to_device(remote.args[i]).reshape(dst.shape()));
          model->synchronize();
        } else {
          const Tensor out = worker->on_device() ? worker->read(remote.args[i]) : remote.args[i];
          copy_strided(dst, static_cast<const unsigned char*>(out.data()));
        }
      }
  };
  return impl;
}

}  // namespace fk::kernels
