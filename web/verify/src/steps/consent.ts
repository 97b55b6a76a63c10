/** Consent (NDPA): what is collected, why, for how long and who sees it, in the server's words. */
import type { View } from '../api.js';
import { busy, button, h } from '../dom.js';
import type { Flow } from '../flow.js';
import { idTypeWords, plural } from '../words.js';

/** "BVN, NIN or Virtual NIN" */
function either(names: string[]): string {
  return names.length <= 1 ? (names[0] ?? '') : `${names.slice(0, -1).join(', ')} or ${names[names.length - 1]}`;
}

function needs(view: View): string {
  const parts: string[] = [];
  if (!view.prefilled.idNumberMasked) {
    const names = view.idTypes.map((type) => idTypeWords(type, view.idTypeDetails).label.replace(/ \(.*\)$/, ''));
    parts.push(names.length === 1 ? `your ${names[0]} number` : `the number of your ${either(names)}`);
  }
  if (view.checks.liveness || view.checks.faceMatch) parts.push("your phone's front camera for a short selfie video");
  return parts.length ? `You will need ${parts.join(', and ')}.` : '';
}

export function consentStep(flow: Flow, view: View): void {
  const { consent } = view;
  const agree = button('I agree, continue', () => {
    void busy(agree, 'Saving…', async () => {
      const next = await flow.run(() => flow.client.consent(), () => flow.go(view));
      if (next) flow.go(next);
    });
  });
  flow.show(
    'consent',
    h('h1', null, `${view.organization.name} needs to confirm your identity`),
    h('p', null, 'This takes about two minutes. ', needs(view)),
    h('h2', null, 'What is collected'),
    h(
      'ul',
      null,
      consent.collected.map((item) => h('li', null, item)),
    ),
    h('h2', null, 'Why'),
    h('p', null, consent.purpose),
    h('h2', null, 'How long it is kept'),
    h('p', null, `${plural(consent.retentionDays, 'day', 'days')}, then it is deleted.`),
    h('h2', null, 'Who sees it'),
    h(
      'ul',
      null,
      consent.recipients.map((recipient) => h('li', null, recipient)),
    ),
    h(
      'p',
      { class: 'muted' },
      `Under the Nigeria Data Protection Act you may ask ${view.organization.name} for a copy of your data, to correct it, or to delete it.`,
    ),
    agree,
  );
}
