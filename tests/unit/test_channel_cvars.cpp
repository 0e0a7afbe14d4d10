// SPDX-License-Identifier: BSD-3-Clause
// The channel's MPI_T control variables (ch3_sctp/src/ch3_cvars.c) must name every transport
// setting, and only those besides the channel's own: a setting added to src/settings.cpp without
// its CVAR fails here.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "sctpmpi.h"

#ifndef CHANNEL_CVARS_FILE
#error "CHANNEL_CVARS_FILE must name ch3_sctp/src/ch3_cvars.c"
#endif

namespace {

std::string upper(std::string s) {
    for (char& c : s)
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return s;
}

std::string read_file(const char* path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::set<std::string> matches(const std::string& text, const std::regex& re) {
    std::set<std::string> out;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it)
        out.insert((*it)[1].str());
    return out;
}

} // namespace

TEST(ChannelCvars, BlockAndTableListEverySetting) {
    const std::string text = read_file(CHANNEL_CVARS_FILE);
    ASSERT_FALSE(text.empty()) << "cannot read " << CHANNEL_CVARS_FILE;
    // The channel's own, read by the channel rather than handed to the transport.
    std::set<std::string> want_names = {"MPIR_CVAR_CH3_SCTP_NOTICES", "MPIR_CVAR_CH3_SCTP_PATH_REPORT"}, want_keys;
    for (const char* const* k = sctpm_config_keys(); *k; ++k) {
        want_keys.insert(*k);
        want_names.insert("MPIR_CVAR_CH3_SCTP_" + upper(*k));
    }
    EXPECT_EQ(matches(text, std::regex(R"(- name\s*:\s*(MPIR_CVAR_CH3_SCTP_\w+))")), want_names);
    const std::regex entry(R"re(\{"(\w+)", &MPIR_CVAR_CH3_SCTP_(\w+)\})re");
    std::set<std::string> table_keys;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), entry); it != std::sregex_iterator(); ++it) {
        EXPECT_EQ(upper((*it)[1].str()), (*it)[2].str()) << "table entry pairs key and CVAR of different settings";
        table_keys.insert((*it)[1].str());
    }
    EXPECT_EQ(table_keys, want_keys);
}
