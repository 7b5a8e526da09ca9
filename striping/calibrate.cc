#include "striping/calibrate.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <nlohmann/json.hpp>
#include <random>

#include "common/aligned_buffer.h"
#include "common/unique_fd.h"
#include "striping/disk_set.h"
#include "striping/json_fields.h"

namespace graphfs {

namespace {

constexpr char kCalibrationFile[] = ".graphfs-calibration.json";
constexpr uint64_t kAlign = 4096;

double Now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

Status PreadAll(int fd, char* buf, uint64_t length, uint64_t offset, const std::string& path) {
  for (uint64_t done = 0; done < length;) {
    const ssize_t n = ::pread(fd, buf + done, length - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Error::FromErrno("read " + path);
    if (n == 0) return Error(EIO, "read " + path + ": unexpected end of file");
    done += static_cast<uint64_t>(n);
  }
  return Status::Ok();
}

// Field `key`: a finite number >= 0.
Result<double> NumberField(const nlohmann::json& j, const char* key) {
  if (!j.is_object() || !j.contains(key)) return Error(EINVAL, std::string("no field '") + key + "'");
  const nlohmann::json& v = j[key];
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0)
    return Error(EINVAL, std::string("field '") + key + "' is not a number >= 0: " + ShownJson(v));
  return v.get<double>();
}

}  // namespace

std::string CalibrationPath(const std::string& dir) { return dir + "/" + kCalibrationFile; }

Result<DiskCalibration> CalibrateDisk(const std::string& dir, const CalibrateOptions& o) {
  if (o.probe_bytes < o.sequential_request || o.sequential_request % kAlign != 0 || o.random_bytes % kAlign != 0 ||
      o.random_bytes == 0 || o.sequential_request == 0 || o.random_reads == 0 || o.probe_bytes % kAlign != 0)
    return Error(EINVAL, "calibration sizes must be positive multiples of 4 KiB, the probe at least one sequential read");
  const std::string path = dir + "/.graphfs-calibration-probe-" + std::to_string(::getpid());
  DiskCalibration c;
  c.path = dir;
  c.probe_bytes = o.probe_bytes;
  AlignedBuffer buf(o.sequential_request);
  if (!buf.ok()) return Error(ENOMEM, "no memory for the probe's buffer");
  {
    UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    if (!fd.valid()) return Error::FromErrno("create probe file " + path);
    std::mt19937_64 rng(o.seed);
    for (uint64_t at = 0; at < o.probe_bytes; at += o.sequential_request) {
      // Not zeros: a compressing or deduplicating layer would make the reads cheaper than data.
      for (uint64_t k = 0; k < o.sequential_request; k += 8) {
        const uint64_t v = rng();
        std::memcpy(buf.data() + k, &v, 8);
      }
      const ssize_t n = ::pwrite(fd.get(), buf.data(), o.sequential_request, static_cast<off_t>(at));
      if (n != static_cast<ssize_t>(o.sequential_request)) {
        const Error e = n < 0 ? Error::FromErrno("write probe file " + path) : Error(ENOSPC, "short write of " + path);
        ::unlink(path.c_str());
        return e;
      }
    }
    if (::fsync(fd.get()) != 0) {
      const Error e = Error::FromErrno("fsync probe file " + path);
      ::unlink(path.c_str());
      return e;
    }
    (void)::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_DONTNEED);
  }
  auto measure = [&]() -> Status {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC));
    if (!fd.valid()) {
      c.direct = false;  // tmpfs and friends: the page cache answers, and the numbers say so
      fd.reset(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
      if (!fd.valid()) return Error::FromErrno("open probe file " + path);
    }
    double t0 = Now();
    for (uint64_t at = 0; at < o.probe_bytes; at += o.sequential_request)
      GRAPHFS_RETURN_IF_ERROR(PreadAll(fd.get(), buf.data(), o.sequential_request, at, path));
    const double seq_seconds = std::max(Now() - t0, 1e-9);
    c.bytes_per_second = static_cast<double>(o.probe_bytes) / seq_seconds;
    std::mt19937_64 rng(o.seed + 1);
    const uint64_t slots = (o.probe_bytes - o.random_bytes) / kAlign + 1;
    t0 = Now();
    for (unsigned k = 0; k < o.random_reads; ++k) {
      const uint64_t at = (rng() % slots) * kAlign;
      GRAPHFS_RETURN_IF_ERROR(PreadAll(fd.get(), buf.data(), o.random_bytes, at, path));
    }
    c.random_read_seconds = (Now() - t0) / o.random_reads;
    c.seconds_per_request =
        std::max(0.0, c.random_read_seconds - static_cast<double>(o.random_bytes) / c.bytes_per_second);
    return Status::Ok();
  };
  Status s = measure();
  ::unlink(path.c_str());
  if (!s.ok()) return s.error();
  c.measured_unix = static_cast<int64_t>(std::time(nullptr));
  return c;
}

std::string EncodeCalibration(const DiskCalibration& c) {
  nlohmann::json j;
  j["version"] = 1;
  j["bytes_per_second"] = c.bytes_per_second;
  j["seconds_per_request"] = c.seconds_per_request;
  j["random_read_seconds"] = c.random_read_seconds;
  j["probe_bytes"] = c.probe_bytes;
  j["direct"] = c.direct;
  j["measured_unix"] = c.measured_unix;
  return j.dump(2) + "\n";
}

Result<DiskCalibration> DecodeCalibration(const std::string& text) {
  auto j = ParseJson(text);
  if (!j.ok()) return j.error();
  auto version = UnsignedField(*j, "version", 1000);
  if (!version.ok()) return version.error();
  if (*version != 1) return Error(EINVAL, "calibration format version " + std::to_string(*version) + ", expected 1");
  DiskCalibration c;
  auto bps = NumberField(*j, "bytes_per_second");
  auto spr = NumberField(*j, "seconds_per_request");
  auto rrs = NumberField(*j, "random_read_seconds");
  auto probe = UnsignedField(*j, "probe_bytes", UINT64_MAX);
  auto when = UnsignedField(*j, "measured_unix", INT64_MAX);
  if (!bps.ok()) return bps.error();
  if (!spr.ok()) return spr.error();
  if (!rrs.ok()) return rrs.error();
  if (!probe.ok()) return probe.error();
  if (!when.ok()) return when.error();
  if (*bps <= 0) return Error(EINVAL, "field 'bytes_per_second' must be above 0");
  if (!j->contains("direct") || !(*j)["direct"].is_boolean()) return Error(EINVAL, "field 'direct' is not a boolean");
  c.bytes_per_second = *bps;
  c.seconds_per_request = *spr;
  c.random_read_seconds = *rrs;
  c.probe_bytes = *probe;
  c.direct = (*j)["direct"].get<bool>();
  c.measured_unix = static_cast<int64_t>(*when);
  return c;
}

Status SaveCalibration(const DiskCalibration& c) {
  return WriteFileAtomic(CalibrationPath(c.path), EncodeCalibration(c));
}

Result<DiskCalibration> LoadCalibration(const std::string& dir) {
  const std::string path = CalibrationPath(dir);
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return Error::FromErrno(path);
  auto text = ReadSmallFile(path);
  if (!text.ok()) return text.error();
  auto c = DecodeCalibration(*text);
  if (!c.ok()) return c.error().Wrap(path + " is damaged (re-run graphfs-calibrate)");
  c->path = dir;
  return c;
}

}  // namespace graphfs
