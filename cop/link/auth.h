// The link's keys (cop/link.h, "Keys"): the cluster key file, and the keys
// derived from it for a registration, a task and a session. Keyed BLAKE2b
// (libsodium crypto_generichash) is the derivation: H_k(label, fields...).
#pragma once
#include <cop/link.h>

#include <cstdint>
#include <optional>
#include <string>

namespace cop::link {

// The cluster key: a file of exactly kKeyBytes random bytes, mode 0600 or
// stricter (no group or other bits), as Slurm's munge key. nullopt and `why`
// when it is missing, unreadable, of another size or readable by others.
std::optional<Key> load_key_file(const std::string& path, std::string& why);
// Writes a fresh random key to `path` atomically, mode 0600; false and `why` on failure.
bool write_key_file(const std::string& path, std::string& why);

// The MAC key of PROVE: K_reg = H_K("register", channel, Nc, Ns).
Key register_key(const Key& cluster, uint16_t channel, uint64_t nc, const Challenge& ns);
// The driver's key of session S (driver frames, a level-1 copd's frames up):
// H_K("driver", channel, S, Nc). Nc is the driver's for its life: a driver
// that proves again in the same session keeps its key.
Key driver_key(const Key& cluster, uint16_t channel, uint32_t session, uint64_t nc);
// The channel's down key H_K("down", channel), which its tasks get, and the
// per-session key of copd -> node frames derived from it.
Key channel_down_key(const Key& cluster, uint16_t channel);
// The MAC key of REFUSED to a channel: H(H_K("down", channel), "refused"). copd
// refuses frames of no session it knows, so the key is the channel's, not a
// session's; its freshness is the session it echoes (cop/link.h "REFUSED").
Key refusal_key(const Key& down_base);
// A task's key T = H_K("task", channel, TKNO, E).
Key task_key(const Key& cluster, uint16_t channel, uint16_t tkno, uint64_t enrol_nonce);
// The key of session S from a channel's down key or a task's key: H(k, "session", S).
Key session_key(const Key& base, uint32_t session);

// A nonzero random 64-bit number (getrandom).
uint64_t random_nonce();
Challenge random_challenge();

}  // namespace cop::link
