#!/bin/sh
# h5dump_check.sh <h5dump> <file>: h5dump must read the whole sample file (exit 0),
# show the table as a compound with UTF-8 strings, and show the gzip filter on the
# big array (filters are printed with -p).
set -eu
h5dump=$1
file=$2
out=$("$h5dump" "$file")
for needle in 'H5T_COMPOUND' 'CSET H5T_CSET_UTF8' '"silu_and_mul"' 'H5T_ENUM'; do
  printf '%s\n' "$out" | grep -q -- "$needle" || { echo "h5dump output lacks: $needle" >&2; exit 1; }
done
props=$("$h5dump" -p -H -d /arrays/big "$file")
printf '%s\n' "$props" | grep -q 'DEFLATE' || { echo "h5dump: /arrays/big is not gzip-compressed" >&2; exit 1; }
echo "h5dump check: ok"
