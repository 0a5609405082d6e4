#!/bin/sh
# A stand-in for copbench in check_run_test.sh: copies $CHECK_RUN_FIXTURE to the --out file.
while [ $# -gt 0 ]; do
  [ "$1" = --out ] && cp "$CHECK_RUN_FIXTURE" "$2"
  shift
done
