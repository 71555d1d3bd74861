# cmake -DIN=obj -DOUT=file.c -P embed.cmake : writes IN's bytes as a C array
# (xvs_rs_decap_bpf_object / _size) so the BPF object travels inside the xvs-rs binary.
# -DNAME=sym names the array (default xvs_rs_decap_bpf_object; xvsd's XDP program uses it too).
if(NOT NAME)
  set(NAME xvs_rs_decap_bpf_object)
endif()
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" hex_len)
math(EXPR size "${hex_len} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" bytes "${bytes}")
file(WRITE "${OUT}" "/* Generated from ${IN} by embed.cmake; do not edit. */\n"
  "#include <stddef.h>\n"
  "const unsigned char ${NAME}[] = {\n${bytes}\n};\n"
  "const size_t ${NAME}_size = ${size};\n")
