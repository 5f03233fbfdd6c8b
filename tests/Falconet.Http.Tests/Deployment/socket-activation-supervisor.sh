#!/bin/bash
# A service manager in miniature, run by systemd-socket-activate: it holds the listening socket it was given (fd 3) and runs
# the command given as arguments as the service, passing the socket on as systemd does (LISTEN_FDS, LISTEN_FDNAMES, and
# LISTEN_PID set to the service's own process id). SIGHUP restarts the service as `systemctl restart` does: SIGTERM, wait
# for the graceful exit, start again. The socket stays open throughout, so connections that arrive meanwhile wait in its
# queue for the next process. SIGTERM stops the service and ends the supervisor.
set -u
child=0
restart=0

start() {
  # In the subshell, BASHPID is the process that execs the service: LISTEN_PID must be the service's own pid.
  ( export LISTEN_PID=$BASHPID; exec "$@" ) &
  child=$!
}

trap 'restart=1' HUP
trap 'kill -TERM "$child" 2>/dev/null; wait "$child"; exit 0' TERM

start "$@"
while true; do
  wait "$child"
  status=$?
  if [ "$restart" = 1 ]; then
    restart=0
    kill -TERM "$child" 2>/dev/null
    wait "$child"
    start "$@"
  elif ! kill -0 "$child" 2>/dev/null; then
    exit "$status"
  fi
done
