import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Files that spawn `vouch` processes or drive Chromium take seconds to tens of seconds each; the
 * rest take about one. Starting the slow ones first keeps both workers busy to the end instead of
 * leaving one slow file alone at the tail. Vitest orders by the last run's durations when it has
 * them, but a fresh clone (CI) has none and would fall back to file size; this order holds either way.
 */
const SLOW = /(^|\/)(cli|[\w-]+-cli|serve|registry-import|workers|crash|biometrics|router|rate-limit(-processes)?|auth-mail)\.test\.ts$|\/web\//;

export class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const slow = (spec: TestSpecification) => (SLOW.test(spec.moduleId) ? 0 : 1);
    return sorted.map((spec, index) => ({ spec, index })).sort((a, b) => slow(a.spec) - slow(b.spec) || a.index - b.index).map(({ spec }) => spec);
  }
}
