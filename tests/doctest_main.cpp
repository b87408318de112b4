// The one main() every doctest binary links (doctest 2.4.9 ships no doctest_with_main
// target).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
