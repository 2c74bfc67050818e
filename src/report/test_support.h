// What tests of HTML pages share (the reports here, and the pages of the parts
// above): the DOM headless Chromium builds of a page once its scripts ran.
#pragma once

#include <filesystem>
#include <string>

#include "util/test_support.h"

namespace kfpbench::testing {

inline constexpr const char* kChromium = "/usr/bin/chromium";

// The DOM headless Chromium builds of `page` once its scripts ran (up to five
// seconds of virtual time), in a `window` ("1400,2400") with a fresh profile
// in `profile`; empty when Chromium failed.
inline std::string ChromiumDom(const std::filesystem::path& page,
                               const std::filesystem::path& profile,
                               const std::string& window = "1400,2400") {
  std::filesystem::create_directories(profile);
  return CommandOutput(
      "timeout 90 " + std::string(kChromium) +
      " --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking"
      " --disable-component-update --disable-sync --disable-dev-shm-usage --user-data-dir=" +
      profile.string() + " --window-size=" + window +
      " --virtual-time-budget=5000 --dump-dom file://" + page.string() + " 2>/dev/null");
}

}  // namespace kfpbench::testing
