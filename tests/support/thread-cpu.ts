/**
 * CPU time of each thread of this process (Linux /proc/self/task), for tests that must show one
 * thread stopped working while others (a fresh worker starting, the garbage collector, the test
 * itself) go on: a per-thread figure is not blurred by them as the process's total is.
 */
import { readdirSync, readFileSync } from "node:fs";

/** Seconds of CPU (user + system) used so far by each live thread, by thread id. */
export function threadCpuSeconds(): Map<string, number> {
  const ticksPerSecond = 100; // USER_HZ, 100 on every Linux ABI Bun runs on
  const seconds = new Map<string, number>();
  for (const tid of readdirSync("/proc/self/task")) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
    } catch {
      continue; // the thread ended between the listing and the read
    }
    // Fields after the command name (which may hold spaces) start at field 3; utime and stime are 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    seconds.set(tid, (Number(fields[11]) + Number(fields[12])) / ticksPerSecond);
  }
  return seconds;
}

/** The thread that used the most CPU from `before` to `after`, and how much (threads born since are left out). */
export function busiestThread(before: Map<string, number>, after: Map<string, number>): { tid: string; seconds: number } {
  let busiest = { tid: "", seconds: -1 };
  for (const [tid, start] of before) {
    const used = (after.get(tid) ?? start) - start;
    if (used > busiest.seconds) busiest = { tid, seconds: used };
  }
  return busiest;
}
