// multipart/form-data, as KFP's pipeline upload uses (field "uploadfile").
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace kfpbench::http {

struct FormPart {
  std::string name;      // form field name
  std::string filename;  // empty when not a file
  std::string content_type;
  std::string data;
};

struct MultipartBody {
  std::string content_type;  // "multipart/form-data; boundary=..."
  std::string body;
};

MultipartBody BuildMultipart(const std::vector<FormPart>& parts);

// Parses a body given the request's Content-Type header. A missing boundary,
// truncated body or malformed part header is an error saying which.
Result<std::vector<FormPart>> ParseMultipart(std::string_view content_type, std::string_view body);

}  // namespace kfpbench::http
