# Shared by the test scripts: `expand ARGS...` sets the array `expanded` to ARGS with @GPUS@ made
# the number of CUDA devices (at most 4; none: the case fails, it needs a GPU), and `passed OUTPUT`
# succeeds when a solver's output says every check passed.
expand() {
  expanded=()
  local gpus=0
  if [[ "$*" == *@GPUS@* ]]; then
    gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
    if [ "$gpus" -lt 1 ]; then echo "heat tests: this case needs a CUDA device and nvidia-smi lists none" >&2; return 1; fi
    if [ "$gpus" -gt 4 ]; then gpus=4; fi
  fi
  local a
  for a in "$@"; do expanded+=("${a//@GPUS@/$gpus}"); done
}
passed() { grep -q '^heat: checks passed' <<<"$1"; }
fingerprint() { sed -n 's/^heat: fingerprint //p' <<<"$1" | tail -1; }
