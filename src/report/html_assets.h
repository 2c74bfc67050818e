// The HTML report's browser assets, embedded at build time from web/ by
// embed_assets.cmake (uPlot comes from npm: scripts/setup runs `npm ci`).
#pragma once

#include <string_view>

namespace kfpbench::report::assets {

std::string_view UplotVersion();
std::string_view UplotJs();       // web/node_modules/uplot/dist/uPlot.iife.min.js
std::string_view UplotCss();      // web/node_modules/uplot/dist/uPlot.min.css
std::string_view UplotLicense();  // MIT: its notice travels with every copy
std::string_view PageJs();        // web/page.js: what every report page's script shares
std::string_view ReportJs();      // web/report.js
std::string_view ReportCss();     // web/report.css
std::string_view HistoryJs();     // web/history.js

// Beside report.js: the pod lifecycle section (run after report.js, in the
// same <script>) and the `kfpbench job` report.
std::string_view PodLifecycleJs();  // web/pod_lifecycle.js
std::string_view JobReportJs();     // web/job_report.js

}  // namespace kfpbench::report::assets
