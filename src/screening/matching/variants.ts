/**
 * Name equivalences a Nigerian compliance officer knows: spellings of one Arabic-origin name
 * (Muhammad, Mohammed, Muhammadu, Mamman), Hausa and Fulani forms, and the Yoruba and Igbo
 * short forms, which follow a rule (a prefix such as Oluwa-, Ade-, Chukwu- dropped) rather than
 * a table. All keys are normalized tokens (lower case ASCII, no punctuation).
 */

/** One family per line, the canonical spelling first. Strength 0.95: a spelling of the same name. */
const FAMILIES = `
muhammad mohammed mohammad muhammed mohamed mohamad muhamad muhamed mouhamed mohammod muhammadu mamman mohd muhd mahammad
ahmad ahmed ahmadu amadu ahmet achmed ahamed
mahmud mahmoud mahmood mamuda mahmudu mohamud
abubakar abubakr abubaker abubakari abubakir aboubakar boubacar abubakre
abdullahi abdullah abdallah abdulahi abdoulaye abdalla abdulla abdallahi abdullaah
yusuf yusuph yusufu yousef yousuf youssef yussuf yusif yusof yussif
aisha aishat aishatu aishah ayesha aysha aicha ayisha aishatou
ibrahim ibrahima ibrahimu brahim ebrahim ibraheem ibrahem
usman uthman othman osman usmanu ousmane othmane uthmaan
umar omar umaru oumar umaro
sulaiman suleiman sulaimon sulayman suleman sulemana souleymane suleimanu sulaimanu
fatima fatimah fatimat fatsuma fatoumata fatuma fatimatu fadimatu fatma
hauwa hawa hawwa hauwau
aliyu ali aliu alliyu
musa mousa moussa musah mussa
ismail ismaila ismaeel ismael esmail ismaaila
yakubu yaqub yakub yaqoob yacoub yakoub yaakub yaqubu
haruna harun haroun haroon harouna
idris idrisu idriss edris idrissa
adamu adam
isa issa isah
ishaq ishaku isiaka isiaku ishak isiaq
yahaya yahya yahaye
zakari zakariya zakariyya zakaria zakariyau
dauda dawud daud dawood dawuda
nuhu nuh
hassan hasan hasanu
hussein husain hussain husseini usaini hosein hossein husaini hussaini
khadija khadijat kadijat hadiza khadijah
zainab zainabu zaynab zeinab
maryam mariam maryamu
amina aminat aminatu aminah
halima halimat halimatu halimah
mustapha mustafa moustapha mustafah
jibril jibrin jibrilla jubril jibreel
bashir bashiru basheer
nasiru nasir naseer
rasheed rashid rashidi
sadiq sadiku sadik saddiq
habib habibu habeeb
jamil jamilu jameel
kabiru kabir
tijani tijjani tidjani
khalid khaled
hamza hamzat hamzah
ilyas iliyasu ilyasu
saidu said saeed sayeed
`;

/**
 * Arabic and English forms of one scriptural name: the same name in origin, but in Lagos Musa and
 * Moses are usually different people, so the pair counts as a weak equivalence (0.7).
 */
const CROSS = `
musa moses
yusuf joseph
sulaiman solomon
hauwa eve
yakubu jacob
haruna aaron
ibrahim abraham
isa jesus
ishaq isaac
yahaya john
zakari zachariah zechariah
dauda david
nuhu noah
maryam mary
jibril gabriel
ismail ishmael
ilyas elijah elias
`;

/** Yoruba short forms that drop more than a prefix (Lanre from Olanrewaju). Strength 0.9. */
const IRREGULAR_SHORT = `
olanrewaju lanre
oluwadamilare dami
oluwafunmilayo funmi
`;

export const VARIANT_STRENGTH = 0.95;
export const SHORT_FORM_STRENGTH = 0.9;
export const CROSS_STRENGTH = 0.7;

interface Family {
  canon: string;
  strength: number;
}

const families = new Map<string, Family>();
const cross = new Map<string, Set<string>>();

function lines(text: string): string[][] {
  return text
    .trim()
    .split('\n')
    .map((line) => line.trim().split(/\s+/));
}

for (const words of lines(FAMILIES)) {
  for (const word of words) families.set(word, { canon: words[0]!, strength: VARIANT_STRENGTH });
}
for (const words of lines(IRREGULAR_SHORT)) {
  for (const word of words) if (!families.has(word)) families.set(word, { canon: words[0]!, strength: SHORT_FORM_STRENGTH });
}
for (const [arabic, ...others] of lines(CROSS)) {
  const canon = families.get(arabic!)?.canon ?? arabic!;
  for (const other of others) {
    if (!cross.has(canon)) cross.set(canon, new Set());
    cross.get(canon)!.add(other);
    if (!cross.has(other)) cross.set(other, new Set());
    cross.get(other)!.add(canon);
  }
}

/** The canonical spelling of a name's family (muhammadu → muhammad), or undefined. */
export function familyOf(token: string): Family | undefined {
  return families.get(token);
}

/** Whether two canonical names are Arabic and English forms of one scriptural name. */
export function isCrossPair(a: string, b: string): boolean {
  return cross.get(a)?.has(b) ?? false;
}

/**
 * Yoruba and Igbo name prefixes a short form drops: Olu(wa)-, Ade-, Ola-, Akin-, Baba-, Omo-,
 * Oye-, Ayo-, and the Igbo Chukwu-/Chi- (God). Prefixes in one group are one word (Olu is Oluwa
 * contracted; Chi and Chukwu both mean God).
 */
const PREFIX_GROUPS: readonly (readonly string[])[] = [
  ['oluwa', 'olu'],
  ['ade'],
  ['ola'],
  ['akin'],
  ['baba'],
  ['omo'],
  ['oye'],
  ['ayo'],
  ['ope'],
  ['oba'],
  ['oyin'],
  ['chukwu', 'chi'],
];
/** Igbo names that end in Chukwu/Chi (Ifeanyichukwu, Ifeanyi; Kelechukwu, Kelechi). */
const SUFFIX_GROUPS: readonly (readonly string[])[] = [['chukwu', 'chi']];

export interface Affix {
  /** Which prefix or suffix group; names from different groups are different names. */
  group: number;
  /** What is left: the short form's letters (seun of oluwaseun). */
  stem: string;
}

const MIN_STEM = 2;
/** A short form of fewer letters (Ade, Ola) is itself a prefix or too often another name. */
export const MIN_SHORT_FORM = 4;

/** The Yoruba/Igbo prefix or suffix of a token and what remains, or undefined. */
export function affixOf(token: string): Affix | undefined {
  for (let group = 0; group < PREFIX_GROUPS.length; group++) {
    for (const prefix of PREFIX_GROUPS[group]!) {
      if (token.length >= prefix.length + MIN_STEM && token.startsWith(prefix)) {
        return { group, stem: token.slice(prefix.length) };
      }
    }
  }
  for (let group = 0; group < SUFFIX_GROUPS.length; group++) {
    for (const suffix of SUFFIX_GROUPS[group]!) {
      if (token.length >= suffix.length + MIN_SHORT_FORM && token.endsWith(suffix)) {
        return { group: PREFIX_GROUPS.length + group, stem: token.slice(0, -suffix.length) };
      }
    }
  }
  return undefined;
}

/**
 * The short-form rule: Bunmi = Oluwabunmi = Olubunmi, Funmi = Oluwafunmilayo, Emeka = Chukwuemeka,
 * Chidi = Chukwudi, Ifeanyi = Ifeanyichukwu. Two long forms with different prefixes (Adeyemi,
 * Oluyemi) are different names. Returns the strength, or 0.
 */
export function shortFormStrength(a: string, affixA: Affix | undefined, b: string, affixB: Affix | undefined): number {
  if (affixA && affixB) {
    if (affixA.group !== affixB.group) return 0;
    if (affixA.stem === affixB.stem) return VARIANT_STRENGTH;
    const [short, long] = affixA.stem.length < affixB.stem.length ? [affixA.stem, affixB.stem] : [affixB.stem, affixA.stem];
    return short.length >= MIN_SHORT_FORM && long.startsWith(short) ? SHORT_FORM_STRENGTH : 0;
  }
  const [bare, affix] = affixA ? [b, affixA] : affixB ? [a, affixB] : [undefined, undefined];
  if (bare === undefined || bare.length < MIN_SHORT_FORM) return 0;
  return affix.stem.startsWith(bare) ? SHORT_FORM_STRENGTH : 0;
}
