import seed from 'ng-states/seed.json' with { type: 'json' };
import { describe, expect, it } from 'vitest';
import { distanceKm, gpsReviewReason, kmOutsideState, stateCentre } from '../../src/locations/geo.js';
import { lgasOf, resolveLga, resolveLocation, resolveState, STATES } from '../../src/locations/nigeria.js';

const rows = seed as { STATE: string; LGA: string; LAT: number; LON: number }[];

describe('Nigerian states and LGAs', () => {
  it('has the 36 states and FCT, and 774 LGAs', () => {
    expect(STATES).toHaveLength(37);
    expect(STATES).toContain('FCT');
    expect(STATES).not.toContain('Fct');
    expect(STATES.reduce((n, state) => n + lgasOf(state).length, 0)).toBe(774);
  });

  it('resolves every LGA of the seed, spelled as the seed spells it, to a canonical name in its state', () => {
    for (const row of rows) {
      const lga = resolveLga(row.STATE, row.LGA);
      expect(lga, `${row.STATE} / ${row.LGA}`).toBeDefined();
      expect(lgasOf(row.STATE)).toContain(lga);
    }
  });

  it('resolves every canonical LGA, and in upper case, lower case and with hyphens for spaces', () => {
    for (const state of STATES) {
      for (const lga of lgasOf(state)) {
        expect(resolveLga(state, lga)).toBe(lga);
        expect(resolveLga(state.toUpperCase(), lga.toUpperCase())).toBe(lga);
        expect(resolveLga(state.toLowerCase(), ` ${lga.toLowerCase().replace(/ /g, '-')} `)).toBe(lga);
      }
    }
  });

  it('keeps LGA names distinct within a state', () => {
    for (const state of STATES) {
      const keys = lgasOf(state).map((lga) => lga.toLowerCase().replace(/[^a-z0-9]/g, ''));
      expect(new Set(keys).size, state).toBe(keys.length);
    }
  });

  it('reads states in common spellings', () => {
    expect(resolveState('lagos')).toBe('Lagos');
    expect(resolveState('LAGOS STATE')).toBe('Lagos');
    expect(resolveState('Akwa-Ibom')).toBe('Akwa Ibom');
    expect(resolveState('akwa ibom state')).toBe('Akwa Ibom');
    expect(resolveState('Cross river')).toBe('Cross River');
    expect(resolveState('Nassarawa')).toBe('Nasarawa');
    for (const fct of ['FCT', 'Fct', 'fct', 'Abuja', 'Federal Capital Territory', 'FCT Abuja', 'FCT - Abuja']) {
      expect(resolveState(fct), fct).toBe('FCT');
    }
    expect(resolveState('Lagoss')).toBeUndefined();
    expect(resolveState('')).toBeUndefined();
    expect(resolveState('Accra')).toBeUndefined();
  });

  it('reads LGAs in common spellings and fixes the seed\'s misspellings', () => {
    expect(resolveLga('Lagos', 'Eti Osa')).toBe('Eti-Osa');
    expect(resolveLga('Lagos', 'eti-osa lga')).toBe('Eti-Osa');
    expect(resolveLga('Lagos', 'Ibeju-Lekki')).toBe('Ibeju/Lekki');
    expect(resolveLga('Lagos', 'Shomolu')).toBe('Somolu');
    expect(resolveLga('Lagos', 'Oshodi-Isolo')).toBe('Oshodi/Isolo');
    expect(resolveLga('Ogun', 'Ado-Odo/Ota')).toBe('Ado Odo-Ota');
    expect(resolveLga('Ogun', 'Yewa South')).toBe('Egbado South');
    expect(resolveLga('Abuja', 'AMAC')).toBe('Abuja Municipal');
    expect(resolveLga('FCT', 'Municipal')).toBe('Abuja Municipal');
    expect(resolveLga('Adamawa', 'Girei')).toBe('Girei');
    expect(resolveLga('Adamawa', 'Gire 1')).toBe('Girei');
    expect(resolveLga('Anambra', 'Ihiala')).toBe('Ihiala');
    expect(resolveLga('Anambra', 'Idemili-South')).toBe('Idemili South');
    expect(resolveLga('Bauchi', "Jama'are")).toBe("Jama'are");
    expect(resolveLga('Bauchi', 'Jamaare')).toBe("Jama'are");
    expect(resolveLga('Imo', 'Okigwe (okigwe)')).toBe('Okigwe');
    expect(resolveLga('Borno', 'Maiduguri')).toBe('Maiduguri');
    expect(resolveLga('Sokoto', 'Sabon Birni')).toBe('Sabon Birni');
    expect(resolveLga('Katsina', 'Malumfashi')).toBe('Malumfashi');
    expect(resolveLga('Plateau', 'Barkin Ladi')).toBe('Barikin Ladi');
  });

  it('refuses an LGA of another state, and an unknown state', () => {
    expect(resolveLga('Ogun', 'Ikeja')).toBeUndefined();
    expect(resolveLga('Lagos', 'Nowhere')).toBeUndefined();
    expect(resolveLga('Atlantis', 'Ikeja')).toBeUndefined();
    expect(resolveLocation('lagos', 'ikeja')).toEqual({ state: 'Lagos', lga: 'Ikeja' });
    expect(resolveLocation('kano', 'nasarawa')).toEqual({ state: 'Kano', lga: 'Nasarawa' });
    expect(resolveLocation('Lagos', 'Kano Municipal')).toBeUndefined();
    expect(lgasOf('Atlantis')).toEqual([]);
  });
});

describe('GPS check', () => {
  it('measures great-circle distances', () => {
    // Lagos (Ikeja) to Abuja is about 530 km.
    expect(distanceKm(6.6018, 3.3515, 9.0765, 7.3986)).toBeGreaterThan(500);
    expect(distanceKm(6.6018, 3.3515, 9.0765, 7.3986)).toBeLessThan(560);
    expect(distanceKm(6.5, 3.3, 6.5, 3.3)).toBe(0);
  });

  it("finds each state's own reference point (ng-states) inside its box and the box centre in the state", () => {
    for (const row of rows) {
      expect(gpsReviewReason(row.STATE, row.LAT, row.LON), row.STATE).toBeUndefined();
    }
    for (const state of STATES) {
      const centre = stateCentre(state)!;
      expect(kmOutsideState(state, centre.latitude, centre.longitude)).toBe(0);
    }
  });

  it('flags a position far outside the state, and not one just over the border', () => {
    // Ikeja, Lagos reported for an address in Kano.
    expect(gpsReviewReason('Kano', 6.6018, 3.3515)).toMatch(/km outside Kano/);
    // London.
    expect(gpsReviewReason('Lagos', 51.5, -0.12)).toMatch(/outside Lagos/);
    // Sango-Ota (Ogun) for a Lagos address: a few km over the border, not flagged.
    expect(gpsReviewReason('Lagos', 6.69, 3.23)).toBeUndefined();
  });
});
