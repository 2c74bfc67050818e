#include "report/html_page.h"

#include <algorithm>
#include <cctype>

namespace kfpbench::report {

// JSON inside <script type="application/json">: a '<' may only occur inside a
// JSON string, where \u003c means the same, so no "</script>" or "<!--" in the
// data can end the element or change how the parser reads it.
std::string ScriptJson(const nlohmann::json& j) {
  std::string text = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
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

// Inlined code must not contain the closing tag of its element; "<\/" is the
// same text to JavaScript and CSS alike.
std::string InlineCode(std::string_view code, std::string_view tag) {
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

// uPlot's minified build opens with a banner naming its home page; the page
// keeps the MIT notice instead and names no address at all.
std::string_view WithoutBanner(std::string_view js) {
  if (js.starts_with("/*!")) {
    size_t end = js.find("*/");
    if (end != std::string_view::npos) js.remove_prefix(end + 2);
  }
  return js;
}

}  // namespace kfpbench::report
