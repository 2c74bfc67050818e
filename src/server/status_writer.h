// Writes the engine's run statuses to the store on a thread of its own, so
// that the engine's loop does not wait for JSON and SQLite, and keeps only the
// newest status of each run while earlier ones wait: a run that changed three
// times before its turn is written once, in its latest state. Statuses of one
// run land in the order they were submitted, so the API never shows a state
// older than one it showed; a status the store refuses is tried again every
// second until it lands or a newer one replaces it.
#pragma once

#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "store/store.h"
#include "util/time.h"

namespace kfpbench::server {

class StatusWriter {
 public:
  // What :retry keeps of a run (Store::PutRetryTasks), written before its status.
  using KeptTasks = std::vector<std::pair<std::string, std::string>>;

  explicit StatusWriter(store::Store& store);
  // Writes what is still waiting (each once more), then stops.
  ~StatusWriter();
  StatusWriter(const StatusWriter&) = delete;
  StatusWriter& operator=(const StatusWriter&) = delete;

  // Queues `status` for `run_id`, replacing a queued older one. Thread-safe.
  void Submit(const std::string& run_id, store::RunStatus status,
              std::optional<KeptTasks> kept = std::nullopt);
  // Writes the run's waiting status, if any, on the caller's thread once a
  // write of the run already under way has ended; false when none waited.
  bool WriteNow(const std::string& run_id);
  // Returns once every status submitted before the call was written (or
  // refused and left to be tried again). Thread-safe.
  void Drain();

 private:
  struct Pending {
    store::RunStatus status;
    std::optional<KeptTasks> kept;
    bool refused = false;  // the store refused it: try again at retry_at
    WallTime retry_at{};
  };
  void Run();
  // Writes one status; false (and logs) when the store refuses it.
  bool Write(const std::string& run_id, Pending& p);

  store::Store& store_;
  std::mutex mu_;
  std::condition_variable changed_;
  std::map<std::string, Pending> pending_;  // by run id, the newest status of each
  std::set<std::string> writing_;           // taken by a writer, not yet written
  uint64_t submitted_ = 0, settled_ = 0;    // statuses submitted, and written or dropped
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace kfpbench::server
