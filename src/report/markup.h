// Text inside HTML and XML reports.
#pragma once

#include <string>
#include <string_view>

namespace kfpbench::report {

// Escapes &, <, >, " and ' (as entities both HTML and XML accept), and drops
// control characters other than tab and newlines, which XML 1.0 forbids.
inline std::string EscapeMarkup(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        if (static_cast<unsigned char>(c) >= 0x20 || c == '\t' || c == '\n' || c == '\r') out += c;
    }
  }
  return out;
}

}  // namespace kfpbench::report
