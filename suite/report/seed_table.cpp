// A seed table beside our points: the seed's published columns, then per link profile our
// value for each backend mode, the cop modelled time and ratios, "ours ÷ published" for
// the seed columns that stand for one of our backends, and a verdict against the spread
// the seed states. The pairing (tables/STEM.pairing.csv) names the points each cell read.
#include <algorithm>

#include <fmt/format.h>

#include "report/report_parts.h"

namespace copbench::report {

namespace {

// What a seed table's layout depends on: its rows and columns in file order, and our
// columns.
struct SeedLayout {
  std::vector<std::string> rows, columns, profiles;
  std::vector<BackendMode> modes;  // our columns, without profile
  // Seed columns that stand for one of our backends: (column, backend); backend "" when
  // the column's rows name different backends (each row compares the one its cell names).
  std::vector<std::pair<std::string, std::string>> mapped;
  // Seed columns with a stated spread in some row: they get a verdict column.
  std::vector<std::string> judged;

  std::string column_backend(const std::string& col) const {
    for (const auto& [c, b] : mapped)
      if (c == col) return b;
    return std::string();
  }
};

SeedLayout seed_layout(const CampaignResults& results, const std::vector<SeedCell>& cells) {
  SeedLayout l;
  for (const auto& c : cells) {
    if (std::find(l.rows.begin(), l.rows.end(), c.row) == l.rows.end()) l.rows.push_back(c.row);
    if (std::find(l.columns.begin(), l.columns.end(), c.column) == l.columns.end()) l.columns.push_back(c.column);
  }
  l.profiles.assign(results.profiles.begin(), results.profiles.end());
  l.modes = results.column_modes();
  for (const auto& col : l.columns) {
    std::set<std::string> backends;
    for (const auto& c : cells)
      if (c.column == col && !c.backend.empty()) backends.insert(c.backend);
    if (!backends.empty()) l.mapped.emplace_back(col, backends.size() == 1 ? *backends.begin() : "");
  }
  // A table without tolerances has no verdict column (its layout stays as it was).
  for (const auto& col : l.columns)
    if (std::any_of(cells.begin(), cells.end(), [&](const SeedCell& c) { return c.column == col && c.spread; }))
      l.judged.push_back(col);
  return l;
}

std::vector<std::string> seed_header(const CampaignResults& results, const SeedLayout& l) {
  std::vector<std::string> h = {"row"};
  for (const auto& col : l.columns) h.push_back("published " + col);
  for (const auto& p : l.profiles) {
    std::string suffix = results.multi_profile ? " " + p : "";
    for (const auto& v : l.modes) h.push_back("ours " + results.label(v, false) + suffix);
    for (const auto& r : ratio_header()) h.push_back(r + suffix);
    for (const auto& [col, backend] : l.mapped)
      h.push_back(fmt::format("{} ÷ published {}{}", backend.empty() ? "ours" : backend, col, suffix));
    for (const auto& col : l.judged) h.push_back(fmt::format("verdict published {}{}", col, suffix));
  }
  h.push_back("unit");
  h.push_back("note");
  return h;
}

// One row of the seed table: its published cells and the cell whose point ours are read at.
struct SeedRow {
  std::string name, unit;
  const SeedCell* key = nullptr;  // the first cell naming a benchmark
  std::map<std::string, const SeedCell*> by_column;
  std::optional<int> nodes;  // the node count ours are read at
  const SeedCell* published(const std::string& col) const {
    auto it = by_column.find(col);
    return it == by_column.end() ? nullptr : it->second;
  }
};

SeedRow seed_row(const CampaignResults& results, const std::vector<SeedCell>& cells, const std::string& name) {
  SeedRow row;
  row.name = name;
  for (const auto& c : cells)
    if (c.row == name) {
      row.by_column[c.column] = &c;
      if (!row.key && !c.benchmark.empty()) row.key = &c;
      if (row.unit.empty()) row.unit = c.unit;
    }
  if (row.key) row.nodes = seed_row_nodes(results, *row.key);
  return row;
}

// The row's notes: where ours differ from the seed's, then its cells' notes, each once.
std::vector<std::string> seed_row_notes(const std::vector<SeedCell>& cells, const SeedRow& row) {
  std::vector<std::string> notes;
  const SeedCell* key = row.key;
  const int at = row.nodes.value_or(0);
  if (!key) notes.push_back("no matching benchmark");
  else if (!row.nodes) notes.push_back("not measured in this campaign");
  else if (key->nodes && at != *key->nodes) notes.push_back(fmt::format("ours at {} nodes (seed: {})", at, *key->nodes));
  if (key && !key->note.empty()) notes.push_back(key->note);
  if (key)
    for (const auto& c : cells)
      if (c.row == row.name && !c.note.empty() && std::find(notes.begin(), notes.end(), c.note) == notes.end())
        notes.push_back(c.note);
  return notes;
}

// Our values of one row on one profile, per backend mode.
struct ProfileValues {
  std::map<BackendMode, double> values, modelled;
  // Ours for `backend`: for a modelled one (backends.json: cop) its modelled time where it has one.
  std::optional<double> best(const std::string& backend, const std::string& profile) const {
    const BackendSpec* spec = find_backend_spec(backend);
    return best_of(spec && spec->modelled ? (modelled.empty() ? values : modelled) : values, backend, profile);
  }
};

// Appends our value of every backend mode to `r` and the points read to the pairing.
ProfileValues add_our_values(const CampaignResults& results, const SeedLayout& l, const SeedRow& row,
                             const std::string& profile, std::vector<std::string>& r, ReportTable& t) {
  ProfileValues pv;
  const int at = row.nodes.value_or(0);
  for (BackendMode v : l.modes) {
    v.profile = profile;
    SeedRowValue cell;
    if (row.key && row.nodes) cell = read_seed_row(results, *row.key, v, at);
    else cell.missing = "—";
    if (cell.value) {
      pv.values[v] = *cell.value;
      if (cell.modelled) pv.modelled[v] = *cell.modelled;
      r.push_back(format_number(*cell.value));
    } else {
      r.push_back(cell.missing);
    }
    if (row.key)
      t.pairing.push_back({row.name, profile, results.label(v, false), row.nodes ? std::to_string(at) : "—",
                           row.key->metric, cell.point, cell.over,
                           cell.value ? format_number(*cell.value) : cell.missing});
  }
  return pv;
}

// "ours ÷ published C" for each seed column standing for one of our backends.
void add_published_ratios(const SeedLayout& l, const SeedRow& row, const ProfileValues& pv, const std::string& profile,
                          std::vector<std::string>& r) {
  for (const auto& [col, column_backend] : l.mapped) {
    const SeedCell* pub = row.published(col);
    const std::string backend = pub && !pub->backend.empty() ? pub->backend : column_backend;
    if (!pub || backend.empty()) {
      r.push_back("—");
      continue;
    }
    std::optional<double> ours = pv.best(backend, profile);
    std::string text = ours && pub->value != 0 ? format_ratio(*ours / pub->value) : "—";
    r.push_back(column_backend.empty() ? backend + ": " + text : text);
  }
}

// "verdict published C" for each seed column with a stated spread.
void add_verdicts(const CampaignResults& results, const SeedLayout& l, const SeedRow& row, const ProfileValues& pv,
                  const std::string& profile, std::vector<std::string>& r) {
  for (const auto& col : l.judged) {
    const SeedCell* pub = row.published(col);
    if (!pub || !pub->spread) {
      r.push_back("—");  // the seed states no spread for this number: no verdict
      continue;
    }
    const std::string backend = !pub->backend.empty() ? pub->backend : l.column_backend(col);
    if (!backend.empty()) {
      std::optional<double> ours = pv.best(backend, profile);
      r.push_back(ours ? spread_verdict(*ours, *pub) : "—");
      continue;
    }
    // A seed column that stands for none of our backends: a verdict for each backend and mode.
    std::vector<std::string> each;
    for (BackendMode v : l.modes) {
      v.profile = profile;
      auto m = pv.modelled.find(v);
      auto x = pv.values.find(v);
      const BackendSpec* spec = find_backend_spec(v.backend);
      if (spec && spec->modelled && m != pv.modelled.end())
        each.push_back(results.label(v, false) + ": " + spread_verdict(m->second, *pub));
      else if (x != pv.values.end())
        each.push_back(results.label(v, false) + ": " + spread_verdict(x->second, *pub));
    }
    r.push_back(each.empty() ? "—" : fmt::format("{}", fmt::join(each, "; ")));
  }
}

std::vector<std::string> seed_table_row(const CampaignResults& results, const std::vector<SeedCell>& cells,
                                        const SeedLayout& l, const std::string& name, ReportTable& t) {
  const SeedRow row = seed_row(results, cells, name);
  std::vector<std::string> r = {name};
  for (const auto& col : l.columns) r.push_back(row.published(col) ? format_number(row.published(col)->value) : "");
  for (const auto& p : l.profiles) {
    const ProfileValues pv = add_our_values(results, l, row, p, r, t);
    if (row.key && row.key->metric == "median") {
      for (const auto& c : ratio_cells(pv.values, pv.modelled, p)) r.push_back(c);
    } else {
      for (std::size_t i = 0; i < ratio_header().size(); ++i) r.push_back("—");
    }
    add_published_ratios(l, row, pv, p, r);
    add_verdicts(results, l, row, pv, p, r);
  }
  r.push_back(row.unit);
  r.push_back(fmt::format("{}", fmt::join(seed_row_notes(cells, row), "; ")));
  return r;
}

}  // namespace

ReportTable seed_table(const CampaignResults& results, const std::string& stem, const std::vector<SeedCell>& cells) {
  ReportTable t;
  t.title = stem;
  for (const auto& c : cells)
    if (t.source.empty()) t.source = c.source;
  t.description = "Published: the seed's numbers as printed. Ours: the median (or the named counter) of this campaign's "
                  "point matching the row (benchmark, size, node count), per backend and mode; a ratio row divides two "
                  "points of the same backend, mode and node count. tables/" + stem + ".pairing.csv names the points "
                  "each cell read.";
  const SeedLayout layout = seed_layout(results, cells);
  t.header = seed_header(results, layout);
  t.pairing_header = {"row", "profile", "backend", "nodes", "metric", "point", "divided by", "value"};
  for (const auto& row : layout.rows) t.rows.push_back(seed_table_row(results, cells, layout, row, t));
  t.drop_empty_columns("ours ");
  t.notes = {"X ÷ cop: the best mode of backend X divided by the cop modelled-hardware time; X ÷ published C: our best mode "
             "of X divided by the seed's column C (for cop, its modelled time).",
             "The seeds' numbers are data in results/reference/" + stem + ".csv (copied into this campaign directory)."};
  if (!layout.judged.empty())
    t.notes.push_back("verdict published C: ours (the best mode of the backend column C stands for; for cop its modelled "
                      "time; where C stands for none of ours, each backend and mode) against the spread the seed states "
                      "for its number (column tolerance of the CSV; the row's note says where the seed states it): within "
                      "the seed's spread, or outside with ours ÷ the seed's value; — where the seed states no spread.");
  return t;
}

}  // namespace copbench::report
