import { describe, expect, it } from 'vitest';
import { EndpointTraffic } from '../../src/webhooks/traffic.js';

const URL_A = 'https://a.example/hook';
const SETTINGS = { concurrency: 80, endpointConcurrency: 16, slowAttemptMs: 1_000, timeoutMs: 10_000, breakerThreshold: 3, breakerCooldownMs: 60_000 };

describe('EndpointTraffic', () => {
  it('keeps the last share of slots from borrowing', () => {
    const traffic = new EndpointTraffic(SETTINGS);
    expect(traffic.share).toBe(16);
    expect(traffic.borrowable(0)).toBe(64);
    expect(traffic.borrowable(60)).toBe(4);
    expect(traffic.borrowable(70)).toBe(0);
    // A share larger than the worker is the whole worker: nothing to borrow.
    expect(new EndpointTraffic({ ...SETTINGS, concurrency: 8 }).borrowable(0)).toBe(0);
  });

  it('lets a URL that answers borrow, and holds a slow one to its share', () => {
    const traffic = new EndpointTraffic(SETTINGS);
    expect(traffic.plan(0)).toEqual([]);
    for (let n = 0; n < 20; n++) traffic.started(URL_A, 100);
    expect(traffic.plan(500)).toEqual([{ url: URL_A, quota: 0, deferMs: null }]);
    expect(traffic.plan(1_200)).toEqual([{ url: URL_A, quota: 0, deferMs: 10_000 }]);
    for (let n = 0; n < 10; n++) traffic.finished(URL_A, 100, true, 1_300);
    traffic.started(URL_A, 1_300);
    // The slow attempts are still out: still slow.
    expect(traffic.plan(1_400)).toEqual([{ url: URL_A, quota: 5, deferMs: 10_000 }]);
    for (let n = 0; n < 10; n++) traffic.finished(URL_A, 100, true, 1_500);
    expect(traffic.plan(1_600)).toEqual([{ url: URL_A, quota: 15, deferMs: null }]);
    traffic.finished(URL_A, 1_300, true, 1_700);
    expect(traffic.plan(1_800)).toEqual([]);
  });

  it('opens after consecutive failures, holds for the cool-down, probes once, and closes on a success', () => {
    const traffic = new EndpointTraffic(SETTINGS);
    const attempt = (at: number, delivered: boolean) => {
      traffic.started(URL_A, at);
      return traffic.finished(URL_A, at, delivered, at + 10);
    };
    expect(attempt(0, false)).toBeUndefined();
    expect(attempt(100, true)).toBeUndefined(); // a success resets the count
    expect(attempt(200, false)).toBeUndefined();
    expect(attempt(300, false)).toBeUndefined();
    expect(attempt(400, false)).toEqual({ kind: 'opened', failures: 3 });

    // Cool-down: nothing may go; due deliveries wait until it ends.
    expect(traffic.plan(10_410)).toEqual([{ url: URL_A, quota: 0, deferMs: 50_000 }]);
    // Over: one probe may go; the others wait for its answer.
    expect(traffic.plan(60_410)).toEqual([{ url: URL_A, quota: 1, deferMs: 60_000 }]);
    traffic.started(URL_A, 60_420);
    expect(traffic.plan(60_430)).toEqual([{ url: URL_A, quota: 0, deferMs: 60_000 }]);
    // The probe fails: another cool-down.
    expect(traffic.finished(URL_A, 60_420, false, 60_500)).toEqual({ kind: 'opened', failures: 4 });
    expect(traffic.plan(60_600)).toEqual([{ url: URL_A, quota: 0, deferMs: 59_900 }]);

    // The next probe's claim holds the others until its answer (a cool-down at the longest)...
    expect(traffic.plan(120_510)).toEqual([{ url: URL_A, quota: 1, deferMs: 60_000 }]);
    traffic.started(URL_A, 120_520);
    // ...and it succeeds: closed, and what was held (until 180,510 at the latest) may go now.
    expect(traffic.finished(URL_A, 120_520, true, 120_600)).toEqual({ kind: 'closed', heldForMs: 59_910 });
    expect(traffic.plan(120_700)).toEqual([]);
  });
});
