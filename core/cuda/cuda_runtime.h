#pragma once
// Brasa's CUDA device runtime (device/device_runtime.h): device count,
// current device, streams and events through the CUDA runtime API, memory
// through the caching allocator. Registered for kCUDA on first use in CUDA
// builds; with no usable device, device_count() is 0 and every CUDA op says
// why (no_device_reason).
#include <string>

namespace brasa {
class DeviceRuntime;
}

namespace brasa::cuda {

// Number of devices; 0 when the driver has none (or cannot be loaded).
int device_count_or_zero();
// Why there is no device ("cudaGetDeviceCount: CUDA driver version is
// insufficient for CUDA runtime version"), or "" when there is one.
const std::string& no_device_reason();
// Called before any use of the device by `op`: an error when there is no
// device, or when this is a forked child of a process that had initialised
// CUDA (CUDA cannot be used there; use the spawn start method).
void lazy_init(const char* op);
// After lazy_init: `device`, or the current device for -1; an error naming
// `op` for an index past the devices present.
int checked_device(const char* op, int device);
DeviceRuntime* runtime();

}  // namespace brasa::cuda
