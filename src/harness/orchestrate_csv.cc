#include "harness/orchestrate_csv.h"

#include <set>

#include <fmt/format.h>

#include "util/files.h"
#include "util/strings.h"

namespace kfpbench::harness {
namespace {

// One record's fields, read from `text` at `pos`; advances `pos` and `line`
// past the record's end of line.
Result<std::vector<std::string>> ReadRecord(std::string_view text, size_t& pos, size_t& line) {
  std::vector<std::string> fields;
  std::string field;
  for (;;) {
    // Start of a field.
    if (pos < text.size() && text[pos] == '"') {
      const size_t opened = line;
      ++pos;
      for (;;) {
        if (pos >= text.size()) {
          return Error{fmt::format(
              "line {}: unterminated quoted field (it runs to the end of the file)", opened)};
        }
        char c = text[pos++];
        if (c == '"') {
          if (pos < text.size() && text[pos] == '"') {
            field += '"';
            ++pos;
            continue;
          }
          break;
        }
        if (c == '\n') ++line;
        field += c;
      }
      // After the closing quote: a separator or the end of the record.
      if (pos < text.size() && text[pos] != ',' && text[pos] != '\n' &&
          !(text[pos] == '\r' && (pos + 1 == text.size() || text[pos + 1] == '\n'))) {
        return Error{
            fmt::format("line {}: unexpected '{}' after a closing quote", line, text[pos])};
      }
    } else {
      while (pos < text.size() && text[pos] != ',' && text[pos] != '\n' && text[pos] != '\r') {
        if (text[pos] == '"') {
          return Error{
              fmt::format("line {}: quote inside an unquoted field (quote the whole field)", line)};
        }
        field += text[pos++];
      }
      if (pos < text.size() && text[pos] == '\r' && pos + 1 < text.size() &&
          text[pos + 1] != '\n') {
        return Error{fmt::format("line {}: carriage return inside a field", line)};
      }
    }
    fields.push_back(std::move(field));
    field.clear();
    if (pos < text.size() && text[pos] == ',') {
      ++pos;
      continue;
    }
    // End of record: CRLF, LF or the end of the text.
    if (pos < text.size() && text[pos] == '\r') ++pos;
    if (pos < text.size() && text[pos] == '\n') ++pos;
    ++line;
    return fields;
  }
}

bool BlankLineAt(std::string_view text, size_t pos, size_t* next) {
  size_t end = text.find('\n', pos);
  std::string_view content = text.substr(pos, end == std::string_view::npos ? end : end - pos);
  if (!TrimSpace(content).empty()) return false;
  *next = end == std::string_view::npos ? text.size() : end + 1;
  return true;
}

}  // namespace

Result<CsvTable> ParseCsv(std::string_view text) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  CsvTable table;
  size_t pos = 0, line = 1;
  bool have_header = false;
  while (pos < text.size()) {
    size_t next;
    if (BlankLineAt(text, pos, &next)) {
      pos = next;
      ++line;
      continue;
    }
    const size_t start_line = line;
    auto fields = ReadRecord(text, pos, line);
    if (!fields.ok()) return fields.error();
    if (!have_header) {
      std::set<std::string> seen;
      for (size_t i = 0; i < fields->size(); ++i) {
        std::string name(TrimSpace((*fields)[i]));
        if (name.empty()) {
          return Error{fmt::format("line {}: header column {} has no name", start_line, i + 1)};
        }
        if (!seen.insert(name).second) {
          return Error{fmt::format("line {}: header column {} repeats an earlier column's name",
                                   start_line, i + 1)};
        }
        table.header.push_back(std::move(name));
      }
      table.header_line = start_line;
      have_header = true;
      continue;
    }
    if (fields->size() != table.header.size()) {
      return Error{fmt::format("line {}: {} field{}, the header has {}", start_line, fields->size(),
                               fields->size() == 1 ? "" : "s", table.header.size())};
    }
    table.rows.push_back({start_line, std::move(*fields)});
  }
  if (!have_header) return Error{"no header row (the file is empty)"};
  return table;
}

Result<CsvTable> LoadCsv(const std::filesystem::path& path) {
  // A table of up to 10 million runs; never a device or a FIFO.
  constexpr size_t kMaxCsvBytes = size_t{1} << 30;
  auto text = ReadRegularFile(path, kMaxCsvBytes);
  if (!text.ok()) return text.error();
  auto table = ParseCsv(*text);
  if (!table.ok()) return Error{fmt::format("{}: {}", path.string(), table.error().message)};
  return table;
}

}  // namespace kfpbench::harness
