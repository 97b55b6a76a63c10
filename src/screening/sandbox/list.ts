import type { IndexedEntity, ListEntity } from '../entity.js';

/**
 * The built-in sandbox watchlist test mode screens against (docs/screening.md, "Test mode"): a
 * dozen fictional persons and organizations, never the operator's real lists. Any likeness of
 * a name to a real person or company is accidental; none of them is on any real list.
 */
export const SANDBOX_SOURCE = 'sandbox';
export const SANDBOX_VERSION = 1;

const person = (entity: Omit<ListEntity, 'schema' | 'identifiers'> & { identifiers?: string[] }): ListEntity => ({ schema: 'Person', identifiers: [], ...entity });
const organization = (entity: Omit<ListEntity, 'schema' | 'identifiers' | 'birthDates'> & { identifiers?: string[] }): ListEntity => ({
  schema: 'Organization',
  identifiers: [],
  birthDates: [],
  ...entity,
});

const ENTRIES: readonly ListEntity[] = [
  person({
    id: 'SBX-P-001',
    name: 'Musa Adamu Karfe',
    aliases: ['Alhaji Musa Karfe', 'Musa Karfeh'],
    birthDates: ['1968-04-12'],
    nationalities: ['NG'],
    gender: 'male',
    topics: ['sanction'],
    programs: ['SANDBOX-TERRORISM'],
    notes: 'Fictional: the sandbox sanctioned person.',
  }),
  person({
    id: 'SBX-P-002',
    name: 'Folasade Temitope Adeyinka-Bright',
    aliases: ['Folasade Adeyinka-Bright', 'Sade Bright'],
    birthDates: ['1971-09-30'],
    nationalities: ['NG'],
    gender: 'female',
    topics: ['role.pep', 'pep'],
    programs: [],
    notes: 'Fictional: Honourable Minister of Sandbox Affairs.',
  }),
  organization({
    id: 'SBX-O-001',
    name: 'Karfe Petroleum Trading Limited',
    aliases: ['KPT Limited', 'Karfe Petroleum'],
    nationalities: ['NG'],
    topics: ['sanction'],
    programs: ['SANDBOX-TERRORISM'],
    identifiers: ['RC 0000001'],
    notes: 'Fictional: the sandbox sanctioned organization.',
  }),
  person({
    id: 'SBX-P-003',
    name: 'Ifeanyi Okwudili Nwachukwu-Tarsus',
    aliases: ['Ifeanyi Tarsus'],
    birthDates: ['1980'],
    nationalities: ['NG'],
    gender: 'male',
    topics: ['sanction', 'crime'],
    programs: ['SANDBOX-FRAUD'],
  }),
  person({
    id: 'SBX-P-004',
    name: 'Babajide Olumide Farinre',
    aliases: [],
    birthDates: ['1959-01-17'],
    nationalities: ['NG'],
    gender: 'male',
    topics: ['pep'],
    programs: [],
    notes: 'Fictional: former Governor of Sandbox State.',
  }),
  person({
    id: 'SBX-P-005',
    name: 'Viktor Stanislav Oberlander',
    aliases: ['Viktor Oberlaender'],
    birthDates: ['1962-11-02'],
    nationalities: ['DE'],
    gender: 'male',
    topics: ['sanction'],
    programs: ['SANDBOX-PROLIFERATION'],
  }),
  organization({
    id: 'SBX-O-002',
    name: 'Northern Star Bureau de Change Limited',
    aliases: ['Northern Star BDC'],
    nationalities: ['NG'],
    topics: ['sanction'],
    programs: ['SANDBOX-FRAUD'],
  }),
  organization({
    id: 'SBX-O-003',
    name: 'Lagoon Coast Shipping Company',
    aliases: ['Lagoon Coast Shipping'],
    nationalities: ['NG', 'GH'],
    topics: ['debarment'],
    programs: [],
  }),
  person({
    id: 'SBX-P-006',
    name: 'Zainab Halima Gwarzo',
    aliases: ['Hajiya Zainab Gwarzo'],
    birthDates: ['1975'],
    nationalities: ['NG'],
    gender: 'female',
    topics: ['pep'],
    programs: [],
    notes: 'Fictional: Senator for Sandbox Central.',
  }),
  person({
    id: 'SBX-P-007',
    name: 'Emeka Chukwudi Obiorah',
    aliases: ['Emeka Obiora'],
    birthDates: ['1983-06-21'],
    nationalities: ['NG'],
    gender: 'male',
    topics: ['sanction'],
    programs: ['SANDBOX-CYBER'],
  }),
  organization({
    id: 'SBX-O-004',
    name: 'Sahel Relief Foundation International',
    aliases: ['SRFI'],
    nationalities: ['NE', 'NG'],
    topics: ['sanction'],
    programs: ['SANDBOX-TERRORISM'],
  }),
  person({
    id: 'SBX-P-008',
    name: 'Hadiza Bello Tambuwal-Kano',
    aliases: [],
    birthDates: ['1977-03-08'],
    nationalities: ['NG'],
    gender: 'female',
    topics: ['crime'],
    programs: [],
  }),
];

/** The sandbox list's entities, as the index holds them. */
export const SANDBOX_ENTITIES: readonly IndexedEntity[] = ENTRIES.map((entity) => ({ ...entity, source: SANDBOX_SOURCE, listVersion: SANDBOX_VERSION }));

/**
 * The fixed test subjects (docs/screening.md, `vouch test-identities --json`): what each is
 * screened as in test mode, and what it finds.
 */
export const SANDBOX_TEST_SUBJECTS = [
  { subject: { type: 'person', name: 'Musa Adamu Karfe', dob: '1968-04-12' }, finds: 'a sanctions hit (SBX-P-001, topic sanction)' },
  { subject: { type: 'person', name: 'Folasade Adeyinka-Bright' }, finds: 'a PEP hit (SBX-P-002, topic pep)' },
  { subject: { type: 'organization', name: 'Karfe Petroleum Trading Limited' }, finds: 'an organization sanctions hit (SBX-O-001)' },
  { subject: { type: 'person', name: 'Sandbox Clear Person' }, finds: 'no hit (status clear)' },
] as const;
