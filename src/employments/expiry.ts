import { sweepTask } from '../respondents/sweep.js';
import { expireUnansweredEmployments } from './service.js';

/** Background task: employment verifications whose link expired unanswered end NOT_VERIFIED / NO_RESPONSE. */
export const employmentExpiryTask = sweepTask('employment link expiry', ({ database }, now) => expireUnansweredEmployments(database.db, now));
