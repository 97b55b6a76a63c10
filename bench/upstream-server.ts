/**
 * The upstream of the `upstreams` benchmark: a provider that speaks the verification API (the
 * `verifyme` kind) and answers every BVN premium lookup after UPSTREAM_DELAY_MS (300 ms by
 * default), as a slow national registry behind an aggregator would. With UPSTREAM_HANG=1 it
 * accepts lookups and never answers them (the "hanging primary"), and so after a SIGUSR2. `/ready`
 * answers at once.
 */
import http from 'node:http';

const delayMs = Number(process.env.UPSTREAM_DELAY_MS ?? 300);
let hang = process.env.UPSTREAM_HANG === '1';
// SIGUSR2: from now on, accept lookups and never answer them (a primary that starts hanging).
process.on('SIGUSR2', () => (hang = true));

function record(bvn: string) {
  return {
    bvn,
    firstname: 'Adaeze',
    lastname: 'Okonkwo',
    middlename: 'Chioma',
    gender: 'Female',
    phone: '08031234567',
    birthdate: '14-03-1990',
    photo: '',
    maritalStatus: 'Single',
    lgaOfResidence: 'Eti-Osa',
    lgaOfOrigin: 'Onitsha North',
    residentialAddress: '12 Admiralty Way, Lekki',
    stateOfOrigin: 'Anambra',
    enrollmentBank: '058',
    enrollmentBranch: 'Lekki',
    nameOnCard: 'ADAEZE OKONKWO',
    title: 'Miss',
    levelOfAccount: 'Level 2',
    fieldMatches: { firstname: true, lastname: true, dob: true },
  };
}

const server = http.createServer((request, response) => {
  request.resume();
  if (request.url === '/ready') {
    response.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    return;
  }
  if (hang) return;
  const match = /^\/v1\/verifications\/identities\/bvn\/(\d{11})(\?|$)/.exec(request.url ?? '');
  setTimeout(() => {
    if (request.method !== 'POST' || !match) {
      response.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ code: 'NOT_FOUND', message: 'no such route' }));
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 'success', data: record(match[1]!) }));
  }, delayMs);
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1');
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => process.exit(0));
