#!/bin/bash
# A stand-in for compute-sanitizer in the worker tests (there is no GPU here): it takes
# the options FastKernels passes, writes a log as compute-sanitizer does, and runs the
# program as its child, as compute-sanitizer runs its target. With --tool plant-memory
# the log also holds one memcheck error record, written before the program starts.
log=/dev/null
tool=memcheck
while [ $# -gt 0 ]; do
  case "$1" in
    --log-file) log=$2; shift 2 ;;
    --tool) tool=$2; shift 2 ;;
    --*) shift 2 ;;
    *) break ;;
  esac
done
echo "========= COMPUTE-SANITIZER" > "$log"
if [ "$tool" = plant-memory ]; then
  {
    echo "========= Invalid __global__ read of size 2 bytes"
    echo "=========     at fake_kernel(unsigned short const*)+0x70 in fake.cu:12"
    echo "=========     by thread (0,0,0) in block (3,0,0)"
    echo "=========     Address 0x7f0000001000 is out of bounds"
    echo "=========     Saved host backtrace up to driver entry point at kernel launch time"
    echo "=========         Host Frame: fake_launch [0x1234] in libfake.so"
    echo "========="
  } >> "$log"
fi
"$@" &
child=$!
wait "$child"
rc=$?
echo "========= ERROR SUMMARY: 0 errors" >> "$log"
exit "$rc"
