#pragma once
// brasa::multiprocessing (torch.multiprocessing): shared-memory tensors
// (Tensor::share_memory_, Module::share_memory — in core), a Queue that
// passes them between processes by handle, and start_processes/spawn.
#include <brasa/multiprocessing/dataloader_workers.h>
#include <brasa/multiprocessing/processes.h>
#include <brasa/multiprocessing/queue.h>
#include <brasa/multiprocessing/sharing_strategy.h>
#include <brasa/tensor/shared_memory.h>
