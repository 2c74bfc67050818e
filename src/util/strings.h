// Small string helpers shared across parts.
#pragma once

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace kfpbench {

// The length of the well-formed UTF-8 sequence (RFC 3629: no overlong forms,
// no surrogates, nothing above U+10FFFF) that starts s[i], or 0 when none does.
inline size_t Utf8SequenceLength(std::string_view s, size_t i) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return 1;
  size_t extra = 0;
  unsigned min = 0;
  unsigned cp = 0;
  if ((c & 0xE0) == 0xC0) {
    extra = 1, min = 0x80, cp = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    extra = 2, min = 0x800, cp = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    extra = 3, min = 0x10000, cp = c & 0x07;
  } else {
    return 0;
  }
  if (s.size() - i <= extra) return 0;  // truncated sequence
  for (size_t k = 1; k <= extra; ++k) {
    unsigned char next = static_cast<unsigned char>(s[i + k]);
    if ((next & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (next & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return extra + 1;
}

// Well-formed UTF-8. Protobuf strings, and so KFP's API, hold nothing else.
inline bool IsValidUtf8(std::string_view s) {
  for (size_t i = 0, n = 0; i < s.size(); i += n) {
    n = Utf8SequenceLength(s, i);
    if (n == 0) return false;
  }
  return true;
}

// Text from outside (a step's log) made well-formed: each byte that starts no
// UTF-8 sequence becomes U+FFFD, as a terminal shows it. nlohmann::json
// throws when it writes a string that is not UTF-8.
inline std::string ToValidUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    size_t n = Utf8SequenceLength(s, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(s, i, n);
      i += n;
    }
  }
  return out;
}

// ASCII lower case: HTTP header names and tokens, URL schemes and
// Kubernetes replica types are ASCII, and the C library's tolower would
// depend on the locale.
inline std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// Equal but for ASCII case (HTTP header names, RFC 9110).
inline bool AsciiIEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

inline std::string_view TrimSpace(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// `s` with each character `replacements` lists replaced by its text: the
// one loop behind the escapings below.
inline std::string ReplaceChars(
    std::string_view s, std::initializer_list<std::pair<char, std::string_view>> replacements) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    auto it = std::find_if(replacements.begin(), replacements.end(),
                           [c](const auto& r) { return r.first == c; });
    if (it == replacements.end()) {
      out += c;
    } else {
      out += it->second;
    }
  }
  return out;
}

// Text for one cell of a Markdown table: a '|' would end the cell and a line
// break the row.
inline std::string MarkdownCell(std::string_view s) {
  return ReplaceChars(s, {{'|', "\\|"}, {'\n', " "}, {'\r', " "}});
}

// One CSV field (RFC 4180): quoted when it holds a comma, a quote or a line
// break, with its quotes doubled.
inline std::string CsvField(std::string_view s) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

// A Prometheus label value in the text exposition format: backslash,
// double quote and newline escaped.
inline std::string EscapePrometheusLabel(std::string_view value) {
  return ReplaceChars(value, {{'\\', "\\\\"}, {'"', "\\\""}, {'\n', "\\n"}});
}

}  // namespace kfpbench
