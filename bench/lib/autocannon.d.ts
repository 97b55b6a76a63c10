// autocannon ships no types; this covers the part of its programmatic API the benchmarks use.
declare module 'autocannon' {
  namespace autocannon {
    interface Options {
      url: string;
      method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
      headers?: Record<string, string>;
      body?: string;
      connections?: number;
      /** Seconds. */
      duration?: number;
      pipelining?: number;
      /** Seconds before a request counts as a timeout. */
      timeout?: number;
    }

    /** Histogram summary; latency values are milliseconds (1 ms resolution). */
    interface Stats {
      mean: number;
      stddev: number;
      min: number;
      max: number;
      p50: number;
      p90: number;
      p99: number;
    }

    interface Result {
      duration: number;
      latency: Stats;
      requests: Stats & { total: number; sent: number };
      throughput: Stats;
      errors: number;
      timeouts: number;
      non2xx: number;
      '2xx': number;
      statusCodeStats: Record<string, { count: number }>;
    }
  }

  function autocannon(options: autocannon.Options): Promise<autocannon.Result>;
  export = autocannon;
}
