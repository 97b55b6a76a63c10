import { describe, expect, it } from 'vitest';
import { maskIdentityNumbers, personalFieldOf } from '../../src/identities/personal-fields.js';
import { maskEventBody } from '../../src/portal/webhooks/masking.js';

// The webhook delivery log's masks (finding 5 of the security review, docs/security.md) on their
// own: what a value is decides whether it is shown, whatever the event calls it.

const FACE_URL = 'https://registry.example/faces/1.jpg';
const PHOTO = `/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAYEBQYFBAYGBQYHBwYIChAKCgkJChQODwwQFxQYGBcUFhYaHSUfGhsjHBYWICwgIyYnKSopGR8tMC0oMCUoKSj${'A'.repeat(400)}`;

describe('personal fields', () => {
  it('are found by the words of the key, whatever its spelling, and not inside other words', () => {
    for (const key of ['idNumber', 'id_number', 'applicantIdNumber', 'bvn', 'BVN', 'nin', 'vNin', 'licenseNo', 'driversLicenseNo', 'licence_number', 'vin', 'tin', 'jittin']) {
      expect(personalFieldOf(key), key).toBe('identityNumber');
    }
    expect(['phone', 'employerPhone', 'phoneNumber'].map(personalFieldOf)).toEqual(['phone', 'phone', 'phone']);
    expect(['email', 'supervisorEmail', 'emailAddress'].map(personalFieldOf)).toEqual(['email', 'email', 'email']);
    expect(['birthdate', 'dob', 'dateOfBirth'].map(personalFieldOf)).toEqual(['birthDate', 'birthDate', 'birthDate']);
    expect(['photo', 'photoUrl', 'selfie'].map(personalFieldOf)).toEqual(['photo', 'photo', 'photo']);
    for (const key of ['bulletin', 'martin', 'photos', 'businessPhotos', 'rcNumber', 'cacRegNo', 'zip', 'idType', 'id', 'reference']) expect(personalFieldOf(key), key).toBeUndefined();
  });

  it('mask every identity number of a record at any depth for the explorer, and nothing else', () => {
    const record = { applicant: { idType: 'NIN', idNumber: '70412358961', phone: '08031234567' }, business: { rcNumber: '1284395' }, nested: [{ vNin: 'TV738291046518QK', nin: 70412358961 }] };
    expect(maskIdentityNumbers(record)).toEqual({
      applicant: { idType: 'NIN', idNumber: '704******61', phone: '08031234567' },
      business: { rcNumber: '1284395' },
      nested: [{ vNin: 'TV7***********QK', nin: '704******61' }],
    });
  });
});

describe('an event body in the delivery log', () => {
  const event = {
    type: 'session.completed',
    data: {
      reference: 'loan-KJA83927AA02',
      metadata: { customerNumber: '22345678901', contactAt: 'ada.obi@mail.example', orderId: 'o-1234567' },
      identity: { licenseNo: 'KJA83927AA02', nin: 70412358961, birthdate: '09-05-1988', phone: '0806 123 4567', photo: PHOTO, firstname: 'Ibrahim', issuedDate: '15-01-2021' },
      userConsent: { ip: '102.89.34.17', textVersion: '2026-01' },
      registry: { picture: FACE_URL, thumbnail: `data:image/png;base64,iVBORw0KGgo${'B'.repeat(40)}` },
      photos: ['https://vouch.example/files/abc?sig=1'],
      business: { rcNumber: 'RC1284395' },
    },
  };

  it('masks by field, by shape and by repetition, and keeps names, places, registration numbers and photo links', () => {
    const { body } = maskEventBody(event);
    expect(body).toEqual({
      type: 'session.completed',
      data: {
        reference: 'loan-KJA*******02',
        metadata: { customerNumber: '223******01', contactAt: 'a•••@mail.example', orderId: 'o-1234567' },
        identity: {
          licenseNo: 'KJA*******02',
          nin: '704******61',
          birthdate: '**-**-****',
          phone: '080********67',
          photo: `[image not shown: ${PHOTO.length} characters]`,
          firstname: 'Ibrahim',
          issuedDate: '15-01-2021',
        },
        userConsent: { ip: '102*******17', textVersion: '2026-01' },
        registry: { picture: `[image not shown: ${FACE_URL.length} characters]`, thumbnail: '[image not shown: 73 characters]' },
        photos: ['https://vouch.example/files/abc?sig=1'],
        business: { rcNumber: 'RC1284395' },
      },
    });
  });

  it("scrubs the receiver's answer and the errors: the body's values, spelt otherwise or cut off, and images", () => {
    const { scrub } = maskEventBody(event);
    expect(scrub('redirect to https://x.example/?l=kja83927aa02&p=08061234567 not followed')).toBe('redirect to https://x.example/?l=KJA*******02&p=080********67 not followed');
    expect(scrub(`{"photo":"${PHOTO.slice(0, 60)}`)).toBe('{"photo":"[image not shown: 60 characters]');
    expect(scrub('{"rejected":{"licenseNo":"KJA8392')).toBe('{"rejected":{"licenseNo":"KJA****');
    expect(scrub('HTTP 500')).toBe('HTTP 500');
    expect(scrub(null)).toBeNull();
  });

  it('leaves a test event alone', () => {
    const test = { type: 'webhook.test', timestamp: '2026-12-01T00:00:00.000Z', data: { message: 'A test event', mode: 'test' } };
    expect(maskEventBody(test).body).toEqual(test);
  });
});
