import { fileUrls, loadSigningKey } from '../files/urls.js';
import { sweepTask } from '../respondents/sweep.js';
import { expireUnansweredGuarantors } from './service.js';

/** Background task: guarantor verifications whose link expired unanswered end NOT_VERIFIED / NO_RESPONSE. */
export const guarantorExpiryTask = sweepTask('guarantor link expiry', async ({ database, config, logger }, now) => {
  const urls = fileUrls(await loadSigningKey(database.db), config.publicUrl);
  return expireUnansweredGuarantors(database.db, urls, now, logger);
});
