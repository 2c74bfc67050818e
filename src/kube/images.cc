#include "kube/images.h"

#include <regex>

namespace kfpbench::kube {
namespace {

// An image reference as a YAML or JSON value: after a blank or a quote, the
// repository, then an optional tag and digest, up to a blank, quote or the end.
const std::regex& UnpublishedReference() {
  static const std::regex re(
      R"((^|[\s"'])ghcr\.io/kfpbench/kfpbench(:[A-Za-z0-9_][A-Za-z0-9_.-]*)?(@sha256:[0-9a-f]+)?(?=[\s"',\]}]|$))");
  return re;
}

}  // namespace

bool IsUnpublishedImage(std::string_view image) {
  static const std::regex re(R"(ghcr\.io/kfpbench/kfpbench([:@].*)?)");
  return std::regex_match(image.begin(), image.end(), re);
}

std::string PointUnpublishedImages(const std::string& text, const std::string& image,
                                   int& replaced) {
  replaced = 0;
  std::string out;
  auto last = text.cbegin();
  for (std::sregex_iterator it(text.begin(), text.end(), UnpublishedReference()), end; it != end;
       ++it) {
    const auto& m = *it;
    out.append(last, m[0].first);
    out += m[1].str();  // the blank or quote before it
    out += image;
    last = m[0].second;
    ++replaced;
  }
  out.append(last, text.cend());
  return out;
}

}  // namespace kfpbench::kube
