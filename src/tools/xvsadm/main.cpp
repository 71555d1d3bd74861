// xvsadm entry point: everything is in ctl/xvsadm_main.cpp so tests can run it in-process.
#include <iostream>

#include "ctl/xvsadm_main.h"

int main(int argc, char** argv) {
    return xvs::ctl::xvsadm_main(argc, argv, std::cin, std::cout, std::cerr);
}
