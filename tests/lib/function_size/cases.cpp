// Fixed code for tests/lib/function_size.py (run with --limit 5): what it must count
// as a function's lines and what it must not. Not compiled.
#include <string>
#define LONG_MACRO(x) { \
  x; x; x; x; x; x; x; \
}
namespace outer {
namespace {

struct Point {
  int x{0}, y{0};
  // A member function over the limit: 6 lines from brace to brace (clang-tidy's
  // count, readability-function-size LineThreshold).
  int sum() const noexcept {
    int s = 0;
    s += 0;
    s += x;
    s += y;
    return s;
  }
};

const char* text = "{ { { not a brace } } }";
const char c = '{';
const int big = 1'000'000;
const char* raw = R"x({
{
{
})x";

enum class Kind : int {
  a,
  b,
  c,
  d,
  e,
};

}  // namespace

// A constructor with member initializers, one of them in braces: 6 lines.
Point make() { return Point{}; }
class Holder {
 public:
  Holder() : a_{1}, b_(2) {
    a_ += 1;
    b_ += 1;
    a_ += b_;
    b_ += a_;
    a_ = 0;
  }
 private:
  int a_, b_;
};

// A trailing return type and a lambda inside (counted with it): 9 lines.
auto total(int n) -> long {
  auto add = [](long a, long b) {
    return a + b;
  };
  long t = 0;
  for (int i = 0; i < n; ++i) t = add(t, i);
  /* { a comment with braces
  } */
  return t;
}

// A table built by a lambda at namespace scope: not a function (for clang-tidy either).
const std::string table = [] {
  std::string s;
  s += "a";
  s += "b";
  s += "c";
  return s;
}();

// Exactly at the limit: 5 lines, not reported.
int at_limit() {
  int a = 1;
  a += 1;
  a += 1;
  return a;
}

}  // namespace outer

extern "C" {
int c_function(int a) {
  a += 1;
  a += 1;
  a += 1;
  a += 1;
  return a;
}
}
