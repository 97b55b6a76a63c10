/**
 * The shapes the screening room's parts agree on (issue 51): what a watchlist entry is once a
 * list file of any format has been read, and what is screened against it.
 *
 * - formats/  read a list file of one format into ListEntity values (ListFormatError names the line)
 * - matching/ ScreeningIndex: candidates and scores for a ScreeningSubject over IndexedEntity values
 * - lists/    sources, versions (stored, diffed, swapped atomically), sync, the in-memory index
 * - the API   screenings, hits and their review, monitoring, the `screening.match` webhook
 */

export type EntitySchema = 'Person' | 'Organization';

/** One entry of a watchlist, whatever file format it came from. */
export interface ListEntity {
  /** The list's own identifier: UN REFERENCE_NUMBER, OFAC uid / ent_num, UK Unique ID, EU logicalId, FtM id, csv id. */
  id: string;
  schema: EntitySchema;
  /** The primary name, as the list writes it (order kept; no title stripping here). */
  name: string;
  /** Every other name: a.k.a.s, f.k.a.s, names in other scripts, spelling variants. Distinct from `name`. */
  aliases: string[];
  /** 'YYYY', 'YYYY-MM' or 'YYYY-MM-DD'; a range given by a list ("1960 to 1965") is written as its years. */
  birthDates: string[];
  /** ISO 3166-1 alpha-2, upper case (NG, GB); country names in a list are mapped, unmappable ones dropped. */
  nationalities: string[];
  gender?: 'male' | 'female';
  /** FtM-style topics: 'sanction', 'pep', 'crime', 'debarment', 'poi', ... */
  topics: string[];
  /** Sanctions programmes or list names the entry is under (OFAC SDGT, UN 'QDi', EU regime, ...). */
  programs: string[];
  /** Passport, national ID and registration numbers as written, for the identifier qualifier. */
  identifiers: string[];
  /** The list's remarks, kept short (≤ 1,000 characters). */
  notes?: string;
}

/** A list entry as the index holds it: which source and which of its versions it came from. */
export interface IndexedEntity extends ListEntity {
  source: string;
  listVersion: number;
}

/** What is screened: a person or an organization, with what the customer knows of them. */
export interface ScreeningSubject {
  type: 'person' | 'organization';
  /** The primary name first, then aliases. */
  names: string[];
  /** 'YYYY' or 'YYYY-MM-DD'. */
  birthDate?: string;
  gender?: 'male' | 'female';
  /** ISO 3166-1 alpha-2, upper case. */
  nationality?: string;
  identifiers?: string[];
}

/** One entity the subject matched, at or above the threshold asked for. */
export interface EntityMatch {
  entity: IndexedEntity;
  /** 0–1, after the qualifiers. */
  score: number;
  /** The entity's name or alias that matched best. */
  matchedName: string;
  /** For a compliance officer: which names aligned and how, and what raised or lowered the score. */
  explanation: string;
}
