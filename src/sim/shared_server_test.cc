#include "sim/shared_server.h"

#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "sim/virtual_loop.h"

namespace kfpbench::sim {
namespace {

using namespace std::chrono_literals;

// Submits one request per work item at time zero; returns when each ended.
std::vector<double> EndTimes(SharedServer::Discipline discipline, int servers,
                             const std::vector<Duration>& work) {
  VirtualLoop loop;
  SharedServer server(loop, discipline, servers);
  std::vector<double> ends(work.size(), -1);
  for (size_t i = 0; i < work.size(); ++i) {
    server.Submit(work[i],
                  [&, i] { ends[i] = ToSeconds(loop.Now() - VirtualLoop::DefaultEpoch()); });
  }
  loop.RunUntilIdle();
  EXPECT_EQ(server.served(), work.size());
  EXPECT_EQ(server.in_system(), 0u);
  return ends;
}

TEST(SharedServer, FifoServesInArrivalOrder) {
  auto ends = EndTimes(SharedServer::Discipline::kFifo, 1, {1s, 1s, 1s});
  EXPECT_EQ(ends, (std::vector<double>{1, 2, 3}));
  ends = EndTimes(SharedServer::Discipline::kFifo, 2, {1s, 1s, 1s, 1s});
  EXPECT_EQ(ends, (std::vector<double>{1, 1, 2, 2}));
}

TEST(SharedServer, ProcessorSharingSplitsTheRateEqually) {
  // Three at once share: the 1 s job is done at 3 s, then two share, ...
  auto ends = EndTimes(SharedServer::Discipline::kProcessorSharing, 1, {1s, 2s, 3s});
  ASSERT_EQ(ends.size(), 3u);
  EXPECT_NEAR(ends[0], 3, 1e-6);
  EXPECT_NEAR(ends[1], 5, 1e-6);
  EXPECT_NEAR(ends[2], 6, 1e-6);
}

TEST(SharedServer, ProcessorSharingLateArrivalSlowsTheFirst) {
  VirtualLoop loop;
  SharedServer server(loop, SharedServer::Discipline::kProcessorSharing);
  double a = 0, b = 0;
  auto at = [&] { return ToSeconds(loop.Now() - VirtualLoop::DefaultEpoch()); };
  server.Submit(2s, [&] { a = at(); });
  loop.After(1s, [&] { server.Submit(1s, [&] { b = at(); }); });
  loop.RunUntilIdle();
  // At 1 s the first has 1 s left; both then get half the rate.
  EXPECT_NEAR(a, 3, 1e-6);
  EXPECT_NEAR(b, 3, 1e-6);
  EXPECT_NEAR(ToSeconds(server.busy()), 3, 1e-6);
}

// M/D/1: Poisson arrivals at rate lambda, a fixed service time D. The
// Pollaczek-Khinchine formula gives the mean wait in queue
// Wq = rho * D / (2 (1 - rho)), rho = lambda * D.
TEST(SharedServer, FifoMatchesMD1MeanWait) {
  VirtualLoop loop;
  SharedServer server(loop, SharedServer::Discipline::kFifo);
  const double lambda = 0.7, service = 1.0;
  const int n = 200'000;
  std::mt19937_64 rng(42);
  std::exponential_distribution<double> gap(lambda);
  int arrived = 0;
  std::function<void()> arrive = [&] {
    server.Submit(FromSeconds(service), [] {});
    if (++arrived < n) loop.After(FromSeconds(gap(rng)), arrive);
  };
  loop.Post(arrive);
  loop.RunUntilIdle();
  ASSERT_EQ(server.served(), static_cast<uint64_t>(n));
  double rho = lambda * service;
  double expected_wait = rho * service / (2 * (1 - rho));  // 1.1667 s
  double mean_wait = ToSeconds(server.total_sojourn()) / n - service;
  EXPECT_NEAR(mean_wait, expected_wait, 0.05 * expected_wait);
}

}  // namespace
}  // namespace kfpbench::sim
