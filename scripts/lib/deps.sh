# Debian packages each part of xvs needs; deps_install GROUP... installs the missing ones.
# Sourced by scripts/test.sh, scripts/demo.sh and bench scripts.
declare -A XVS_DEPS=(
    [build]="build-essential cmake ninja-build pkg-config libdpdk-dev libpcap-dev libbpf-dev libxdp-dev linux-libc-dev libmnl-dev clang lld nlohmann-json3-dev libgtest-dev libgmock-dev googletest libbenchmark-dev libsodium-dev libssl-dev libsystemd-dev ccache mandoc"
    [test]="iproute2 iputils-ping ethtool curl socat nginx-light python3 python3-scapy tcpdump procps nftables hping3 prometheus systemd mmdebstrap chromium fonts-dejavu-core bird2"
    [lint]="clang-tidy"
    [fuzz]="clang libclang-rt-14-dev"
    [bench]="wrk haproxy nftables hping3 linux-perf iperf3 valgrind"
)

deps_install() {
    local want=() pkg group
    for group in "$@"; do
        for pkg in ${XVS_DEPS[$group]}; do
            dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" ||
                want+=("$pkg")
        done
    done
    ((${#want[@]})) || return 0
    if [[ $(id -u) -ne 0 ]]; then
        echo "missing packages (run as root to install): ${want[*]}" >&2
        return 1
    fi
    echo "installing: ${want[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >/dev/null
    apt-get install -y -q --no-install-recommends "${want[@]}" >/dev/null
}
