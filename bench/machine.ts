/** The machine the figures come from, for BENCHMARKS.md. */
import { readFileSync } from "node:fs";
import { cpus, loadavg, release, totalmem } from "node:os";

/** The 1-minute load average: other work on the machine skews every figure. */
export function loadAverage(): string {
  return loadavg()[0]!.toFixed(2);
}

export function describeMachine(): string[] {
  let model = cpus()[0]?.model ?? "unknown";
  try {
    model = /^model name\s*:\s*(.+)$/m.exec(readFileSync("/proc/cpuinfo", "utf8"))?.[1] ?? model;
  } catch {}
  return [
    `CPU: ${model}, ${navigator.hardwareConcurrency} cores`,
    `Memory: ${(totalmem() / 2 ** 30).toFixed(1)} GiB`,
    `OS: ${process.platform} ${release()}`,
    `Bun: ${Bun.version} (${Bun.revision.slice(0, 9)})`,
  ];
}
