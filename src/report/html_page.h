// Pieces of the self-contained HTML pages (the report, the history page):
// data and code inlined so nothing is fetched and nothing embedded can end
// its element early.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace kfpbench::report {

// JSON for <script type="application/json">, with <, > and & escaped.
std::string ScriptJson(const nlohmann::json& j);
// Code for a <script> or <style> element (`tag`), its closing tag defused.
std::string InlineCode(std::string_view code, std::string_view tag);
// uPlot's minified build without its opening banner (the page keeps the
// MIT notice instead).
std::string_view WithoutBanner(std::string_view js);

}  // namespace kfpbench::report
