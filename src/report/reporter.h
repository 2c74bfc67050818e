// One reporter per output format behind one interface (google/benchmark's
// model): the harness measures, reporters only present.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <memory>

#include <nlohmann/json.hpp>

#include "results/results.h"
#include "util/files.h"
#include "util/result.h"

namespace kfpbench::report {

class Reporter {
 public:
  virtual ~Reporter() = default;
  virtual Status Report(const results::BenchmarkResults& results) = 0;
};

// A reporter that writes one file and shows threshold verdicts; `thresholds`
// null means the scenario file's own.
class FileReporter : public Reporter {
 public:
  explicit FileReporter(std::filesystem::path path, nlohmann::json thresholds = nullptr)
      : path_(std::move(path)), thresholds_(std::move(thresholds)) {}

 protected:
  std::filesystem::path path_;
  nlohmann::json thresholds_;
};

// results.json, schema version results::BenchmarkResults::kSchemaVersion
// (docs/RESULTS.md). Written to a temporary file and renamed, so a full disk
// or a crash never leaves a truncated results.json behind.
class JsonReporter : public FileReporter {
 public:
  using FileReporter::FileReporter;
  Status Report(const results::BenchmarkResults& results) override;
};

// The summary table for a terminal.
class ConsoleReporter : public Reporter {
 public:
  explicit ConsoleReporter(std::ostream& out) : out_(out) {}
  Status Report(const results::BenchmarkResults& results) override;

 private:
  std::ostream& out_;
};

// operations.csv, runs.csv and tasks.csv in `dir` (created if missing), for
// spreadsheets and pandas. RFC 4180: comma-separated, quoted where needed,
// times in RFC 3339, durations in ms, latencies in us.
class CsvReporter : public Reporter {
 public:
  explicit CsvReporter(std::filesystem::path dir) : dir_(std::move(dir)) {}
  Status Report(const results::BenchmarkResults& results) override;

 private:
  std::filesystem::path dir_;
};

// JUnit XML for CI servers: one testcase per threshold verdict (a failing
// threshold is a <failure>), plus one that fails when a scenario reported
// errors.
class JunitReporter : public FileReporter {
 public:
  using FileReporter::FileReporter;
  Status Report(const results::BenchmarkResults& results) override;
};

// A GitHub-flavoured Markdown summary for a pull-request comment: operations,
// runs and threshold verdicts.
class MarkdownReporter : public FileReporter {
 public:
  using FileReporter::FileReporter;
  Status Report(const results::BenchmarkResults& results) override;
  static Result<std::string> Render(const results::BenchmarkResults& results,
                                    const nlohmann::json& thresholds);
};

// One self-contained HTML page (charts inlined, no external URLs), readable
// offline: latency over time and distribution, throughput and errors, run
// duration CDF, a run/task timeline, the scenario, the target and verdicts.
class HtmlReporter : public FileReporter {
 public:
  using FileReporter::FileReporter;
  Status Report(const results::BenchmarkResults& results) override;
  static Result<std::string> Render(const results::BenchmarkResults& results,
                                    const nlohmann::json& thresholds);
};

}  // namespace kfpbench::report
