// An array of one PVM datatype (PVM_INT, PVM_LONG, PVM_FLOAT, PVM_DOUBLE) as cop_difftest
// passes it to libcop and to PVM: elements set and read as doubles (the program's values
// are small whole numbers or quarters, exact in every type), packed and unpacked by
// PVM's own calls for the reference.
#pragma once
#include <pvm3.h>

#include <cstring>
#include <vector>

namespace difftest {

inline size_t type_size(int type) { return type == PVM_INT || type == PVM_FLOAT ? 4 : 8; }

struct Buf {
  int type;
  int n;
  std::vector<unsigned char> bytes;
  Buf(int t, int count) : type(t), n(count), bytes(size_t(count > 0 ? count : 1) * type_size(t), 0xA5) {}
  void* data() { return bytes.data(); }
  void set(int i, double v) {
    unsigned char* at = bytes.data() + size_t(i) * type_size(type);
    if (type == PVM_INT) { int x = int(v); std::memcpy(at, &x, 4); }
    else if (type == PVM_LONG) { long x = long(v); std::memcpy(at, &x, 8); }
    else if (type == PVM_FLOAT) { float x = float(v); std::memcpy(at, &x, 4); }
    else { std::memcpy(at, &v, 8); }
  }
  double get(int i) const {
    const unsigned char* at = bytes.data() + size_t(i) * type_size(type);
    if (type == PVM_INT) { int x; std::memcpy(&x, at, 4); return x; }
    if (type == PVM_LONG) { long x; std::memcpy(&x, at, 8); return double(x); }
    if (type == PVM_FLOAT) { float x; std::memcpy(&x, at, 4); return x; }
    double x;
    std::memcpy(&x, at, 8);
    return x;
  }
  int pack() {
    if (type == PVM_INT) return pvm_pkint(static_cast<int*>(data()), n, 1);
    if (type == PVM_LONG) return pvm_pklong(static_cast<long*>(data()), n, 1);
    if (type == PVM_FLOAT) return pvm_pkfloat(static_cast<float*>(data()), n, 1);
    return pvm_pkdouble(static_cast<double*>(data()), n, 1);
  }
  int unpack() {
    if (type == PVM_INT) return pvm_upkint(static_cast<int*>(data()), n, 1);
    if (type == PVM_LONG) return pvm_upklong(static_cast<long*>(data()), n, 1);
    if (type == PVM_FLOAT) return pvm_upkfloat(static_cast<float*>(data()), n, 1);
    return pvm_upkdouble(static_cast<double*>(data()), n, 1);
  }
};

}  // namespace difftest
