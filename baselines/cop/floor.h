// The floor of the emulated COP (issue 26, the `emulation` benchmark): what the COP
// calls cost on the transport the emulation runs on, with none of COP's logic, so that
// a reader sees what is COP and what is the emulation.
//
// One floor controller process (copbench-cop-floor, floor_controller.cpp), started by
// rank 0 as its child on the address it reaches copd from (the COP network), and one UDP
// socket per rank. The controller receives with recvmmsg and answers with sendmmsg, one
// datagram per frame: no MAC, no sequence stream, no resend, no controller core.
//   barrier      every rank sends one datagram; once all are in, every rank gets one.
//   reduce       every rank sends its array; once all are in, the controller adds them
//                (int32 or double sum) and sends the result to the root and an answer
//                to every other rank.
//   broadcast    the root sends its array; the controller sends it to every other rank
//                and an answer to the root.
// The datagrams' sizes are the COP call's (floor.cpp): a call of one element or none
// (barrier, an 8 B reduce or broadcast) sends the link frames libcop sends for it, up
// (its burst: LOCK, SETTC, SETBM, BENTRY/op, UNLOCK; cop/lib/commands.h) and down (an
// answer per command and the result: what copd sends back; link::encode's sizes); an
// array sends its data bytes behind the link's 80-byte frame header in one datagram of at
// most link::kMaxFrameBytes, a link frame's most: the bytes a burst of compact element
// commands needs at the least. A larger array is refused (std::invalid_argument).
#pragma once

#include <cstddef>
#include <cstdint>

namespace copbench::cop::floor {

inline constexpr std::uint32_t kMagic = 0x524F4C46;  // "FLOR"

enum class Type : std::uint8_t { hello = 1, hello_ack = 2, op = 3, answer = 4, stop = 5 };
enum class Kind : std::uint8_t { none = 0, barrier = 1, reduce_i32 = 2, reduce_f64 = 3, broadcast = 4 };

// At the start of every datagram (inside the place the link frame's header takes);
// the data, if any, follows at kDataOffset; the datagram is padded to its frame's size.
struct Header {
  std::uint32_t magic = kMagic;
  Type type = Type::op;
  Kind kind = Kind::none;
  std::uint16_t rank = 0;
  std::uint32_t seq = 0;        // the operation's number, the same on every rank
  std::uint32_t bytes = 0;      // data bytes after kDataOffset
  std::uint32_t answer_size = 0;  // the datagram this rank is answered with (its COP reply frame)
  std::uint32_t result_size = 0;  // broadcast: the datagram each receiver gets
  std::uint16_t root = 0;
  std::uint16_t ranks = 0;
};
static_assert(sizeof(Header) == 28);
inline constexpr std::size_t kDataOffset = 80;       // link::kHeaderBytes
inline constexpr std::size_t kMaxDatagram = 65000;   // link::kMaxFrameBytes
inline constexpr int kMaxRanks = 64 * 64;

}  // namespace copbench::cop::floor
