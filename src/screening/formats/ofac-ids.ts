/**
 * Which of OFAC's identification types are numbers a person or company can be told by (for the
 * identifier qualifier), shared by the XML idList and the CSV Remarks. The others OFAC writes in
 * the same place (websites, e-mail, "Additional Sanctions Information -", directives, vessel
 * details, digital currency addresses) are not identifiers of the subject.
 */
export const OFAC_IDENTIFIER_TYPES = [
  'Passport',
  'Diplomatic Passport',
  'National ID No.',
  'National Foreign ID Number',
  'Identification Number',
  'Personal ID Card',
  'Cedula No.',
  'NIT #',
  'RUC #',
  'RIF #',
  'R.F.C.',
  'RFC',
  'C.U.R.P.',
  'CURP #',
  'D.N.I.',
  'SSN',
  'Tax ID No.',
  'V.A.T. Number',
  'Registration ID',
  'Registration Number',
  'Public Registration Number',
  'Business Registration Number',
  'Business Registration Document #',
  'Company Number',
  'UK Company Number',
  'Commercial Registry Number',
  'C.R. No.',
  'Trade License No.',
  'Government Gazette Number',
  'Legal Entity Number',
  'Unified Social Credit Code (USCC)',
  'SWIFT/BIC',
  'BIK (RU)',
  'D-U-N-S Number',
  'Matricula Mercantil No',
  'Folio Mercantil No.',
  "Driver's License No.",
  'Electoral Registry No.',
  'Credencial electoral',
  'Residency Number',
  'Birth Certificate Number',
  'Refugee ID Card',
  'Stateless Person ID Card',
  'Kenyan ID No.',
  'Bosnian Personal ID No.',
  'License',
] as const;

const TYPES = new Set<string>(OFAC_IDENTIFIER_TYPES.map((type) => type.toLowerCase()));

export function isOfacIdentifierType(type: string): boolean {
  return TYPES.has(type.trim().toLowerCase());
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** "alt. Passport A123 (Nigeria) expires 2020" → type, number. Longest types first so "Diplomatic Passport" wins over "Passport". */
export const OFAC_IDENTIFIER_REMARK = new RegExp(
  `^(?:alt\\.\\s+)?(${[...OFAC_IDENTIFIER_TYPES].sort((a, b) => b.length - a.length).map(escape).join('|')})\\s+(.+)$`,
  'i',
);

const NUMBER_TAIL = /\s+(?:\(|issued\b|expires\b|Issue Date\b|Expire Date\b).*$/i;

/** The number of an identifier remark's value: what comes before " (Country)", " issued ...", " expires ...". */
export function identifierNumber(value: string): string {
  return value.replace(NUMBER_TAIL, '').trim();
}
