import { parseDate } from '../identities/matching.js';
import { inPast } from '../respondents/fields.js';
import type { FormFields, PageResult, RespondentHandler } from '../respondents/handler.js';
import { html, type SafeHtml } from '../respondents/html.js';
import type { RespondentLink } from '../respondents/links.js';
import { closedPage, formatDay, thanksPage, unknownLinkPage, usedLinkPage, withdrawnPage } from '../respondents/pages.js';
import { compactIdNumber, GUARANTOR_ID_TYPES } from './id-check.js';
import { applicantName } from './messages.js';
import type { GuarantorAnswer, GuarantorService } from './service.js';
import type { GuarantorIdType, GuarantorRow } from './tables.js';

interface FormState {
  values: FormFields;
  errors: string[];
}

function closedPageFor(row: GuarantorRow): PageResult | undefined {
  if (row.state === 'cancelled') return withdrawnPage();
  if (row.state !== 'in_progress') return closedPage();
  return undefined;
}

function option(type: GuarantorIdType, selected: string | undefined): SafeHtml {
  return html`<option value="${type}"${selected === type ? html` selected` : ''}>${GUARANTOR_ID_TYPES[type].label}</option>`;
}

function formPage(row: GuarantorRow, organization: string, expiresAt: Date, state: FormState, status = 200): PageResult {
  const applicant = applicantName(row.applicant);
  const guarantor = `${row.firstname} ${row.lastname}`;
  const value = (name: string) => state.values[name] ?? '';
  const decision = state.values.decision;
  const types = row.acceptable_id_types;
  const body = html`<div class="card">
<h1>Will you stand as guarantor for ${applicant}?</h1>
<p>${organization} asks you, <strong>${guarantor}</strong>, to confirm that you agree to be the guarantor of <strong>${applicant}</strong>.</p>
<p class="muted">This request expires on ${formatDay(expiresAt)}. You can answer it once.</p>
</div>
${
  state.errors.length > 0
    ? html`<div class="card errors" role="alert"><h2>Please check your answer</h2><ul>${state.errors.map((error) => html`<li>${error}</li>`)}</ul></div>`
    : ''
}
<form method="post" class="card" autocomplete="off">
<fieldset>
<legend>Your answer</legend>
<label class="choice"><input type="radio" name="decision" value="accept"${decision === 'accept' ? html` checked` : ''}> <span>Yes, I agree to be the guarantor of ${applicant}</span></label>
<label class="choice"><input type="radio" name="decision" value="decline"${decision === 'decline' ? html` checked` : ''}> <span>No, I decline</span></label>
</fieldset>
<h2>If you agree, confirm who you are</h2>
<p class="hint">Your ID is checked with the issuing registry and is not shown to ${organization}. Leave these empty if you decline.</p>
<label for="idType">ID type</label>
<select id="idType" name="idType">${types.map((type) => option(type, value('idType') || types[0]))}</select>
<label for="idNumber">ID number <span class="hint">${types.map((type) => GUARANTOR_ID_TYPES[type].hint).filter((hint, i, all) => all.indexOf(hint) === i).join('; ')}</span></label>
<input type="text" id="idNumber" name="idNumber" value="${value('idNumber')}" autocapitalize="characters" spellcheck="false">
<label for="dob">Your date of birth <span class="hint">day-month-year, e.g. 14-03-1990</span></label>
<input type="text" id="dob" name="dob" value="${value('dob')}" placeholder="DD-MM-YYYY">
<button type="submit">Send my answer</button>
</form>`;
  return { status, title: `Guarantor request for ${applicant}`, body };
}

/** Reads the form; the problems are shown on the form again, nothing is recorded. */
function parseAnswer(row: GuarantorRow, form: FormFields, now: Date): { answer?: GuarantorAnswer; errors: string[] } {
  const decision = form.decision;
  if (decision === 'decline') return { answer: { decision: 'declined' }, errors: [] };
  if (decision !== 'accept') return { errors: ['Choose whether you agree to be the guarantor.'] };
  const errors: string[] = [];
  const idType = row.acceptable_id_types.find((type) => type === form.idType);
  const idNumber = compactIdNumber(form.idNumber ?? '');
  if (!idType) errors.push(`Choose one of the IDs listed.`);
  else if (!GUARANTOR_ID_TYPES[idType].format.test(idNumber)) {
    errors.push(`Enter your ${GUARANTOR_ID_TYPES[idType].label} number: ${GUARANTOR_ID_TYPES[idType].hint}.`);
  }
  const dob = (form.dob ?? '').trim();
  const date = parseDate(dob);
  if (!date || !inPast(date, now)) errors.push('Enter your date of birth as day-month-year, e.g. 14-03-1990.');
  if (errors.length > 0 || !idType) return { errors };
  return { answer: { decision: 'accepted', idType, idNumber, dob }, errors };
}

/** The guarantor's page: accept (with an ID of an accepted type) or decline. */
export function guarantorRespondent(service: GuarantorService, now: () => Date): RespondentHandler {
  return {
    kind: 'guarantor',
    async show(link: RespondentLink) {
      const found = await service.forLink(link);
      if (!found) return unknownLinkPage();
      return closedPageFor(found.row) ?? formPage(found.row, found.organization, link.expiresAt, { values: {}, errors: [] });
    },
    async submit(link: RespondentLink, form: FormFields) {
      const found = await service.forLink(link);
      if (!found) return unknownLinkPage();
      const closed = closedPageFor(found.row);
      if (closed) return closed;
      const again = (errors: string[]) => formPage(found.row, found.organization, link.expiresAt, { values: form, errors }, 422);
      const parsed = parseAnswer(found.row, form, now());
      if (!parsed.answer) return again(parsed.errors);
      const result = await service.answer(link, parsed.answer);
      switch (result.kind) {
        case 'retry':
          return again([
            `We could not find this ID number. Check it and try again (${result.attemptsLeft} ${result.attemptsLeft === 1 ? 'try' : 'tries'} left).`,
          ]);
        case 'unavailable':
          return formPage(
            found.row,
            found.organization,
            link.expiresAt,
            { values: form, errors: ['We could not reach the ID registry just now, so nothing was recorded. Please try again in a few minutes.'] },
            503,
          );
        case 'used':
          return usedLinkPage();
        case 'gone':
          return unknownLinkPage();
        case 'closed':
          return closedPageFor(result.row) ?? closedPage();
        case 'recorded':
          return parsed.answer.decision === 'declined'
            ? thanksPage('You declined', `Thank you. ${found.organization} will be told that you declined to be the guarantor.`)
            : thanksPage('Thank you', `Your answer has been sent to ${found.organization}.`);
      }
    },
  };
}
