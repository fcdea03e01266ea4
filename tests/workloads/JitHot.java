// SPDX-License-Identifier: BSD-2-Clause
//
// A Java workload: three nested static methods, the innermost a hot loop,
// for SECONDS of its CPU time (default 2), so that a profile must name them in the JVM's
// samples. Run from source (no javac step):
//
//   java JitHot.java [SECONDS] [MARKER]
//
// Prints its pid first, then "jit_hot_java: iterations N" at the end, so
// the loop cannot be optimised away. Meanwhile a thread of its own,
// "jit-hot-sleeper", waits in Thread.sleep inside bpfprofJavaSleeper, so
// that off-CPU stacks must name a Java method too.
public class JitHot {
	static long bpfprofJavaInner(long n) {
		long h = n;
		for (int i = 0; i < 20000; i++)
			h = (h ^ (h >>> 15)) * 0x2c1b3c6dL + i;
		return h;
	}

	static long bpfprofJavaMiddle(long n) {
		return bpfprofJavaInner(n) + 1;
	}

	/*
	 * SECONDS of this thread's CPU time, not of the clock: on a busy
	 * machine the loop then has as many samples as on an idle one, against
	 * the same start-up (the launcher compiles this file first, on this
	 * thread), and the share of its samples in these methods is the same.
	 */
	static long bpfprofJavaOuter(double seconds) {
		java.lang.management.ThreadMXBean cpu = java.lang.management.ManagementFactory.getThreadMXBean();
		long end = cpu.getCurrentThreadCpuTime() + (long)(seconds * 1e9), x = 0, n = 0;
		while (cpu.getCurrentThreadCpuTime() < end) {
			for (int k = 0; k < 64; k++)
				x += bpfprofJavaMiddle(n++);
		}
		System.out.println("jit_hot_java: iterations " + n + " " + (x & 1));
		return x;
	}

	static volatile boolean sleeping = true;

	static void bpfprofJavaSleeper() {
		try {
			while (sleeping)
				Thread.sleep(20);
		} catch (InterruptedException e) {
		}
	}

	public static void main(String[] args) {
		System.out.println(ProcessHandle.current().pid());
		System.out.flush();
		Thread sleeper = new Thread("jit-hot-sleeper") {
			public void run() {
				bpfprofJavaSleeper();
			}
		};
		sleeper.setDaemon(true);
		sleeper.start();
		bpfprofJavaOuter(args.length > 0 ? Double.parseDouble(args[0]) : 2);
		sleeping = false;
	}
}
