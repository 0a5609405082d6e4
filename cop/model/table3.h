// Seed 000's Table III (libcop function times) and the ch. VI figures derived
// from the same expressions, three ways: the thesis's published value, the
// analytic expression (cop/model/analytic.h) and the controller core driven
// through a scenario (cop/model/scenario.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/analytic.h"
#include "model/hardware.h"
#include "model/scenario.h"

namespace cop::model {

struct Table3Row {
  std::string function;  // as Table III names it
  std::string type;      // integer, double, master-slave, or the derived figure's subject
  std::string column;    // best, max, or derived
  double published_us;
  double analytic_us;
  double simulated_us;
  std::string note;  // why ours and the thesis's differ, where they do by more than 1 %

  double analytic_error() const { return analytic_us / published_us - 1.0; }
  double simulated_error() const { return simulated_us / published_us - 1.0; }
};

std::vector<Table3Row> table3(const Timing& timing);

std::string table3_text(const std::vector<Table3Row>& rows, const Timing& timing);
// CSV with the header function,type,column,published_us,analytic_us,simulated_us,note
std::string table3_csv(const std::vector<Table3Row>& rows);

// One CSV field, quoted (RFC 4180) where it holds a comma, quote or newline;
// the model's CSV reports (Table III, scale) all write fields through it.
std::string csv_field(const std::string& s);

}  // namespace cop::model
