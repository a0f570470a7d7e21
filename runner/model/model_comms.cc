#include "runner/model/model_comms.h"

namespace fk::runner {
namespace {

std::unique_ptr<collectives::Communicator> on_device(kernels::Backend& backend, collectives::Communicator* group) {
  if (backend.kind() == DeviceKind::kCpu || group == nullptr || group->size() <= 1) return nullptr;
  return backend.communicator(*group);
}

}  // namespace

ModelCommunicators::ModelCommunicators(kernels::Backend& backend, collectives::GroupComms& groups)
    : groups_(groups), tp_(on_device(backend, groups.tp.get())), pp_(on_device(backend, groups.pp.get())) {}

ModelComms ModelCommunicators::comms() const {
  return ModelComms{tp_ ? tp_.get() : groups_.tp.get(), pp_ ? pp_.get() : groups_.pp.get()};
}

}  // namespace fk::runner
