// `xvsd -t`: the exit status is the contract (0 ok, 1 errors), the text is for people.
#include "ctl/config_check.h"

#include "ctl/config_parser.h"

namespace xvs::ctl {

int config_check_main(const std::string& path, std::ostream& out, std::ostream& err) {
    ParseOutcome outcome = parse_config_path(path);
    if (!outcome.errors.empty()) {
        for (const std::string& line : outcome.errors) err << line << '\n';
        err << "configuration file " << path << " has " << outcome.errors.size()
            << (outcome.errors.size() == 1 ? " error" : " errors") << '\n';
        return 1;
    }
    for (const std::string& line : outcome.warnings) err << "warning: " << line << '\n';
    out << "configuration file " << path << " is ok\n";
    return 0;
}

}  // namespace xvs::ctl
