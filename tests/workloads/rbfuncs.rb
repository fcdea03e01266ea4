# Ruby frames (issue 40): three nested hot methods, the innermost spinning
# in a loop of its own, for SECONDS seconds (default 3). It prints its pid
# first (bench/runtimes.sh waits for it), and at the end a line of JSON:
# its pid, its main thread's tid, and the file and lines where each method
# starts, for tests/check/ruby_checks.mjs.
require 'json'

puts Process.pid
$stdout.flush

def rb_inner(n)
  s = 0
  i = 0
  while i < n
    s += i * 3 + 1
    i += 1
  end
  s
end

def rb_middle(n)
  rb_inner(n)
end

def rb_outer(n)
  rb_middle(n)
end

seconds = (ARGV[0] || '3').to_f
deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + seconds
calls = 0
while Process.clock_gettime(Process::CLOCK_MONOTONIC) < deadline
  rb_outer(200_000)
  calls += 1
end
lines = {}
%i[rb_inner rb_middle rb_outer].each { |m| lines[m] = method(m).source_location[1] }
tid = File.read('/proc/thread-self/stat').split(' ')[0].to_i
puts JSON.generate({ pid: Process.pid, tid: tid, calls: calls, file: File.expand_path(__FILE__),
                     ruby: RUBY_VERSION, lines: lines })
