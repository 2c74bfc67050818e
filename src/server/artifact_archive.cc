#include "server/artifact_archive.h"

#include <zlib.h>

#include <fstream>
#include <sstream>
#include <vector>

#include <fmt/format.h>

namespace kfpbench::server {
namespace {

// One ustar header block for a regular file.
std::string TarHeader(const std::string& name, size_t size, int64_t mtime) {
  std::string h(512, '\0');
  auto put = [&h](size_t at, size_t width, const std::string& value) {
    h.replace(at, std::min(value.size(), width), value.substr(0, width));
  };
  auto octal = [](uint64_t v, size_t width) { return fmt::format("{:0{}o}", v, width - 1); };
  std::string base = name;
  if (name.size() > 100) {
    // ustar's prefix field (155 bytes) holds what comes before a '/'.
    size_t split = name.rfind('/', std::min<size_t>(155, name.size() - 1));
    if (split != std::string::npos && name.size() - split - 1 <= 100) {
      put(345, 155, name.substr(0, split));
      base = name.substr(split + 1);
    } else {
      base = name.substr(name.size() - 100);  // too long for ustar: its tail
    }
  }
  put(0, 100, base);
  put(100, 8, octal(0644, 8));
  put(108, 8, octal(0, 8));
  put(116, 8, octal(0, 8));
  put(124, 12, octal(size, 12));
  put(136, 12, octal(static_cast<uint64_t>(std::max<int64_t>(mtime, 0)), 12));
  h[156] = '0';
  put(257, 6, std::string("ustar\0", 6));
  put(263, 2, "00");
  h.replace(148, 8, 8, ' ');
  unsigned sum = 0;
  for (unsigned char c : h) sum += c;
  put(148, 8, fmt::format("{:06o}", sum) + std::string("\0 ", 2));
  return h;
}

Result<std::string> Gzip(const std::string& in) {
  z_stream zs{};
  // 15 + 16: a gzip wrapper, as `tar czf` writes.
  if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
      Z_OK) {
    return Error{"cannot start compressing"};
  }
  std::string out(deflateBound(&zs, in.size()), '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  int rc = deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  if (rc != Z_STREAM_END) return Error{"cannot compress the artifact"};
  return out;
}

}  // namespace

Result<std::string> TarGzOf(const std::filesystem::path& path, size_t max_bytes) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<fs::path> files;
  if (fs::is_regular_file(path, ec)) {
    files.push_back(path);
  } else if (fs::is_directory(path, ec)) {
    for (auto it = fs::recursive_directory_iterator(path, ec); !ec && it != fs::end(it);
         it.increment(ec)) {
      if (it->is_regular_file(ec)) files.push_back(it->path());
    }
  } else {
    return Error{"artifact not found", kHttpNotFound};
  }
  std::string tar;
  size_t content = 0;
  for (const auto& file : files) {
    size_t size = fs::file_size(file, ec);
    if (ec) return Error{fmt::format("cannot read {}: {}", file.string(), ec.message())};
    content += size;
    if (content > max_bytes) {
      return Error{fmt::format("the artifact is larger than {} bytes", max_bytes), 413};
    }
    std::ifstream in(file, std::ios::binary);
    std::ostringstream data;
    data << in.rdbuf();
    if (!in && !in.eof()) return Error{fmt::format("cannot read {}", file.string())};
    auto mtime = std::chrono::duration_cast<std::chrono::seconds>(
                     fs::last_write_time(file, ec).time_since_epoch())
                     .count();
    std::string name = file.lexically_relative(path.parent_path()).generic_string();
    tar += TarHeader(name, data.str().size(), ec ? 0 : mtime);
    tar += data.str();
    tar.append((512 - data.str().size() % 512) % 512, '\0');
  }
  tar.append(1024, '\0');  // two empty blocks end the archive
  return Gzip(tar);
}

std::string Base64(std::string_view bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    uint32_t v = static_cast<uint8_t>(bytes[i]) << 16 | static_cast<uint8_t>(bytes[i + 1]) << 8 |
                 static_cast<uint8_t>(bytes[i + 2]);
    for (int shift : {18, 12, 6, 0}) out += kAlphabet[(v >> shift) & 63];
  }
  if (size_t rest = bytes.size() - i; rest > 0) {
    uint32_t v = static_cast<uint8_t>(bytes[i]) << 16;
    if (rest == 2) v |= static_cast<uint8_t>(bytes[i + 1]) << 8;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += rest == 2 ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

}  // namespace kfpbench::server
