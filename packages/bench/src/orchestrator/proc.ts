// CPU and peak RSS of a process that is not Node (the Java consumer, kcat), read from /proc while
// it runs. Node clients measure themselves (process.cpuUsage, getrusage's maxRSS); these two
// cannot, and Node has no wait4 to collect a child's rusage, so: utime + stime from
// /proc/PID/stat and VmHWM (the kernel's own peak RSS) from /proc/PID/status, sampled every 20 ms.
// The last sample before the process exits is the figure: CPU spent in its final 20 ms (shutdown)
// is missed, VmHWM is exact up to then.
import { readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';

let ticks: number | undefined;
function clockTicks(): number {
  if (ticks === undefined) {
    const out = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
    ticks = Number(out.stdout?.trim()) || 100;
  }
  return ticks;
}

export interface ProcFigures {
  cpuSeconds: number | null;
  peakRssMb: number | null;
}

export class ProcSampler {
  private timer: NodeJS.Timeout | undefined;
  private cpu: number | null = null;
  private hwm: number | null = null;
  private pid: number | undefined;

  constructor(private readonly everyMs = 20) {}

  /** Starts sampling `pid` (may be called once the pid is known). */
  watch(pid: number): void {
    this.pid = pid;
    this.sample();
    this.timer = setInterval(() => this.sample(), this.everyMs);
  }

  private sample(): void {
    if (this.pid === undefined) return;
    try {
      const stat = readFileSync(`/proc/${this.pid}/stat`, 'utf8');
      // Fields after the command name (which may hold spaces, so split after its closing paren):
      // state is field 3, utime 14 and stime 15.
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const t = Number(rest[11]) + Number(rest[12]);
      if (Number.isFinite(t)) this.cpu = t / clockTicks();
      const status = readFileSync(`/proc/${this.pid}/status`, 'utf8');
      const m = /VmHWM:\s+(\d+) kB/.exec(status);
      if (m) this.hwm = Number(m[1]) / 1024;
    } catch {
      // Gone: keep the last figures.
    }
  }

  stop(): ProcFigures {
    this.sample();
    clearInterval(this.timer);
    return { cpuSeconds: this.cpu === null ? null : Math.round(this.cpu * 100) / 100, peakRssMb: this.hwm === null ? null : Math.round(this.hwm * 100) / 100 };
  }
}
