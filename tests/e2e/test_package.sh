#!/usr/bin/env bash
# e2e: once
# The Debian packages (issue 16 item 4): cpack builds xvs and xvs-rs from the build tree; a
# clean Debian 12 chroot (mmdebstrap --variant=apt from the machine's apt sources) installs
# them with apt, which pulls their dependencies (DPDK's libraries and the PMD plugins named in
# Depends): both "install ok installed", the unit enabled by postinst, the binaries linked
# with nothing missing, the man pages and the example configuration in place and `xvsd -t`
# accepting that example. Then the packaged xvsd, run from the chroot in the director's
# namespace, serves 20 curls through a FULLNAT VIP, the packaged xvsadm lists the service, and
# SIGTERM ends it with status 0. Runs once (its PMD is whatever the first lane's is).
source "$(dirname "$0")/lib.sh"
e2e_init "${1:-build}"
need_tools cpack dpkg-deb mmdebstrap

# ---- the packages -------------------------------------------------------------------------
pkg=$XE_TMP/pkg
mkdir -p "$pkg"
timeout 300 cpack -G DEB -B "$pkg" --config "$BUILD/CPackConfig.cmake" >"$XE_TMP/cpack.log" 2>&1 ||
    fail "cpack failed: $(tail -n 20 "$XE_TMP/cpack.log")"
version=$("$BUILD/xvsd" -v | awk '{ print $2 }')
deb=$pkg/xvs_${version}_amd64.deb
rsdeb=$pkg/xvs-rs_${version}_amd64.deb
[[ -f $deb && -f $rsdeb ]] || fail "expected $deb and $rsdeb, cpack wrote: $(ls "$pkg")"
assert_eq "$version" "$(dpkg-deb -f "$deb" Version)" "package version = xvsd -v"
files=$(dpkg-deb -c "$deb" | awk '{ print $6 }')
for f in ./usr/sbin/xvsd ./usr/sbin/xvsadm ./usr/sbin/xvsctl ./lib/systemd/system/xvsd.service \
    ./usr/share/man/man8/xvsd.8.gz ./usr/share/man/man8/xvsadm.8.gz ./usr/share/man/man8/xvsctl.8.gz \
    ./usr/share/man/man5/xvs.conf.5.gz ./usr/share/doc/xvs/examples/xvs.conf ./etc/xvs/; do
    grep -qxF "$f" <<<"$files" || fail "xvs package lacks $f"
done
[[ $(grep -c '^./etc/xvs/.' <<<"$files") == 0 ]] || fail "the package ships files in /etc/xvs"
depends=$(dpkg-deb -f "$deb" Depends)
for d in librte-eal23 librte-net-af-xdp23 librte-net-af-packet23 librte-mempool-ring23 libsodium23; do
    assert_contains "$depends" "$d" "xvs Depends"
done
rsfiles=$(dpkg-deb -c "$rsdeb" | awk '{ print $6 }')
for f in ./usr/sbin/xvs-rs ./usr/sbin/xvs-agent ./usr/share/man/man8/xvs-rs.8.gz; do
    grep -qxF "$f" <<<"$rsfiles" || fail "xvs-rs package lacks $f"
done
pass "cpack built xvs $version ($(du -k "$deb" | cut -f1) KiB) and xvs-rs"

# ---- a clean Debian 12 chroot installs them --------------------------------------------------
root=$XE_TMP/root
sources=/etc/apt/sources.list.d/debian.sources
[[ -f $sources ]] || sources=/etc/apt/sources.list
t0=$SECONDS
# In a mount namespace of its own: whatever it mounts in the chroot (proc, sys, dev) goes with
# it, even when killed, so the cleanup's rm -rf can never walk into a bound /dev or /sys.
# shellcheck disable=SC2016
timeout 600 unshare -m --propagation private mmdebstrap --variant=apt --skip=cleanup/apt/lists \
    --customize-hook="copy-in $deb $rsdeb /root" \
    --customize-hook='chroot "$1" sh -c "apt-get install -y -q /root/xvs_*.deb /root/xvs-rs_*.deb"' \
    bookworm "$root" "$sources" >"$XE_TMP/mmdebstrap.log" 2>&1 ||
    fail "mmdebstrap + apt install failed: $(tail -n 20 "$XE_TMP/mmdebstrap.log")"
pass "clean bookworm chroot with both packages installed in $((SECONDS - t0)) s"
for p in xvs xvs-rs; do
    assert_eq "install ok installed" "$(chroot "$root" dpkg-query -W -f '${Status}' "$p")" "$p status"
done
[[ -L $root/etc/systemd/system/multi-user.target.wants/xvsd.service ]] ||
    fail "postinst did not enable xvsd.service"
for b in xvsd xvsadm xvsctl xvs-rs xvs-agent; do
    missing=$(chroot "$root" ldd "/usr/sbin/$b" | grep "not found")
    assert_eq "" "$missing" "libraries of /usr/sbin/$b missing in the chroot"
done
assert_eq "xvsd $version" "$(chroot "$root" /usr/sbin/xvsd -v)" "packaged xvsd -v"
out=$(chroot "$root" /usr/sbin/xvsd -t -f /usr/share/doc/xvs/examples/xvs.conf 2>&1)
assert_eq 0 "$?" "packaged xvsd -t on the packaged example ($out)"
# The EAL loads every PMD plugin of its directory: those xvs depends on are there.
pmds=$(ls "$root"/usr/lib/x86_64-linux-gnu/dpdk/pmds-*/)
for p in librte_net_af_xdp.so.23 librte_net_af_packet.so.23 librte_net_tap.so.23 librte_mempool_ring.so.23; do
    grep -qxF "$p" <<<"$pmds" || fail "PMD plugin $p not installed in the chroot"
done
pass "packages installed: unit enabled, libraries resolved, xvsd -t accepts the example"

# ---- the packaged xvsd serves ---------------------------------------------------------------
# in_root CMD...: CMD from the chroot, with this machine's /dev, /proc, /sys (the caller's
# netns view) and the test's directory (config, control socket) bound in a private mount
# namespace; exec all the way down, so the pid is CMD's.
mkdir -p "$root$XE_TMP"
wrapper=$XE_TMP/in-root
cat >"$wrapper" <<WRAP
#!/bin/sh
exec unshare -m --propagation private sh -c '
    mount --rbind /dev "$root/dev" && mount --rbind /proc "$root/proc" &&
    mount --rbind /sys "$root/sys" && mount --bind "$XE_TMP" "$root$XE_TMP" &&
    exec chroot "$root" "\$@"' in-root "\$@"
WRAP
chmod +x "$wrapper"
printf '#!/bin/sh\nexec %s /usr/sbin/xvsd "$@"\n' "$wrapper" >"$XE_TMP/xvsd-packaged"
chmod +x "$XE_TMP/xvsd-packaged"

topo_up 2
start_rs_http 1
start_rs_http 2
conf=$XE_TMP/xvs.conf
{ config_head; vs_block TCP "$VIP" 80 "1:8080:1 2:8080:1" rr; } >"$conf"
XVSD_BIN=$XE_TMP/xvsd-packaged start_xvsd "$conf"
exe=$(readlink "/proc/$XVSD_PID/exe")
assert_eq "$root/usr/sbin/xvsd" "$exe" "the running xvsd is the chroot's"
[[ $(readlink "/proc/$XVSD_PID/root") == "$root" ]] || fail "xvsd's root is not the chroot"
http_loop 20 "$XE_TMP/http"
assert_eq 20 "$(grep -c '^rs[12]$' "$XE_TMP/http")" "requests answered by the packaged xvsd"
listing=$("$wrapper" /usr/sbin/xvsadm --socket "$XE_SOCK" -L -n)
assert_contains "$listing" "TCP  $VIP:80 rr" "packaged xvsadm lists the service"
stop_xvsd TERM
assert_eq 0 "$XVSD_STATUS" "packaged xvsd exit status on SIGTERM"
pass "the packaged xvsd served 20 requests and stopped cleanly"
