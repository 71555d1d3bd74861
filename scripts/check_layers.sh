#!/usr/bin/env bash
# Fails when a file under src/ includes a header of a layer above its own (DESIGN.md "Layers"):
#   common <- net <- port <- stack <- lb <- ctl <- tools
# A layer may include its own headers and those of the layers below it. Run by the build
# (CMake target xvs_layer_check, which every library depends on) and usable by hand:
#   scripts/check_layers.sh [SRC_DIR] [STAMP_FILE]
set -euo pipefail
src=${1:-$(dirname "$0")/../src}
stamp=${2:-}
layers=(common net port stack lb ctl tools)
rank() {
    local i
    for i in "${!layers[@]}"; do
        [[ ${layers[$i]} == "$1" ]] && { echo "$i"; return; }
    done
    echo -1
}
bad=0
for layer in "${layers[@]}"; do
    [[ -d $src/$layer ]] || continue
    own=$(rank "$layer")
    # file:line:#include "x/..."
    while IFS= read -r hit; do
        file=${hit%%:*}
        rest=${hit#*:}
        line=${rest%%:*}
        target=$(sed -E 's/^[^"]*"([^/"]+)\/.*/\1/' <<<"${rest#*:}")
        r=$(rank "$target")
        if ((r > own)); then
            echo "$file:$line: error: layer '$layer' includes '$target' (above it: common <- net <- port <- stack <- lb <- ctl <- tools)" >&2
            bad=1
        fi
    done < <(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"[^/"]+/' "$src/$layer" \
                 --include='*.h' --include='*.hpp' --include='*.cpp' --include='*.c' || true)
done
((bad == 0)) || exit 1
[[ -z $stamp ]] || touch "$stamp"
