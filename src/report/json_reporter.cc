#include "report/reporter.h"
#include "results/results_json.h"

namespace kfpbench::report {

Status JsonReporter::Report(const results::BenchmarkResults& results) {
  return results::WriteResults(path_, results);
}

}  // namespace kfpbench::report
