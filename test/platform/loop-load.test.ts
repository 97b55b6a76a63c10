import { describe, expect, it } from 'vitest';
import { eventLoopMeter, LoopLoad } from '../../src/platform/loop-load.js';

describe('LoopLoad', () => {
  it('turns busy at the busy threshold and idle only below the lower one, one reading per window', () => {
    let now = 0;
    const shares: number[] = [];
    let readings = 0;
    const load = new LoopLoad(
      { windowMs: 100, busyAt: 0.7, idleBelow: 0.35 },
      () => {
        readings++;
        return shares.shift()!;
      },
      () => now,
    );
    const at = (ms: number, share?: number) => {
      now = ms;
      if (share !== undefined) shares.push(share);
      return load.isBusy();
    };
    // Before a window has passed nothing is read.
    expect(at(50)).toBe(false);
    expect(readings).toBe(0);
    expect(at(100, 0.69)).toBe(false);
    expect(at(200, 0.7)).toBe(true);
    // Within the window the reading stands.
    expect(at(250)).toBe(true);
    expect(readings).toBe(2);
    // Lightened by what it sent away, the loop stays busy down to the lower threshold.
    expect(at(300, 0.5)).toBe(true);
    expect(at(400, 0.35)).toBe(true);
    expect(at(500, 0.34)).toBe(false);
    expect(at(600, 0.5)).toBe(false);
    // A long quiet spell is one window, read at the next call.
    expect(at(60_600, 0.01)).toBe(false);
    expect(shares).toEqual([]);
  });

  it("reads this thread's event loop: busy after running code without a break, idle after a long wait", async () => {
    const load = new LoopLoad({ windowMs: 50, busyAt: 0.7, idleBelow: 0.35 }, eventLoopMeter());
    // Running code is busy time however the machine schedules this thread.
    const until = performance.now() + 120;
    while (performance.now() < until);
    expect(load.isBusy()).toBe(true);
    // A second of waiting: idle unless this loop ran for more than a third of it meanwhile.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(load.isBusy()).toBe(false);
  });
});
