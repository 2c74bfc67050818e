#include "report/write_reports.h"

#include <memory>

#include "report/reporter.h"

namespace kfpbench::report {

ReportOptions DefaultReportOptions(const std::filesystem::path& results_dir) {
  ReportOptions o;
  o.html = results_dir / "report.html";
  return o;
}

Status WriteReports(const results::BenchmarkResults& results, const ReportOptions& options) {
  std::vector<std::unique_ptr<Reporter>> reporters;
  if (!options.html.empty()) {
    reporters.push_back(std::make_unique<HtmlReporter>(options.html, options.thresholds));
  }
  if (!options.csv_dir.empty()) reporters.push_back(std::make_unique<CsvReporter>(options.csv_dir));
  if (!options.junit.empty()) {
    reporters.push_back(std::make_unique<JunitReporter>(options.junit, options.thresholds));
  }
  if (!options.markdown.empty()) {
    reporters.push_back(std::make_unique<MarkdownReporter>(options.markdown, options.thresholds));
  }
  std::string errors;
  for (const auto& r : reporters) {
    if (Status s = r->Report(results); !s.ok()) {
      if (!errors.empty()) errors += "; ";
      errors += s.error().message;
    }
  }
  if (!errors.empty()) return Error{errors};
  return Ok();
}

}  // namespace kfpbench::report
