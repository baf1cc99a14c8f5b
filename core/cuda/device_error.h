#pragma once
// Bad input that only a kernel sees (a class target of nll_loss outside its
// classes) cannot fail the launch without a synchronisation, which would
// cost every call a round trip to the device. The kernel writes it to a slot
// in mapped pinned memory instead, and the host raises it as a brasa::Error
// at its next synchronisation with the device (a copy to the host such as
// item() or cpu(), synchronize(), a stream or event wait). Like PyTorch's
// device-side asserts the error comes late, but it names the op and value,
// and the CUDA context stays usable.
#include <brasa/ops/cuda/loop.h>

namespace brasa::cuda {

// The slot that kernels report to (made on first use; the same for every device).
kernels::DeviceErrorSlot* device_error_slot();
// Throws the first error reported since the last call, clearing it; called
// after each synchronisation with the device.
void raise_device_error();

}  // namespace brasa::cuda
