import pg from 'pg';

/** Runs one statement on the server of `serverUrl` in a connection of its own (create or drop a database). */
export async function adminQuery(serverUrl: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}
