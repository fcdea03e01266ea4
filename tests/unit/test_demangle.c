// SPDX-License-Identifier: BSD-2-Clause
#include <stdlib.h>

#include "symbols/demangle.h"
#include "test.h"

static void check_demangle(const char *mangled, const char *expected)
{
	char *out = demangle(mangled);

	if (expected) {
		CHECK_EQ_STR(out, expected);
	} else if (out) {
		fprintf(stderr, "  unexpected demangling of %s: %s\n", mangled, out);
		CHECK(out == NULL);
	}
	free(out);
}

static void test_cplusplus(void)
{
	check_demangle("_ZN3foo3barEv", "foo::bar()");
	check_demangle("_Z3addii", "add(int, int)");
	check_demangle("_ZNSt6vectorIiSaIiEE9push_backERKi",
		       "std::vector<int, std::allocator<int> >::push_back(int const&)");
	check_demangle("_ZN3foo3barEv.cold", "foo::bar() [clone .cold]");
	check_demangle("_ZNK5Shape4areaEv", "Shape::area() const");
}

static void test_rust_legacy(void)
{
	/* The trailing ::h<hash> goes, as rustfilt does. */
	check_demangle("_ZN4core3fmt5write17h0123456789abcdefE", "core::fmt::write");
	check_demangle("_ZN3std2rt10lang_start28_$u7b$$u7b$closure$u7d$$u7d$17h1c3a9d5b0e7f2a46E",
		       "std::rt::lang_start::{{closure}}");
}

static void test_rust_v0(void)
{
	check_demangle("_RNvNtCs1234_7mycrate3foo3bar", "mycrate::foo::bar");
	check_demangle("_RNvCsa1b2c3_7mycrate4main", "mycrate::main");
}

static void test_not_mangled(void)
{
	check_demangle("main", NULL);
	check_demangle("__libc_start_main", NULL);
	check_demangle("foo__bar", NULL);
	check_demangle("_Zgarbage", NULL);
	check_demangle("_R", NULL);
	check_demangle("", NULL);
}

int main(void)
{
	RUN(test_cplusplus);
	RUN(test_rust_legacy);
	RUN(test_rust_v0);
	RUN(test_not_mangled);
	return test_summary();
}
