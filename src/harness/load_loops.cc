#include "harness/load_loops.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "harness/arrivals.h"

namespace kfpbench::harness {

void DriveClosedLoop(Context& context, int workers, WallTime end,
                     const std::function<bool(int worker, int n)>& iteration) {
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w) {
    threads.emplace_back([&, w] {
      for (int n = 0; WallClock::now() < end && !context.Interrupted(); ++n) {
        if (!iteration(w, n)) {
          context.SleepUntil(WallClock::now() + context.options().poll_interval);
        }
      }
    });
  }
  for (auto& t : threads) t.join();
}

void DriveOpenLoop(Context& context, const Scenario& scenario, int senders, WallTime end,
                   const std::function<void(int n, WallTime intended)>& send) {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::pair<int, WallTime>> due;
  bool done = false;
  std::vector<std::thread> threads;
  for (int i = 0; i < senders; ++i) {
    threads.emplace_back([&] {
      for (;;) {
        std::pair<int, WallTime> arrival;
        {
          std::unique_lock lock(mu);
          cv.wait(lock, [&] { return done || !due.empty(); });
          if (due.empty()) return;
          arrival = due.front();
          due.pop_front();
        }
        send(arrival.first, arrival.second);
      }
    });
  }
  ArrivalSchedule schedule(WallClock::now(), scenario.rate_per_minute.value_or(60),
                           scenario.arrival == Scenario::Arrival::kPoisson, scenario.seed,
                           scenario.arrival_offset);
  for (int n = 0;; ++n) {
    WallTime t = schedule.Next();
    if (t >= end || !context.SleepUntil(t)) break;
    std::lock_guard lock(mu);
    due.emplace_back(n, t);
    cv.notify_one();
  }
  {
    std::lock_guard lock(mu);
    done = true;
    cv.notify_all();
  }
  for (auto& t : threads) t.join();
}

}  // namespace kfpbench::harness
