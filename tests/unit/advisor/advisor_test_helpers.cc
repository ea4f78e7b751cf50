// The planted-profile builder (tests/unit/planted) compiled into unit_advisor
// too: the advisor's golden tests run on the same planted anti-patterns.
#include "unit/planted/planted_profiles_helpers.cc"
