import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { loggerOptions, redactText, redactUrl } from '../../src/platform/logging.js';

const TOKEN = 'q8Zk3vYb1X_f-2hJmN4pR6sT7uV9wA0bC1dE2fG3hI4';
const SIGNATURE = 'a3f1'.repeat(16);
const UUID = '3b241101-e2bb-4255-8caf-4136c566a962';

describe('redactUrl', () => {
  it.each([
    ['/v1/verifications/identities/bvn/22345678901', '/v1/verifications/identities/bvn/[redacted]'],
    ['/v1/verifications/addresses?reference=abc', '/v1/verifications/addresses?[redacted]'],
    [`/respond/${TOKEN}`, '/respond/[redacted]'],
    [`/respond/${TOKEN}?lang=en`, '/respond/[redacted]?[redacted]'],
    [`/Respond/${TOKEN}/x`, '/Respond/[redacted]'],
    [`/respond/short`, '/respond/[redacted]'],
    [`/v1/files/${UUID}?expires=1790000000&signature=${SIGNATURE}`, `/v1/files/${UUID}?[redacted]`],
    [`/v1/files/${UUID}%3Fexpires=1790000000%26signature=${SIGNATURE}`, `/v1/files/${UUID}%3Fexpires=[redacted]%26signature=[redacted]`],
    [`/v1/agent/tasks/address/12/start`, '/v1/agent/tasks/address/12/start'],
    [`/v1/verifications/guarantors/${UUID}`, `/v1/verifications/guarantors/${UUID}`],
    // Session and attempt ids stay whole, digit runs and all; a number beside them does not.
    ['/v1/verifications/sessions/ses_07805c299b1234567af1', '/v1/verifications/sessions/ses_07805c299b1234567af1'],
    ['/verify/api/x/liveness/attempts/att_0123456789abcdef01234567/frames', '/verify/api/x/liveness/attempts/att_0123456789abcdef01234567/frames'],
    ['/v1/verifications/sessions/ses_07805c299b1234567af1/x/22298765432', '/v1/verifications/sessions/ses_07805c299b1234567af1/x/[redacted]'],
    ['/v1/verifications/sessions/ses_07805c299b1234567af1222987654321', '/v1/verifications/sessions/ses_07805c299b[redacted]af[redacted]'],
    // Paths the router also takes (ignoreDuplicateSlashes): the number never survives.
    ['//v1/verifications/identities/drivers_license/KJA83927AA02', '/v1/verifications/identities/drivers_license/[redacted]'],
    ['/v1//verifications/identities/nin_phone/0805-123-4567', '/v1/verifications/identities/nin_phone/[redacted]'],
    ['/v1/verifications/identities/vin//90F5B1234C567890123', '/v1/verifications/identities/vin/[redacted]'],
    ['/v1/verifications//identities///bvn/22345678901/match', '/v1/verifications/identities/bvn/[redacted]/match'],
    ['/api/v1/verifications/identities/tin/23456789-0001', '/api/v1/verifications/identities/tin/[redacted]'],
    ['/v1/verifications/identities/%64rivers_license/KJA83927AA02', '/v1/verifications/identities/drivers_license/[redacted]'],
  ])('%s', (url, expected) => {
    expect(redactUrl(url)).toBe(expected);
  });
});

describe('logged errors', () => {
  it('keep the local part of an email address out, and its domain in', () => {
    expect(redactText("Can't send mail - all recipients were rejected: 550 5.1.1 <kemi.adewale@victim.example>: User unknown")).toBe(
      "Can't send mail - all recipients were rejected: 550 5.1.1 <[redacted]@victim.example>: User unknown",
    );
    expect(redactText('to ada.obi+loans@mail.bank.example.ng, cc x@y.example')).toBe('to [redacted]@mail.bank.example.ng, cc [redacted]@y.example');
    // In a URL's query the address alone goes, not the URL before it.
    expect(redactText('redirect to https://x.example/return?by=ada.obi@example.com&n=2 not followed')).toBe('redirect to https://x.example/return?by=[redacted]@example.com&n=2 not followed');
  });

  it('log an error given as its message (`{ err: err.message }`) as that message, redacted', () => {
    const lines: string[] = [];
    const stream = new Writable({ write: (chunk: Buffer, _encoding, done) => (lines.push(chunk.toString()), done()) });
    const log = pino(loggerOptions('info', stream) as pino.LoggerOptions, stream);
    log.error({ err: 'recipient <kemi@victim.example> refused for /v1/verifications/identities/drivers_license/KJA83927AA02' }, 'not sent');
    log.error({ err: new Error('refused: 22345678901') }, 'not sent');
    const [asString, asError] = lines.map((line) => JSON.parse(line) as { err: { message: string } });
    expect(asString!.err).toEqual({ message: 'recipient <[redacted]@victim.example> refused for /v1/verifications/identities/drivers_license/[redacted]' });
    expect(asError!.err.message).toBe('refused: [redacted]');
  });
});
