// A shared service that tasks queue for: the API server and its database (a
// fixed service time per call, FIFO over `servers` workers: M/D/c when calls
// arrive at random), or the artifact store's bandwidth (work is bytes over
// bandwidth, served FIFO or shared equally among transfers in progress:
// processor sharing, as concurrent TCP streams share a link). This is what
// makes scaling non-linear: past its capacity, more nodes only lengthen the
// queue in front of it.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <queue>
#include <vector>

#include "engine/event_loop.h"
#include "util/time.h"

namespace kfpbench::sim {

class SharedServer {
 public:
  enum class Discipline { kFifo, kProcessorSharing };

  // `servers` workers for FIFO; processor sharing serves everything in
  // progress at a combined rate of one unit of work per second.
  SharedServer(engine::EventLoop& loop, Discipline discipline, int servers = 1);

  // Serves `work` (time at full speed), then calls `done` on the loop.
  void Submit(Duration work, std::function<void()> done);

  uint64_t served() const { return served_; }
  // Capacity-weighted busy time (FIFO: summed service over the workers), so
  // busy() / elapsed is the utilisation.
  Duration busy() const;
  // All the work submitted, at full speed (seconds of one server; for FIFO
  // divide by the servers for the time they need together).
  Duration work_submitted() const { return work_submitted_; }
  int servers() const { return servers_; }
  // Requests waiting or in service now.
  size_t in_system() const { return in_system_; }
  // Sum over requests of the time from Submit to done, for the mean.
  Duration total_sojourn() const { return total_sojourn_; }

 private:
  struct Waiting {
    Duration work;
    WallTime submitted;
    std::function<void()> done;
  };
  void StartFifo(Waiting w);
  void Account();  // processor sharing: advance every transfer to now
  void Reschedule();
  void OnPsTimer();

  engine::EventLoop& loop_;
  Discipline discipline_;
  int servers_;
  uint64_t served_ = 0;
  size_t in_system_ = 0;
  Duration total_sojourn_{0};
  Duration work_submitted_{0};
  // FIFO.
  int busy_servers_ = 0;
  std::deque<Waiting> queue_;
  Duration busy_{0};
  // Processor sharing: each transfer finishes when the service every one of
  // them has received (`attained_`, seconds) reaches its tag.
  struct Transfer {
    double tag;
    uint64_t seq;
    WallTime submitted;
    std::function<void()> done;
    bool operator>(const Transfer& o) const { return tag != o.tag ? tag > o.tag : seq > o.seq; }
  };
  std::priority_queue<Transfer, std::vector<Transfer>, std::greater<>> transfers_;
  double attained_ = 0;
  WallTime last_{};
  uint64_t seq_ = 0;
  engine::TimerId timer_ = 0;
  bool timer_set_ = false;
  WallTime busy_since_{};
};

}  // namespace kfpbench::sim
