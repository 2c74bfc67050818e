#include "http/multipart.h"

#include <fmt/format.h>

#include <random>
#include <utility>

#include "http/url.h"
#include "util/strings.h"

namespace kfpbench::http {
namespace {

constexpr std::string_view kWhitespace = " \t";

std::string_view Trim(std::string_view s) {
  size_t begin = s.find_first_not_of(kWhitespace);
  if (begin == std::string_view::npos) return {};
  size_t end = s.find_last_not_of(kWhitespace);
  return s.substr(begin, end - begin + 1);
}

// A header value of the form `value; name=token; name="quoted"` (RFC 9110
// parameters), as Content-Type and Content-Disposition use.
struct ParamValue {
  std::string value;
  std::vector<std::pair<std::string, std::string>> params;  // names lowercased

  const std::string* Find(std::string_view name) const {
    for (const auto& [n, v] : params) {
      if (n == name) return &v;
    }
    return nullptr;
  }
};

Result<ParamValue> ParseParamValue(std::string_view text) {
  ParamValue out;
  size_t semi = text.find(';');
  out.value = std::string(Trim(text.substr(0, semi)));
  size_t pos = semi;
  while (pos != std::string_view::npos && pos < text.size()) {
    ++pos;  // past ';'
    size_t name_end = text.find_first_of("=;", pos);
    std::string_view name = Trim(text.substr(pos, name_end - pos));
    if (name_end == std::string_view::npos || text[name_end] == ';') {
      // A parameter without a value; kept so that it does not break parsing.
      if (!name.empty()) out.params.emplace_back(AsciiLower(name), "");
      pos = name_end;
      continue;
    }
    if (name.empty()) return Error{fmt::format("parameter without a name in \"{}\"", text)};
    pos = text.find_first_not_of(kWhitespace, name_end + 1);
    std::string value;
    if (pos != std::string_view::npos && text[pos] == '"') {
      bool closed = false;
      for (++pos; pos < text.size(); ++pos) {
        char c = text[pos];
        if (c == '\\' && pos + 1 < text.size()) {
          value.push_back(text[++pos]);
        } else if (c == '"') {
          closed = true;
          ++pos;
          break;
        } else {
          value.push_back(c);
        }
      }
      if (!closed) return Error{fmt::format("unterminated quoted string in \"{}\"", text)};
      pos = text.find(';', pos);
    } else {
      size_t end = pos == std::string_view::npos ? pos : text.find(';', pos);
      if (pos != std::string_view::npos) value = std::string(Trim(text.substr(pos, end - pos)));
      pos = end;
    }
    out.params.emplace_back(AsciiLower(name), std::move(value));
  }
  return out;
}

// RFC 5987 ext-value: charset'language'percent-encoded. Browsers send UTF-8.
std::string DecodeExtValue(const std::string& v) {
  size_t first = v.find('\'');
  size_t second = first == std::string::npos ? first : v.find('\'', first + 1);
  if (second == std::string::npos) return v;
  auto decoded = PercentDecode(std::string_view(v).substr(second + 1), false);
  return decoded.ok() ? std::move(*decoded) : v;
}

// Quoted-string escaping as browsers do it for form field names: quotes and
// line breaks would end the header, so they are percent-encoded.
std::string EscapeQuoted(std::string_view s) {
  return ReplaceChars(s, {{'"', "%22"}, {'\r', "%0D"}, {'\n', "%0A"}});
}

std::string RandomBoundary() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return fmt::format("kfpbench-{:016x}{:016x}", rng(), rng());
}

// Where a boundary delimiter line starts at or after `from`: the line begins
// with "--boundary" and is followed by "--", whitespace or a line break. Returns
// the offset of the "--" or npos.
size_t FindDelimiter(std::string_view body, std::string_view delim, size_t from) {
  while (true) {
    size_t at = body.find(delim, from);
    if (at == std::string_view::npos) return at;
    bool line_start = at == 0 || body[at - 1] == '\n';
    size_t after = at + delim.size();
    bool well_ended = after >= body.size() || body[after] == '-' || body[after] == ' ' ||
                      body[after] == '\t' || body[after] == '\r' || body[after] == '\n';
    if (line_start && well_ended) return at;
    from = at + 1;
  }
}

}  // namespace

MultipartBody BuildMultipart(const std::vector<FormPart>& parts) {
  std::string boundary;
  bool clash = true;
  while (clash) {
    // 128 random bits make a clash with the data practically impossible, but it
    // costs little to be sure.
    boundary = RandomBoundary();
    clash = false;
    for (const auto& p : parts) clash = clash || p.data.find(boundary) != std::string::npos;
  }
  size_t size = 0;
  for (const auto& p : parts) size += p.data.size() + p.name.size() + p.filename.size() + 160;
  MultipartBody out;
  out.content_type = "multipart/form-data; boundary=" + boundary;
  out.body.reserve(size + boundary.size() + 8);
  for (const auto& p : parts) {
    out.body += "--";
    out.body += boundary;
    out.body += "\r\nContent-Disposition: form-data; name=\"";
    out.body += EscapeQuoted(p.name);
    out.body += '"';
    if (!p.filename.empty()) {
      out.body += "; filename=\"";
      out.body += EscapeQuoted(p.filename);
      out.body += '"';
    }
    out.body += "\r\n";
    if (!p.content_type.empty()) {
      out.body += "Content-Type: ";
      out.body += p.content_type;
      out.body += "\r\n";
    }
    out.body += "\r\n";
    out.body += p.data;
    out.body += "\r\n";
  }
  out.body += "--";
  out.body += boundary;
  out.body += "--\r\n";
  return out;
}

namespace {

// The boundary a multipart Content-Type names.
Result<std::string> MultipartBoundary(std::string_view content_type) {
  auto ct = ParseParamValue(content_type);
  if (!ct.ok()) return Error{"multipart: bad Content-Type: " + ct.error().message};
  if (AsciiLower(ct->value).rfind("multipart/", 0) != 0) {
    return Error{fmt::format("multipart: Content-Type \"{}\" is not multipart", ct->value)};
  }
  const std::string* boundary = ct->Find("boundary");
  if (boundary == nullptr || boundary->empty()) {
    return Error{"multipart: Content-Type has no boundary parameter"};
  }
  if (boundary->size() > 70) return Error{"multipart: boundary is longer than 70 characters"};
  return *boundary;
}

using PartHeaders = std::vector<std::pair<std::string, std::string>>;

// The header lines of part `index` from `pos` to the empty line, which `pos`
// is left past.
Result<PartHeaders> ReadPartHeaders(std::string_view body, size_t& pos, size_t index) {
  std::string* last_value = nullptr;
  PartHeaders headers;
  while (true) {
    size_t nl = body.find('\n', pos);
    if (nl == std::string_view::npos) {
      return Error{fmt::format("multipart: headers of part {} are truncated", index)};
    }
    std::string_view line = body.substr(pos, nl - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    pos = nl + 1;
    if (line.empty()) return headers;
    if (line.front() == ' ' || line.front() == '\t') {
      // Obsolete line folding continues the previous header.
      if (last_value == nullptr) {
        return Error{fmt::format("multipart: malformed header line in part {}", index)};
      }
      *last_value += ' ';
      *last_value += Trim(line);
      continue;
    }
    size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0 ||
        Trim(line.substr(0, colon)).size() != colon) {
      return Error{fmt::format("multipart: malformed header line in part {}", index)};
    }
    headers.emplace_back(std::string(line.substr(0, colon)),
                         std::string(Trim(line.substr(colon + 1))));
    last_value = &headers.back().second;
  }
}

// The part's name, file name and type from its headers; a form-data part
// must have a Content-Disposition with a name.
Status ApplyPartHeaders(const PartHeaders& headers, size_t index, FormPart& part) {
  bool has_disposition = false;
  for (const auto& [name, value] : headers) {
    if (AsciiIEquals(name, "Content-Type")) {
      part.content_type = value;
    } else if (AsciiIEquals(name, "Content-Disposition")) {
      auto cd = ParseParamValue(value);
      if (!cd.ok()) {
        return Error{fmt::format("multipart: bad Content-Disposition in part {}: {}", index,
                                 cd.error().message)};
      }
      if (!AsciiIEquals(cd->value, "form-data")) {
        return Error{fmt::format("multipart: part {} is not form-data", index)};
      }
      if (const auto* n = cd->Find("name")) part.name = *n;
      if (const auto* f = cd->Find("filename*")) {
        part.filename = DecodeExtValue(*f);
      } else if (const auto* f2 = cd->Find("filename")) {
        part.filename = *f2;
      }
      has_disposition = true;
    }
  }
  if (!has_disposition || part.name.empty()) {
    return Error{fmt::format("multipart: part {} has no Content-Disposition name", index)};
  }
  return Ok();
}

}  // namespace

Result<std::vector<FormPart>> ParseMultipart(std::string_view content_type, std::string_view body) {
  auto boundary = MultipartBoundary(content_type);
  if (!boundary.ok()) return boundary.error();
  const std::string delim = "--" + *boundary;

  std::vector<FormPart> parts;
  // Anything before the first delimiter is a preamble and ignored.
  size_t pos = FindDelimiter(body, delim, 0);
  if (pos == std::string_view::npos) return Error{"multipart: body has no opening boundary"};
  while (true) {
    pos += delim.size();
    if (body.substr(pos, 2) == "--") return parts;  // close delimiter; the epilogue is ignored
    pos = body.find_first_not_of(kWhitespace, pos);
    if (pos == std::string_view::npos) {
      return Error{"multipart: body is truncated after a boundary"};
    }
    if (body.substr(pos, 2) == "\r\n") {
      pos += 2;
    } else if (body[pos] == '\n') {
      pos += 1;  // bare LF, as some hand-written clients send
    } else {
      return Error{"multipart: malformed boundary line"};
    }

    FormPart part;
    const size_t index = parts.size() + 1;
    auto headers = ReadPartHeaders(body, pos, index);
    if (!headers.ok()) return headers.error();
    if (Status s = ApplyPartHeaders(*headers, index, part); !s.ok()) return s.error();

    size_t next = FindDelimiter(body, delim, pos);
    if (next == std::string_view::npos) {
      return Error{"multipart: body is truncated (no closing boundary)"};
    }
    // The line break before the delimiter belongs to the delimiter.
    size_t end = next;
    if (end > pos && body[end - 1] == '\n') --end;
    if (end > pos && body[end - 1] == '\r') --end;
    part.data = std::string(body.substr(pos, end - pos));
    parts.push_back(std::move(part));
    pos = next;
  }
}

}  // namespace kfpbench::http
