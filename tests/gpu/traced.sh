#!/usr/bin/env bash
# Runs a command for at most SECONDS; if it is still running then, prints every thread's backtrace
# (gdb, else cuda-gdb) before killing it, so that a hang on a lent GPU machine says where it hung.
# Usage: tests/gpu/traced.sh SECONDS command [args...]   (exit status: the command's, 124 on a hang)
set -u
limit=$1; shift
"$@" &
pid=$!
for ((i = 0; i < limit; ++i)); do
  kill -0 "$pid" 2>/dev/null || { wait "$pid"; exit $?; }
  sleep 1
done
echo "traced: still running after ${limit} s, every thread's backtrace:"
debugger=$(command -v gdb || command -v cuda-gdb || echo /usr/local/cuda/bin/cuda-gdb)
if [ -x "$debugger" ]; then
  "$debugger" -batch -ex "thread apply all bt 40" -p "$pid" 2>&1 | grep -E '^(Thread|#)' | head -400
else
  echo "traced: no gdb here; kernel stacks instead:"
  for t in /proc/$pid/task/*; do echo "$t: $(cat "$t/comm") $(cat "$t/wchan" 2>/dev/null)"; done
fi
kill -9 "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
exit 124
