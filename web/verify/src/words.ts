/** What the page says for the server's codes: plain English, with what the person can do about it. */

/** Why a check failed (the closed reason codes of a session's checks), for the person who failed it. */
const REASONS: Record<string, string> = {
  ID_NOT_FOUND: 'We could not find that ID number. Check it and try again.',
  ID_DETAILS_MISMATCH: 'The ID record does not match the details we were given about you.',
  ID_TYPE_NOT_ALLOWED: 'This type of ID cannot be used here.',
  ID_ATTEMPTS_EXHAUSTED: 'The ID number was not confirmed after several tries.',
  NO_FACE: 'We could not see a face. Hold the phone in front of your face, in good light.',
  MULTIPLE_FACES: 'More than one face was in view. Make sure only you are in the picture.',
  TOO_FEW_FRAMES: 'Not enough of the video reached us. Keep the page open until it finishes.',
  CHALLENGE_NOT_MET: 'We did not see one of the movements. Follow each instruction when it appears.',
  CHALLENGE_OUT_OF_ORDER: 'The movements were not made in the order asked. Follow the instructions one by one.',
  TOO_SLOW: 'The movements took too long. Make each one as soon as it is shown.',
  FACE_CHANGED: 'The face changed during the video. The same person must stay in view throughout.',
  SPOOF_SUSPECTED: 'It looked like a photo or a screen rather than a live person. Use your own face, not a picture.',
  REPLAYED_FRAMES: 'The video was not recorded just now. Record a new one.',
  POOR_QUALITY: 'The picture was too dark or blurry. Find better light and hold the phone still.',
  LIVENESS_ATTEMPTS_EXHAUSTED: 'The selfie check did not pass after several tries.',
  NO_REGISTRY_PHOTO: 'There is no photo on your ID record to compare your selfie with.',
  FACE_MISMATCH: 'Your selfie does not match the photo on your ID record.',
  EXPIRED: 'The time to complete this verification ran out.',
  CANCELLED: 'The verification was cancelled.',
};

export function reasonText(code: string): string {
  return REASONS[code] ?? 'The check did not pass.';
}

/** Why the selfie could not be compared with the ID photo (the server's quality gate), and what to do. */
const QUALITY: Record<string, string> = {
  no_face: 'We could not see your face clearly while you looked at the camera. Look straight at the screen at the start.',
  too_small: 'Your face was too far from the camera. Hold the phone closer, so your face fills the oval.',
  too_dark: 'The picture was too dark. Face a window or a light, and try again.',
  too_bright: 'The picture was too bright. Move out of direct sunlight, or away from a light behind you.',
  blurred: 'The picture was blurred. Hold the phone still and wipe the camera lens.',
  eyes_closed: 'Your eyes were closed. Keep them open and look at the screen.',
};

export function qualityText(code: string): string {
  return QUALITY[code] ?? 'The picture was not clear enough to compare with your ID photo. Find better light and try again.';
}

/** What to do for each movement the server asks for; unknown ones (a newer server) are still named. */
const CHALLENGES: Record<string, { prompt: string; icon: string }> = {
  turn_left: { prompt: 'Turn your head slowly to your left', icon: '←' },
  turn_right: { prompt: 'Turn your head slowly to your right', icon: '→' },
  look_up: { prompt: 'Tilt your head up a little', icon: '↑' },
  look_down: { prompt: 'Tilt your head down a little', icon: '↓' },
  blink: { prompt: 'Blink your eyes', icon: '◡' },
  smile: { prompt: 'Smile', icon: '☺' },
  open_mouth: { prompt: 'Open your mouth', icon: 'O' },
};

export function challengeWords(challenge: string): { prompt: string; icon: string } {
  return CHALLENGES[challenge] ?? { prompt: challenge.replace(/_/g, ' ').replace(/^./, (c) => c.toUpperCase()), icon: '•' };
}

/** Where people find each number, and what it looks like (the server checks it again). */
const ID_TYPES: Record<string, { label: string; hint: string; where: string; pattern: RegExp; inputMode: 'numeric' | 'text' }> = {
  BVN: { label: 'BVN (Bank Verification Number)', hint: '11 digits', where: 'Dial *565*0# from the phone number linked to your bank account to see it.', pattern: /^\d{11}$/, inputMode: 'numeric' },
  NIN: { label: 'NIN (National Identification Number)', hint: '11 digits', where: 'It is on your NIN slip or national ID card; dial *346# to see it.', pattern: /^\d{11}$/, inputMode: 'numeric' },
  VNIN: { label: 'Virtual NIN', hint: '16 letters and digits', where: 'Get one in the NIMC app, or dial *346*3*your NIN*the agent code#.', pattern: /^[A-Z0-9]{16}$/, inputMode: 'text' },
  DRIVERS_LICENSE: { label: "Driver's licence", hint: '6 to 20 letters and digits', where: 'As printed on your licence card.', pattern: /^[A-Z0-9]{6,20}$/, inputMode: 'text' },
};

export interface IdTypeWords {
  label: string;
  hint: string;
  pattern: RegExp;
  inputMode: 'numeric' | 'text';
}

/** An ID type's label and hint: the server's words where it gives them, with where to find the number. */
export function idTypeWords(type: string, details?: { type: string; label: string; hint: string }[]): IdTypeWords {
  const known = ID_TYPES[type];
  const server = details?.find((detail) => detail.type === type);
  const label = server?.label ?? known?.label ?? type.replace(/_/g, ' ');
  const hint = [server?.hint ?? known?.hint, known?.where].filter(Boolean).join('. ');
  return { label, hint, pattern: known?.pattern ?? /^[A-Z0-9-]{4,40}$/, inputMode: known?.inputMode ?? 'text' };
}

export function formatTime(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  return date.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
}

export function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}
