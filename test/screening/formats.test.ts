import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  companionFiles,
  describeFormat,
  LIST_FORMATS,
  ListFormatError,
  parseList,
  parseListDetailed,
  readListFile,
  type ListFiles,
  type ListFormat,
} from '../../src/screening/formats/index.js';
import { personName } from '../../src/screening/formats/ofac-csv.js';
import { countryCode, normalizeDate } from '../../src/screening/formats/values.js';

/**
 * Reading watchlist files (src/screening/formats), on the small hand-written files under
 * test/fixtures/screening/ (fictional entries, after each format's published layout): every
 * format's good file field by field, and every way a file is refused (a bad line named, a
 * truncated file, the wrong format, an empty file). The real lists of the data kit are read in
 * formats-kit.test.ts.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FIXTURES = path.join(ROOT, 'test/fixtures/screening');

const bytes = (name: string) => readFile(path.join(FIXTURES, name));
const text = async (name: string) => (await bytes(name)).toString('utf8');

async function ofacTrio(sdn?: Buffer, alt?: Buffer, add?: Buffer): Promise<ListFiles> {
  return {
    main: sdn ?? (await bytes('ofac/sdn.csv')),
    companions: { 'alt.csv': alt ?? (await bytes('ofac/alt.csv')), 'add.csv': add ?? (await bytes('ofac/add.csv')) },
  };
}

/** The error a refused parse throws, checked to be a ListFormatError. */
async function refusal(format: ListFormat, files: ListFiles | Buffer | string): Promise<ListFormatError> {
  const input = typeof files === 'string' ? { main: Buffer.from(files) } : Buffer.isBuffer(files) ? { main: files } : files;
  const err = await parseList(format, input).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, `${format} should refuse the file`).toBeInstanceOf(ListFormatError);
  return err as ListFormatError;
}

/** The 1-based line of the first occurrence of `needle`. */
function lineOf(content: string, needle: string): number {
  const at = content.indexOf(needle);
  if (at < 0) throw new Error(`${needle} is not in the fixture`);
  return content.slice(0, at).split('\n').length;
}

/** The first 60 % of the bytes: a download cut short. */
const cut = (buffer: Buffer, fraction = 0.6) => buffer.subarray(0, Math.floor(buffer.length * fraction));

describe('list formats', () => {
  it('names seven formats, each with a line for the CLI, and ofac-csv alone has companions', () => {
    expect(LIST_FORMATS).toEqual(['un-xml', 'ofac-xml', 'ofac-csv', 'uk-csv', 'eu-xml', 'ftm', 'csv']);
    for (const format of LIST_FORMATS) expect(describeFormat(format)).toMatch(/\w/);
    expect(companionFiles('ofac-csv')).toEqual(['alt.csv', 'add.csv']);
    for (const format of LIST_FORMATS.filter((f) => f !== 'ofac-csv')) expect(companionFiles(format)).toEqual([]);
  });

  it('refuses an unknown format', async () => {
    await expect(parseList('xls' as ListFormat, { main: Buffer.from('x') })).rejects.toThrow(/unknown list format "xls"/);
  });

  it('refuses an empty file in every format, and a file of blanks', async () => {
    for (const format of LIST_FORMATS) {
      const files = format === 'ofac-csv' ? await ofacTrio(Buffer.alloc(0)) : { main: Buffer.alloc(0) };
      expect((await refusal(format, files)).message, format).toMatch(/empty/);
      const blanks = format === 'ofac-csv' ? await ofacTrio(Buffer.from('\r\n \n')) : { main: Buffer.from('\r\n \n') };
      expect((await refusal(format, blanks)).message, format).toMatch(/empty/);
    }
  });

  it('refuses a file of another format, saying which format was expected', async () => {
    const wrong: Record<ListFormat, { file: ListFiles; expected: RegExp }> = {
      'un-xml': { file: { main: await bytes('eu/eu-sanctions.xml') }, expected: /line 3: expected a UN Security Council consolidated list \(un-xml\) \(root element <CONSOLIDATED_LIST>\), found <export>/ },
      'ofac-xml': { file: { main: await bytes('un/consolidated.xml') }, expected: /expected OFAC's sdnList XML \(ofac-xml\)/ },
      'ofac-csv': { file: await ofacTrio(await bytes('csv/vouch-list.csv')), expected: /line 1: expected OFAC's sdn\.csv \(ofac-csv\): 12 fields/ },
      'uk-csv': { file: { main: await bytes('csv/vouch-list.csv') }, expected: /line 1: expected the UK Sanctions List CSV \(uk-csv\)/ },
      'eu-xml': { file: { main: await bytes('ofac-xml/sdn.xml') }, expected: /expected the EU financial sanctions file \(eu-xml\)/ },
      ftm: { file: { main: await bytes('csv/vouch-list.csv') }, expected: /line 1: expected FollowTheMoney JSON lines \(ftm\)/ },
      csv: { file: { main: await bytes('uk/uk-sanctions-list.csv') }, expected: /line 1: expected Vouch's list CSV \(csv\)/ },
    };
    for (const format of LIST_FORMATS) {
      expect((await refusal(format, wrong[format].file)).message, format).toMatch(wrong[format].expected);
    }
    // Not XML at all, for the XML formats.
    expect((await refusal('un-xml', await bytes('csv/vouch-list.csv'))).message).toMatch(/^line \d+: not a UN Security Council consolidated list \(un-xml\): text data outside of root node/);
    expect((await refusal('eu-xml', '{"id": 1}\n')).message).toMatch(/eu-xml/);
  });
});

describe('un-xml', () => {
  it('reads persons and organizations: names joined, aliases, every kind of birth date, nationality, documents', async () => {
    const entities = await parseList('un-xml', { main: await bytes('un/consolidated.xml') });
    expect(entities).toEqual([
      {
        id: 'QDi.901',
        schema: 'Person',
        name: 'ABUBAKAR MUHAMMAD TESTAWA',
        // the Low-quality alias differs from the name only in case; the empty alias is skipped
        aliases: ['أبو بكر محمد', 'Abu Bakr Testawa'],
        birthDates: ['1973', '1975', '1976', '1977', '1974-02-03'],
        // "former Soviet Union" has no ISO code: dropped
        nationalities: ['NG'],
        gender: 'male',
        topics: ['sanction'],
        programs: ['Al-Qaida'],
        identifiers: ['A0000901'],
        notes: "Fictional entry written for Vouch's tests.",
      },
      { id: 'QDe.902', schema: 'Organization', name: 'TEST RELIEF FOUNDATION', aliases: ['TRF'], birthDates: [], nationalities: [], topics: ['sanction'], programs: ['Al-Qaida'], identifiers: [] },
    ]);
  });

  it('names the line of a tag that does not close, refuses a truncated file, a repeated id and a list without entries', async () => {
    const good = await text('un/consolidated.xml');
    const broken = good.replace('</SECOND_NAME>', '</SECOND_NAMES>');
    expect((await refusal('un-xml', broken)).line).toBe(lineOf(good, '</SECOND_NAME>'));

    const truncated = await refusal('un-xml', cut(Buffer.from(good)));
    expect(truncated.message).toMatch(/^line \d+: the file ends inside <\w+>, before <\/CONSOLIDATED_LIST>: it is truncated$/);

    const twice = good.replace('QDe.902', 'QDi.901');
    const repeated = await refusal('un-xml', twice);
    expect(repeated.message).toMatch(/REFERENCE_NUMBER QDi\.901 appears twice/);
    expect(repeated.line).toBe(lineOf(good, '<ENTITY>'));

    expect((await refusal('un-xml', '<CONSOLIDATED_LIST><INDIVIDUALS/><ENTITIES/></CONSOLIDATED_LIST>')).message).toMatch(/no UN list entities/);
  });
});

describe('ofac-xml', () => {
  it('reads individuals and entities, skips and counts vessels, keeps only identification numbers', async () => {
    const parsed = await parseListDetailed('ofac-xml', { main: await bytes('ofac-xml/sdn.xml') });
    expect(parsed.skipped).toEqual({ vessel: 1 });
    expect(parsed.entities).toEqual([
      {
        id: '90001',
        schema: 'Person',
        name: 'Musa Abubakar TESTUWA',
        aliases: ['Moussa TESTOUA', 'ABU TEST'],
        birthDates: ['1960-01-12', '1961', '1963', '1964'],
        // nationality and citizenship; a person's address country is not a nationality
        nationalities: ['NG', 'NE'],
        gender: 'male',
        topics: ['sanction'],
        programs: ['SDGT', 'NIGERIA-EO13566'],
        identifiers: ['A09000100'],
        notes: "Fictional entry written for Vouch's tests.",
      },
      {
        id: '90002',
        schema: 'Organization',
        name: 'TEST OIL AND GAS NIGERIA LIMITED',
        aliases: ['TEST OIL NIG LTD'],
        birthDates: [],
        nationalities: ['NG'],
        topics: ['sanction'],
        programs: ['IRAN'],
        identifiers: ['RC 900002'],
      },
    ]);
  });

  it('names the line of an unknown sdnType and of a broken tag; refuses a truncated file and one of vessels only', async () => {
    const good = await text('ofac-xml/sdn.xml');
    const unknown = await refusal('ofac-xml', good.replace('<sdnType>Entity</sdnType>', '<sdnType>Company</sdnType>'));
    expect(unknown.message).toMatch(/uid 90002: sdnType "Company" is not Individual, Entity, Vessel or Aircraft/);
    expect(unknown.line).toBe(lineOf(good, '<uid>90002</uid>') - 1);

    expect((await refusal('ofac-xml', good.replace('<remarks>', '<remarks attr=>'))).line).toBe(lineOf(good, '<remarks>'));
    expect((await refusal('ofac-xml', cut(Buffer.from(good)))).message).toMatch(/it is truncated$/);

    const vesselsOnly = good.replace(/<sdnEntry>\s*<uid>9000[12]<\/uid>[\s\S]*?<\/sdnEntry>/g, '');
    expect((await refusal('ofac-xml', vesselsOnly)).message).toBe('the file holds no person or organization entities (only 1 vessel, which are not screened)');
  });
});

describe('ofac-csv', () => {
  it('joins the trio: names reordered, aliases, Remarks read, programs split, vessels skipped', async () => {
    const parsed = await parseListDetailed('ofac-csv', await ofacTrio());
    expect(parsed.skipped).toEqual({ vessel: 1 });
    const [person, organization] = parsed.entities;
    expect(person).toEqual({
      id: '9001',
      schema: 'Person',
      name: 'Abubakar Musa TESTUDEEN',
      aliases: ['TESTUDEEN, Abubakar Musa', 'Abubakar TESTUDDIN', 'TESTUDDIN, Abubakar', 'ABU TEST'],
      birthDates: ['1960-01-12', '1962'],
      nationalities: ['NG', 'NE'],
      gender: 'male',
      topics: ['sanction'],
      programs: ['SDGT', 'NIGERIA-EO13566'],
      identifiers: ['A12345678', '12345678901'],
      notes: expect.stringMatching(/^DOB 12 Jan 1960; alt\. DOB circa 1962;/),
    });
    // An organization's address country (add.csv) is its country.
    expect(organization).toMatchObject({ id: '9002', schema: 'Organization', name: 'TEST AGRO VENTURES LIMITED', aliases: ['TEST AGRO NIGERIA LTD'], nationalities: ['NG'], identifiers: ['RC 654321'] });
  });

  it('reads the companions beside the file, and refuses sdn.csv without them', async () => {
    const entities = await readListFile('ofac-csv', path.join(FIXTURES, 'ofac/sdn.csv'));
    expect(entities.map((e) => e.id)).toEqual(['9001', '9002']);
    await expect(readListFile('ofac-csv', path.join(FIXTURES, 'ofac-alone/sdn.csv'))).rejects.toThrow(/^sdn\.csv needs alt\.csv beside it: .*ofac-alone\/alt\.csv does not exist$/);
    await expect(parseList('ofac-csv', { main: await bytes('ofac/sdn.csv'), companions: { 'alt.csv': await bytes('ofac/alt.csv') } })).rejects.toThrow(/ofac-csv needs add\.csv beside sdn\.csv/);
  });

  it('appends sdn_comments.csv to the Remarks it continues', async () => {
    const files = await ofacTrio();
    files.companions!['sdn_comments.csv'] = Buffer.from('9002,"; Passport B7654321 (Nigeria)."\r\n\x1a');
    const [, organization] = await parseList('ofac-csv', files);
    expect(organization!.identifiers).toEqual(['RC 654321', 'B7654321']);
  });

  it('names the file and line of a short row, and refuses a file cut mid-row', async () => {
    const alt = Buffer.from('9001,90011,"aka","TESTUDDIN, Abubakar",-0- \r\n9002,90021,"fka"\r\n');
    const short = await refusal('ofac-csv', await ofacTrio(undefined, alt));
    expect(short.message).toBe('alt.csv line 2: 3 fields where alt.csv has 5: the row is cut short or malformed');
    expect(short.line).toBe(2);

    const sdn = await bytes('ofac/sdn.csv');
    const truncated = await refusal('ofac-csv', await ofacTrio(cut(sdn)));
    expect(truncated.message).toMatch(/^line \d: /);
    // Cut at the end of the last row's last field: every field is there, but no line break.
    const add = await bytes('ofac/add.csv');
    const noBreak = await refusal('ofac-csv', await ofacTrio(undefined, undefined, add.subarray(0, add.lastIndexOf('\r'))));
    expect(noBreak.message).toBe('add.csv line 2: the file ends in the middle of a row (no line break after it): it is truncated');
    // Cut inside a quoted field.
    const sdnCut = sdn.subarray(0, sdn.indexOf('Registration Number'));
    expect((await refusal('ofac-csv', await ofacTrio(sdnCut))).message).toBe('line 2: a quoted field is never closed: the file is truncated or not CSV');
  });

  it('refuses a repeated ent_num and an unknown SDN_Type, naming the line', async () => {
    const sdn = (await text('ofac/sdn.csv')).replace('9002,', '9001,');
    expect((await refusal('ofac-csv', await ofacTrio(Buffer.from(sdn)))).message).toBe('line 2: ent_num 9001 appears twice');
    const type = (await text('ofac/sdn.csv')).replace('vessel', 'ship');
    expect((await refusal('ofac-csv', await ofacTrio(Buffer.from(type)))).message).toMatch(/^line 3: SDN_Type "ship"/);
  });

  it('writes "LAST, First" as "First LAST"', () => {
    expect(personName('ABU BAKR, Ahmad')).toBe('Ahmad ABU BAKR');
    expect(personName('MADURO MOROS, Nicolas')).toBe('Nicolas MADURO MOROS');
    expect(personName('HAMAS')).toBe('HAMAS');
  });
});

describe('uk-csv', () => {
  it('merges the rows of one Unique ID: primary name, variations and aliases, numbered values, skipped ships', async () => {
    const parsed = await parseListDetailed('uk-csv', { main: await bytes('uk/uk-sanctions-list.csv') });
    expect(parsed.skipped).toEqual({ ship: 1 });
    expect(parsed.entities).toEqual([
      {
        id: 'RUS9001',
        schema: 'Person',
        name: 'Pyotr Sergeyevich TESTOV',
        aliases: ['Пётр Сергеевич Тестов', 'Petr TESTOFF'],
        birthDates: ['1960-01-12', '1961'],
        nationalities: ['RU', 'UA'],
        gender: 'male',
        topics: ['sanction'],
        programs: ['The Russia (Sanctions) (EU Exit) Regulations 2019'],
        identifiers: ['753123456', '12AB3456'],
        notes: "Fictional entry written for Vouch's tests. Second line, with a comma.",
      },
      {
        // its alias row comes before its primary-name row
        id: 'AQD9002',
        schema: 'Organization',
        name: 'OKONKWO-TEST GENERAL MERCHANTS LIMITED',
        aliases: ['ALIAS FIRST TRADING'],
        birthDates: [],
        nationalities: ['NG'],
        topics: ['sanction'],
        programs: ["The ISIL (Da'esh) and Al-Qaida (United Nations Sanctions) (EU Exit) Regulations 2019"],
        identifiers: ['RC 123456'],
      },
    ]);
  });

  it('names the line of a bad row and refuses a truncated file and one without the columns it reads', async () => {
    const good = await text('uk/uk-sanctions-list.csv');
    const vessel = good.replace(',Ship,', ',Vessel,');
    const bad = await refusal('uk-csv', vessel);
    expect(bad.message).toMatch(/^line 9: Designation Type "Vessel" is not Individual, Entity or Ship$/);

    const truncated = await refusal('uk-csv', cut(Buffer.from(good), 0.5));
    expect(truncated.message).toMatch(/^line \d+: (\d+ fields where the header has 58|a quoted field is never closed)/);

    const noRegime = good.replace('Regime Name', 'Regime');
    expect((await refusal('uk-csv', noRegime)).message).toBe(
      'line 2: expected the UK Sanctions List CSV (uk-csv): a header with Unique ID, Name 6, Name 1, Name 2, Name 3, Name 4, Name 5, Name type, Designation Type, Regime Name; missing Regime Name',
    );
    expect((await refusal('uk-csv', 'Report Date: 14-Mar-2024\r\n')).message).toMatch(/no header row/);
    const headerOnly = good.split('\r\n').slice(0, 2).join('\r\n');
    expect((await refusal('uk-csv', headerOnly)).message).toMatch(/no individual or entity entities/);
  });
});

describe('eu-xml', () => {
  it('reads subjects: the first name alias is the name, birth dates of three kinds, citizenship, ids, programmes, remarks', async () => {
    const entities = await parseList('eu-xml', { main: await bytes('eu/eu-sanctions.xml') });
    expect(entities).toEqual([
      {
        id: '900101',
        schema: 'Person',
        name: 'Ivan Petrovich Testenko',
        aliases: ['Иван Петрович Тестенко', 'Ivan Testenko'],
        birthDates: ['1960-01-12', '1961'],
        nationalities: ['RU'],
        gender: 'male',
        topics: ['sanction'],
        programs: ['UKR'],
        identifiers: ['7512345678'],
        // the subject's remark, not its name's
        notes: "Fictional entry written for Vouch's tests & nothing else.",
      },
      { id: '900202', schema: 'Organization', name: 'Lagos Test Shipping Company Limited', aliases: ['LTSC Ltd'], birthDates: [], nationalities: ['NG'], topics: ['sanction'], programs: ['RUS'], identifiers: [] },
      { id: '900303', schema: 'Person', name: 'Amina Testbello', aliases: [], birthDates: ['1970', '1971', '1972'], nationalities: [], gender: 'female', topics: ['sanction'], programs: ['SYR'], identifiers: [] },
    ]);
  });

  it('names the line of a broken element, refuses a truncated file, a repeated logicalId and another namespace', async () => {
    const good = await text('eu/eu-sanctions.xml');
    const broken = good.replace('<subjectType code="enterprise"', '<subjectType code="enterprise');
    expect((await refusal('eu-xml', broken)).line).toBe(lineOf(good, '<subjectType code="enterprise"'));
    expect((await refusal('eu-xml', cut(Buffer.from(good)))).message).toMatch(/it is truncated$/);
    const repeated = await refusal('eu-xml', good.replace('logicalId="900303"', 'logicalId="900101"'));
    expect(repeated.message).toMatch(/logicalId 900101 appears twice/);
    expect(repeated.line).toBe(lineOf(good, 'logicalId="900303"'));
    expect((await refusal('eu-xml', good.replace('http://eu.europa.ec/fpi/fsd/export', 'urn:other'))).message).toMatch(/found namespace urn:other/);
  });
});

describe('ftm', () => {
  it('reads persons and companies, merges a repeated id, attaches sanction programmes, skips the rest', async () => {
    const parsed = await parseListDetailed('ftm', { main: await bytes('ftm/entities.ftm.jsonl') });
    expect(parsed.skipped).toEqual({ Sanction: 1, Address: 1 });
    expect(parsed.entities).toEqual([
      {
        id: 'vouch-test-p1',
        schema: 'Person',
        name: 'Ngozi Testwuike',
        // the last line (no newline after it) says more about the same id
        aliases: ['Нгози Тествуике', 'Ngozi T.', 'Madam Test', 'Ngozi Testmaiden'],
        birthDates: ['1970-05-06', '1971'],
        // "suhh" (the Soviet Union in FtM) is no ISO code
        nationalities: ['NG'],
        gender: 'female',
        topics: ['role.pep'],
        programs: [],
        identifiers: ['A00000001'],
        notes: "Fictional entry written for Vouch's tests",
      },
      {
        id: 'vouch-test-c1',
        schema: 'Organization',
        name: 'Test Petroleum Nigeria Limited',
        aliases: ['TPN Ltd'],
        birthDates: [],
        nationalities: ['NG'],
        topics: ['sanction'],
        // from the Sanction line before it
        programs: ['NG-TEST'],
        identifiers: ['RC 000001'],
      },
    ]);
  });

  it('names a line that is not JSON, refuses a last line cut short and a file of no screenable entities', async () => {
    const good = await text('ftm/entities.ftm.jsonl');
    const lines = good.split('\n');
    lines[3] = lines[3]!.replace('{"id"', '{id');
    const bad = await refusal('ftm', lines.join('\n'));
    expect(bad.line).toBe(4);
    expect(bad.message).toMatch(/^line 4: the line is not complete JSON/);

    const truncated = await refusal('ftm', good.slice(0, good.length - 20));
    expect(truncated.line).toBe(6);
    expect(truncated.message).toMatch(/truncated/);

    const noId = await refusal('ftm', '{"schema": "Person", "properties": {}}\n');
    expect(noId.message).toMatch(/^line 1: expected FollowTheMoney JSON lines \(ftm\): an entity has a string "id"/);

    const addresses = good.split('\n').filter((line) => line.includes('"Address"')).join('\n');
    expect((await refusal('ftm', addresses)).message).toBe('the file holds no Person, Company, Organization, LegalEntity or PublicBody entities (only 1 Address, which are not screened)');
  });
});

describe('csv (Vouch)', () => {
  it('reads the header, ;-separated values, trims names and drops repeated aliases', async () => {
    const entities = await parseList('csv', { main: await bytes('csv/vouch-list.csv') });
    expect(entities).toEqual([
      {
        id: 'NSL-001',
        schema: 'Person',
        name: 'Abubakar Testuddeen Musa',
        aliases: ['Abu Bakr Musa', 'Abubakar T. Musa'],
        birthDates: ['1975-03-21', '1976'],
        nationalities: ['NG'],
        topics: ['sanction'],
        programs: ['Nigeria Sanctions List'],
        identifiers: [],
        notes: "Fictional entry written for Vouch's tests, with a comma",
      },
      { id: 'NSL-002', schema: 'Organization', name: 'Testing Ventures Nigeria Limited', aliases: ['Testing Ventures Nig. Ltd'], birthDates: [], nationalities: ['NG'], topics: ['sanction', 'crime'], programs: ['Nigeria Sanctions List'], identifiers: [] },
      {
        id: 'PEP-001',
        schema: 'Person',
        name: 'Chief Folasade Testade-Bankole',
        aliases: ['Folasade Testade', 'Sade Bankole'],
        birthDates: ['1961'],
        nationalities: ['NG', 'GB'],
        topics: ['role.pep', 'pep'],
        programs: [],
        identifiers: [],
        notes: 'Former commissioner (fictional)',
      },
    ]);
  });

  it('refuses every bad value naming its line', async () => {
    const header = 'id,schema,name,aliases,birthDate,nationality,topics,program,notes';
    const row = (cells: string) => `${header}\nOK-1,Person,Good Person,,1970,NG,pep,,\n${cells}\n`;
    const cases: [string, string][] = [
      ['X-1,Company,Some Company,,,,,,', 'line 3: schema "Company" is not Person or Organization'],
      ['X-1,Person,Some Person,,1960-02-30,,,,', 'line 3: birthDate "1960-02-30" is not a date written YYYY or YYYY-MM-DD'],
      ['X-1,Person,Some Person,,12/01/1960,,,,', 'line 3: birthDate "12/01/1960" is not a date written YYYY or YYYY-MM-DD'],
      ['X-1,Person,Some Person,,1960-01,,,,', 'line 3: birthDate "1960-01" is not a date written YYYY or YYYY-MM-DD'],
      ['X-1,Person,Some Person,,,XX,,,', 'line 3: nationality "XX" is not an ISO 3166-1 alpha-2 country code'],
      ['X-1,Person,Some Person,,,Nigeria,,,', 'line 3: nationality "Nigeria" is not an ISO 3166-1 alpha-2 country code'],
      ['X-1,Person,Some Person,,,,Sanction List,,', 'line 3: topic "Sanction List" is not a lower-case word such as sanction, pep or crime'],
      [',Person,Some Person,,,,,,', 'line 3: id is empty'],
      ['X-1,Person,  ,,,,,,', 'line 3: name is empty'],
      ['OK-1,Person,Other Person,,,,,,', 'line 3: id "OK-1" is also on line 2'],
      ['X-1,Person,Some Person', 'line 3: 3 fields where the header has 9: the row is cut short or malformed'],
      ['X-1,Person,"Some Person,,,,,,', 'line 3: a quoted field is never closed: the file is truncated or not CSV'],
    ];
    for (const [cells, message] of cases) {
      const err = await refusal('csv', row(cells));
      expect(err.message, cells).toBe(message);
      expect(err.line, cells).toBe(3);
    }
  });

  it('counts blank lines and line breaks inside quotes when naming a line', async () => {
    const file = 'id,schema,name,aliases,birthDate,nationality,topics,program,notes\r\n\r\nA-1,Person,First Person,,,,,,"a note\r\non two lines"\r\n\r\n\r\nA-2,Person,Second Person,,1970-13-01,,,,\r\n';
    const err = await refusal('csv', file);
    expect(err.message).toBe('line 7: birthDate "1970-13-01" is not a date written YYYY or YYYY-MM-DD');
    const notes = 'id,schema,name,aliases,birthDate,nationality,topics,program,notes\n\nA-1,Person,First Person,,,,,,"a note\non two lines"\nA-1,Person,Again,,,,,,\n';
    expect((await refusal('csv', notes)).message).toBe('line 5: id "A-1" is also on line 3');
  });

  it('refuses a wrong or missing header, a header alone, and a truncated file; a whole last row needs no line break', async () => {
    expect((await refusal('csv', 'id,schema,name,aliases,birthDate,nationality,topics,program\n')).message).toMatch(/^line 1: expected Vouch's list CSV \(csv\), whose header is id,schema,name,aliases,birthDate,nationality,topics,program,notes/);
    expect((await refusal('csv', 'NSL-1,Person,Some Person,,,,,,\n')).line).toBe(1);
    expect((await refusal('csv', 'id,schema,name,aliases,birthDate,nationality,topics,program,notes\n')).message).toBe('the file holds no Person or Organization entities');
    const good = await bytes('csv/vouch-list.csv');
    expect((await refusal('csv', cut(good))).message).toMatch(/^line 3: /);
    const noFinalBreak = good.subarray(0, good.length - 1);
    expect((await parseList('csv', { main: noFinalBreak })).length).toBe(3);
  });
});

describe('values lists write their own way', () => {
  it('maps the country names lists use to ISO alpha-2', () => {
    expect(countryCode('Iran (Islamic Republic of)')).toBe('IR');
    expect(countryCode("Democratic People's Republic of Korea")).toBe('KP');
    expect(countryCode('Russian Federation')).toBe('RU');
    expect(countryCode('Syrian Arab Republic')).toBe('SY');
    expect(countryCode('Viet Nam')).toBe('VN');
    expect(countryCode('Nigeria')).toBe('NG');
    expect(countryCode('ng')).toBe('NG');
    expect(countryCode('Democratic Republic of the Congo')).toBe('CD');
    expect(countryCode('United Kingdom of Great Britain and Northern Ireland')).toBe('GB');
    expect(countryCode('Region: Gaza')).toBe('PS');
    expect(countryCode('former Soviet Union')).toBeUndefined();
    expect(countryCode('ZZ')).toBeUndefined();
  });

  it('writes dates of birth as YYYY, YYYY-MM or YYYY-MM-DD, and ranges as their years', () => {
    expect(normalizeDate('12 Jan 1960')).toEqual(['1960-01-12']);
    expect(normalizeDate('Jan 1960')).toEqual(['1960-01']);
    expect(normalizeDate('circa 1960')).toEqual(['1960']);
    expect(normalizeDate('1960 to 1962')).toEqual(['1960', '1961', '1962']);
    expect(normalizeDate('01 Jan 1953 to 31 Dec 1954')).toEqual(['1953', '1954']);
    expect(normalizeDate('12/01/1960')).toEqual(['1960-01-12']);
    expect(normalizeDate('00/00/1960')).toEqual(['1960']);
    expect(normalizeDate('1960-01-12')).toEqual(['1960-01-12']);
    expect(normalizeDate('1900 to 1990')).toEqual(['1900', '1990']);
    expect(normalizeDate('30 Feb 1960')).toEqual([]);
    expect(normalizeDate('unknown')).toEqual([]);
  });
});
