/** The ID step: which document, and its number; the server looks it up (3 tries per session). */
import { ApiError, type View } from '../api.js';
import { busy, h, uniqueId } from '../dom.js';
import type { Flow } from '../flow.js';
import { idTypeWords, plural } from '../words.js';

/** What the person typed, kept when a failed request brings the form back. */
interface Draft {
  idType: string;
  idNumber: string;
}

export function identityStep(flow: Flow, view: View, draft?: Draft): void {
  if (view.prefilled.idNumberMasked) return prefilledStep(flow, view);
  const types = view.idTypes;
  let chosen = draft && types.includes(draft.idType) ? draft.idType : view.prefilled.idType && types.includes(view.prefilled.idType) ? view.prefilled.idType : types[0]!;

  const numberId = uniqueId('id-number');
  const hintId = uniqueId('id-hint');
  const errorId = uniqueId('id-error');
  const label = h('label', { attrs: { for: numberId } });
  const hint = h('span', { class: 'hint', attrs: { id: hintId } });
  const input = h('input', {
    attrs: { id: numberId, name: 'idNumber', type: 'text', autocomplete: 'off', autocapitalize: 'characters', spellcheck: 'false', 'aria-describedby': `${hintId} ${errorId}`, required: true },
  });
  const error = h('p', { class: 'error', attrs: { id: errorId, role: 'alert' } });
  const attempts = h('p', { class: 'muted' });

  const describe = () => {
    const words = idTypeWords(chosen, view.idTypeDetails);
    // "BVN number", "Driver's licence number": the choices above carry the long names.
    label.textContent = `${words.label.replace(/ \(.*\)$/, '')} number`;
    hint.textContent = words.hint;
    input.inputMode = words.inputMode;
  };
  const showAttempts = (left: number) => {
    attempts.textContent = left < 3 ? `${plural(left, 'try', 'tries')} left.` : '';
  };
  describe();
  showAttempts(view.attemptsLeft.id);
  if (draft) input.value = draft.idNumber;

  const choice =
    types.length > 1
      ? h(
          'fieldset',
          null,
          h('legend', null, 'Which ID will you use?'),
          types.map((type) => {
            const id = uniqueId('id-type');
            const radio = h('input', { attrs: { type: 'radio', name: 'idType', id, value: type, checked: type === chosen } });
            radio.addEventListener('change', () => {
              chosen = type;
              describe();
              error.textContent = '';
              input.removeAttribute('aria-invalid');
            });
            return h('label', { class: 'choice', attrs: { for: id } }, radio, idTypeWords(type, view.idTypeDetails).label);
          }),
        )
      : null;

  const submit = h('button', { class: 'button primary', attrs: { type: 'submit' } }, 'Check my ID');
  const form = h('form', { attrs: { novalidate: true } }, choice, h('div', { class: 'field' }, label, hint, input, error), attempts, submit);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    // People copy numbers with spaces (and letters in lower case); the server gets them plain.
    const words = idTypeWords(chosen, view.idTypeDetails);
    const value = input.value.replace(/[\s-]/g, '').toUpperCase();
    if (!words.pattern.test(value)) {
      error.textContent = value ? `That does not look like a ${words.label} number: ${words.hint.split('.')[0]}.` : 'Enter the number.';
      input.setAttribute('aria-invalid', 'true');
      input.focus();
      return;
    }
    error.textContent = '';
    input.removeAttribute('aria-invalid');
    void busy(submit, 'Checking…', async () => {
      try {
        const next = await flow.run(
          () => flow.client.submitId(chosen, value),
          () => identityStep(flow, view, { idType: chosen, idNumber: input.value }),
          (e) => e.status === 422,
        );
        if (next) flow.go(next);
      } catch (e) {
        if (!(e instanceof ApiError)) throw e;
        // Not verified: the server's plain message, and how many tries are left.
        const left = typeof e.body.attemptsLeft === 'number' ? e.body.attemptsLeft : (e.body.attemptsLeft as { id?: number } | undefined)?.id;
        error.textContent = e.message;
        input.setAttribute('aria-invalid', 'true');
        if (typeof left === 'number') showAttempts(left);
        if (left === 0) {
          const latest = await flow.run(() => flow.client.view(), () => void flow.start());
          if (latest) flow.go(latest);
        }
      }
    });
  });

  flow.show(
    'id',
    h('h1', null, 'Your ID'),
    h('p', null, `We check the number with the official record. ${view.testMode ? 'In test mode, use a sandbox identity number.' : ''}`),
    form,
  );
}

/**
 * The organization gave the ID; its lookup could not be finished when consent was given (the
 * registry did not answer). The person cannot change the number, only have it checked again.
 */
function prefilledStep(flow: Flow, view: View): void {
  const again = h('button', { class: 'button primary', attrs: { type: 'button' } }, 'Check again');
  again.addEventListener('click', () => {
    void busy(again, 'Checking…', async () => {
      const next = await flow.run(() => flow.client.submitId(), () => prefilledStep(flow, view));
      if (next) flow.go(next);
    });
  });
  const type = view.prefilled.idType ? idTypeWords(view.prefilled.idType, view.idTypeDetails).label : 'ID';
  flow.show(
    null,
    h('h1', null, 'Your ID'),
    h('p', null, `${view.organization.name} gave us your ${type}: ${view.prefilled.idNumberMasked}. We could not finish checking it with the registry just now.`),
    again,
  );
}
