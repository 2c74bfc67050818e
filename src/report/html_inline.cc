#include "report/html_inline.h"

#include <algorithm>
#include <cctype>

#include "report/html_assets.h"
#include "report/markup.h"
#include "util/json_reader.h"

namespace kfpbench::report {

std::string ScriptJson(const nlohmann::json& j) {
  std::string text = DumpJson(j);
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '<') {
      out += "\\u003c";
    } else if (c == '>') {
      out += "\\u003e";
    } else if (c == '&') {
      out += "\\u0026";
    } else {
      out += c;
    }
  }
  return out;
}

std::string Inline(std::string_view code, std::string_view tag) {
  std::string out;
  std::string closing = "</" + std::string(tag);
  size_t i = 0;
  while (i < code.size()) {
    bool match = i + closing.size() <= code.size() &&
                 std::equal(closing.begin(), closing.end(), code.begin() + i, [](char a, char b) {
                   return std::tolower(static_cast<unsigned char>(a)) ==
                          std::tolower(static_cast<unsigned char>(b));
                 });
    if (match) {
      out += "<\\/";
      i += 2;
    } else {
      out += code[i++];
    }
  }
  return out;
}

std::string_view WithoutBanner(std::string_view js) {
  if (js.starts_with("/*!")) {
    size_t end = js.find("*/");
    if (end != std::string_view::npos) js.remove_prefix(end + 2);
  }
  return js;
}

std::string PageHead(std::string_view title) {
  std::string page = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  // Nothing may be fetched: the page must render the same offline, and an
  // embedded string can never turn into a request.
  page +=
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src "
      "'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">\n";
  page += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  page += "<title>";
  page += EscapeMarkup(title);
  page += "</title>\n<style>\n";
  page += Inline(assets::UplotCss(), "style");
  page += "\n";
  return page;
}

std::string UplotScript() {
  std::string s = "<script>\n/* uPlot ";
  s += assets::UplotVersion();
  s += "\n";
  s += Inline(assets::UplotLicense(), "script");
  s += "\n*/\n";
  s += Inline(WithoutBanner(assets::UplotJs()), "script");
  s += "\n</script>\n";
  return s;
}

std::string ReportPageOpen(std::string_view title) {
  std::string page = PageHead(title);
  page += Inline(assets::ReportCss(), "style");
  page += "</style>\n</head>\n<body>\n";
  page += "<ul id=\"kfpbench-errors\" hidden></ul>\n";
  page += "<div id=\"kfpbench-status\" data-ready=\"false\" hidden></div>\n";
  page += "<main id=\"app\"></main>\n<script>\n";
  page += Inline(assets::PageJs(), "script");
  page += "</script>\n";
  return page;
}

}  // namespace kfpbench::report
