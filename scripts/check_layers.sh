#!/usr/bin/env bash
# Fails when a file under src/ includes a header of a layer above its own (DESIGN.md "Layers"):
#   common <- net <- port <- stack <- lb <- ctl <- tools
# A layer may include its own headers and those of the layers below it. Run by the build
# (CMake target xvs_layer_check, which every library depends on) and usable by hand:
#   scripts/check_layers.sh [SRC_DIR] [STAMP_FILE]
# One grep and one awk over the tree: every library waits for this, so it must take no time
# (a loop with a subshell per include took 12-19 s at the start of each build).
set -euo pipefail
src=${1:-$(dirname "$0")/../src}
stamp=${2:-}
src=${src%/}
layers="common net port stack lb ctl tools"
dirs=()
for layer in $layers; do
    [[ -d $src/$layer ]] && dirs+=("$src/$layer")
done
# file:line:#include "x/..."; the including file's layer is the first directory under $src.
{ grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"[^/"]+/' "${dirs[@]}" \
    --include='*.h' --include='*.hpp' --include='*.cpp' --include='*.c' || true; } |
    awk -v src="$src/" -v layers="$layers" '
        BEGIN {
            n = split(layers, l, " ")
            for (i = 1; i <= n; i++) { rank[l[i]] = i; chain = chain (i > 1 ? " <- " : "") l[i] }
        }
        {
            file = $0; sub(/:.*/, "", file)
            rest = substr($0, length(file) + 2); line = rest; sub(/:.*/, "", line)
            own = substr(file, length(src) + 1); sub(/\/.*/, "", own)
            target = rest; sub(/^[^"]*"/, "", target); sub(/\/.*/, "", target)
            if ((target in rank) && rank[target] > rank[own]) {
                printf "%s:%s: error: layer '\''%s'\'' includes '\''%s'\'' (above it: %s)\n",
                    file, line, own, target, chain > "/dev/stderr"
                bad = 1
            }
        }
        END { exit bad }'
[[ -z $stamp ]] || touch "$stamp"
