// Elements of libcop's datatypes in 64-bit Data RAM words, and their opcodes (elements.h).
#include "lib/elements.h"

#include <pvm3.h>

#include <bit>
#include <cstring>

#include <cop/cop.h>

namespace cop::lib {

using wire::Opcode;

size_t element_size(int datatype) {
  switch (datatype) {
    case PVM_INT: case PVM_UINT: case PVM_FLOAT: return 4;
    case PVM_LONG: case PVM_ULONG: case PVM_DOUBLE: return 8;
    default: return 0;
  }
}

bool is_64bit_storage(int datatype) { return datatype != PVM_INT && datatype != PVM_UINT; }

namespace {

// An element of each storage kind and its word, both ways: to_word/from_word pick one per
// element, to_words/from_words one per array.
uint64_t word_of_int(const uint8_t* p) { uint32_t v; std::memcpy(&v, p, 4); return v; }
uint64_t word_of_float(const uint8_t* p) { float f; std::memcpy(&f, p, 4); return std::bit_cast<uint64_t>(double(f)); }
uint64_t word_of_long(const uint8_t* p) { uint64_t v; std::memcpy(&v, p, 8); return v; }
void int_of_word(uint8_t* p, uint64_t w) { const auto v = uint32_t(w); std::memcpy(p, &v, 4); }
void float_of_word(uint8_t* p, uint64_t w) { const auto f = float(std::bit_cast<double>(w)); std::memcpy(p, &f, 4); }
void long_of_word(uint8_t* p, uint64_t w) { std::memcpy(p, &w, 8); }

}  // namespace

uint64_t to_word(const void* data, size_t i, int datatype) {
  const auto* p = static_cast<const uint8_t*>(data) + i * element_size(datatype);
  switch (datatype) {
    case PVM_INT: case PVM_UINT: return word_of_int(p);
    case PVM_FLOAT: return word_of_float(p);
    default: return word_of_long(p);
  }
}

void from_word(void* data, size_t i, int datatype, uint64_t word) {
  auto* p = static_cast<uint8_t*>(data) + i * element_size(datatype);
  switch (datatype) {
    case PVM_INT: case PVM_UINT: int_of_word(p, word); break;
    case PVM_FLOAT: float_of_word(p, word); break;
    default: long_of_word(p, word);
  }
}

void to_words(const void* data, size_t at, int datatype, std::span<uint64_t> out) {
  const auto* p = static_cast<const uint8_t*>(data) + at * element_size(datatype);
  switch (datatype) {
    case PVM_INT: case PVM_UINT: for (size_t i = 0; i < out.size(); ++i) out[i] = word_of_int(p + 4 * i); break;
    case PVM_FLOAT: for (size_t i = 0; i < out.size(); ++i) out[i] = word_of_float(p + 4 * i); break;
    default: for (size_t i = 0; i < out.size(); ++i) out[i] = word_of_long(p + 8 * i);
  }
}

void from_words(void* data, size_t at, int datatype, std::span<const uint64_t> words) {
  auto* p = static_cast<uint8_t*>(data) + at * element_size(datatype);
  switch (datatype) {
    case PVM_INT: case PVM_UINT: for (size_t i = 0; i < words.size(); ++i) int_of_word(p + 4 * i, words[i]); break;
    case PVM_FLOAT: for (size_t i = 0; i < words.size(); ++i) float_of_word(p + 4 * i, words[i]); break;
    default: for (size_t i = 0; i < words.size(); ++i) long_of_word(p + 8 * i, words[i]);
  }
}

std::optional<Opcode> reduce_opcode(int func, int datatype) {
  switch (datatype) {
    case PVM_INT:
      switch (func) {
        case COP_SUM: return Opcode::SUMI32;
        case COP_MAX: return Opcode::MAXI32;
        case COP_MIN: return Opcode::MINI32;
        case COP_AND: return Opcode::AND32;
        case COP_OR: return Opcode::OR32;
        case COP_EXOR: return Opcode::EXOR32;
      }
      break;
    case PVM_UINT:
      switch (func) {
        case COP_SUM: return Opcode::SUMI32;
        case COP_MAX: return Opcode::MAXI64;  // zero-extended: an unsigned comparison
        case COP_MIN: return Opcode::MINI64;
        case COP_AND: return Opcode::AND32;
        case COP_OR: return Opcode::OR32;
        case COP_EXOR: return Opcode::EXOR32;
      }
      break;
    case PVM_LONG:
    case PVM_ULONG:
      switch (func) {
        case COP_SUM: return Opcode::SUMI64;
        case COP_MAX: if (datatype == PVM_LONG) return Opcode::MAXI64; break;
        case COP_MIN: if (datatype == PVM_LONG) return Opcode::MINI64; break;
        case COP_AND: return Opcode::AND64;
        case COP_OR: return Opcode::OR64;
        case COP_EXOR: return Opcode::EXOR64;
      }
      break;
    case PVM_FLOAT:
    case PVM_DOUBLE:
      switch (func) {
        case COP_SUM: return Opcode::SUMF;
        case COP_MAX: return Opcode::MAXF;
        case COP_MIN: return Opcode::MINF;
      }
      break;
  }
  return std::nullopt;
}

Opcode read_opcode(int datatype) { return is_64bit_storage(datatype) ? Opcode::RSRAM64 : Opcode::RSRAM32; }
Opcode write_opcode(int datatype) { return is_64bit_storage(datatype) ? Opcode::WSRAM64 : Opcode::WSRAM32; }
Opcode rmw_opcode(int datatype) { return is_64bit_storage(datatype) ? Opcode::RMW64 : Opcode::RMW32; }
bool rmw_floating(int datatype) { return datatype == PVM_FLOAT || datatype == PVM_DOUBLE; }
Opcode bcast_opcode(int datatype) { return is_64bit_storage(datatype) ? Opcode::BCAST64 : Opcode::BCAST32; }

void copy_payloads(std::span<const wire::Message> got, std::span<uint64_t> out) {
  wire::Opcode op = wire::Opcode::ACK;
  bool wide = false;
  for (size_t i = 0; i < out.size(); ++i) {
    if (i == 0 || got[i].ins.opcode != op) op = got[i].ins.opcode, wide = wire::is_64bit(op);
    out[i] = wide ? got[i].data64() : got[i].data1;  // as wire::payload reads it
  }
}

}  // namespace cop::lib
