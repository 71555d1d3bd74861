// xvsctl entry point: everything is in ctl/xvsctl_main.cpp so tests can run it in-process.
#include <iostream>

#include "ctl/xvsctl_main.h"

int main(int argc, char** argv) {
    return xvs::ctl::xvsctl_main(argc, argv, std::cin, std::cout, std::cerr);
}
