# xvsd's XDP program (xvs_xdp.bpf.c), compiled with clang -target bpf and embedded in
# xvs_port as a byte array (xvs_port_xdp_bpf_object), the way xvs-rs carries its decap
# program (src/tools/xvs-rs/embed.cmake does the embedding for both).
find_program(XVS_BPF_CLANG NAMES clang clang-14 REQUIRED)
pkg_check_modules(LIBBPF REQUIRED IMPORTED_TARGET libbpf)
pkg_check_modules(LIBXDP REQUIRED IMPORTED_TARGET libxdp)
set(xvs_xdp_src ${CMAKE_SOURCE_DIR}/src/port/bpf/xvs_xdp.bpf.c)
set(xvs_xdp_obj ${CMAKE_BINARY_DIR}/xvs_xdp.bpf.o)
set(xvs_xdp_embed ${CMAKE_BINARY_DIR}/xvs_xdp_bpf_object.c)
set(xvs_xdp_includes)
if(CMAKE_LIBRARY_ARCHITECTURE)  # Debian's asm/ headers live in the multiarch directory
  set(xvs_xdp_includes -I/usr/include/${CMAKE_LIBRARY_ARCHITECTURE})
endif()
add_custom_command(OUTPUT ${xvs_xdp_obj}
  COMMAND ${XVS_BPF_CLANG} -O2 -g -target bpf -Wall -Werror ${xvs_xdp_includes}
          -c ${xvs_xdp_src} -o ${xvs_xdp_obj}
  DEPENDS ${xvs_xdp_src} ${CMAKE_SOURCE_DIR}/src/port/xdp_abi.h
  COMMENT "clang -target bpf xvs_xdp.bpf.c")
add_custom_command(OUTPUT ${xvs_xdp_embed}
  COMMAND ${CMAKE_COMMAND} -DIN=${xvs_xdp_obj} -DOUT=${xvs_xdp_embed}
          -DNAME=xvs_port_xdp_bpf_object
          -P ${CMAKE_SOURCE_DIR}/src/tools/xvs-rs/embed.cmake
  DEPENDS ${xvs_xdp_obj} ${CMAKE_SOURCE_DIR}/src/tools/xvs-rs/embed.cmake)
target_sources(xvs_port PRIVATE ${xvs_xdp_embed})
target_link_libraries(xvs_port PUBLIC PkgConfig::LIBBPF PkgConfig::LIBXDP)
