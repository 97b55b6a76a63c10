import { SESSION_REASONS } from '../../sessions/states.js';

/**
 * Verification sessions' closed codes in plain English, for the portal's session page and the
 * operator console's sessions summary (docs/sessions.md, "Reason codes"). A test keeps this list
 * equal to SESSION_REASONS.
 */
export const REASON_TEXT: Record<(typeof SESSION_REASONS)[number], string> = {
  ID_NOT_FOUND: 'The ID registry has no such number',
  ID_DETAILS_MISMATCH: 'The ID exists, but the names or date of birth do not match what was prefilled',
  ID_TYPE_NOT_ALLOWED: 'That ID type is not allowed for this session',
  ID_ATTEMPTS_EXHAUSTED: 'The third ID given was not verified either',
  NO_FACE: 'No face was seen in the frames',
  MULTIPLE_FACES: 'More than one face was in the frames',
  TOO_FEW_FRAMES: 'Too few usable frames were sent',
  CHALLENGE_NOT_MET: 'A requested movement was not made',
  CHALLENGE_OUT_OF_ORDER: 'The movements were made in the wrong order',
  TOO_SLOW: 'The movements took too long',
  FACE_CHANGED: 'The face changed during the attempt (another face swapped in)',
  SPOOF_SUSPECTED: 'The face looked like a photo or a screen, not a live person',
  REPLAYED_FRAMES: 'Frames were replayed from another attempt or session',
  POOR_QUALITY: 'The frames were too dark, blurred or small to judge',
  LIVENESS_ATTEMPTS_EXHAUSTED: 'The third liveness attempt failed too',
  NO_REGISTRY_PHOTO: 'The registry record has no photo to compare the face with',
  FACE_MISMATCH: 'The live face is not the face on the registry photo',
  EXPIRED: 'The person did not finish before the session expired',
  CANCELLED: 'The session was cancelled',
};

const EXTRA_TEXT: Record<string, string> = {
  AWAITING_USER: 'Waiting for the person to open the link',
  AWAITING_CONSENT: 'Waiting for the person to give consent',
  AWAITING_ID: 'Waiting for the person’s ID',
  AWAITING_LIVENESS: 'Waiting for the selfie (liveness)',
  VERIFIED: 'Verified',
  NOT_VERIFIED: 'Not verified',
  CANCELLED_BY_CUSTOMER: 'Cancelled by your organization (DELETE)',
  CANCELLED_BY_USER: 'Cancelled by the person on the page',
  SUBJECT_ERASED: 'Erased at the person’s request (data-subject erasure)',
};

/** A code as people say it; an unknown code is shown as it is. */
export function reasonText(code: string): string {
  return (REASON_TEXT as Record<string, string>)[code] ?? EXTRA_TEXT[code] ?? code;
}

export const CHALLENGE_TEXT: Record<string, string> = {
  turn_left: 'Turn the head left',
  turn_right: 'Turn the head right',
  look_up: 'Look up',
  blink: 'Blink',
};

export const challengeText = (challenge: string) => CHALLENGE_TEXT[challenge] ?? challenge;

export const ID_TYPE_TEXT: Record<string, string> = {
  BVN: 'BVN',
  NIN: 'NIN',
  VNIN: 'Virtual NIN',
  DRIVERS_LICENSE: 'Driver’s licence',
};
