<?php
// bpfprof's PHP workload: three nested hot functions, outer_fn calling
// Nest::middle calling inner_fn, whose loop takes nearly all the time.
// Usage: php phpfuncs.php SECONDS [--fork]. It says on stderr which lines
// the innermost loop is on, for the check to compare with the profile's;
// with --fork a child forked at the start (php-fpm's workers are forked)
// runs the same and says its pid.
// Also bench/runtimes.sh's PHP workload.

function inner_fn(int $n): int
{
	$s = 0;
	for ($i = 0; $i < $n; $i++) { // INNER_FIRST
		$s += ($i * 7) % 13;
	} // INNER_LAST
	return $s;
}

class Nest
{
	public static function middle(int $n): int
	{
		return inner_fn($n);
	}
}

function outer_fn(float $seconds): int
{
	$end = microtime(true) + $seconds;
	$calls = 0;
	while (microtime(true) < $end) {
		Nest::middle(200000);
		$calls++;
	}
	return $calls;
}

// The pid first, on stdout: bench/runtimes.sh waits for it.
echo getmypid(), "\n";
$src = file(__FILE__);
$first = $last = 0;
foreach ($src as $i => $line) {
	if (str_contains($line, '// INNER_' . 'FIRST'))
		$first = $i + 1;
	if (str_contains($line, '// INNER_' . 'LAST'))
		$last = $i + 1;
}
$child = ($argv[2] ?? '') === '--fork' ? pcntl_fork() : -1;
$calls = outer_fn((float)($argv[1] ?? 3));
if ($child === 0) {
	fwrite(STDERR, sprintf("phpfuncs: child pid %d calls %d\n", getmypid(), $calls));
	exit(0);
}
if ($child > 0)
	pcntl_waitpid($child, $status);
fwrite(STDERR, sprintf("phpfuncs: pid %d inner lines %d-%d calls %d\n", getmypid(), $first,
		       $last, $calls));
