// The part of autocannon 8's programmatic API the benchmark uses (the package ships no types).
declare module 'autocannon' {
  interface Histogram {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    total: number;
    p2_5: number;
    p50: number;
    p75: number;
    p90: number;
    p97_5: number;
    p99: number;
    p99_9: number;
  }

  export interface Result {
    title?: string;
    url: string;
    requests: Histogram;
    latency: Histogram;
    throughput: Histogram;
    duration: number;
    errors: number;
    timeouts: number;
    mismatches: number;
    non2xx: number;
    statusCodeStats: Record<string, { count: number }>;
  }

  export interface Options {
    url: string;
    connections?: number;
    duration?: number;
    amount?: number;
    timeout?: number;
    pipelining?: number;
    method?: string;
    body?: string;
    headers?: Record<string, string>;
    overallRate?: number;
    connectionRate?: number;
    ignoreCoordinatedOmission?: boolean;
    title?: string;
    workers?: number;
  }

  interface Instance extends PromiseLike<Result> {
    stop(): void;
    on(event: string, listener: (...args: unknown[]) => void): this;
  }

  function autocannon(opts: Options): Instance;
  export default autocannon;
}
