# Installation layout and the Debian packages (CPack DEB), included last by the top-level
# CMakeLists.txt. Two packages from one tree, as a site deploys them:
#   xvs     the director: xvsd, xvsadm, xvsctl, their man pages, the systemd unit, an example
#           configuration (under /usr/share/doc/xvs/examples: xvsd starts only once the operator
#           has written /etc/xvs/xvs.conf, the unit's ConditionPathExists)
#   xvs-rs  what a real server runs: xvs-rs (DR/TUN/NatTun helpers, TOA/UOA readers) and xvs-agent (load feedback)
# `cmake --build build --target package` (or `cpack --config build/CPackConfig.cmake`) writes
# both .deb files into the build directory; `cmake --install build --component director`
# installs the director's files under CMAKE_INSTALL_PREFIX (default /usr; DESTDIR for staging).
# Runtime dependencies come from dpkg-shlibdeps (DPDK's librte-*, libbpf, libsodium, ...).
# The default prefix is /usr, the package's, so GNUInstallDirs puts the configuration directory
# in /etc (it does that only for /usr); `-DCMAKE_INSTALL_PREFIX=/usr/local` for a local build.
if(CMAKE_INSTALL_PREFIX_INITIALIZED_TO_DEFAULT)
  set(CMAKE_INSTALL_PREFIX /usr CACHE PATH "Install prefix" FORCE)
endif()
include(GNUInstallDirs)

install(TARGETS xvsd xvsadm xvsctl RUNTIME DESTINATION ${CMAKE_INSTALL_SBINDIR} COMPONENT director)
# Man pages are installed gzipped (-n: no name or time stamp, so the package is reproducible),
# as Debian policy asks.
set(XVS_MAN_PAGES xvsd.8 xvsadm.8 xvsctl.8 xvs.conf.5 xvs-rs.8 xvs-agent.8)
set(XVS_MAN_GZ)
foreach(page ${XVS_MAN_PAGES})
  add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/man/${page}.gz
                     COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/man
                     COMMAND gzip -9n -c ${CMAKE_SOURCE_DIR}/man/${page} > ${CMAKE_BINARY_DIR}/man/${page}.gz
                     DEPENDS ${CMAKE_SOURCE_DIR}/man/${page} VERBATIM)
  list(APPEND XVS_MAN_GZ ${CMAKE_BINARY_DIR}/man/${page}.gz)
endforeach()
add_custom_target(xvs_man_pages ALL DEPENDS ${XVS_MAN_GZ})
install(FILES ${CMAKE_BINARY_DIR}/man/xvsd.8.gz ${CMAKE_BINARY_DIR}/man/xvsadm.8.gz
              ${CMAKE_BINARY_DIR}/man/xvsctl.8.gz
        DESTINATION ${CMAKE_INSTALL_MANDIR}/man8 COMPONENT director)
install(FILES ${CMAKE_BINARY_DIR}/man/xvs.conf.5.gz
        DESTINATION ${CMAKE_INSTALL_MANDIR}/man5 COMPONENT director)
# systemd looks in /lib/systemd/system on Debian 12 (usrmerge makes it /usr/lib too); the
# package installs there whatever the prefix, like Debian's own packages.
install(FILES contrib/systemd/xvsd.service DESTINATION /lib/systemd/system COMPONENT director)
install(FILES contrib/xvs.conf.example DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples
        RENAME xvs.conf COMPONENT director)
install(FILES README.md docs/control-protocol.md contrib/grafana/xvs-director.json
        DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT director)
# /etc/xvs, empty: the configuration is the operator's (xvsd.service waits for xvs.conf).
install(DIRECTORY DESTINATION ${CMAKE_INSTALL_FULL_SYSCONFDIR}/xvs COMPONENT director)

install(TARGETS xvs-rs xvs-agent RUNTIME DESTINATION ${CMAKE_INSTALL_SBINDIR} COMPONENT realserver)
install(FILES ${CMAKE_BINARY_DIR}/man/xvs-rs.8.gz ${CMAKE_BINARY_DIR}/man/xvs-agent.8.gz
        DESTINATION ${CMAKE_INSTALL_MANDIR}/man8 COMPONENT realserver)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME xvs)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "xvs developers <xvs@localhost>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL director realserver)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_STRIP_FILES TRUE)  # as Debian ships binaries (debug info stays in the build tree)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://example.invalid/xvs")
set(CPACK_DEBIAN_DIRECTOR_PACKAGE_NAME xvs)
set(CPACK_DEBIAN_DIRECTOR_DESCRIPTION
    "userspace layer-4 load balancer on DPDK (director)\n xvsd forwards TCP and UDP to real servers in FULLNAT, NAT, DR, TUN and SNAT\n modes, IPv4 and IPv6, with SYN proxy, client-address conservation (TOA, PROXY\n protocol, UOA), the IPVS schedulers, keepalived-compatible health checks and an\n ipvsadm-compatible command line (xvsadm).")
# The unit: enabled and started only with a configuration (ConditionPathExists), stopped on
# removal; the conffile is the operator's, so the package ships none under /etc.
set(CPACK_DEBIAN_DIRECTOR_PACKAGE_CONTROL_EXTRA
    ${CMAKE_SOURCE_DIR}/contrib/debian/postinst ${CMAKE_SOURCE_DIR}/contrib/debian/prerm
    ${CMAKE_SOURCE_DIR}/contrib/debian/postrm)
set(CPACK_DEBIAN_DIRECTOR_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# DPDK's drivers are plugins EAL loads from its pmds directory at start, so dpkg-shlibdeps
# cannot see them: the mempool driver, the veth/kernel-interface PMDs and TAP (the exception
# path) are named here; a PCI NIC's PMD (librte-net-ixgbe23, -i40e23, -mlx5-23, ...) is the
# operator's to add.
set(CPACK_DEBIAN_DIRECTOR_PACKAGE_DEPENDS
    "librte-mempool-ring23, librte-net-af-xdp23, librte-net-af-packet23, librte-net-tap23")
set(CPACK_DEBIAN_DIRECTOR_PACKAGE_RECOMMENDS "iproute2")
set(CPACK_DEBIAN_DIRECTOR_PACKAGE_SUGGESTS "prometheus, bird2")
set(CPACK_DEBIAN_REALSERVER_PACKAGE_NAME xvs-rs)
set(CPACK_DEBIAN_REALSERVER_DESCRIPTION
    "real-server helpers for the xvs load balancer\n xvs-rs sets up DR and TUN real servers without kernel modules (XDP IPIP/GUE\n decapsulation, tc programs for NAT over a tunnel, the ARP sysctls) and shows\n FULLNAT clients' addresses (TOA, UOA) to unmodified servers; xvs-agent\n reports the server's load to the director.")
include(CPack)
