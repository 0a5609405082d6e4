#include "lib/elements.h"

#include <pvm3.h>

#include <bit>
#include <cstring>

#include <cop/cop.h>

namespace cop::lib {

using wire::Opcode;

size_t element_size(int t) {
  switch (t) {
    case PVM_INT: case PVM_UINT: case PVM_FLOAT: return 4;
    case PVM_LONG: case PVM_ULONG: case PVM_DOUBLE: return 8;
    default: return 0;
  }
}

bool is_64bit_storage(int t) { return t != PVM_INT && t != PVM_UINT; }

uint64_t to_word(const void* data, size_t i, int t) {
  const auto* p = static_cast<const uint8_t*>(data) + i * element_size(t);
  switch (t) {
    case PVM_INT: case PVM_UINT: { uint32_t v; std::memcpy(&v, p, 4); return v; }
    case PVM_FLOAT: { float f; std::memcpy(&f, p, 4); return std::bit_cast<uint64_t>(double(f)); }
    default: { uint64_t v; std::memcpy(&v, p, 8); return v; }
  }
}

void from_word(void* data, size_t i, int t, uint64_t w) {
  auto* p = static_cast<uint8_t*>(data) + i * element_size(t);
  switch (t) {
    case PVM_INT: case PVM_UINT: { const auto v = uint32_t(w); std::memcpy(p, &v, 4); break; }
    case PVM_FLOAT: { const auto f = float(std::bit_cast<double>(w)); std::memcpy(p, &f, 4); break; }
    default: std::memcpy(p, &w, 8);
  }
}

std::optional<Opcode> reduce_opcode(int func, int t) {
  switch (t) {
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
        case COP_MAX: if (t == PVM_LONG) return Opcode::MAXI64; break;
        case COP_MIN: if (t == PVM_LONG) return Opcode::MINI64; break;
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

Opcode read_opcode(int t) { return is_64bit_storage(t) ? Opcode::RSRAM64 : Opcode::RSRAM32; }
Opcode write_opcode(int t) { return is_64bit_storage(t) ? Opcode::WSRAM64 : Opcode::WSRAM32; }
Opcode rmw_opcode(int t) { return is_64bit_storage(t) ? Opcode::RMW64 : Opcode::RMW32; }
bool rmw_floating(int t) { return t == PVM_FLOAT || t == PVM_DOUBLE; }
Opcode bcast_opcode(int t) { return is_64bit_storage(t) ? Opcode::BCAST64 : Opcode::BCAST32; }

}  // namespace cop::lib
