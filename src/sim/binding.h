// What binds a simulated workload: which resource its tasks waited for, read
// from what the simulator records (where the tasks' time went, allocation
// over time, the shared services' load) rather than guessed from the inputs.
//
// A task's life from ready to end is: waiting for a node (pending), then
// holding its node through its overhead, its own run, and any time in a
// shared service (queued or served: an upload, a status update). So:
//   - a shared service whose demand alone is most of the makespan binds
//     (Bottleneck, simulator.h);
//   - else, when tasks waited for nodes (pending is at least 5% of their
//     time), the autoscaler's delay binds if nodes were being provisioned for
//     most of that wait; else a shared service binds if tasks held at least
//     10% of the scarcer resource's allocated time inside it (it is not busy
//     on average, yet holds nodes while they wait); else the nodes' CPU or
//     memory or another resource they ask for (a GPU), whichever was
//     allocated most;
//   - else a shared service that holds 10% of the task time still binds (it
//     lengthens every run); else nothing does: the runs' own steps set the
//     pace.
#pragma once

#include <string>

#include "sim/simulator.h"

namespace kfpbench::sim {

// kResource: a resource beyond CPU and memory (an accelerator), named in
// Binding::resource.
enum class Binds { kNothing, kCpu, kMemory, kResource, kAutoscaler, kApi, kStore };

// "nothing", "nodes' CPU", "nodes' memory", "the autoscaler's delay", "the
// API server", "the artifact store".
const char* BindsName(Binds b);
// "nothing", "cpu", "memory", "autoscaler", "api", "artifact_store": for JSON.
const char* BindsKey(Binds b);

struct Binding {
  Binds what = Binds::kNothing;
  // The figures it was named by, each a share of the tasks' time:
  double pending_share = 0;       // waiting for a node, of ready-to-end
  double provisioning_share = 0;  // of that wait, while nodes were being provisioned
  double api_share = 0;           // held inside the API, of the scarcer resource's allocation
  double store_share = 0;         // held inside the artifact store, likewise
  std::string text;               // what binds and the numbers that say so
  std::string resource;           // kResource: its name ("nvidia.com/gpu")
};

Binding WhatBinds(const SimResult& r);

}  // namespace kfpbench::sim
