// Test support for the capture tests: a history is made on the embedded
// backend, and it is captured once every run of it has ended.
#pragma once

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "kfp/client.h"
#include "kfp/runtime_state.h"

namespace kfpbench::testing {

// Every run of `ids` as it ended, read again until it did; a failure of the
// test (and the runs that ended so far) when one is not read or has not
// ended within `limit`.
// `ids`: any range of run ids.
template <typename Ids>
std::vector<kfp::Run> WaitForRunsToEnd(kfp::Client& client, const Ids& ids,
                                       std::chrono::seconds limit) {
  std::vector<kfp::Run> ended;
  const auto give_up = std::chrono::steady_clock::now() + limit;
  for (const auto& id : ids) {
    for (;;) {
      auto run = client.GetRun(id);
      if (!run.ok()) {
        ADD_FAILURE() << "GetRun " << id << ": " << run.error().message;
        return ended;
      }
      if (IsTerminal(run->state)) {
        ended.push_back(std::move(*run));
        break;
      }
      if (std::chrono::steady_clock::now() >= give_up) {
        ADD_FAILURE() << "run " << id << " never ended";
        return ended;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  return ended;
}

}  // namespace kfpbench::testing
