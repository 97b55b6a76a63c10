import seed from 'ng-states/seed.json' with { type: 'json' };

/**
 * Nigeria's 36 states + FCT and their 774 local government areas, from the vetted `ng-states`
 * seed, with canonical spellings. Inputs are matched loosely (case, spaces, hyphens, slashes,
 * apostrophes, a trailing "State", an LGA's parenthesised headquarters, common alternative
 * spellings); the functions answer the canonical name, or undefined when nothing matches.
 *
 *   resolveState('lagos state')          -> 'Lagos'
 *   resolveState('Abuja')                -> 'FCT'
 *   resolveLga('Lagos', 'eti osa')       -> 'Eti-Osa'
 *   resolveLocation('fct', 'AMAC')       -> { state: 'FCT', lga: 'Abuja Municipal' }
 */

interface SeedRow {
  STATE: string;
  LGA: string;
}

export interface Location {
  state: string;
  lga: string;
}

/** Lowercase letters and digits only: "Ado Odo-ota", "ado-odo/ota" and "ADO ODO OTA" share a key. */
function keyOf(input: string): string {
  return input
    .normalize('NFKD')
    .toLowerCase()
    .replace(/\([^)]*\)/g, '')
    .replace(/[^a-z0-9]/g, '');
}

const STATE_NAMES: Record<string, string> = { Fct: 'FCT' };

const STATE_ALIASES: Record<string, readonly string[]> = {
  FCT: ['Abuja', 'Federal Capital Territory', 'FCT Abuja', 'Abuja FCT', 'Federal Capital Territory Abuja'],
  Nasarawa: ['Nassarawa'],
  'Akwa Ibom': ['Akwaibom'],
  'Cross River': ['Crossriver'],
};

/** Seed spellings that are wrong or abbreviated, by state: seed LGA -> canonical name. */
const LGA_NAMES: Record<string, Record<string, string>> = {
  Adamawa: { 'Gire 1': 'Girei' },
  Anambra: { Ihala: 'Ihiala' },
  Borno: { 'Maiduguri M. C.': 'Maiduguri' },
  FCT: { Municipal: 'Abuja Municipal' },
  Kogi: { 'Kogi . K. K.': 'Kogi', 'Ogori Mangogo': 'Ogori/Magongo' },
  Sokoto: { 'S/birni': 'Sabon Birni' },
  Gombe: { 'Yalmaltu/ Deba': 'Yamaltu/Deba' },
  Katsina: { Malufashi: 'Malumfashi' },
  Yobe: { Karasawa: 'Karasuwa' },
};

/** Other spellings in common use (official renames, local spellings), by state: canonical -> aliases. */
const LGA_ALIASES: Record<string, Record<string, readonly string[]>> = {
  Adamawa: { Girei: ['Gire'] },
  Borno: { Maiduguri: ['Maiduguri Metropolitan', 'Maiduguri MC', 'MMC'] },
  FCT: { 'Abuja Municipal': ['AMAC', 'Abuja Municipal Area Council', 'Municipal Area Council', 'Municipal'] },
  Kogi: { Kogi: ['Kogi/Koton Karfe', 'Koton Karfe', 'Kogi KK'], 'Mopa Moro': ['Mopa-Muro', 'Mopamuro'] },
  Lagos: { Somolu: ['Shomolu'] },
  Ogun: { 'Egbado North': ['Yewa North'], 'Egbado South': ['Yewa South'], Sagamu: ['Shagamu'], 'Ogun Water Side': ['Ogun Waterside'] },
  Plateau: { 'Barikin Ladi': ['Barkin Ladi'] },
  Kano: { Danbata: ['Dambatta'], 'Garun Malam': ['Garun Mallam'] },
  Jigawa: { 'Kirika Samma': ['Kiri Kasama', 'Kiri Kasamma'] },
  Niger: { Edatti: ['Edati'] },
  Sokoto: { Wamakko: ['Wamako'] },
  Kebbi: { 'Wasagu/Danko': ['Danko/Wasagu', 'Danko Wasagu'] },
  Rivers: { 'Opobo/Nekoro': ['Opobo/Nkoro'] },
};

/** Tidies a seed spelling: one space between words, "Ika - South" -> "Ika South", "JEMA'A" -> "Jema'a". */
function tidy(raw: string): string {
  const spaced = raw
    .replace(/\([^)]*\)/g, '')
    .replace(/\s*\/\s*/g, '/')
    .replace(/\s*-\s*/g, '-')
    .replace(/\s+/g, ' ')
    .trim();
  // A hyphen before a compass word separates a direction ("Idemili-south"), not a compound name.
  const directions = spaced.replace(/-(?=(north|south|east|west|central)\b)/gi, ' ');
  return directions
    .toLowerCase()
    .replace(/(^|[\s/-])([a-z])/g, (_match, sep: string, letter: string) => sep + letter.toUpperCase());
}

interface StateEntry {
  name: string;
  lgas: readonly string[];
  lgaByKey: ReadonlyMap<string, string>;
}

function buildIndex(): { states: Map<string, StateEntry>; stateByKey: Map<string, string> } {
  const grouped = new Map<string, string[]>();
  for (const row of seed as SeedRow[]) {
    const state = STATE_NAMES[row.STATE] ?? row.STATE;
    const lga = LGA_NAMES[state]?.[row.LGA] ?? tidy(row.LGA);
    const list = grouped.get(state) ?? [];
    list.push(lga);
    grouped.set(state, list);
  }
  const states = new Map<string, StateEntry>();
  const stateByKey = new Map<string, string>();
  for (const [state, lgas] of grouped) {
    const lgaByKey = new Map<string, string>();
    for (const lga of lgas) lgaByKey.set(keyOf(lga), lga);
    // Seed spellings still resolve after a rename ("Gire 1", "S/birni").
    for (const [seedName, canonical] of Object.entries(LGA_NAMES[state] ?? {})) {
      if (!lgaByKey.has(keyOf(seedName))) lgaByKey.set(keyOf(seedName), canonical);
    }
    for (const [canonical, aliases] of Object.entries(LGA_ALIASES[state] ?? {})) {
      const target = lgaByKey.get(keyOf(canonical));
      if (!target) continue;
      for (const alias of aliases) if (!lgaByKey.has(keyOf(alias))) lgaByKey.set(keyOf(alias), target);
    }
    states.set(state, { name: state, lgas: [...lgas].sort((a, b) => a.localeCompare(b)), lgaByKey });
    stateByKey.set(keyOf(state), state);
    for (const alias of STATE_ALIASES[state] ?? []) stateByKey.set(keyOf(alias), state);
  }
  return { states, stateByKey };
}

const { states, stateByKey } = buildIndex();

/** The canonical names of the 36 states and FCT, sorted. */
export const STATES: readonly string[] = [...states.keys()].sort((a, b) => a.localeCompare(b));

/** The canonical state name for an input ("lagos", "Lagos State", "Abuja", "Fct"), or undefined. */
export function resolveState(input: string): string | undefined {
  const key = keyOf(input.replace(/\bstate\s*$/i, ''));
  return stateByKey.get(key) ?? stateByKey.get(keyOf(input));
}

/** The canonical LGA name within a state (the state itself in any accepted spelling), or undefined. */
export function resolveLga(state: string, input: string): string | undefined {
  const canonicalState = resolveState(state);
  if (!canonicalState) return undefined;
  const entry = states.get(canonicalState)!;
  return entry.lgaByKey.get(keyOf(input)) ?? entry.lgaByKey.get(keyOf(input.replace(/\b(lga|local government( area)?)\s*$/i, '')));
}

/** Both canonical names, or undefined when the state is unknown or the LGA is not in it. */
export function resolveLocation(state: string, lga: string): Location | undefined {
  const canonicalState = resolveState(state);
  if (!canonicalState) return undefined;
  const canonicalLga = resolveLga(canonicalState, lga);
  return canonicalLga ? { state: canonicalState, lga: canonicalLga } : undefined;
}

/** The canonical LGA names of a state, sorted; empty for an unknown state. */
export function lgasOf(state: string): readonly string[] {
  const canonicalState = resolveState(state);
  return canonicalState ? states.get(canonicalState)!.lgas : [];
}
