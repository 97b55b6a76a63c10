/** A failure the person running the benchmark can act on: printed as one line, exit code 1. */
export class BenchError extends Error {
  override name = 'BenchError';
}
