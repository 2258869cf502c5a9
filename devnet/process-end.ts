/**
 * Child processes (the chain, test servers, PostgreSQL) must not outlive the process that started
 * them, however it ends: a shell watchdog acts once our pid is gone (even after SIGKILL), and exit
 * and signal handlers stop the child on an orderly end.
 */

/**
 * A shell loop that waits while both we and the child live, then runs `afterParent` (with the
 * child's pid as $2 and `args` as $3…) if it was our pid that went away; it ends itself when the
 * child ends first. The watchdog never keeps our event loop alive.
 */
export function spawnWatchdog(name: string, childPid: number, afterParent: string, args: string[] = []): Bun.Subprocess {
  const script = [
    'while kill -0 "$1" 2>/dev/null && kill -0 "$2" 2>/dev/null; do sleep 1; done',
    'kill -0 "$1" 2>/dev/null && exit 0',
    afterParent,
  ].join("; ");
  const watchdog = Bun.spawn(["sh", "-c", script, name, String(process.pid), String(childPid), ...args], {
    stdin: "ignore",
    stdout: "ignore",
    stderr: "ignore",
  });
  watchdog.unref();
  return watchdog;
}

/**
 * Sends `signal` to the child on exit and on SIGINT/SIGTERM; returns the function that removes the
 * handlers. A signal handler replaces the default "terminate" behaviour, so when ours is the only
 * one the signal is raised again after removing it.
 */
export function stopOnProcessEnd(child: Bun.Subprocess, signal: NodeJS.Signals): () => void {
  const onExit = () => child.kill(signal);
  const onSignal = (received: NodeJS.Signals) => {
    child.kill(signal);
    detach();
    if (process.listenerCount(received) === 0) process.kill(process.pid, received);
  };
  const detach = () => {
    process.off("exit", onExit);
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  };
  process.on("exit", onExit);
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  return detach;
}
