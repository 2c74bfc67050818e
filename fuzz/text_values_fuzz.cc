// Small text values from outside: Kubernetes quantities, durations (ours and
// protobuf's), RFC 3339 times, KFP's 6-field cron, URLs and query strings,
// and importers' artifact URIs (which must never name a path outside their
// roots).
#include "fuzz/fuzz_support.h"
#include "http/url.h"
#include "ir/artifact_uri.h"
#include "ir/pipeline_spec.h"
#include "ir/quantity.h"
#include "util/cron.h"
#include "util/time.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace kfpbench;
  std::string_view text = fuzz::Text(data, size);
  (void)ir::ParseQuantityCpu(text);
  (void)ir::ParseQuantityMemory(text);
  (void)ir::ParseProtoDuration(text);
  (void)ParseDuration(text);
  (void)ParseRfc3339(text);
  if (auto cron = CronSchedule::Parse(std::string(text)); cron.ok()) {
    (void)cron->Next(WallTime(std::chrono::seconds(1'700'000'000)));
  }
  (void)http::ParseUrl(text);
  (void)http::ParseQuery(text);
  static const ir::ArtifactRoots roots{"/nonexistent-kfpbench/work/objects",
                                       {"/nonexistent-kfpbench/work"}};
  if (auto path = ir::LocalPathForUri(text, roots); path.ok()) {
    // Whatever was accepted lies below a root: a confinement that leaks is a crash.
    if (path->rfind("/nonexistent-kfpbench/work/", 0) != 0) __builtin_trap();
  }
  return 0;
}
