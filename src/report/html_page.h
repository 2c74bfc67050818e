// Building blocks of kfpbench's self-contained HTML pages (the benchmark
// report and the job sweep report): data and code inlined so that nothing in
// them can end its element early, and nothing is ever fetched.
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

// uPlot's minified build opens with a banner naming its home page; the page
// keeps the MIT notice instead and names no address at all.
std::string_view WithoutBanner(std::string_view js);

// The opening of a page up to <body>: charset, the Content-Security-Policy
// that forbids every fetch, `title`, and uPlot's and the report's styles.
std::string PageHead(const std::string& title);

// uPlot with its MIT notice, as one <script> element.
std::string UplotScript();

}  // namespace kfpbench::report
