#!/usr/bin/env bash
# Demo: not yet — it arrives with the control-plane issue (xvsd, xvsadm).
echo "scripts/demo.sh: not yet: needs xvsd and xvsadm (control-plane issue)." >&2
exit 1
