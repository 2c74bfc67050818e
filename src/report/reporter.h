// One reporter per output format behind one interface (google/benchmark's
// model): the harness measures, reporters only present.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <memory>

#include <nlohmann/json.hpp>

#include "harness/results.h"
#include "util/result.h"

namespace kfpbench::report {

class Reporter {
 public:
  virtual ~Reporter() = default;
  virtual Status Report(const harness::BenchmarkResults& results) = 0;
};

// results.json, schema version harness::BenchmarkResults::kSchemaVersion
// (docs/RESULTS.md). Written to a temporary file and renamed, so a full disk
// or a crash never leaves a truncated results.json behind.
class JsonReporter : public Reporter {
 public:
  explicit JsonReporter(std::filesystem::path path) : path_(std::move(path)) {}
  Status Report(const harness::BenchmarkResults& results) override;

 private:
  std::filesystem::path path_;
};

// The summary table for a terminal.
class ConsoleReporter : public Reporter {
 public:
  explicit ConsoleReporter(std::ostream& out) : out_(out) {}
  Status Report(const harness::BenchmarkResults& results) override;

 private:
  std::ostream& out_;
};

nlohmann::json ResultsToJson(const harness::BenchmarkResults& results);

// Writes `text` to `path` through a temporary file in the same folder.
Status WriteFileAtomically(const std::filesystem::path& path, const std::string& text);

}  // namespace kfpbench::report
