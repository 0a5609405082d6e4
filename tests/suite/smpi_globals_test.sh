#!/usr/bin/env bash
# smpi_globals_test.sh WORKER: the smpi worker runs unprivatized (smpirun -no-privatize,
# baselines/backends.json): all simulated ranks share its globals. Every writable global
# of the project's own code in it (nm's b, d and u symbols) must be one reviewed below as
# the same for every rank: constant tables, const singletons, the log, a signal flag. A
# new one fails here until it is reviewed and listed (or made per-rank state of the
# backend object instead). The libraries' globals (std, Boost, CLI11, nlohmann, fmt,
# spdlog) and the C runtime's are not the project's.
set -u
worker=$1
[ -x "$worker" ] || { echo "no smpi worker at $worker" >&2; exit 1; }
reviewed='^(cop::model::scale_nodes\(\)::nodes'\
'|cop::model::\(anonymous namespace\)::kSpecs'\
'|cop::wire::\(anonymous namespace\)::kOps'\
'|cop::wire::to_string\[abi:cxx11\]\(cop::wire::Message const&\)::kSpace'\
'|copbench::\(anonymous namespace\)::(g_cancelled|kStandardKeys|kChecks)'\
'|copbench::all_backend_specs\(\)::specs'\
'|copbench::\(anonymous namespace\)::registry\(\)::r'\
'|copbench::RegisterWorkload<.*>::RegisterWorkload\(.*\)::instance'\
'|copbench::(bench|apps)::\(anonymous namespace\)::registered(_[a-z]+)?'\
'|copbench::apps::\(anonymous namespace\)::kStageNames'\
'|copbench::(AlignedBuffer::page_size\(\)::page|kAllOps|kBackendsJson|simulated_pause\(\)::pause))$'
globals=$(nm -C "$worker" | awk '$2 ~ /^[bBdDuV]$/ { $1 = ""; $2 = ""; sub(/^  /, ""); print }' |
          grep -v -E '^(typeinfo|vtable|guard variable|DW\.ref\.|(std|__gnu_cxx|boost|CLI|nlohmann|fmt|spdlog)::)' |
          grep -v -E '^(completed\.0|_DYNAMIC|_GLOBAL_OFFSET_TABLE_|__TMC_END__|__dso_handle|__do_global_dtors_aux_fini_array_entry|__frame_dummy_init_array_entry)$')
[ -n "$globals" ] || { echo "nm found no globals of the project in $worker (stripped?)" >&2; exit 1; }
unreviewed=$(printf '%s\n' "$globals" | grep -v -E "$reviewed")
if [ -n "$unreviewed" ]; then
  echo "globals the simulated ranks would share, not reviewed (tests/suite/smpi_globals_test.sh):" >&2
  printf '  %s\n' "$unreviewed" >&2
  exit 1
fi
echo "$(printf '%s\n' "$globals" | wc -l) globals, each reviewed as the same for every rank"
