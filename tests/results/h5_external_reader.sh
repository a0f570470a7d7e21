#!/bin/sh
# h5_external_reader.sh <writer> <file> <reader> [args...]: writes the sample file with
# <writer>, then runs <reader> [args...] <file>, passing through its exit status.
# A missing reader fails (exit 127) rather than skipping: CI installs hdf5-tools and
# python3-h5py.
set -eu
writer=$1
file=$2
shift 2
rm -f "$file"
"$writer" "$file"
exec "$@" "$file"
