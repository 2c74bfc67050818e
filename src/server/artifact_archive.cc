#include "server/artifact_archive.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "util/files.h"

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

// The whole of a regular file, never through a symbolic link (the last
// component is opened with O_NOFOLLOW; the folders above were resolved by
// the caller).
Result<std::string> ReadRegularFile(const std::filesystem::path& file, size_t max_bytes) {
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return Error{fmt::format("cannot read {}: {}", file.string(), std::strerror(errno))};
  std::string data;
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Error{fmt::format("{} is not a regular file", file.string())};
  }
  char buffer[64 * 1024];
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      if (n < 0)
        return Error{fmt::format("cannot read {}: {}", file.string(), std::strerror(errno))};
      return data;
    }
    data.append(buffer, static_cast<size_t>(n));
    if (data.size() > max_bytes) {
      ::close(fd);
      return Error{fmt::format("the artifact is larger than {} bytes", max_bytes), 413};
    }
  }
}

}  // namespace

Result<std::string> TarGzOf(const std::filesystem::path& path, const std::filesystem::path& within,
                            size_t max_bytes) {
  namespace fs = std::filesystem;
  std::error_code ec;
  // Symbolic links in the path resolved first, so that nothing below can
  // lead the read out of `within`.
  const auto confined = ResolveWithin(path, within);
  if (!confined) {
    return Error{"artifact not found: it was not written by a task of this run", kHttpNotFound};
  }
  const fs::path& resolved = *confined;
  std::vector<fs::path> files;
  const fs::file_status status = fs::symlink_status(resolved, ec);
  if (fs::is_regular_file(status)) {
    files.push_back(resolved);
  } else if (fs::is_directory(status)) {
    // Links below are skipped, never followed: a step may have made them.
    size_t listed = 0;
    for (auto it = fs::recursive_directory_iterator(resolved, ec); !ec && it != fs::end(it);
         it.increment(ec)) {
      if (++listed > kMaxArchiveEntries) {
        return Error{fmt::format("the artifact holds more than {} entries", kMaxArchiveEntries),
                     413};
      }
      if (it->symlink_status(ec).type() == fs::file_type::regular) files.push_back(it->path());
    }
    if (ec) return Error{fmt::format("cannot list {}: {}", resolved.string(), ec.message())};
  } else {
    return Error{"artifact not found", kHttpNotFound};
  }
  std::string tar;
  size_t content = 0;
  for (const auto& file : files) {
    auto data = ReadRegularFile(file, max_bytes - content);
    if (!data.ok()) return data.error();
    content += data->size();
    auto mtime = std::chrono::duration_cast<std::chrono::seconds>(
                     fs::last_write_time(file, ec).time_since_epoch())
                     .count();
    std::string name = file.lexically_relative(resolved.parent_path()).generic_string();
    tar += TarHeader(name, data->size(), ec ? 0 : mtime);
    tar += *data;
    tar.append((512 - data->size() % 512) % 512, '\0');
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
