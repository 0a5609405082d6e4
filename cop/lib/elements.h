// How libcop's datatypes and reduction functions meet the hardware: which
// Table I opcode, and how an element sits in a 64-bit Data RAM word.
//   PVM_INT, PVM_UINT    32-bit words and operations (PVM_UINT MAX/MIN in
//                        the 64-bit ALU on zero-extended values, so they
//                        compare unsigned)
//   PVM_LONG, PVM_ULONG  64-bit (PVM_ULONG has no MAX/MIN: the ALU is signed)
//   PVM_FLOAT, PVM_DOUBLE  doubles in the FP unit (a float travels as a double)
#pragma once
#include <cop/wire.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace cop::lib {

// Bytes of one element in the caller's array; 0 for a datatype libcop lacks.
size_t element_size(int datatype);
bool is_64bit_storage(int datatype);
uint64_t to_word(const void* data, size_t i, int datatype);
void from_word(void* data, size_t i, int datatype, uint64_t word);
// The same for elements at, at+1, ...: element at+i as out[i] (to_word), and words[i]
// into element at+i (from_word); the datatype looked at once, not per element (issue 36:
// a 16 KB array is 2048 elements).
void to_words(const void* data, size_t at, int datatype, std::span<uint64_t> out);
void from_words(void* data, size_t at, int datatype, std::span<const uint64_t> words);
// The payload (wire::payload) of got[i] into out[i], for out.size() messages: its width
// looked up once per opcode, not called per element (a result run shares its opcode).
void copy_payloads(std::span<const wire::Message> got, std::span<uint64_t> out);
std::optional<wire::Opcode> reduce_opcode(int func, int datatype);
// RSRAM/WSRAM/RMW/BCAST of the width the datatype is stored in.
wire::Opcode read_opcode(int datatype);
wire::Opcode write_opcode(int datatype);
wire::Opcode rmw_opcode(int datatype);
bool rmw_floating(int datatype);  // RMW64 with M: the add happens in the FP unit
wire::Opcode bcast_opcode(int datatype);
// Elements per channel access: arrays are split at 1024 bytes so the channel
// lock is held briefly (8 bytes a word on the controller).
inline constexpr size_t kChunk = 128;

}  // namespace cop::lib
