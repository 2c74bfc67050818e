// Putting data and code inside one self-contained HTML page safely: shared by
// the benchmark report and the capacity page (src/plan).
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace kfpbench::report {

// JSON inside <script type="application/json">: a '<' may only occur inside a
// JSON string, where \u003c means the same, so no "</script>" or "<!--" in the
// data can end the element or change how the parser reads it.
std::string ScriptJson(const nlohmann::json& j);

// Inlined code must not contain the closing tag of its element; "<\/" is the
// same text to JavaScript and CSS alike.
std::string Inline(std::string_view code, std::string_view tag);

// uPlot's minified build opens with a banner naming its home page; pages keep
// the MIT notice instead and name no address at all.
std::string_view WithoutBanner(std::string_view js);

// The page head up to and including <style>: charset, a Content-Security-Policy
// that lets nothing be fetched, the title (escaped), and uPlot's CSS.
std::string PageHead(std::string_view title);
// uPlot itself with its licence, as one <script> element.
std::string UplotScript();

// PageHead plus the report's styles, then the body's fixed parts that
// web/*.js and the browser tests rely on: the error list, the ready flag, the
// <main id="app"> the page's script fills, and web/page.js, which catches
// script errors from here on and holds the helpers the pages share.
std::string ReportPageOpen(std::string_view title);

}  // namespace kfpbench::report
