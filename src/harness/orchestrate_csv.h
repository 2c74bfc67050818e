// The scenario table of `kfpbench orchestrate`: CSV (RFC 4180) with a header
// row naming the pipeline parameters and one row per run. Quoted fields may
// hold commas, quotes ("") and line breaks; LF and CRLF both end records;
// empty lines are skipped; a UTF-8 byte-order mark is ignored.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace kfpbench::harness {

struct CsvRow {
  size_t line = 0;  // 1-based line where the record starts
  std::vector<std::string> cells;
};

struct CsvTable {
  size_t header_line = 1;
  std::vector<std::string> header;
  std::vector<CsvRow> rows;
};

// Errors carry the line: "line 3: unterminated quoted field (it runs to the end of the file)",
// "line 5: 2 fields, the header has 3".
Result<CsvTable> ParseCsv(std::string_view text);
// The same, errors prefixed with the path.
Result<CsvTable> LoadCsv(const std::filesystem::path& path);

}  // namespace kfpbench::harness
