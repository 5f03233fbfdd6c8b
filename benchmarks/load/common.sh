# shellcheck shell=bash
# Shared by the load scripts (sourced from the repository root): the tools they need, from Debian.

# need_tools COMMAND:PACKAGE...: installs the Debian package of each missing command with apt-get, as .ci/run does.
need_tools() {
  local missing=() pair
  for pair in "$@"; do
    command -v "${pair%%:*}" >/dev/null 2>&1 || [ -x "/usr/sbin/${pair%%:*}" ] || missing+=("${pair#*:}")
  done
  [ "${#missing[@]}" -gt 0 ] || return 0
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  echo "installing ${missing[*]} (apt-get)" >&2
  $sudo apt-get update -qq && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}
