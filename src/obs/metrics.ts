import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Registry, collectDefaultMetrics, Counter, Gauge, Histogram } from 'prom-client';

export { Registry, Counter, Gauge, Histogram };

/** A fresh registry with process metrics, prefixed `flashlog_`. One per process (or per test). */
export function createMetricsRegistry(options: { defaults?: boolean } = {}): Registry {
  const registry = new Registry();
  if (options.defaults ?? true) collectDefaultMetrics({ register: registry, prefix: 'flashlog_' });
  return registry;
}

/** Gets a metric from the registry or creates it, so two stages can share one by name. */
export function counter(registry: Registry, name: string, help: string, labelNames: string[] = []): Counter<string> {
  return (registry.getSingleMetric(name) as Counter<string> | undefined) ?? new Counter({ name, help, labelNames, registers: [registry] });
}
export function gauge(registry: Registry, name: string, help: string, labelNames: string[] = []): Gauge<string> {
  return (registry.getSingleMetric(name) as Gauge<string> | undefined) ?? new Gauge({ name, help, labelNames, registers: [registry] });
}
export function histogram(
  registry: Registry,
  name: string,
  help: string,
  labelNames: string[] = [],
  buckets?: number[],
): Histogram<string> {
  return (
    (registry.getSingleMetric(name) as Histogram<string> | undefined) ??
    new Histogram({ name, help, labelNames, registers: [registry], ...(buckets ? { buckets } : {}) })
  );
}

export interface MetricsServer {
  readonly url: string;
  close(): Promise<void>;
}

/**
 * Answers `GET /metrics` (Prometheus text format) from the registry and returns true; returns false
 * for any other request. A command with its own HTTP listener (gateway, prover host, devnet RPC)
 * puts this first in its handler, so it needs no second port.
 */
export function answerMetrics(registry: Registry, request: IncomingMessage, response: ServerResponse): boolean {
  if (request.method !== 'GET' || request.url?.split('?')[0] !== '/metrics') return false;
  registry.metrics().then(
    (text) => response.writeHead(200, { 'content-type': registry.contentType }).end(text),
    (error: unknown) => response.writeHead(500).end(String(error)),
  );
  return true;
}

/** Serves `GET /metrics` (Prometheus text format) on host:port; port 0 picks a free port. */
export async function serveMetrics(registry: Registry, host: string, port: number): Promise<MetricsServer> {
  const server: Server = createServer((request, response) => {
    if (answerMetrics(registry, request, response)) return;
    response.writeHead(404, { 'content-type': 'text/plain' }).end('not found; metrics are at /metrics\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  return {
    url: `http://${host}:${address.port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
