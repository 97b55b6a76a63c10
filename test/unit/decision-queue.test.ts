import { describe, expect, it } from 'vitest';
import { DecisionQueue, type DecisionQueueLimits } from '../../src/sessions/decision-queue.js';

/**
 * Who decides next on the liveness engine (src/sessions/decision-queue.ts). The review's attack:
 * a free test account and a live account holding one price filled every decision place, and
 * another organization's live end user waited 77 s through 15 refusals. Each test here drives
 * the queue as the frames route does (take, decide, release) and reads the order of turns.
 */

const tick = () => new Promise((resolve) => setImmediate(resolve));

/**
 * A wait still queued when its test ends gives up waitMs later (503), long after: observed here,
 * or its rejection would surface in whatever test file the worker process runs by then.
 */
const givenUp = (err: unknown) => {
  if ((err as { code?: string }).code !== 'SERVICE_UNAVAILABLE') throw err;
};

const LIMITS: DecisionQueueLimits = { running: 1, perOrg: 4, testTotal: 4, testEvery: 4, waitMs: 60_000 };

/** Takes a turn for `who` and records when it starts; `end()` releases the turn. */
function turns(queue: DecisionQueue) {
  const order: string[] = [];
  const releases = new Map<string, () => void>();
  const take = (who: string, orgId: string, mode: 'live' | 'test') =>
    queue
      .take(orgId, mode)
      .then((release) => {
        order.push(who);
        releases.set(who, release);
      })
      .catch(givenUp);
  const end = async (who: string) => {
    await tick();
    releases.get(who)!();
    await tick();
  };
  return { order, take, end };
}

describe('liveness decision queue', () => {
  it('serves a live end user before a flood of test decisions and between a flooding live organization\'s own', async () => {
    const queue = new DecisionQueue(LIMITS);
    const { order, take, end } = turns(queue);
    void take('attacker-1', 'attacker', 'live');
    for (let i = 1; i <= 4; i++) void take(`test-${i}`, 'free', 'test');
    for (let i = 2; i <= 4; i++) void take(`attacker-${i}`, 'attacker', 'live');
    void take('victim', 'victim', 'live');
    await end('attacker-1');
    // The victim's turn comes after one more of the attacker's, not after the attacker's backlog
    // or the test flood.
    await end(order.at(-1)!);
    expect(order.slice(0, 3)).toEqual(['attacker-1', 'attacker-2', 'victim']);
  });

  it('gives the next turn to an organization with nothing running, before the next of one that has', async () => {
    const queue = new DecisionQueue({ ...LIMITS, running: 2 });
    const { order, take, end } = turns(queue);
    for (let i = 1; i <= 4; i++) void take(`attacker-${i}`, 'attacker', 'live');
    void take('victim', 'victim', 'live');
    await end('attacker-1');
    // The attacker still has one running: the victim, with none, goes first.
    expect(order).toEqual(['attacker-1', 'attacker-2', 'victim']);
  });

  it('still gives test mode one turn in testEvery while live decisions wait, and all of them when none do', async () => {
    const queue = new DecisionQueue(LIMITS);
    const { order, take, end } = turns(queue);
    void take('live-0', 'busy', 'live');
    void take('test-1', 'free', 'test');
    for (let i = 1; i <= 4; i++) void take(`live-${i}`, `org-${i}`, 'live');
    await tick();
    for (let done = 0; done < 5; done++) await end(order.at(-1)!);
    // Three live turns, then test's: one turn in four.
    expect(order).toEqual(['live-0', 'live-1', 'live-2', 'test-1', 'live-3', 'live-4']);
  });

  it('refuses at once (503, Retry-After 5) an organization past its share, and test mode past its own across organizations', async () => {
    const queue = new DecisionQueue(LIMITS);
    for (let i = 0; i < 4; i++) void queue.take('greedy', 'live').catch(givenUp);
    expect(() => queue.admit('greedy', 'live')).toThrow(expect.objectContaining({ code: 'SERVICE_UNAVAILABLE', options: { retryAfterSeconds: 5 } }));
    await expect(queue.take('greedy', 'test')).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    expect(() => queue.admit('someone-else', 'live')).not.toThrow();
    for (let i = 0; i < 4; i++) void queue.take(`tester-${i}`, 'test').catch(givenUp);
    expect(() => queue.admit('tester-new', 'test')).toThrow(expect.objectContaining({ code: 'SERVICE_UNAVAILABLE' }));
    expect(() => queue.admit('tester-new', 'live')).not.toThrow();
  });

  it('gives up a wait after waitMs with 503, and its place is given back', async () => {
    const queue = new DecisionQueue({ ...LIMITS, perOrg: 2, waitMs: 50 });
    const first = await queue.take('a', 'live');
    const waited = queue.take('a', 'live');
    await expect(waited).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE', options: { retryAfterSeconds: 5 } });
    expect(queue.state).toEqual({ running: 1, waitingLive: 0, waitingTest: 0 });
    expect(() => queue.admit('a', 'live')).not.toThrow();
    first();
    first();
    expect(queue.state.running).toBe(0);
    const again = await queue.take('a', 'live');
    again();
  });

  it('runs `running` decisions at once and starts the next as soon as one ends', async () => {
    const queue = new DecisionQueue({ ...LIMITS, running: 2 });
    const { order, take, end } = turns(queue);
    for (const who of ['a', 'b', 'c']) void take(who, who, 'live');
    await tick();
    expect(order).toEqual(['a', 'b']);
    expect(queue.state).toEqual({ running: 2, waitingLive: 1, waitingTest: 0 });
    await end('b');
    expect(order).toEqual(['a', 'b', 'c']);
  });
});
