# A stand-in for Slurm's client commands on one machine (slurm_test.sh): jobs run here,
# their state in $FAKE_SLURM_DIR/jobs/ID as `scontrol show job -o` prints it. A job whose
# name is in $FAKE_SLURM_DIR/hold stays PENDING (Reason=Resources) until the file names
# it no more or the job is cancelled.
: "${FAKE_SLURM_DIR:?FAKE_SLURM_DIR not set}"
mkdir -p "$FAKE_SLURM_DIR/jobs"
job_file() { echo "$FAKE_SLURM_DIR/jobs/$1"; }
set_state() {  # ID NAME STATE REASON EXITCODE
  echo "JobId=$1 JobName=$2 JobState=$3 Reason=$4 ExitCode=$5 NodeList=localhost" >"$(job_file "$1").tmp"
  mv "$(job_file "$1").tmp" "$(job_file "$1")"
}
state_of() { sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' "$(job_file "$1")" 2>/dev/null; }
