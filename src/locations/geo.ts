import { resolveState } from './nigeria.js';

/**
 * Approximate bounding boxes of the states (degrees, WGS 84), for a coarse sanity check of a
 * field agent's GPS position. They are deliberately generous and rounded to 0.05°; the check
 * adds a further margin (docs/field-agents.md), so only reports clearly elsewhere are flagged.
 * No vetted LGA coordinate set exists (ng-states gives one point per state), hence the state.
 */
interface Bounds {
  south: number;
  north: number;
  west: number;
  east: number;
}

const STATE_BOUNDS: Record<string, Bounds> = {
  Abia: { south: 4.75, north: 6.1, west: 7.15, east: 8.0 },
  Adamawa: { south: 7.45, north: 10.95, west: 11.4, east: 13.7 },
  'Akwa Ibom': { south: 4.3, north: 5.55, west: 7.4, east: 8.35 },
  Anambra: { south: 5.7, north: 6.8, west: 6.6, east: 7.35 },
  Bauchi: { south: 9.3, north: 12.25, west: 8.5, east: 11.0 },
  Bayelsa: { south: 4.2, north: 5.4, west: 5.3, east: 6.75 },
  Benue: { south: 6.4, north: 8.15, west: 7.45, east: 10.0 },
  Borno: { south: 10.0, north: 13.75, west: 11.5, east: 14.7 },
  'Cross River': { south: 4.4, north: 6.9, west: 7.8, east: 9.5 },
  Delta: { south: 5.05, north: 6.5, west: 5.0, east: 6.85 },
  Ebonyi: { south: 5.7, north: 6.8, west: 7.55, east: 8.45 },
  Edo: { south: 5.75, north: 7.6, west: 5.0, east: 6.75 },
  Ekiti: { south: 7.25, north: 8.1, west: 4.75, east: 5.85 },
  Enugu: { south: 5.9, north: 7.1, west: 6.95, east: 7.85 },
  FCT: { south: 8.4, north: 9.45, west: 6.75, east: 7.65 },
  Gombe: { south: 9.35, north: 11.2, west: 10.7, east: 12.0 },
  Imo: { south: 5.1, north: 6.0, west: 6.6, east: 7.45 },
  Jigawa: { south: 11.0, north: 13.0, west: 8.05, east: 10.55 },
  Kaduna: { south: 9.05, north: 11.35, west: 6.1, east: 8.85 },
  Kano: { south: 10.6, north: 12.7, west: 7.65, east: 9.45 },
  Katsina: { south: 11.1, north: 13.4, west: 6.85, east: 8.7 },
  Kebbi: { south: 10.1, north: 13.3, west: 3.45, east: 5.7 },
  Kogi: { south: 6.5, north: 8.75, west: 5.35, east: 7.9 },
  Kwara: { south: 7.7, north: 10.15, west: 2.7, east: 6.05 },
  Lagos: { south: 6.35, north: 6.75, west: 2.7, east: 4.35 },
  Nasarawa: { south: 7.7, north: 9.4, west: 7.0, east: 9.4 },
  Niger: { south: 8.3, north: 11.5, west: 3.5, east: 7.45 },
  Ogun: { south: 6.3, north: 7.97, west: 2.7, east: 4.6 },
  Ondo: { south: 5.75, north: 7.8, west: 4.3, east: 6.1 },
  Osun: { south: 6.95, north: 8.1, west: 4.0, east: 5.1 },
  Oyo: { south: 7.05, north: 9.15, west: 2.65, east: 4.6 },
  Plateau: { south: 8.4, north: 10.35, west: 8.35, east: 10.65 },
  Rivers: { south: 4.25, north: 5.7, west: 6.4, east: 7.6 },
  Sokoto: { south: 11.5, north: 13.8, west: 4.1, east: 6.95 },
  Taraba: { south: 6.4, north: 9.6, west: 9.2, east: 11.95 },
  Yobe: { south: 10.45, north: 13.4, west: 9.65, east: 12.55 },
  Zamfara: { south: 10.85, north: 13.15, west: 5.3, east: 7.25 },
};

/** A report this far (km) outside its state's box is flagged for review. */
export const GPS_MARGIN_KM = 50;

const EARTH_RADIUS_KM = 6371;
const rad = (degrees: number) => (degrees * Math.PI) / 180;

/** Great-circle distance in km (haversine). */
export function distanceKm(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const dLat = rad(lat2 - lat1);
  const dLon = rad(lon2 - lon1);
  const a = Math.sin(dLat / 2) ** 2 + Math.cos(rad(lat1)) * Math.cos(rad(lat2)) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS_KM * Math.asin(Math.min(1, Math.sqrt(a)));
}

/** How far (km) a position lies outside the state's box; 0 inside; undefined for an unknown state. */
export function kmOutsideState(state: string, latitude: number, longitude: number): number | undefined {
  const canonical = resolveState(state);
  const box = canonical ? STATE_BOUNDS[canonical] : undefined;
  if (!box) return undefined;
  const nearestLat = Math.min(Math.max(latitude, box.south), box.north);
  const nearestLon = Math.min(Math.max(longitude, box.west), box.east);
  return distanceKm(latitude, longitude, nearestLat, nearestLon);
}

/** The middle of the state's box (the sandbox's stand-in for a visit position). */
export function stateCentre(state: string): { latitude: number; longitude: number } | undefined {
  const canonical = resolveState(state);
  const box = canonical ? STATE_BOUNDS[canonical] : undefined;
  if (!box) return undefined;
  const round = (value: number) => Math.round(value * 1e4) / 1e4;
  return { latitude: round((box.south + box.north) / 2), longitude: round((box.west + box.east) / 2) };
}

/** Why a visit position needs review, or undefined when it is plausibly in the state. */
export function gpsReviewReason(state: string, latitude: number, longitude: number): string | undefined {
  const outside = kmOutsideState(state, latitude, longitude);
  if (outside === undefined || outside <= GPS_MARGIN_KM) return undefined;
  return `GPS position is about ${Math.round(outside)} km outside ${resolveState(state)}`;
}
