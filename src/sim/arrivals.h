// When a workload's runs arrive, one schedule per kind of arrival (as
// MLPerf LoadGen gives each scenario its own scheduler): all at once, at a
// rate, as recorded (a CSV of offsets), or in a closed loop. The simulation
// asks the schedule and never the arrival kind.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>

#include "sim/model.h"
#include "util/result.h"
#include "util/time.h"

namespace kfpbench::sim {

class ArrivalSchedule {
 public:
  virtual ~ArrivalSchedule() = default;

  // Whether the workload's numbers make a schedule (runs, rate, concurrency).
  virtual Status Check() const = 0;
  // Runs submitted in all.
  virtual int64_t total() const = 0;
  // When arrival `i` (0-based, in arrival order) is due, from the start.
  virtual Duration Due(int64_t i) const = 0;
  // Its own parameters and pipeline (a recorded row); null: the workload's.
  virtual const Arrival* Row(int64_t i) const {
    (void)i;
    return nullptr;
  }
  // Runs in flight at which the next arrival waits for one to end; a run's
  // end then lets the next in (the closed loop).
  virtual int64_t concurrency() const { return std::numeric_limits<int64_t>::max(); }
  bool closed() const { return concurrency() != std::numeric_limits<int64_t>::max(); }
  // First to last arrival for open-loop schedules (rate, recorded); zero
  // for the others, whose arrivals follow the cluster, not the clock.
  virtual Duration Window() const { return Duration::zero(); }
};

// The schedule of `workload`'s arrival kind: the one place that reads it.
// It refers to `workload`, which must outlive it.
std::unique_ptr<ArrivalSchedule> ScheduleOf(const WorkloadSpec& workload);

// Runs the workload submits in all (a recorded schedule's rows, else `runs`).
int64_t RunCount(const WorkloadSpec& workload);

}  // namespace kfpbench::sim
