# Sourced by scripts/*-venv.sh: one way to make a venv of pinned PyPI packages for a test.
#
#   pinned_venv VENV CHECK [--no-deps] REQS [[--no-deps] REQS ...]
#
# Makes VENV (relative to the repository root, the caller's working directory) with
# ${PYTHON:-python3.11}, installs each requirements file in order (--no-deps: that file
# alone, every package pinned in it), runs the Python CHECK (it prints what was installed,
# on stderr), and stamps VENV with the sha256 of the files' contents: it reinstalls only
# when a file changes, and pip's cache serves repeat installs. Prints the venv's python on
# its last line, which the tests read.
pinned_venv() {
  local venv="$1" check="$2"
  shift 2
  local files=() arg
  for arg in "$@"; do
    [ "$arg" = "--no-deps" ] || files+=("$arg")
  done
  local stamp="$venv/.edgegym-installed" want
  want="$(cat "${files[@]}" | sha256sum | cut -d' ' -f1)"
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    rm -rf "$venv"
    "${PYTHON:-python3.11}" -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --upgrade "pip>=24"
    local no_deps=()
    for arg in "$@"; do
      if [ "$arg" = "--no-deps" ]; then
        no_deps=(--no-deps)
      else
        "$venv/bin/python" -m pip install --quiet "${no_deps[@]}" -r "$arg"
        no_deps=()
      fi
    done
    "$venv/bin/python" -c "$check" >&2
    echo "$want" > "$stamp"
  fi
  echo "$(pwd)/$venv/bin/python"
}
