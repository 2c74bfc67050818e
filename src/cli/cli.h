// The command line: flags in, parts wired together, exit codes out.
// Exit codes: 0 done; 1 the benchmark ran but a scenario failed (or compare
// found a regression); 2 bad input or unreachable target; 3 compare's samples
// could not have shown a regression of --min-effect (inconclusive); 99 a
// threshold failed; 130 interrupted (partial results were written).
#pragma once

namespace kfpbench::cli {

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitBadInput = 2;
constexpr int kExitInconclusive = 3;
constexpr int kExitThresholdsFailed = 99;
constexpr int kExitInterrupted = 130;

int Main(int argc, char** argv);

}  // namespace kfpbench::cli
