#include "server/pipeline_file.h"

#include <zlib.h>

#include <cstdint>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "server/api_util.h"

namespace kfpbench::server {
namespace {

// KFP reads what an archive expands to without a bound; here the pipeline
// in it is held to KFP's own limit on pipeline files, and a tar stream to
// that plus room for its headers and a few small other entries, so that a
// few kilobytes never become a pipeline larger than one could upload.
constexpr size_t kMaxTarStreamBytes = kMaxUploadBytes + (1 << 20);

Error BadInput(std::string message) { return Error{std::move(message), kHttpBadRequest}; }

// loadFile's message (util.go), for a file or what an archive expands to.
Error TooLarge(std::string_view size) {
  return BadInput(fmt::format(
      "File size too large ({} bytes). Maximum supported size: {}. Consider moving large "
      "embedded artifacts or notebooks or Python code into a container image or object store.",
      size, kMaxUploadBytes));
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// util.go's isYamlFile and isJSONFile look at the name's suffix only.
bool IsYamlName(std::string_view name) { return EndsWith(name, ".yaml") || EndsWith(name, ".yml"); }

uint32_t U16(std::string_view b, size_t at) {
  return static_cast<uint8_t>(b[at]) | static_cast<uint32_t>(static_cast<uint8_t>(b[at + 1])) << 8;
}
uint32_t U32(std::string_view b, size_t at) { return U16(b, at) | U16(b, at + 2) << 16; }

// zlib's inflate over all of `in`: gzip when `window_bits` asks for it, raw
// deflate (zip's method 8) when it is negative. Expanding past `limit` stops
// at once with TooLarge (code 413 until the caller words it).
Result<std::string> Inflate(std::string_view in, int window_bits, size_t limit) {
  z_stream zs{};
  if (inflateInit2(&zs, window_bits) != Z_OK) return BadInput("cannot start inflating");
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  std::string out;
  char buffer[64 * 1024];
  int rc = Z_OK;
  while (rc == Z_OK) {
    zs.next_out = reinterpret_cast<Bytef*>(buffer);
    zs.avail_out = sizeof(buffer);
    rc = inflate(&zs, Z_NO_FLUSH);
    out.append(buffer, sizeof(buffer) - zs.avail_out);
    if (out.size() > limit) {
      inflateEnd(&zs);
      return Error{fmt::format("more than {}", limit), 413};
    }
    if (rc == Z_BUF_ERROR && zs.avail_in == 0) break;  // truncated input
  }
  inflateEnd(&zs);
  if (rc != Z_STREAM_END) return BadInput(zs.msg ? zs.msg : "unexpected end of compressed data");
  return out;
}

// The pipeline an archive held, within KFP's limit on pipeline files.
Result<std::string> Within(std::string pipeline) {
  if (pipeline.size() > kMaxUploadBytes) return TooLarge(std::to_string(pipeline.size()));
  return pipeline;
}

struct TarEntry {
  std::string name;
  std::string_view data;
};

// The next file of a tar stream at `offset` as Go's tar.Reader.Next returns
// it (GNU long names and PAX paths applied), or nullopt at its end.
Result<std::optional<TarEntry>> NextTarEntry(std::string_view tar, size_t& offset) {
  std::string long_name;
  for (;;) {
    if (offset + 512 > tar.size()) {
      if (offset == tar.size()) return std::optional<TarEntry>();
      return BadInput("unexpected EOF");
    }
    std::string_view header = tar.substr(offset, 512);
    if (header.find_first_not_of('\0') == std::string_view::npos) return std::optional<TarEntry>();
    std::string_view size_field = header.substr(124, 12);
    uint64_t size = 0;
    for (char c : size_field) {
      if (c == '\0' || c == ' ') continue;
      if (c < '0' || c > '7') return BadInput("archive/tar: invalid header");
      size = size * 8 + static_cast<uint64_t>(c - '0');
    }
    size_t data_at = offset + 512;
    if (size > tar.size() - data_at) return BadInput("unexpected EOF");
    std::string_view data = tar.substr(data_at, size);
    offset = data_at + (size + 511) / 512 * 512;
    if (offset > tar.size()) offset = tar.size();
    char type = header[156];
    auto cstr = [](std::string_view s) { return std::string(s.substr(0, s.find('\0'))); };
    if (type == 'L') {  // GNU: the next entry's long name
      long_name = cstr(data);
      continue;
    }
    if (type == 'x') {  // PAX: "<len> path=<name>\n" records for the next entry
      if (size_t at = data.find(" path="); at != std::string_view::npos) {
        size_t end = data.find('\n', at);
        long_name =
            std::string(data.substr(at + 6, end == std::string_view::npos ? end : end - at - 6));
      }
      continue;
    }
    if (type == 'g') continue;  // PAX global header
    std::string name = cstr(header.substr(0, 100));
    if (header.substr(257, 5) == "ustar") {
      std::string prefix = cstr(header.substr(345, 155));
      if (!prefix.empty()) name = prefix + "/" + name;
    }
    if (!long_name.empty()) name = long_name;
    return std::optional<TarEntry>(TarEntry{std::move(name), data});
  }
}

// util.go's DecompressPipelineTarball: "pipeline.yaml", else the first entry
// when its name is a YAML file's.
Result<std::string> FromTarball(std::string_view bytes) {
  constexpr const char* kInvalid =
      "Error extracting pipeline from the tarball file. Not a valid tarball file";
  auto tar = Inflate(bytes, 16 + MAX_WBITS, kMaxTarStreamBytes);
  if (!tar.ok())
    return tar.error().code == 413 ? TooLarge(tar.error().message) : BadInput(kInvalid);
  std::optional<TarEntry> first;
  size_t offset = 0;
  for (;;) {
    auto entry = NextTarEntry(*tar, offset);
    if (!entry.ok()) return BadInput(kInvalid);
    if (!entry->has_value()) break;
    if (!first) first = **entry;
    if ((*entry)->name == "pipeline.yaml") return Within(std::string((*entry)->data));
  }
  if (!first) return BadInput(kInvalid);
  if (!IsYamlName(first->name)) {
    return BadInput(
        fmt::format("Error extracting pipeline from the tarball file. Expecting a "
                    "pipeline.yaml file inside the tarball. Got: {}",
                    first->name));
  }
  return Within(std::string(first->data));
}

struct ZipEntry {
  std::string name;
  uint32_t method = 0, crc = 0, compressed = 0, size = 0, local_offset = 0;
};

// The central directory, in its order (Go's zip.Reader.File).
Result<std::vector<ZipEntry>> ZipDirectory(std::string_view zip) {
  constexpr const char* kInvalid =
      "Error extracting pipeline from the zip file. Not a valid zip file";
  if (zip.size() < 22) return BadInput(kInvalid);
  size_t eocd = std::string_view::npos;
  size_t lowest = zip.size() > 22 + 65535 ? zip.size() - 22 - 65535 : 0;
  for (size_t at = zip.size() - 22 + 1; at-- > lowest;) {
    if (U32(zip, at) == 0x06054b50) {
      eocd = at;
      break;
    }
  }
  if (eocd == std::string_view::npos) return BadInput(kInvalid);
  uint32_t count = U16(zip, eocd + 10);
  size_t at = U32(zip, eocd + 16);
  std::vector<ZipEntry> entries;
  for (uint32_t i = 0; i < count; ++i) {
    if (at + 46 > zip.size() || U32(zip, at) != 0x02014b50) return BadInput(kInvalid);
    ZipEntry e;
    e.method = U16(zip, at + 10);
    e.crc = U32(zip, at + 16);
    e.compressed = U32(zip, at + 20);
    e.size = U32(zip, at + 24);
    size_t name_len = U16(zip, at + 28), extra = U16(zip, at + 30), comment = U16(zip, at + 32);
    e.local_offset = U32(zip, at + 42);
    if (at + 46 + name_len > zip.size()) return BadInput(kInvalid);
    e.name = std::string(zip.substr(at + 46, name_len));
    entries.push_back(std::move(e));
    at += 46 + name_len + extra + comment;
  }
  return entries;
}

// util.go's DecompressPipelineZip: "pipeline.yaml", else the first file,
// which must have a YAML file's name.
Result<std::string> FromZip(std::string_view zip) {
  auto entries = ZipDirectory(zip);
  if (!entries.ok()) return entries.error();
  if (entries->empty()) {
    return BadInput("Error extracting pipeline from the zip file. Empty zip file");
  }
  const ZipEntry* chosen = &entries->front();
  for (const auto& e : *entries) {
    if (e.name == "pipeline.yaml") {
      chosen = &e;
      break;
    }
  }
  if (!IsYamlName(chosen->name)) {
    return BadInput(
        fmt::format("Error extracting pipeline from the zip file. Expecting a "
                    "pipeline.yaml file inside the zip. Got: {}",
                    chosen->name));
  }
  constexpr const char* kUnreadable =
      "Error extracting pipeline from the zip file. Failed to read the content";
  size_t at = chosen->local_offset;
  if (at + 30 > zip.size() || U32(zip, at) != 0x04034b50) return BadInput(kUnreadable);
  size_t data_at = at + 30 + U16(zip, at + 26) + U16(zip, at + 28);
  if (data_at > zip.size() || chosen->compressed > zip.size() - data_at) {
    return BadInput(kUnreadable);
  }
  std::string_view data = zip.substr(data_at, chosen->compressed);
  // The size the directory declares is checked first; one that lies is
  // caught by the inflate limit, then by the size check below.
  if (chosen->size > kMaxUploadBytes) return TooLarge(std::to_string(chosen->size));
  std::string out;
  if (chosen->method == 0) {
    out = std::string(data);
  } else if (chosen->method == 8) {
    auto inflated = Inflate(data, -MAX_WBITS, kMaxUploadBytes);
    if (!inflated.ok()) {
      if (inflated.error().code == 413) return TooLarge(inflated.error().message);
      return BadInput("Error reading pipeline YAML from the zip file");
    }
    out = std::move(*inflated);
  } else {
    return BadInput(kUnreadable);  // Go: "zip: unsupported compression algorithm"
  }
  uint32_t crc = static_cast<uint32_t>(
      crc32(0, reinterpret_cast<const Bytef*>(out.data()), static_cast<uInt>(out.size())));
  if (out.size() != chosen->size || crc != chosen->crc) {
    return BadInput("Error reading pipeline YAML from the zip file");
  }
  return out;
}

}  // namespace

Result<std::string> ReadPipelineFile(std::string_view file_name, std::string_view bytes) {
  if (bytes.size() > kMaxUploadBytes) return TooLarge(std::to_string(bytes.size()));
  if (IsYamlName(file_name) || EndsWith(file_name, ".json")) return std::string(bytes);
  // Go's isZipFile and isCompressedTarballFile: more than two bytes, and the
  // first two are the signature.
  if (bytes.size() > 2 && bytes[0] == 'P' && bytes[1] == 'K') return FromZip(bytes);
  if (bytes.size() > 2 && bytes[0] == '\x1f' && bytes[1] == '\x8b') return FromTarball(bytes);
  return BadInput("Unexpected pipeline file format. Support .zip, .tar.gz, .json or YAML");
}

}  // namespace kfpbench::server
