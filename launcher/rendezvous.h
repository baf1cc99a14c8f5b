#pragma once
// How the nodes of a job agree on each attempt: who gets which ranks, the
// port of the workers' store, and — when a worker fails anywhere — whether
// every node restarts its group or gives up.
//
// One node: all of it is local. Several nodes: node 0's brasarun runs a small
// server on --master-port and every node (node 0 included) talks to it in
// text lines:
//   node → server   join <node> <nproc> <max_restarts> <run_id|->
//                   failed <attempt> <reason> | abort <reason> | done <attempt>
//   server → node   start <attempt> <world> <rank_base> <worker_port> <run_id> <nnodes>
//                   restart <reason> | abort <reason> | finish | error <reason>

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "options.h"
#include "output.h"
#include "workers.h"

namespace brasarun {

struct Decision {
  enum Kind { kRestart, kAbort, kFinish } kind;
  std::string reason;  // the failure that led to it (empty for kFinish)
};

// The rendezvous failed: timeout, a node that does not fit, lost contact.
struct RendezvousError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Coordinator {
 public:
  virtual ~Coordinator() = default;
  // Waits until every node joined the next attempt. Returns nullopt when a
  // stop signal arrived meanwhile; throws RendezvousError.
  virtual std::optional<Assignment> join() = 0;
  // A descriptor to poll while the workers run (-1: none).
  virtual int fd() const { return -1; }
  // This node's workers failed: `reason` names the rank and how.
  virtual void report_failure(const std::string& reason) = 0;
  // This node stops for good (it got a signal).
  virtual void report_abort(const std::string& reason) = 0;
  // All of this node's workers succeeded.
  virtual void report_success() = 0;
  // What the job does next, once known. Never blocks.
  virtual std::optional<Decision> decision() = 0;
};

// Starts node 0's server when the job has several nodes (and prints its
// port when it picked one).
std::unique_ptr<Coordinator> make_coordinator(const Options& options, Output& output);

}  // namespace brasarun
