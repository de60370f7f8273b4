#!/usr/bin/env bash
# Checks a shared library's export list: every defined dynamic symbol matches ALLOWED (an ERE),
# and every function HEADER declares with MACRO is exported (so the check cannot pass on an empty
# list). Usage: check_exports.sh LIB ALLOWED HEADER MACRO. Fails naming the offenders.
set -euo pipefail
lib="$1"; allowed="$2"; header="$3"; macro="$4"
name=$(basename "$lib")

# Version-definition symbols (SPMVJIT_0 of the version script) are absolute and not code.
versions=$(objdump -p "$lib" | awk '/^Version definitions:/ {on = 1; next} on && NF == 0 {on = 0}
                                     on && NF >= 4 {print $4}')
# "ADDR TYPE NAME[@@VERSION]": keep NAME and TYPE.
symbols=$(nm -D --defined-only "$lib" | awk '{sub(/@.*/, "", $3); print $3, $2}')
offenders=$(while read -r sym type; do
  [ -n "$sym" ] || continue
  if [ "$type" = A ] && grep -qxF "$sym" <<<"$versions"; then continue; fi
  # Local bindings (nm's lower-case types but u, v, w and i, which are global kinds) bind nothing
  # outside the library: GNU ld leaves the version script's localized unique objects of static
  # archives (lld's, in the LLVM plugin) in .dynsym that way.
  if [[ "$type" =~ ^[a-z]$ && ! "$type" =~ ^[uvwi]$ ]]; then continue; fi
  grep -Eq "$allowed" <<<"$sym" || echo "$sym"
done <<<"$symbols")
status=0
if [ -n "$offenders" ]; then
  count=$(wc -l <<<"$offenders")
  echo "check_exports: $name exports $count symbol(s) outside $allowed:"
  head -n 200 <<<"$offenders" | c++filt | sed 's/^/  /'
  [ "$count" -le 200 ] || echo "  ... and $((count - 200)) more"
  status=1
fi

# Every function the header marks with MACRO must be exported as a function (type T).
declared=$(grep -Eo "^[[:space:]]*$macro[[:space:]][^(]*\(" "$header" | grep -Eo '[A-Za-z_][A-Za-z0-9_]*[[:space:]]*\($' |
           tr -d '( \t' | sort -u)
marked=$(grep -Ec "^[[:space:]]*$macro[[:space:]]" "$header" || true)
if [ -z "$declared" ] || [ "$(wc -l <<<"$declared")" -ne "$marked" ]; then
  echo "check_exports: found $(grep -c . <<<"$declared" || true) function names on $marked $macro" \
       "lines of $header (one declaration per line is expected)"
  status=1
fi
functions=$(awk '$2 == "T" || $2 == "W" || $2 == "i" {print $1}' <<<"$symbols")
missing=$(comm -23 <(sort -u <<<"$declared") <(sort -u <<<"$functions"))
if [ -n "$missing" ]; then
  echo "check_exports: $name does not export these $macro functions of $(basename "$header"):"
  sed 's/^/  /' <<<"$missing"
  status=1
fi
[ "$status" -ne 0 ] || echo "check_exports: $name exports exactly the $(wc -l <<<"$declared") $macro" \
                             "functions of $(basename "$header")"
exit "$status"
