#include "link/auth.h"

#include <fcntl.h>
#include <sodium.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include <fmt/format.h>

namespace cop::link {

namespace {

// H_k(label, fields): keyed BLAKE2b of the label (with its NUL) and the fields' bytes.
class Kdf {
 public:
  Kdf(const Key& k, const char* label) {
    if (sodium_init() < 0) {
      // libsodium's own set-up failed (no entropy source): cannot happen on Linux.
    }
    crypto_generichash_init(&st_, k.data(), k.size(), kKeyBytes);
    crypto_generichash_update(&st_, reinterpret_cast<const uint8_t*>(label), std::strlen(label) + 1);
  }
  template <typename T>
  Kdf& add(const T& v) {
    crypto_generichash_update(&st_, reinterpret_cast<const uint8_t*>(&v), sizeof v);
    return *this;
  }
  Key done() {
    Key out;
    crypto_generichash_final(&st_, out.data(), out.size());
    return out;
  }

 private:
  crypto_generichash_state st_;
};

}  // namespace

std::optional<Key> load_key_file(const std::string& path, std::string& why) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    why = fmt::format("cluster key {}: {}", path, std::strerror(errno));
    return std::nullopt;
  }
  struct stat st{};
  Key k{};
  ssize_t n = -1;
  if (::fstat(fd, &st) < 0) {
    why = fmt::format("cluster key {}: {}", path, std::strerror(errno));
  } else if (!S_ISREG(st.st_mode)) {
    why = fmt::format("cluster key {} is not a regular file", path);
  } else if (st.st_mode & (S_IRWXG | S_IRWXO)) {
    why = fmt::format("cluster key {} has mode {:04o}: others may read it; chmod 600 it", path, st.st_mode & 07777);
  } else if (st.st_size != off_t(kKeyBytes)) {
    why = fmt::format("cluster key {} has {} bytes (a key is {} random bytes)", path, st.st_size, kKeyBytes);
  } else if ((n = ::read(fd, k.data(), k.size())) != ssize_t(k.size())) {
    why = fmt::format("cluster key {}: {}", path, n < 0 ? std::strerror(errno) : "short read");
  } else {
    ::close(fd);
    return k;
  }
  ::close(fd);
  return std::nullopt;
}

bool write_key_file(const std::string& path, std::string& why) {
  Key k;
  if (::getrandom(k.data(), k.size(), 0) != ssize_t(k.size())) {
    why = fmt::format("getrandom: {}", std::strerror(errno));
    return false;
  }
  const std::string tmp = path + ".new";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0 || ::fchmod(fd, 0600) < 0 || ::write(fd, k.data(), k.size()) != ssize_t(k.size()) || ::fsync(fd) < 0 ||
      ::close(fd) < 0 || ::rename(tmp.c_str(), path.c_str()) < 0) {
    why = fmt::format("{}: {}", path, std::strerror(errno));
    if (fd >= 0) ::unlink(tmp.c_str());
    return false;
  }
  return true;
}

Key register_key(const Key& cluster, uint16_t channel, uint64_t nc, const Challenge& ns) {
  return Kdf(cluster, "cop register").add(channel).add(nc).add(ns).done();
}

Key driver_key(const Key& cluster, uint16_t channel, uint32_t session, uint64_t nc) {
  return Kdf(cluster, "cop driver").add(channel).add(session).add(nc).done();
}

Key channel_down_key(const Key& cluster, uint16_t channel) { return Kdf(cluster, "cop down").add(channel).done(); }

Key refusal_key(const Key& down_base) { return Kdf(down_base, "cop refused").done(); }

Key task_key(const Key& cluster, uint16_t channel, uint16_t tkno, uint64_t enrol_nonce) {
  return Kdf(cluster, "cop task").add(channel).add(tkno).add(enrol_nonce).done();
}

Key session_key(const Key& base, uint32_t session) { return Kdf(base, "cop session").add(session).done(); }

uint64_t random_nonce() {
  uint64_t v = 0;
  while (v == 0)
    if (::getrandom(&v, sizeof v, 0) != sizeof v) {
      timespec ts{};
      ::clock_gettime(CLOCK_MONOTONIC, &ts);
      v = uint64_t(ts.tv_nsec) * 0x9E3779B97F4A7C15ull ^ uint64_t(ts.tv_sec);
    }
  return v;
}

Challenge random_challenge() {
  Challenge c{};
  if (::getrandom(c.data(), sizeof c, 0) != ssize_t(sizeof c))
    for (auto& w : c) w = uint32_t(random_nonce());
  return c;
}

}  // namespace cop::link
