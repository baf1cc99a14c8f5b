#pragma once
// Process workers for data::DataLoader (DataLoaderOptions().workers(n)
// .process_workers(true)): n forked processes assemble batches, which come
// back in shared memory through a Queue and are handed out in order — the
// same batches in the same order as with 0 workers. Batch i goes to worker
// i mod n, at most n * prefetch_factor batches ahead. Each worker is seeded
// (manual_seed) with the epoch's base seed (drawn from the default
// generator, so manual_seed before iterating makes it reproducible) plus its
// id, runs worker_init_fn(id), and knows itself through get_worker_info().
// A worker that dies is reported within a fraction of a second ("DataLoader
// worker (pid N) is killed by signal: Segmentation fault."), an exception
// in a worker reaches the loop with its message, and `timeout` bounds the
// wait for a batch. Breaking out of an epoch stops the workers (or, with
// persistent_workers, lets them go on to the next epoch, keeping their
// dataset's state).
//
// Including this header (brasa.h, torch.h and multiprocessing.h do)
// registers the process workers with the DataLoader.

namespace brasa::multiprocessing::detail {
bool register_dataloader_process_workers();
// One registration per program (the reference keeps the object file linked).
inline const bool dataloader_process_workers_registered = register_dataloader_process_workers();
}  // namespace brasa::multiprocessing::detail
