import fs from 'node:fs';

/** Jiffies per second on every Linux we run on (CONFIG_HZ for /proc/<pid>/stat is fixed at 100). */
const TICKS_PER_SECOND = 100;

/** CPU seconds a process has used so far (user + system), or undefined off Linux or once it is gone. */
export function cpuSeconds(pid: number): number | undefined {
  try {
    // The command name may hold spaces and parentheses; the fields after its closing one are fixed.
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

/** Busy CPU seconds of the whole machine, all cores (Linux), to tell our load from other processes'. */
export function machineBusySeconds(): number | undefined {
  try {
    const cpu = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = cpu;
    return (user + nice + system + irq + softirq + steal) / TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}
