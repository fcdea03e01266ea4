// SPDX-License-Identifier: BSD-2-Clause
//
// nofp_cpp: C++ as distributions build it (-O2 -fomit-frame-pointer, with
// -g for inline frames) for the CFI unwinding test: a virtual call at the
// bottom of a recursion whose hot loop is an inlined helper, and
// exceptions thrown from deep inside a recursion and caught at its top, so
// samples land in libstdc++'s and libgcc_s's unwinder (no frame pointers
// either):
//
//   main -> cpp_recurse x (DEPTH + 1) -> HashWorker::step -> (inlined) mix
//   main -> cpp_catcher -> cpp_thrower x (DEPTH + 1) -> __cxa_throw -> ...
//
// Prints "nofp_cpp: truth pid P depth D" on stdout.
//
// Usage: nofp_cpp SECONDS DEPTH
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <unistd.h>

namespace
{

volatile std::uint64_t sink;

struct Worker {
	virtual ~Worker() = default;
	virtual std::uint64_t step(std::uint64_t seed) = 0;
};

// Inlined into HashWorker::step: DWARF shows it as an inline frame.
inline __attribute__((always_inline)) std::uint64_t mix(std::uint64_t h)
{
	for (int i = 0; i < 20000; i++)
		h = h * 6364136223846793005ull + 1442695040888963407ull;
	return h;
}

struct HashWorker final : Worker {
	__attribute__((noinline)) std::uint64_t step(std::uint64_t seed) override
	{
		return mix(seed);
	}
};

__attribute__((noinline)) std::uint64_t cpp_recurse(int depth, Worker &w, std::uint64_t seed)
{
	volatile int here = depth;

	if (depth == 0)
		return w.step(seed) ^ static_cast<std::uint64_t>(here); /* not a tail call */
	return cpp_recurse(depth - 1, w, seed * 31 + static_cast<std::uint64_t>(depth)) + here;
}

__attribute__((noinline)) int cpp_thrower(int depth)
{
	volatile int here = depth;

	if (depth == 0)
		throw std::runtime_error("deep");
	return cpp_thrower(depth - 1) + here;
}

__attribute__((noinline)) int cpp_catcher(int depth)
{
	try {
		return cpp_thrower(depth);
	} catch (const std::runtime_error &e) {
		return static_cast<int>(e.what()[0]);
	}
}

} // namespace

int main(int argc, char **argv)
{
	int depth;

	if (argc != 3 || (depth = std::atoi(argv[2])) < 0 || depth > 1000) {
		std::fprintf(stderr, "usage: %s SECONDS DEPTH (0-1000)\n", argv[0]);
		return 2;
	}
	std::printf("nofp_cpp: truth pid %d depth %d\n", static_cast<int>(getpid()), depth);
	std::fflush(stdout);
	auto worker = std::make_unique<HashWorker>();
	auto end = std::chrono::steady_clock::now() +
		   std::chrono::duration<double>(std::atof(argv[1]));
	std::uint64_t total = 0;
	while (std::chrono::steady_clock::now() < end) {
		total += cpp_recurse(depth, *worker, total);
		for (int i = 0; i < 20; i++)
			total += static_cast<std::uint64_t>(cpp_catcher(depth));
	}
	sink = total;
	return 0;
}
