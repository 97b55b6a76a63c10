import { stateCentre } from '../locations/geo.js';
import type { BusinessFindings, VisitReport } from './visit.js';

/**
 * The visit report the test helpers file: what an agent would report, with the state's centre
 * as the position, no photos, and a neighbour entry that says where it came from.
 */
export function sandboxReport(state: string, outcome: 'verified' | 'failed', reason: string | undefined, findings: BusinessFindings = {}): VisitReport {
  const centre = stateCentre(state);
  return {
    outcome,
    reason,
    latitude: centre?.latitude,
    longitude: centre?.longitude,
    photoIds: [],
    neighbor: { name: 'Test Neighbour', comment: 'Completed with the test helper', phone: '' },
    findings,
    reviewReason: undefined,
  };
}
