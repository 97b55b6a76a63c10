/**
 * Magic test values (docs/test-mode.md, "Every outcome"): numbers that make a test-mode lookup
 * answer what an integration must handle besides a match and a mismatch: the registry
 * unavailable (503 with Retry-After), a registry slower than a client's usual timeout, and a
 * wallet that cannot pay (402), exactly as live mode answers them. BVN and NIN, on every /v1
 * endpoint that looks them up (the lookups, BVN match, biometrics). Not found needs no magic:
 * every other number is not found.
 */

export type SandboxOutcome = 'unavailable' | 'slow' | 'unpaid';

/** The 11-digit number of each outcome, per type: the type's usual prefix, then the outcome's code. */
export const SANDBOX_OUTCOME_NUMBERS = Object.freeze({
  bvn: Object.freeze({ unavailable: '22200000503', slow: '22200000035', unpaid: '22200000402' }),
  nin: Object.freeze({ unavailable: '70400000503', slow: '70400000035', unpaid: '70400000402' }),
} satisfies Record<'bvn' | 'nin', Record<SandboxOutcome, string>>);

/** How long the slow number takes: past the 30 s most HTTP clients give up after (tests shorten it). */
export const SANDBOX_TIMING = { slowMs: 35_000 };

/** Seconds in the unavailable number's Retry-After, as a live 503 carries. */
export const SANDBOX_RETRY_AFTER_SECONDS = 5;

/** The outcome a test-mode number asks for, if it is a magic one. */
export function sandboxOutcome(number: string): { type: 'bvn' | 'nin'; outcome: SandboxOutcome } | undefined {
  for (const type of ['bvn', 'nin'] as const) {
    for (const [outcome, magic] of Object.entries(SANDBOX_OUTCOME_NUMBERS[type])) {
      if (magic === number) return { type, outcome: outcome as SandboxOutcome };
    }
  }
  return undefined;
}

/** Every magic value with what it does, for `vouch test-identities --json` and the docs' table. */
export function sandboxOutcomeTable() {
  const does: Record<SandboxOutcome, string> = {
    unavailable: `503 SERVICE_UNAVAILABLE with Retry-After: ${SANDBOX_RETRY_AFTER_SECONDS}, as when every live provider fails`,
    slow: `the test identity's record under this number, after ${SANDBOX_TIMING.slowMs / 1000} s (past a 30 s client timeout)`,
    unpaid: '402 PAYMENT_REQUIRED, as a live wallet that cannot pay answers (recorded as insufficient_funds, charged nothing)',
  };
  return (['bvn', 'nin'] as const).flatMap((type) =>
    (Object.keys(does) as SandboxOutcome[]).map((outcome) => ({ type, number: SANDBOX_OUTCOME_NUMBERS[type][outcome], outcome, answers: does[outcome] })),
  );
}
