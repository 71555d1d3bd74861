#!/usr/bin/env bash
# scripts/check_layers.sh on made-up trees: an include of a higher layer fails with its
# file:line, includes of the same or lower layers and of system headers pass.
set -euo pipefail
script=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/ok/net" "$tmp/ok/lb" "$tmp/bad/net" "$tmp/bad/ctl"
printf '#include "net/a.h"\n#include "common/b.h"\n#include <vector>\n' >"$tmp/ok/net/a.cpp"
printf '#include "net/a.h"\n#include "lb/c.h"\n' >"$tmp/ok/lb/c.h"
"$script" "$tmp/ok" "$tmp/stamp" || { echo "FAIL: a clean tree was refused"; exit 1; }
[[ -f $tmp/stamp ]] || { echo "FAIL: no stamp for a clean tree"; exit 1; }
printf '#include "net/a.h"\n  #  include "lb/conn.h"\n' >"$tmp/bad/net/a.cpp"
printf '#include "lb/x.h"\n' >"$tmp/bad/ctl/ok.cpp"
if err=$("$script" "$tmp/bad/" 2>&1); then
    echo "FAIL: net including lb passed"
    exit 1
fi
want="$tmp/bad/net/a.cpp:2: error: layer 'net' includes 'lb'"
[[ $err == "$want"* && $(wc -l <<<"$err") == 1 ]] || { echo "FAIL: got '$err', want '$want ...'"; exit 1; }
echo "ok"
